// msmodeling's GroupedMatmulSwigluPass: a grouped matmul whose output is split in two
// along the last dim and fed to swiglu (GMM1 of an MoE MLP) becomes one fused op:
//
//   grouped_matmul            -> grouped_matmul_swiglu
//   grouped_matmul_quant      -> grouped_matmul_quant_swiglu
//   grouped_matmul_quant_int4 -> grouped_matmul_quant_int4_swiglu
//   grouped_matmul_fp8        -> grouped_matmul_fp8_swiglu
//   grouped_matmul_mxfp4      -> grouped_matmul_mxfp4_swiglu, or, when the swiglu's only
//                                user is dynamic_quantize_mxfp4(swiglu, group_size),
//                                grouped_matmul_mxfp4_swiglu_quant(..., group_size)
//                                replacing the quant's (payload, scale) too (PR !699).
#pragma once

#include "harness/util/error.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

struct GroupedMatmulSwigluOptions {
  // false is fault switch gmm-no-mxfp4-quant-fusion: the pass before it learned the
  // MXFP4 quant tail.
  bool fuse_mxfp4_quant = true;
  // Fault switch graph-topo-disorder: the unquantized rewrite puts the fused node after
  // the node that consumes it and skips the re-sort.
  bool misplace_unquantized = false;
};

struct GroupedMatmulSwigluStats {
  int fused = 0;             // all rewrites
  int fused_with_quant = 0;  // of which took the MXFP4 quant tail
};

harness::Result<GroupedMatmulSwigluStats> RunGroupedMatmulSwigluPass(Graph& graph,
                                                                     const GroupedMatmulSwigluOptions& options = {});

}  // namespace harness::compiler
