// Helpers for tests of the reference compiler (its unit tests and the suite tables'
// tests): the environment, the SP and GMM requests of the suites, a compile that must work,
// and the small graph helpers (a BF16 tensor, nodes of a kind, the test device).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compiler.h"
#include "runners/refstack/compiler/device.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler::testing_util {

inline CompileEnvironment Env(CompileFaults faults = {}) {
  CompileEnvironment env;
  env.golden_dir = harness::GoldenDir();
  env.faults = faults;
  return env;
}

inline harness::CompileRequest SpRequest(bool disable_repetition) {
  harness::CompileRequest r;
  r.model = "Qwen/Qwen3-32B";
  r.tp_size = 2;
  r.query_len = 128;
  r.num_layers_override = 1;
  r.enable_sequence_parallel = true;
  r.disable_repetition = disable_repetition;
  return r;
}

inline harness::CompileRequest GmmRequest(const std::string& quant) {
  harness::CompileRequest r;
  r.model = "Qwen/Qwen3-235B-A22B";
  r.query_len = 100;
  r.num_layers_override = 1;
  r.quant = quant;
  return r;
}

inline harness::CompileResult CompileOk(const harness::CompileRequest& r, CompileFaults faults = {}) {
  auto compiled = CompileModel(r, Env(faults));
  EXPECT_TRUE(compiled.ok()) << compiled.error().message;
  return compiled.ok() ? ToCompileResult(compiled->table) : harness::CompileResult{};
}

inline TensorMeta Bf16(Shape s) { return {std::move(s), DType::kBFloat16}; }

// How many nodes of the graph are of this kind.
inline int Count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node* node : g.Nodes()) n += node->kind() == kind;
  return n;
}

// The nodes of this kind, in the graph's order.
inline std::vector<Node*> All(const Graph& g, OpKind kind) {
  std::vector<Node*> out;
  for (Node* node : g.Nodes())
    if (node->kind() == kind) out.push_back(node);
  return out;
}

// golden/devices/TEST_DEVICE.json, the device the perf-model tests price ops on.
inline DeviceProfile TestDevice() {
  auto d = LoadDeviceProfile(harness::GoldenDir() / "devices", "TEST_DEVICE");
  EXPECT_TRUE(d.ok()) << d.error().message;
  return d.ok() ? *d : DeviceProfile{};
}

}  // namespace harness::compiler::testing_util
