// The libFuzzer targets: each reads bytes the harness did not write, through the parser that
// reads them in production. fuzz_main.cc turns one into a libFuzzer binary (the fuzz preset,
// build-fuzz/); fuzz_regressions_test.cc replays every kept input in the normal build.
// A new parser adds a row to FuzzTargets(), a seed folder under tools/fuzz/corpus/, a name in
// ci/fuzz.sh and a pair in tools/fuzz/CMakeLists.txt (fuzz_regressions_test checks the first
// two agree). Beyond "no crash, no sanitizer report", each target checks what its parser
// promises of what it accepts (finite numbers, unique case ids, a table that reads back the
// same), since a value the parser lets through is one the store and reports must live with.
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
int TensorCastTable(const uint8_t* data, std::size_t size);
int IngestJunit(const uint8_t* data, std::size_t size);
int IngestGtestJson(const uint8_t* data, std::size_t size);
// The results JSON, then (after the first NUL byte, when there is one) a per-sample JSONL.
int IngestLmEval(const uint8_t* data, std::size_t size);
int IngestSglangGsm8k(const uint8_t* data, std::size_t size);
int IngestTensorCast(const uint8_t* data, std::size_t size);

}  // namespace harness::fuzz
