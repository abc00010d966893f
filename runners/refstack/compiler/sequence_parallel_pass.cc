#include "runners/refstack/compiler/sequence_parallel_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace harness::compiler {
namespace {

bool IsSingleOutputNorm(const Node* n) { return n->kind() == OpKind::kRmsNorm || n->kind() == OpKind::kAddRmsNorm; }
bool IsAnyNorm(const Node* n) { return IsSingleOutputNorm(n) || n->kind() == OpKind::kAddRmsNorm2; }
// Ops a locality proof looks through (msmodeling's transparent set).
bool IsTransparent(const Node* n) {
  const OpKind k = n->kind();
  return k == OpKind::kView || k == OpKind::kRegionBegin || k == OpKind::kRegionEnd || k == OpKind::kCopyRegion;
}

int64_t WorldSize(const Node* comm) {
  return static_cast<int64_t>(comm->int_list_arg(comm->kind() == OpKind::kAllReduce ? 2 : 3)->size());
}

// The sequence axis of [B, S, H] (dim 1), or the token axis of a flattened [T, H] (dim 0).
int64_t ShardDim(const Shape& shape) { return shape.size() >= 3 ? 1 : 0; }

std::optional<Shape> LocalShape(Shape shape, int64_t ws) {
  const int64_t dim = ShardDim(shape);
  if (dim >= static_cast<int64_t>(shape.size()) || shape[dim] % ws != 0) return std::nullopt;
  shape[dim] /= ws;
  return shape;
}

// Whether a value's shape is the expected local shape: equal up to leading 1s (a dropped
// batch dim), or the same number of elements with the same hidden width (a flattened
// [B*S/tp, H] against [B, S/tp, H]).
bool MatchesLocal(const Shape& shape, const Shape& expected) {
  auto strip = [](const Shape& s) {
    auto it = std::find_if(s.begin(), s.end(), [](int64_t d) { return d != 1; });
    return Shape(it, s.end());
  };
  if (strip(shape) == strip(expected)) return true;
  return !shape.empty() && !expected.empty() && NumElements(shape) == NumElements(expected) &&
         shape.back() == expected.back();
}

// The all_reduce (or the reduce_scatter that already replaced it) an operand comes from,
// and the edge into it: child's argument arg_index, or the consumer's own operand when
// child is null.
struct CommPath {
  Node* all_reduce = nullptr;
  Node* reduce_scatter = nullptr;
  Node* child = nullptr;
  size_t arg_index = 0;
};

class SequenceParallel {
 public:
  SequenceParallel(Graph& g, const SequenceParallelOptions& o) : g_(g), o_(o) {}

  SequenceParallelStats Run() {
    SequenceParallelStats stats;
    const Node* first = nullptr;
    for (const Node* n : g_.Nodes())
      if (n->kind() == OpKind::kAllReduce && n->int_list_arg(2)) {
        first = n;
        break;
      }
    if (first == nullptr || WorldSize(first) <= 1) return stats;
    for (const Node* n : g_.Nodes()) moe_ = moe_ || n->kind() == OpKind::kMoeGatingTopKSoftmax;
    stats.p1 = P1();
    stats.p2 = moe_ ? P2Moe() : P2Dense();
    stats.p3 = P3();
    if (stats.total() > 0) g_.EliminateDeadCode();
    return stats;
  }

 private:
  // --- helpers ------------------------------------------------------------------------

  // The reduce_scatter output shape, if the comm can be sharded. When the all_reduce's
  // input and output ranks differ by one (an IR that dropped a leading batch dim) the
  // output's shape and shard dim decide.
  std::optional<Shape> ReduceScatterShape(const Node* ar) const {
    const Shape& in = ar->node_arg(0)->shape();
    const Shape& out = ar->shape();
    const int64_t ws = WorldSize(ar);
    if (in.size() == out.size()) return LocalShape(in, ws);
    if (in.size() + 1 == out.size() || out.size() + 1 == in.size()) return LocalShape(out, ws);
    return std::nullopt;
  }
  bool Shardable(const Node* ar) const { return ReduceScatterShape(ar).has_value(); }

