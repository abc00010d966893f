#include "runners/refstack/compiler/perf_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace harness::compiler {
namespace {

double Bytes(const TensorMeta& m) { return m.bytes(); }
double Numel(const TensorMeta& m) { return static_cast<double>(m.numel()); }

// Bytes of every tensor argument (node lists included) and every output.
double TrafficBytes(const Node& n) {
  double bytes = 0;
  ForEachNodeArg(n.args(), [&](Node* input) {
    for (const auto& m : input->outputs()) bytes += Bytes(m);
  });
  for (const auto& m : n.outputs()) bytes += Bytes(m);
  return bytes;
}

// GP work runs in the op's float type; integer and sub-16-bit work counts as f32.
DType GpDType(DType d) {
  return d == DType::kBFloat16 || d == DType::kFloat16 || d == DType::kFloat32 ? d : DType::kFloat32;
}

const TensorMeta& ArgMeta(const Node& n, size_t i) { return n.node_arg(i)->meta(); }

DType MmaDTypeOfGroupedMatmul(OpKind k, DType x) {
  switch (k) {
    case OpKind::kGroupedMatmulQuant:
    case OpKind::kGroupedMatmulQuantSwiglu:
    case OpKind::kGroupedMatmulQuantInt4:
    case OpKind::kGroupedMatmulQuantInt4Swiglu:
      return DType::kInt8;  // W4A8 multiplies int8 activations
    case OpKind::kGroupedMatmulFp8:
    case OpKind::kGroupedMatmulFp8Swiglu:
      return DType::kFloat8E4M3;
    case OpKind::kGroupedMatmulMxfp4:
    case OpKind::kGroupedMatmulMxfp4Swiglu:
    case OpKind::kGroupedMatmulMxfp4SwigluQuant:
      return DType::kFloat4E2M1;
    default:
      return x;
  }
}

}  // namespace

OpCost CostOf(const Node& n) {
  OpCost c;
  const OpKind k = n.kind();
  if (k != OpKind::kUnknown && (InfoOf(k).traits & (kTraitZeroCost | kTraitNoEvent))) {
    c.zero = true;
    return c;
  }
  c.bytes = TrafficBytes(n);
  auto gp = [&](double ops, DType d) {
    c.gp_ops = ops;
    c.gp_dtype = GpDType(d);
  };
  switch (k) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kGeScalar:
    case OpKind::kLtScalar:
    case OpKind::kBitwiseAnd:
      gp(Numel(n.meta()), n.meta().dtype);
      break;
    case OpKind::kEmbedding:
    case OpKind::kIndexSelect:
    case OpKind::kInitRoutingV2:
      // A gather reads the selected rows and the indices and writes the rows.
      c.bytes = 2 * Bytes(n.meta()) + Bytes(ArgMeta(n, k == OpKind::kIndexSelect ? 2 : 1));
      break;
    case OpKind::kMm:
    case OpKind::kStaticQuantLinear:
    case OpKind::kStaticQuantLinearInt4:
    case OpKind::kFp8Linear:
    case OpKind::kMxfp4Linear: {
      const TensorMeta& x = ArgMeta(n, 0);
      const TensorMeta& w = ArgMeta(n, 1);
      c.mma_ops = 2.0 * x.shape[0] * x.shape[1] * w.shape[1];
      c.mma_dtype = k == OpKind::kStaticQuantLinearInt4 ? DType::kInt8 : x.dtype;
      break;
    }
    case OpKind::kGroupedMatmul:
    case OpKind::kGroupedMatmulQuant:
    case OpKind::kGroupedMatmulQuantInt4:
    case OpKind::kGroupedMatmulFp8:
    case OpKind::kGroupedMatmulMxfp4:
    case OpKind::kGroupedMatmulSwiglu:
    case OpKind::kGroupedMatmulQuantSwiglu:
    case OpKind::kGroupedMatmulQuantInt4Swiglu:
    case OpKind::kGroupedMatmulFp8Swiglu:
    case OpKind::kGroupedMatmulMxfp4Swiglu:
    case OpKind::kGroupedMatmulMxfp4SwigluQuant: {
      double rows = 0;
      DType x_dtype = DType::kBFloat16;
      for (const Node* x : std::get<NodeList>(n.args()[0])) {
        rows += static_cast<double>(x->shape()[0]);
        x_dtype = x->meta().dtype;
      }
      const Shape& w = std::get<NodeList>(n.args()[1])[0]->shape();
      c.mma_ops = 2.0 * rows * static_cast<double>(w[1]) * static_cast<double>(w[2]);
      c.mma_dtype = MmaDTypeOfGroupedMatmul(k, x_dtype);
      if (k >= OpKind::kGroupedMatmulSwiglu) {
        const double out = Numel(n.outputs()[0]);
        double ops = 7 * out;  // SwiGLU epilogue
        if (k == OpKind::kGroupedMatmulMxfp4SwigluQuant) ops += 2 * out + Numel(n.outputs()[1]);
        gp(ops, DType::kFloat32);
      }
      break;
    }
    case OpKind::kRmsNorm:
      gp(4 * Numel(n.meta()), n.meta().dtype);
      break;
    case OpKind::kAddRmsNorm:
    case OpKind::kAddRmsNorm2:
      gp(5 * Numel(n.outputs()[0]), n.outputs()[0].dtype);
      break;
    case OpKind::kApplyRope:
      gp(3 * (Numel(n.outputs()[0]) + Numel(n.outputs()[1])), n.outputs()[0].dtype);
      break;
    case OpKind::kReshapeAndCache:
      c.bytes = 2 * (Bytes(ArgMeta(n, 0)) + Bytes(ArgMeta(n, 1))) + Bytes(ArgMeta(n, 3));
      break;
    case OpKind::kAttention: {
      // Prefill without context: each query's S tokens attend to its own S keys (the
      // causal mask is not discounted). QK^T and PV on the MMA units, softmax on GP.
      const TensorMeta& q = ArgMeta(n, 0);
      const double queries = Numel(ArgMeta(n, 7));
      const double tokens = static_cast<double>(q.shape[0]);
      const double scores = queries * (tokens / queries) * (tokens / queries) * static_cast<double>(q.shape[1]);
      c.mma_ops = 4 * scores * static_cast<double>(q.shape[2]);
      c.mma_dtype = q.dtype;
      gp(5 * scores, DType::kFloat32);
      c.bytes = Bytes(q) + Bytes(ArgMeta(n, 1)) + Bytes(ArgMeta(n, 2)) + Bytes(n.meta());
      break;
    }
    case OpKind::kSwiglu:
      gp(7 * Numel(n.meta()), n.meta().dtype);
      break;
    case OpKind::kDynamicQuantizeSymmetric:
    case OpKind::kDynamicQuantizeMxfp4:
      gp(2 * Numel(ArgMeta(n, 0)) + Numel(n.outputs()[1]), ArgMeta(n, 0).dtype);
      break;
    case OpKind::kMoeGatingTopKSoftmax:
      gp(6 * Numel(ArgMeta(n, 0)), DType::kFloat32);  // softmax and top-k selection
      break;
    case OpKind::kUnpermuteTokens:
      gp(2 * Numel(ArgMeta(n, 0)), ArgMeta(n, 0).dtype);  // weight and sum the k copies
      break;
    case OpKind::kAllReduce:
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
      c.collective = k == OpKind::kAllReduce   ? Collective::kAllReduce
                     : k == OpKind::kAllGather ? Collective::kAllGather
                                               : Collective::kReduceScatter;
      c.comm_bytes = Bytes(ArgMeta(n, 0));
      c.ranks = static_cast<int64_t>(n.int_list_arg(k == OpKind::kAllReduce ? 2 : 3)->size());
      break;
    default:
      break;  // memory traffic only
  }
  return c;
}

