// The sequence-parallel pass (msmodeling's SequenceParallelPass): every TP all_reduce
// that feeds an RMSNorm becomes reduce_scatter + a norm on the local token shard +
// all_gather, so norms and residual adds run on S/tp tokens.
//
//   P1  all_reduce -> [region_begin] -> rms_norm | add_rms_norm
//   P2  [local residual] + all_reduce -> add_rms_norm2 (outputs stay local where a P3
//       or P2 chain consumes them, else get an all_gather)
//   P3  getitem[1] (local residual) + all_reduce -> add -> [region_end -> copies] -> norm
//
// With any moe_gating_top_k_softmax in the graph, P2 and P3 use the MoE variants
// (structural batched P2 that keeps an all_reduce of already-local values and moves the
// reduce_scatter into the shape-defining arg 0; P3 that crosses into the next region).
// Region replay's bookkeeping users — the graph's output node and v2 copies that read a
// value only as output_template — are not dataflow users, and the walk after a residual
// add goes through v2 copies by their current-input edge. See docs/compiler.md.
#pragma once

#include "harness/util/error.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

struct SequenceParallelOptions {
  // Fault switch sp-counts-bookkeeping-users: count every user when walking from the
  // residual add to the next norm, and walk only v1 copies — the pass as it was before
  // it learned about _internal_copy_region_v2. With v2 replay this leaves the residual
  // all_reduce in place.
  bool count_bookkeeping_users = false;
};

struct SequenceParallelStats {
  int p1 = 0;
  int p2 = 0;
  int p3 = 0;
  int total() const { return p1 + p2 + p3; }
};

// Rewrites graph in place. A no-op when the graph has no all_reduce with a rank group
// of more than one rank. Fails when the rewritten graph's shapes do not check.
harness::Result<SequenceParallelStats> RunSequenceParallelPass(Graph& graph,
                                                               const SequenceParallelOptions& options = {});

}  // namespace harness::compiler
