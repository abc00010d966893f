#include "runners/refstack/compiler/gmm_swiglu_pass.h"

#include <fmt/format.h>

#include <optional>

namespace harness::compiler {
namespace {

std::optional<OpKind> FusedOf(OpKind gmm) {
  switch (gmm) {
    case OpKind::kGroupedMatmul:
      return OpKind::kGroupedMatmulSwiglu;
    case OpKind::kGroupedMatmulQuant:
      return OpKind::kGroupedMatmulQuantSwiglu;
    case OpKind::kGroupedMatmulQuantInt4:
      return OpKind::kGroupedMatmulQuantInt4Swiglu;
    case OpKind::kGroupedMatmulFp8:
      return OpKind::kGroupedMatmulFp8Swiglu;
    case OpKind::kGroupedMatmulMxfp4:
      return OpKind::kGroupedMatmulMxfp4Swiglu;
    default:
      return std::nullopt;
  }
}

// split_with_sizes(x, [a, b], dim) or split(x, size, dim) along the last dim.
bool IsLastDimSplitInTwo(const Node* split) {
  const Node* x = split->node_arg(0);
  const auto dim = split->int_arg(2);
  if (x == nullptr || !x->has_tensor() || !dim) return false;
  const auto last = static_cast<int64_t>(x->shape().size()) - 1;
  if (*dim != -1 && *dim != last) return false;
  if (split->kind() == OpKind::kSplitWithSizes) return split->int_list_arg(1)->size() == 2;
  return split->kind() == OpKind::kSplit && split->outputs().size() == 2;
}

// The grouped matmul behind swiglu(getitem(split, 0|1), getitem(split, 1|0)), if the
// chain has no other users.
Node* MatchGmm(const Node* swiglu) {
  if (swiglu->args().size() != 2) return nullptr;
  Node* a = swiglu->node_arg(0);
  Node* b = swiglu->node_arg(1);
  if (a == nullptr || b == nullptr || a->kind() != OpKind::kGetItem || b->kind() != OpKind::kGetItem) return nullptr;
  Node* split = a->node_arg(0);
  if (b->node_arg(0) != split || *a->int_arg(1) + *b->int_arg(1) != 1 || *a->int_arg(1) == *b->int_arg(1))
    return nullptr;
  if (split->kind() != OpKind::kSplitWithSizes && split->kind() != OpKind::kSplit) return nullptr;
  if (!IsLastDimSplitInTwo(split) || split->users().size() != 2) return nullptr;
  if (a->users().size() != 1 || b->users().size() != 1) return nullptr;
  Node* gmm = split->node_arg(0);
  return FusedOf(gmm->kind()) ? gmm : nullptr;
}

}  // namespace

harness::Result<GroupedMatmulSwigluStats> RunGroupedMatmulSwigluPass(Graph& graph,
                                                                     const GroupedMatmulSwigluOptions& options) {
  GroupedMatmulSwigluStats stats;
  bool misplaced = false;
  try {
    for (Node* swiglu : graph.Nodes()) {
      if (swiglu->kind() != OpKind::kSwiglu) continue;
      Node* gmm = MatchGmm(swiglu);
      if (gmm == nullptr) continue;
      OpKind target = *FusedOf(gmm->kind());
      std::vector<Arg> args = gmm->args();
      Node* replaced = swiglu;
      if (gmm->kind() == OpKind::kGroupedMatmulMxfp4 && options.fuse_mxfp4_quant && swiglu->users().size() == 1) {
        Node* quant = swiglu->users()[0];
        const auto group = quant->int_arg(1);
        if (quant->kind() == OpKind::kDynamicQuantizeMxfp4 && quant->node_arg(0) == swiglu && group && *group > 0) {
          target = OpKind::kGroupedMatmulMxfp4SwigluQuant;
          args.emplace_back(*group);
          replaced = quant;
        }
      }
      const bool misplace =
          options.misplace_unquantized && target == OpKind::kGroupedMatmulSwiglu && !replaced->users().empty();
      Node* fused;
      {
        auto guard = misplace ? graph.InsertAfter(replaced->users()[0]) : graph.InsertBefore(replaced);
        fused = graph.Call(target, std::move(args));
      }
      graph.ReplaceAllUses(replaced, fused);
      misplaced = misplaced || misplace;
      ++stats.fused;
      stats.fused_with_quant += target == OpKind::kGroupedMatmulMxfp4SwigluQuant;
    }
  } catch (const ShapeError& e) {
    return harness::Error{harness::ExitCode::kFail, fmt::format("grouped-matmul swiglu fusion: {}", e.what())};
  }
  if (stats.fused > 0) {
    if (!misplaced) {
      if (auto sorted = graph.StableTopoSort(); !sorted) return sorted.error();
    }
    graph.EliminateDeadCode();
  }
  return stats;
}

}  // namespace harness::compiler
