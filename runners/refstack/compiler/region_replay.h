// Region replay at "run time": the ops executed between a region's begin and end markers
// run once for the representative and once more for every copy of that region, as
// msmodeling's Runtime.repeat_op_invoke_infos expands them. Markers, copies and
// structural nodes are not events.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/util/error.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

struct OpEvent {
  const Node* node;
  int64_t calls;  // 1 outside regions; 1 + number of copies inside one
};

// The executed ops in graph order with their call counts. Fails on nested or unclosed
// regions and on copies of a region that has not been closed.
harness::Result<std::vector<OpEvent>> ReplayEvents(const Graph& graph);

}  // namespace harness::compiler