harness::Result<double> CollectiveSeconds(Collective collective, double bytes, int64_t ranks,
                                          const DeviceProfile& device) {
  if (ranks <= 1) return 0.0;
  int64_t span = 1;
  const InterconnectLevel* level = nullptr;
  for (const auto& l : device.levels) {
    span *= l.size;
    if (ranks <= span) {
      level = &l;
      break;
    }
  }
  if (level == nullptr)
    return harness::UsageError(fmt::format("{}: a group of {} ranks is larger than the interconnect ({} devices)",
                                           device.origin, ranks, span));
  double bw = level->bandwidth * device.comm_efficiency;
  const auto n = static_cast<double>(ranks);
  if (level->full_mesh && level->size > 1) bw *= (n - 1) / static_cast<double>(level->size - 1);
  const double a = level->latency;
  const double steps = std::ceil(std::log2(n));
  switch (collective) {
    case Collective::kAllReduce:
      return std::min(2 * (n - 1) * a + 2 * (n - 1) / n * bytes / bw, 2 * steps * a + 2 * bytes / bw);
    case Collective::kAllGather:
      return std::min((n - 1) * a, steps * a) + (n - 1) * bytes / bw;
    case Collective::kReduceScatter:
      return std::min((n - 1) * a, steps * a) + (n - 1) / n * bytes / bw;
    case Collective::kNone:
      break;
  }
  return 0.0;
}

harness::Result<double> EstimateSeconds(const Node& node, const DeviceProfile& device) {
  const OpCost c = CostOf(node);
  if (c.zero) return 0.0;
  const double memory = c.bytes / (device.memory_bandwidth * device.memory_efficiency);
  if (c.collective != Collective::kNone) {
    auto comm = CollectiveSeconds(c.collective, c.comm_bytes, c.ranks, device);
    if (!comm) return comm.error();
    return std::max(memory, *comm) + device.static_comm;
  }
  auto peak = [&](const std::map<DType, double>& table, DType dtype, const char* unit) -> harness::Result<double> {
    auto it = table.find(dtype);
    if (it != table.end()) return it->second * device.compute_efficiency;
    std::vector<std::string_view> known;
    for (const auto& [d, v] : table) known.push_back(DTypeName(d));
    return harness::UsageError(fmt::format("{}: no {} peak for {} (needed by '{}', {}; the profile has: {})",
                                           device.origin, unit, DTypeName(dtype), node.name(), node.op(),
                                           fmt::join(known, ", ")));
  };
  double compute = 0;
  if (c.mma_ops > 0) {
    auto p = peak(device.mma_peak, c.mma_dtype, "MMA");
    if (!p) return p.error();
    compute += c.mma_ops / *p;
  }
  if (c.gp_ops > 0) {
    auto p = peak(device.gp_peak, c.gp_dtype, "GP");
    if (!p) return p.error();
    compute += c.gp_ops / *p;
  }
  return std::max(compute, memory) + (c.mma_ops > 0 ? device.static_mma : device.static_gp);
}

}  // namespace harness::compiler
