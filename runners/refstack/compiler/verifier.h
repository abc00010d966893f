// Structural checks of a compiled graph: every node is defined before its consumers
// (the message names both), no reference leaves the graph or points at an erased node,
// users lists agree with arguments, every known op's meta matches its shape rule,
// region markers are well formed, and the output node is last.
#pragma once

#include "harness/util/error.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

// The first problem found, as "graph verification failed: ..." (ExitCode::kFail).
harness::Status Verify(const Graph& graph);

}  // namespace harness::compiler