  // reduce_scatter(input, shard_dim, rank, group) right after the all_reduce, once per
  // all_reduce; a rank-reduced IR also gets a view to the local shape.
  Node* ReduceScatterFor(Node* ar) {
    if (auto it = replacement_.find(ar); it != replacement_.end()) return it->second;
    Node* input = ar->node_arg(0);
    auto guard = g_.InsertAfter(ar);
    Node* rs = g_.Call(OpKind::kReduceScatter, {input, ShardDim(input->shape()), ar->args()[1], ar->args()[2]});
    rs->SetFlag(kFlagSpSourceAllReduce);
    source_[rs] = ar;
    Node* replacement = rs;
    if (input->shape().size() != ar->shape().size())
      replacement = g_.Call(OpKind::kView, {rs, *ReduceScatterShape(ar)});
    replacement_[ar] = replacement;
    return replacement;
  }

  // all_gather(n) right after n, taking over n's other users; an existing one is reused.
  Node* AllGatherAfter(Node* n, const Node* comm) {
    for (Node* u : n->users())
      if (u->kind() == OpKind::kAllGather) return u;
    Node* ag;
    {
      auto guard = g_.InsertAfter(n);
      ag = g_.Call(OpKind::kAllGather, {n, ShardDim(n->shape()), comm->args()[1], comm->args()[2]});
    }
    g_.ReplaceAllUses(n, ag);
    return ag;
  }

  // Users that consume the value. Region replay adds two kinds of bookkeeping users: the
  // output node (the representative's output is a formal graph output) and v2 copies
  // that read it only as their output_template.
  std::vector<Node*> DataflowUsers(Node* n) const {
    if (o_.count_bookkeeping_users) return n->users();
    std::vector<Node*> out;
    for (Node* u : n->users()) {
      if (u->kind() == OpKind::kOutput) continue;
      if (u->kind() == OpKind::kCopyRegionV2 && u->node_arg(0) != n) continue;
      out.push_back(u);
    }
    return out;
  }

  Node* SoleDataflowUser(Node* n) const {
    auto users = DataflowUsers(n);
    return users.size() == 1 ? users[0] : nullptr;
  }

  bool IsCopy(const Node* n) const {
    return n->kind() == OpKind::kCopyRegion || (!o_.count_bookkeeping_users && n->kind() == OpKind::kCopyRegionV2);
  }

  // add -> [region_end] -> copy* -> norm, each step the single dataflow user. The MoE
  // variant also crosses into the next representative region and takes the unique
  // single-output norm among its begin marker's users.
  Node* FindNormAfterAdd(Node* add) const {
    Node* cur = SoleDataflowUser(add);
    if (cur == nullptr) return nullptr;
    if (cur->kind() == OpKind::kRegionEnd) cur = SoleDataflowUser(cur);
    while (cur != nullptr && IsCopy(cur)) cur = SoleDataflowUser(cur);
    if (cur == nullptr) return nullptr;
    if (moe_ && cur->kind() == OpKind::kRegionBegin) {
      Node* norm = nullptr;
      for (Node* u : cur->users()) {
        if (!IsSingleOutputNorm(u)) continue;
        if (norm != nullptr) return nullptr;
        norm = u;
      }
      return norm;
    }
    return IsSingleOutputNorm(cur) ? cur : nullptr;
  }

  // Whether v is proven to hold the local token shard: a reduce_scatter, a value of the
  // expected local shape, the residual output of a norm flagged local (MoE: anything
  // flagged local), looking through transparent ops and v2 copies' templates. An
  // all_gather is full by definition. expected == nullptr: provenance only.
  bool IsSpLocal(Node* v, const Shape* expected) const {
    for (;;) {
      const OpKind k = v->kind();
      if (k == OpKind::kAllGather) return false;
      if (k == OpKind::kReduceScatter) return true;
      if (expected && v->has_tensor() && MatchesLocal(v->shape(), *expected)) return true;
      if (k == OpKind::kGetItem) {
        const Node* parent = v->node_arg(0);
        const int64_t index = *v->int_arg(1);
        if (index == 1 && parent->HasFlag(kFlagSpLocal)) return true;
        if (moe_ && index <= 1 && IsAnyNorm(parent) && parent->HasFlag(kFlagSpLocal)) return true;
      }
      if (moe_ && v->HasFlag(kFlagSpLocal)) return true;
      if (IsTransparent(v)) {
        v = v->node_arg(0);
      } else if (k == OpKind::kCopyRegionV2) {
        v = v->node_arg(1);
      } else {
        return false;
      }
    }
  }

