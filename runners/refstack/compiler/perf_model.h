// The analytic performance model (msmodeling's AnalyticPerformanceModel, "analytic"):
// per call, time = max(MMA time + GP time, memory time) + a static cost, where MMA/GP
// time is work / (peak[dtype] * compute efficiency) and memory time is bytes /
// (bandwidth * memory efficiency). Collectives take the larger of their memory roofline
// and a ring/tree model on the interconnect level that spans the group. Views cost 0.
#pragma once

#include <cstdint>

#include "harness/util/error.h"
#include "runners/refstack/compiler/device.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

enum class Collective { kNone, kAllReduce, kAllGather, kReduceScatter };

// The work of one call of an op.
struct OpCost {
  bool zero = false;  // a view: no time at all
  double mma_ops = 0;
  DType mma_dtype = DType::kBFloat16;
  double gp_ops = 0;
  DType gp_dtype = DType::kFloat32;
  double bytes = 0;  // read + written
  Collective collective = Collective::kNone;
  double comm_bytes = 0;  // all_reduce: the tensor; all_gather: per-rank input; reduce_scatter: full input
  int64_t ranks = 1;
};

OpCost CostOf(const Node& node);

// Seconds of one collective of `bytes` over `ranks` ranks on the profile's interconnect:
// all_reduce  min(ring 2(N-1)a + 2(N-1)/N M/B, tree 2 log2(N) a + 2M/B)
// all_gather  min(ring (N-1)a + (N-1)M/B,      recursive doubling log2(N) a + (N-1)M/B)
// reduce_scatter min(ring (N-1)a + (N-1)/N M/B, recursive halving log2(N) a + (N-1)/N M/B)
// with a the level's latency and B its link bandwidth x comm efficiency (x (N-1)/(size-1)
// on a full mesh). log2 rounds up to whole steps.
harness::Result<double> CollectiveSeconds(Collective collective, double bytes, int64_t ranks,
                                          const DeviceProfile& device);

// Seconds of one call of node on the device. Fails when the device has no peak for a
// dtype the op computes in (the message lists the ones it has).
harness::Result<double> EstimateSeconds(const Node& node, const DeviceProfile& device);

}  // namespace harness::compiler
