#include "runners/refstack/compiler/region_replay.h"

#include <fmt/format.h>

#include <map>

namespace harness::compiler {

harness::Result<std::vector<OpEvent>> ReplayEvents(const Graph& graph) {
  std::vector<OpEvent> events;
  std::vector<int64_t> region_of;  // per event: its region id, or -1
  std::map<int64_t, int64_t> copies;
  bool open = false;
  int64_t open_id = -1;
  auto error = [](const Node* n, const std::string& what) {
    return harness::Error{harness::ExitCode::kFail,
                          fmt::format("region replay: '{}' ({}) {}", n->name(), n->op(), what)};
  };
  for (const Node* n = graph.first(); n != nullptr; n = n->next()) {
    switch (n->kind()) {
      case OpKind::kRegionBegin:
        if (open) return error(n, fmt::format("begins a region inside region {}", open_id));
        if (copies.count(*n->int_arg(1))) return error(n, "begins a region that already exists");
        open = true;
        open_id = *n->int_arg(1);
        copies[open_id] = 0;
        continue;
      case OpKind::kRegionEnd:
        if (!open || *n->int_arg(1) != open_id) return error(n, "ends a region that is not open");
        open = false;
        continue;
      case OpKind::kCopyRegion:
      case OpKind::kCopyRegionV2: {
        const int64_t id = *n->int_arg(n->kind() == OpKind::kCopyRegion ? 1 : 2);
        auto it = copies.find(id);
        if (it == copies.end() || (open && open_id == id))
          return error(n, fmt::format("replays region {} before it closed", id));
        ++it->second;
        continue;
      }
      default:
        break;
    }
    if (n->kind() != OpKind::kUnknown && (InfoOf(n->kind()).traits & kTraitNoEvent)) continue;
    events.push_back({n, 1});
    region_of.push_back(open ? open_id : -1);
  }
  if (open)
    return harness::Error{harness::ExitCode::kFail, fmt::format("region replay: region {} is never closed", open_id)};
  for (size_t i = 0; i < events.size(); ++i)
    if (region_of[i] >= 0) events[i].calls += copies[region_of[i]];
  return events;
}

}  // namespace harness::compiler
