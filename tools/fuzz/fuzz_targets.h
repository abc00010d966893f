// The libFuzzer targets: each reads bytes the harness did not write, through the parser that
// reads them in production. fuzz_main.cc turns one into a libFuzzer binary (the fuzz preset,
// build-fuzz/); fuzz_regressions_test.cc replays every kept input in the normal build.
// Later parsers add a row to FuzzTargets() and a seed folder under tools/fuzz/corpus/:
// the ingest formats (JUnit, GoogleTest JSON, lm-eval, sglang) and the TensorCast table
// parser are the next ones (they land with the ingest work).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace harness::fuzz {

struct FuzzTarget {
  const char* name;                                 // folder under tools/fuzz/corpus/, binary fuzz_<name>
  int (*run)(const uint8_t* data, std::size_t size);  // libFuzzer's contract: return 0
};

std::span<const FuzzTarget> FuzzTargets();

int AnswerExtract(const uint8_t* data, std::size_t size);
int SuiteTable(const uint8_t* data, std::size_t size);
int StackConfig(const uint8_t* data, std::size_t size);
int GoldenOps(const uint8_t* data, std::size_t size);
int OpenaiResponse(const uint8_t* data, std::size_t size);
int ExecAnswer(const uint8_t* data, std::size_t size);

}  // namespace harness::fuzz
