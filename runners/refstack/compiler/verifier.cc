#include "runners/refstack/compiler/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "runners/refstack/compiler/infer.h"

namespace harness::compiler {
namespace {

harness::Error Failure(const std::string& message) {
  return harness::Error{harness::ExitCode::kFail, "graph verification failed: " + message};
}

std::string Describe(const Node* n) { return fmt::format("'{}' ({})", n->name(), n->op()); }

std::string Metas(const std::vector<TensorMeta>& outputs, bool tuple) {
  std::vector<std::string> parts;
  for (const auto& m : outputs) parts.push_back(MetaString(m));
  if (parts.empty()) return "None";
  return tuple ? fmt::format("({})", fmt::join(parts, ", ")) : parts[0];
}

bool IsStructural(OpKind k) {
  return k == OpKind::kPlaceholder || k == OpKind::kGetAttr || k == OpKind::kOutput || k == OpKind::kUnknown;
}

// Region markers: begin/end pairs do not nest or repeat; a copy names a closed region and
// a v2 copy's template is that region's end marker.
struct OpenRegion {
  bool is_open = false;
  int64_t id = 0;
};

harness::Status CheckRegion(const Node* n, OpenRegion& open, std::unordered_map<int64_t, const Node*>& closed) {
  const OpKind k = n->kind();
  if (k == OpKind::kRegionBegin) {
    const int64_t id = *n->int_arg(1);
    if (open.is_open) return Failure(fmt::format("region {} begins at {} inside region {}", id, Describe(n), open.id));
    if (closed.count(id)) return Failure(fmt::format("region {} begins twice (again at {})", id, Describe(n)));
    open = {true, id};
  } else if (k == OpKind::kRegionEnd) {
    const int64_t id = *n->int_arg(1);
    if (!open.is_open || open.id != id)
      return Failure(fmt::format("{} ends region {}, which is not open", Describe(n), id));
    closed[id] = n;
    open = {};
  } else if (k == OpKind::kCopyRegion || k == OpKind::kCopyRegionV2) {
    const int64_t id = *n->int_arg(k == OpKind::kCopyRegion ? 1 : 2);
    auto it = closed.find(id);
    if (it == closed.end())
      return Failure(fmt::format("{} replays region {}, which has not been closed", Describe(n), id));
    if (open.is_open) return Failure(fmt::format("{} replays region {} inside region {}", Describe(n), id, open.id));
    if (k == OpKind::kCopyRegionV2 && n->node_arg(1) != it->second)
      return Failure(fmt::format("{} uses {} as output template, not the end of region {}", Describe(n),
                                 Describe(n->node_arg(1)), id));
  }
  return harness::OkStatus();
}

}  // namespace

harness::Status Verify(const Graph& graph) {
  std::unordered_set<const Node*> defined;
  defined.reserve(graph.size());
  OpenRegion open_region;
  std::unordered_map<int64_t, const Node*> closed_regions;
  for (const Node* n = graph.first(); n != nullptr; n = n->next()) {
    std::optional<harness::Error> problem;
    ForEachNodeArg(n->args(), [&](Node* input) {
      if (problem) return;
      if (!graph.Owns(input)) {
        problem = Failure(fmt::format("dangling reference: {} uses '{}', which belongs to another graph", Describe(n),
                                      input->name()));
      } else if (!input->live()) {
        problem =
            Failure(fmt::format("dangling reference: {} uses '{}', which was erased", Describe(n), input->name()));
      } else if (!defined.count(input)) {
        problem = Failure(fmt::format("node {} is defined after its consumer {}", Describe(input), Describe(n)));
      } else if (std::find(input->users().begin(), input->users().end(), n) == input->users().end()) {
        problem = Failure(fmt::format("{} uses {} but is missing from its users", Describe(n), Describe(input)));
      }
    });
    if (problem) return *problem;
    for (const Node* u : n->users()) {
      bool uses = false;
      ForEachNodeArg(u->args(), [&](Node* input) { uses = uses || input == n; });
      if (!uses) return Failure(fmt::format("{} lists {} as a user, which does not use it", Describe(n), Describe(u)));
    }
    if (n->kind() == OpKind::kOutput && n != graph.last())
      return Failure(fmt::format("the output node {} is not the last node", Describe(n)));
    if (!IsStructural(n->kind())) {
      try {
        Inferred inferred = InferMeta(*n);
        if (inferred.outputs != n->outputs() || inferred.tuple != n->is_tuple())
          return Failure(fmt::format("shape mismatch at {}: it has {} but its inputs give {}", Describe(n),
                                     Metas(n->outputs(), n->is_tuple()), Metas(inferred.outputs, inferred.tuple)));
      } catch (const ShapeError& e) {
        return Failure(e.what());
      }
    }
    if (auto status = CheckRegion(n, open_region, closed_regions); !status) return status;
    defined.insert(n);
  }
  if (graph.output_node() == nullptr) return Failure("the graph has no output node");
  if (open_region.is_open) return Failure(fmt::format("region {} is never closed", open_region.id));
  return harness::OkStatus();
}

}  // namespace harness::compiler
