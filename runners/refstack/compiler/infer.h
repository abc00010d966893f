// Shape and dtype rules of the known ops (the fake-tensor implementations of the
// modelled system, e.g. add_rms_norm2's outputs both take the shape of arg 0).
#pragma once

#include <vector>

#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

struct Inferred {
  std::vector<TensorMeta> outputs;
  bool tuple = false;
};

// The meta a known op produces from its arguments. Throws ShapeError naming the node
// and the broken rule. Not for placeholder, get_attr, output or unknown ops.
Inferred InferMeta(const Node& node);

}  // namespace harness::compiler
