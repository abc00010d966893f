#include "runners/refstack/compiler/ops.h"

#include <array>

namespace harness::compiler {
namespace {

constexpr uint8_t kStructural = kTraitNoEvent;

constexpr std::array<OpInfo, static_cast<size_t>(OpKind::kUnknown) + 1> kOps = {{
    {OpKind::kPlaceholder, "placeholder", "placeholder", kStructural | kTraitImpure},
    {OpKind::kGetAttr, "get_attr", "get_attr", kStructural | kTraitImpure},
    {OpKind::kGetItem, "getitem", "getitem", kStructural},
    {OpKind::kOutput, "output", "output", kStructural | kTraitImpure},
    {OpKind::kView, "aten.view.default", "view", kTraitZeroCost},
    {OpKind::kUnsqueeze, "aten.unsqueeze.default", "unsqueeze", kTraitZeroCost},
    {OpKind::kAdd, "aten.add.Tensor", "add", kTraitNone},
    {OpKind::kSub, "aten.sub.Tensor", "sub", kTraitNone},
    {OpKind::kMul, "aten.mul.Tensor", "mul", kTraitNone},
    {OpKind::kGeScalar, "aten.ge.Scalar", "ge", kTraitNone},
    {OpKind::kLtScalar, "aten.lt.Scalar", "lt", kTraitNone},
    {OpKind::kBitwiseAnd, "aten.bitwise_and.Tensor", "bitwise_and", kTraitNone},
    {OpKind::kEmbedding, "aten.embedding.default", "embedding", kTraitNone},
    {OpKind::kIndexSelect, "aten.index_select.default", "index_select", kTraitNone},
    {OpKind::kMm, "aten.mm.default", "mm", kTraitNone},
    {OpKind::kSplitWithSizes, "aten.split_with_sizes.default", "split_with_sizes", kTraitZeroCost},
    {OpKind::kSplit, "aten.split.Tensor", "split", kTraitZeroCost},
    {OpKind::kAllReduce, "tensor_cast.all_reduce.default", "all_reduce", kTraitNone},
    {OpKind::kReduceScatter, "tensor_cast.reduce_scatter.default", "reduce_scatter", kTraitNone},
    {OpKind::kAllGather, "tensor_cast.all_gather.default", "all_gather", kTraitNone},
    {OpKind::kRmsNorm, "tensor_cast.rms_norm.default", "rms_norm", kTraitNone},
    {OpKind::kAddRmsNorm, "tensor_cast.add_rms_norm.default", "add_rms_norm", kTraitNone},
    {OpKind::kAddRmsNorm2, "tensor_cast.add_rms_norm2.default", "add_rms_norm2", kTraitNone},
    {OpKind::kApplyRope, "tensor_cast.apply_rope.default", "apply_rope", kTraitNone},
    {OpKind::kReshapeAndCache, "tensor_cast.reshape_and_cache.default", "reshape_and_cache", kTraitImpure},
    {OpKind::kAttention, "tensor_cast.attention.default", "attention", kTraitNone},
    {OpKind::kSwiglu, "tensor_cast.swiglu.default", "swiglu", kTraitNone},
    {OpKind::kDynamicQuantizeSymmetric, "tensor_cast.dynamic_quantize_symmetric.default", "dynamic_quantize_symmetric",
     kTraitNone},
    {OpKind::kDynamicQuantizeMxfp4, "tensor_cast.dynamic_quantize_mxfp4.default", "dynamic_quantize_mxfp4", kTraitNone},
    {OpKind::kStaticQuantLinear, "tensor_cast.static_quant_linear.default", "static_quant_linear", kTraitNone},
    {OpKind::kStaticQuantLinearInt4, "tensor_cast.static_quant_linear_int4.default", "static_quant_linear_int4",
     kTraitNone},
    {OpKind::kFp8Linear, "tensor_cast.fp8_linear.default", "fp8_linear", kTraitNone},
    {OpKind::kMxfp4Linear, "tensor_cast.mxfp4_linear.default", "mxfp4_linear", kTraitNone},
    {OpKind::kGroupedMatmul, "tensor_cast.grouped_matmul.default", "grouped_matmul", kTraitNone},
    {OpKind::kGroupedMatmulQuant, "tensor_cast.grouped_matmul_quant.default", "grouped_matmul_quant", kTraitNone},
    {OpKind::kGroupedMatmulQuantInt4, "tensor_cast.grouped_matmul_quant_int4.default", "grouped_matmul_quant_int4",
     kTraitNone},
    {OpKind::kGroupedMatmulFp8, "tensor_cast.grouped_matmul_fp8.default", "grouped_matmul_fp8", kTraitNone},
    {OpKind::kGroupedMatmulMxfp4, "tensor_cast.grouped_matmul_mxfp4.default", "grouped_matmul_mxfp4", kTraitNone},
    {OpKind::kGroupedMatmulSwiglu, "tensor_cast.grouped_matmul_swiglu.default", "grouped_matmul_swiglu", kTraitNone},
    {OpKind::kGroupedMatmulQuantSwiglu, "tensor_cast.grouped_matmul_quant_swiglu.default",
     "grouped_matmul_quant_swiglu", kTraitNone},
    {OpKind::kGroupedMatmulQuantInt4Swiglu, "tensor_cast.grouped_matmul_quant_int4_swiglu.default",
     "grouped_matmul_quant_int4_swiglu", kTraitNone},
    {OpKind::kGroupedMatmulFp8Swiglu, "tensor_cast.grouped_matmul_fp8_swiglu.default", "grouped_matmul_fp8_swiglu",
     kTraitNone},
    {OpKind::kGroupedMatmulMxfp4Swiglu, "tensor_cast.grouped_matmul_mxfp4_swiglu.default",
     "grouped_matmul_mxfp4_swiglu", kTraitNone},
    {OpKind::kGroupedMatmulMxfp4SwigluQuant, "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default",
     "grouped_matmul_mxfp4_swiglu_quant", kTraitNone},
    {OpKind::kMoeGatingTopKSoftmax, "tensor_cast.moe_gating_top_k_softmax.default", "moe_gating_top_k_softmax",
     kTraitNone},
    {OpKind::kInitRoutingV2, "tensor_cast.init_routing_v2.default", "init_routing_v2", kTraitNone},
    {OpKind::kUnpermuteTokens, "tensor_cast.unpermute_tokens.default", "unpermute_tokens", kTraitNone},
    {OpKind::kRegionBegin, "tensor_cast._internal_mark_region_begin.default", "_internal_mark_region_begin",
     kTraitNoEvent},
    {OpKind::kRegionEnd, "tensor_cast._internal_mark_region_end.default", "_internal_mark_region_end", kTraitNoEvent},
    {OpKind::kCopyRegion, "tensor_cast._internal_copy_region.default", "_internal_copy_region", kTraitNoEvent},
    {OpKind::kCopyRegionV2, "tensor_cast._internal_copy_region_v2.default", "_internal_copy_region_v2", kTraitNoEvent},
    {OpKind::kUnknown, "", "", kTraitNone},
}};

constexpr bool TableMatchesEnum() {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (static_cast<size_t>(kOps[i].kind) != i) return false;
  return true;
}
static_assert(TableMatchesEnum(), "kOps must list every OpKind in enum order");

}  // namespace

const OpInfo& InfoOf(OpKind kind) { return kOps[static_cast<size_t>(kind)]; }

std::optional<OpKind> FindOp(std::string_view name) {
  for (const auto& info : kOps)
    if (info.kind != OpKind::kUnknown && info.name == name) return info.kind;
  return std::nullopt;
}

}  // namespace harness::compiler