  // Walks up from an operand through views (and, across replay boundaries, region_end,
  // v1 copies by their input and v2 copies by their template) to its all_reduce. A
  // reduce_scatter this pass inserted counts only behind a boundary: it is a replayed
  // representative's comm, already rewritten.
  std::optional<CommPath> ResolveComm(Node* operand, bool through_boundaries) const {
    CommPath path;
    bool crossed_boundary = false;
    Node* v = operand;
    for (;;) {
      if (v->kind() == OpKind::kAllReduce) {
        path.all_reduce = v;
        return path;
      }
      if (v->kind() == OpKind::kReduceScatter) {
        auto it = source_.find(v);
        if (it == source_.end() || !crossed_boundary) return std::nullopt;
        path.all_reduce = it->second;
        path.reduce_scatter = v;
        return path;
      }
      size_t next = 0;
      if (v->kind() == OpKind::kView) {
        next = 0;
      } else if (through_boundaries && (v->kind() == OpKind::kRegionEnd || v->kind() == OpKind::kCopyRegion)) {
        next = 0;
        crossed_boundary = true;
      } else if (through_boundaries && v->kind() == OpKind::kCopyRegionV2) {
        next = 1;
        crossed_boundary = true;
      } else {
        return std::nullopt;
      }
      path.child = v;
      path.arg_index = next;
      v = v->node_arg(next);
    }
  }

  bool UsableComm(const std::optional<CommPath>& path) const {
    return path && (path->reduce_scatter != nullptr || Shardable(path->all_reduce));
  }

  // Points the path's edge at the reduce_scatter and brings the values between it and
  // the consumer to the local shape: views get their token dim divided, markers and
  // copies take their input's (or template's) meta and are flagged local.
  void Redirect(const CommPath& path, Node* rs, Node* consumer, size_t slot) {
    const int64_t ws = WorldSize(path.all_reduce);
    if (path.child == nullptr) {
      g_.SetArg(consumer, slot, rs);
      return;
    }
    if (path.child->node_arg(path.arg_index) != rs) g_.SetArg(path.child, path.arg_index, rs);
    Refresh(path.child, ws);
  }

  void Refresh(Node* n, int64_t ws) {
    const OpKind k = n->kind();
    if (k == OpKind::kView) {
      IntList size = *n->int_list_arg(1);
      const int64_t dim = ShardDim(n->shape());
      if (size[dim] != -1) {
        if (size[dim] % ws != 0)
          throw ShapeError(fmt::format("cannot shard view '{}' {} by {}", n->name(), ShapeString(size), ws));
        size[dim] /= ws;
      }
      g_.SetArg(n, 1, size);
    } else if (k == OpKind::kRegionBegin || k == OpKind::kRegionEnd || k == OpKind::kCopyRegion ||
               k == OpKind::kCopyRegionV2) {
      n->SetFlag(kFlagSpLocal);
    } else {
      return;
    }
    g_.Reinfer(n);
    for (Node* u : n->users()) {
      const bool follows = u->kind() == OpKind::kView || u->kind() == OpKind::kRegionEnd ||
                           u->kind() == OpKind::kCopyRegion ||
                           (u->kind() == OpKind::kCopyRegionV2 && u->node_arg(1) == n);
      if (follows) Refresh(u, ws);
    }
  }

  std::optional<size_t> SlotOf(const Node* consumer, const Node* operand) const {
    for (size_t i = 0; i < 2; ++i)
      if (consumer->node_arg(i) == operand) return i;
    return std::nullopt;
  }

  // A flagged add_rms_norm2's residual output stays local when the next norm consumes it
  // locally: a P3 tail (add_rms_norm fused tail, or add -> ... -> norm) whose other
  // operand is a shardable all_reduce.
  bool IsP3Tail(Node* residual) const {
    Node* u = SoleDataflowUser(residual);
    if (u == nullptr) return false;
    auto slot = SlotOf(u, residual);
    if (!slot || (u->kind() != OpKind::kAddRmsNorm && u->kind() != OpKind::kAdd)) return false;
    Node* other = u->node_arg(1 - *slot);
    if (other == nullptr || !UsableComm(ResolveComm(other, false))) return false;
    return u->kind() == OpKind::kAddRmsNorm || FindNormAfterAdd(u) != nullptr;
  }

  // ... or a P2 chain: it feeds another add_rms_norm2 that is local or whose other
  // operand is a shardable all_reduce or a reduce_scatter.
  bool IsP2ChainTail(Node* residual) const {
    Node* u = SoleDataflowUser(residual);
    if (u == nullptr || u->kind() != OpKind::kAddRmsNorm2) return false;
    auto slot = SlotOf(u, residual);
    if (!slot) return false;
    if (u->HasFlag(kFlagSpLocal)) return true;
    Node* other = u->node_arg(1 - *slot);
    return other->kind() == OpKind::kReduceScatter || UsableComm(ResolveComm(other, true));
  }

