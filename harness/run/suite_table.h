// The JSON parameter tables under suites/ (docs/suites.md) and the registry the
// TEST_P instantiations read from when GoogleTest registers them.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/run/suite.h"

namespace harness {

struct SuiteTable {
  std::string suite;
  std::string description;
  bool nightly = false;
  // The metric `harness bisect --metric SUITE` follows, and which way is better.
  std::string headline_metric;
  bool headline_higher_is_better = true;
  // Expected cost of one case relative to a compile case (1): how `--shard` balances the
  // shards. Optional in the table ("shard_cost"); a GSM8K eval case costs far more.
  double shard_cost = 1.0;
  // Whether its cases evaluate a question list, so `run --questions FILE` may select them
  // (gsm8k). Optional in the table ("evaluates_questions", default false).
  bool evaluates_questions = false;
  // The paths its cases exercise ("watch": repository-relative path prefixes,
  // watched_paths.h): a bisect of its cases gives commits that touch none of them a lower
  // prior. Empty: every commit alike.
  std::vector<std::string> watch;
  std::string path;
  std::map<std::string, std::vector<CaseParam>> tests;  // test name -> rows
};

// Reads every suites/*.json in dir (sorted by name). Malformed JSON names file:line:col;
// a bad field names the file and the field's path.
Result<std::vector<SuiteTable>> LoadSuiteTables(const std::filesystem::path& dir);
Result<SuiteTable> LoadSuiteTable(const std::filesystem::path& file);

// `run --questions FILE` evaluates a partial question list: every selected case must be of a
// suite that evaluates questions, else a usage error names the first other case and the
// suites that do.
Status CheckQuestionsSelectable(const std::vector<SuiteTable>& tables, const std::vector<std::string>& case_ids,
                                const std::string& questions_file);

// The slots the tables' rows share (RunSlot), each once: where RunSuites binds its run.
std::vector<std::shared_ptr<RunSlot>> RunSlotsOf(const std::vector<SuiteTable>& tables);

// Makes SuiteCases() answer from these tables. Must run before GoogleTest registers
// parameterized tests (InitGoogleTest).
void InstallSuiteTables(const std::vector<SuiteTable>& tables);

}  // namespace harness
