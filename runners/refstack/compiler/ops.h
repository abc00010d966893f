// The op vocabulary of the graph IR: FX's structural node kinds (placeholder, get_attr,
// getitem, output) plus every aten / tensor_cast op the model builders and passes emit,
// named namespace.op.overload as in msmodeling's performance table. Signatures are in
// docs/compiler.md; shape rules in infer.cc; costs in perf_model.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace harness::compiler {

enum class OpKind : uint8_t {
  // Structural (FX node kinds): never events, never costed.
  kPlaceholder,
  kGetAttr,
  kGetItem,
  kOutput,
  // aten
  kView,
  kUnsqueeze,
  kAdd,
  kSub,
  kMul,
  kGeScalar,
  kLtScalar,
  kBitwiseAnd,
  kEmbedding,
  kIndexSelect,
  kMm,
  kSplitWithSizes,
  kSplit,
  // tensor_cast communication
  kAllReduce,
  kReduceScatter,
  kAllGather,
  // norms
  kRmsNorm,
  kAddRmsNorm,
  kAddRmsNorm2,
  // attention
  kApplyRope,
  kReshapeAndCache,
  kAttention,
  // activation and dynamic activation quantization
  kSwiglu,
  kDynamicQuantizeSymmetric,
  kDynamicQuantizeMxfp4,
  // quantized linears
  kStaticQuantLinear,
  kStaticQuantLinearInt4,
  kFp8Linear,
  kMxfp4Linear,
  // grouped matmuls (MoE experts) and their GMM1 + SwiGLU fusions
  kGroupedMatmul,
  kGroupedMatmulQuant,
  kGroupedMatmulQuantInt4,
  kGroupedMatmulFp8,
  kGroupedMatmulMxfp4,
  kGroupedMatmulSwiglu,
  kGroupedMatmulQuantSwiglu,
  kGroupedMatmulQuantInt4Swiglu,
  kGroupedMatmulFp8Swiglu,
  kGroupedMatmulMxfp4Swiglu,
  kGroupedMatmulMxfp4SwigluQuant,
  // MoE routing
  kMoeGatingTopKSoftmax,
  kInitRoutingV2,
  kUnpermuteTokens,
  // region replay (zero-cost control ops, never events)
  kRegionBegin,
  kRegionEnd,
  kCopyRegion,
  kCopyRegionV2,
  // An op the IR does not know: carries its own name and explicit meta.
  kUnknown,
};

enum OpTrait : uint8_t {
  kTraitNone = 0,
  kTraitImpure = 1 << 0,    // mutates state: dead-code elimination keeps it
  kTraitNoEvent = 1 << 1,   // not an executed op: no row in the performance table
  kTraitZeroCost = 1 << 2,  // an executed view: a row with zero time
};

struct OpInfo {
  OpKind kind;
  std::string_view name;  // namespace.op.overload (structural kinds: the FX node kind)
  std::string_view base;  // node-name stem, as FX derives it
  uint8_t traits;
};

const OpInfo& InfoOf(OpKind kind);
// The known op with this name, if any.
std::optional<OpKind> FindOp(std::string_view name);

inline bool IsComm(OpKind k) {
  return k == OpKind::kAllReduce || k == OpKind::kReduceScatter || k == OpKind::kAllGather;
}

}  // namespace harness::compiler