  // MoE: ... or it is the residual of residual + moe_output where the MoE output is
  // already on local tokens. An all_reduced MoE output is P3's to rewrite, so the search
  // stops there too.
  bool FeedsMoeResidualAdd(Node* residual) const {
    Node* u = SoleDataflowUser(residual);
    if (u == nullptr || u->kind() != OpKind::kAdd) return false;
    auto slot = SlotOf(u, residual);
    Node* other = slot ? u->node_arg(1 - *slot) : nullptr;
    if (other == nullptr) return false;
    // Upstream search that stops at norms and comms (the MoE block of an earlier layer
    // must not count).
    std::vector<Node*> stack{other};
    std::unordered_set<Node*> seen;
    while (!stack.empty()) {
      Node* v = stack.back();
      stack.pop_back();
      if (!seen.insert(v).second) continue;
      if (v->kind() == OpKind::kUnpermuteTokens || v->kind() == OpKind::kMoeGatingTopKSoftmax) return true;
      if (IsAnyNorm(v) || IsComm(v->kind())) continue;
      ForEachNodeArg(v->args(), [&](Node* input) { stack.push_back(input); });
    }
    return false;
  }

  void KeepOrGatherOutputs(Node* norm, const Node* comm) {
    const std::vector<Node*> users = norm->users();
    for (Node* u : users) {
      if (u->kind() != OpKind::kGetItem) continue;
      const bool residual = *u->int_arg(1) == 1;
      if (residual && (IsP3Tail(u) || IsP2ChainTail(u) || (moe_ && FeedsMoeResidualAdd(u)))) {
        u->SetFlag(kFlagSpLocal);
        continue;
      }
      AllGatherAfter(u, comm);
    }
  }

  // --- patterns -----------------------------------------------------------------------

  int P1() {
    int matched = 0;
    for (Node* norm : g_.Nodes()) {
      if (!IsSingleOutputNorm(norm)) continue;
      Node* a0 = norm->node_arg(0);
      Node* marker = nullptr;
      Node* ar = nullptr;
      if (a0->kind() == OpKind::kAllReduce) {
        ar = a0;
      } else if (a0->kind() == OpKind::kRegionBegin && a0->node_arg(0)->kind() == OpKind::kAllReduce) {
        marker = a0;
        ar = a0->node_arg(0);
      }
      if (ar == nullptr || !Shardable(ar)) continue;
      Node* rs = ReduceScatterFor(ar);
      if (marker != nullptr) {
        g_.SetArg(marker, 0, rs);
        marker->SetFlag(kFlagSpLocal);
        g_.Reinfer(marker);
      } else {
        // Markerless, the entry all_reduce also feeds the residual add of the first
        // add_rms_norm2 (PR #175).
        g_.SetArg(norm, 0, rs);
        const std::vector<Node*> users = ar->users();
        for (Node* u : users)
          if (u->kind() == OpKind::kAddRmsNorm2 && u->node_arg(0) == ar) g_.SetArg(u, 0, rs);
      }
      norm->SetFlag(kFlagSpLocal);
      AllGatherAfter(norm, ar);
      ++matched;
    }
    return matched;
  }

  // Dense P2, rewritten inline in graph order: later matches rely on the flags earlier
  // ones set. Exactly one operand is a shardable all_reduce; the other must be proven
  // local with the reduce_scatter's shape.
  int P2Dense() {
    int matched = 0;
    for (Node* norm : g_.Nodes()) {
      if (norm->kind() != OpKind::kAddRmsNorm2) continue;
      auto match = MatchP2(norm);
      if (!match) continue;
      const auto& [slot, path] = *match;
      const Shape expected = path.reduce_scatter ? path.reduce_scatter->shape() : *ReduceScatterShape(path.all_reduce);
      if (!IsSpLocal(norm->node_arg(1 - slot), &expected)) continue;
      Node* rs = path.reduce_scatter ? path.reduce_scatter : ReduceScatterFor(path.all_reduce);
      Redirect(path, rs, norm, slot);
      norm->SetFlag(kFlagSpLocal);
      KeepOrGatherOutputs(norm, path.all_reduce);
      ++matched;
    }
    return matched;
  }

