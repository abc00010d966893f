// Helpers for tests of the reference compiler (its unit tests and the suite tables'
// tests): the environment, the SP and GMM requests of the suites, a compile that must work.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compiler.h"

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

}  // namespace harness::compiler::testing_util