  // MoE P2: matched structurally on one snapshot, then rewritten. An all_reduce whose
  // input is already local (a shared expert on local tokens) stays; otherwise the
  // reduce_scatter goes in and is moved into arg 0, which defines the output shape
  // (issue #322).
  int P2Moe() {
    std::vector<std::tuple<Node*, size_t, CommPath>> matches;
    for (Node* norm : g_.Nodes()) {
      if (norm->kind() != OpKind::kAddRmsNorm2) continue;
      if (auto match = MatchP2(norm)) matches.emplace_back(norm, match->first, match->second);
    }
    for (auto& [norm, slot, path] : matches) {
      if (!path.reduce_scatter && IsSpLocal(path.all_reduce->node_arg(0), nullptr)) {
        norm->SetFlag(kFlagSpLocal);
        KeepOrGatherOutputs(norm, path.all_reduce);
        continue;
      }
      Node* rs = path.reduce_scatter ? path.reduce_scatter : ReduceScatterFor(path.all_reduce);
      Redirect(path, rs, norm, slot);
      if (slot == 1) {
        Node* x = norm->node_arg(0);
        Node* residual = norm->node_arg(1);
        g_.SetArg(norm, 0, residual);
        g_.SetArg(norm, 1, x);
      }
      norm->SetFlag(kFlagSpLocal);
      KeepOrGatherOutputs(norm, path.all_reduce);
    }
    return static_cast<int>(matches.size());
  }

  // Exactly one of add_rms_norm2's operands resolves to a usable comm.
  std::optional<std::pair<size_t, CommPath>> MatchP2(Node* norm) const {
    std::optional<std::pair<size_t, CommPath>> found;
    for (size_t slot = 0; slot < 2; ++slot) {
      auto path = ResolveComm(norm->node_arg(slot), true);
      if (!UsableComm(path)) continue;
      if (found) return std::nullopt;  // two all_reduces: not a residual pattern
      found.emplace(slot, *path);
    }
    return found;
  }

  int P3() {
    int matched = 0;
    for (Node* norm : g_.Nodes()) {
      if (norm->kind() != OpKind::kAddRmsNorm2 || !norm->HasFlag(kFlagSpLocal)) continue;
      Node* residual = nullptr;
      for (Node* u : norm->users())
        if (u->kind() == OpKind::kGetItem && *u->int_arg(1) == 1) residual = u;
      if (residual == nullptr) continue;
      Node* u = SoleDataflowUser(residual);
      if (u == nullptr || (u->kind() != OpKind::kAddRmsNorm && u->kind() != OpKind::kAdd)) continue;
      auto slot = SlotOf(u, residual);
      if (!slot) continue;
      auto path = ResolveComm(u->node_arg(1 - *slot), false);
      if (!path || path->reduce_scatter || !Shardable(path->all_reduce)) continue;
      Node* tail_norm = u->kind() == OpKind::kAddRmsNorm ? u : FindNormAfterAdd(u);
      if (tail_norm == nullptr) continue;
      Node* ar = path->all_reduce;
      Node* rs = ReduceScatterFor(ar);
      Redirect(*path, rs, u, 1 - *slot);
      if (moe_) u->SetFlag(kFlagSpLocal);
      tail_norm->SetFlag(kFlagSpLocal);
      AllGatherAfter(tail_norm, ar);
      if (ar->users().empty()) (void)g_.Erase(ar);
      ++matched;
    }
    return matched;
  }

  Graph& g_;
  SequenceParallelOptions o_;
  bool moe_ = false;
  std::unordered_map<Node*, Node*> replacement_;   // all_reduce -> its reduce_scatter (or repair view)
  std::unordered_map<const Node*, Node*> source_;  // reduce_scatter -> the all_reduce it replaced
};

}  // namespace

harness::Result<SequenceParallelStats> RunSequenceParallelPass(Graph& graph, const SequenceParallelOptions& options) {
  SequenceParallelStats stats;
  try {
    stats = SequenceParallel(graph, options).Run();
  } catch (const ShapeError& e) {
    return harness::Error{harness::ExitCode::kFail, fmt::format("sequence-parallel pass: {}", e.what())};
  }
  if (stats.total() > 0) {
    if (auto status = graph.PropagateMeta(); !status)
      return harness::Error{harness::ExitCode::kFail,
                            fmt::format("sequence-parallel pass left inconsistent shapes: {}", status.error().message)};
  }
  return stats;
}

}  // namespace harness::compiler
