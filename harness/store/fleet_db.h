// A fleet-scale store for the benchmarks (issue 22): a team that ingests its compiler's
// pytest suite every night. The year of GSM8K nightlies of nightly_db.h, plus, at its last
// kFleetNightlies commits, one `harness ingest --format junit` run of kFleetCases cases each
// (stack ingest:junit, suite "pytest", the identity `harness ingest --format junit` gives):
// about 1 % always failing, 1 % flaky (failing every other nightly), 0.5 % broken by a
// regression at some nightly and failing from then on, 0.3 % erroring now and then, 3 %
// skipped; failures carry a pytest-like message, every case 2 or 3 numeric properties
// (metrics). Written through Store::WriteIngestedRuns, one transaction per nightly, as
// ingest writes a file. Deterministic: every generated database is the same.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness::bench {

inline constexpr int kFleetNightlies = 90;
inline constexpr int kFleetCases = 10000;
inline constexpr int kFleetShards = 30;
inline constexpr const char* kFleetSuite = "pytest";

// The case id of case k (0-based): "pytest/tests.compiler.test_modMMM.TestGroupG.test_case_KKKKK".
std::string FleetCaseId(int k);
// The commit of fleet nightly n (0-based): one of the last kFleetNightlies GSM8K nightlies.
std::string FleetSha(int n);
// The cases of fleet nightly n, as ParseJunitXml reads FleetJunitXml(n).
std::vector<FinishedCase> FleetCases(int n);
// The same nightly as pytest --junitxml writes it: <testsuites><testsuite name="pytest">
// with a <testcase classname name time> per case, <failure>/<error>/<skipped> with a
// message and text, and the metrics as <properties>.
std::string FleetJunitXml(int n);

// Writes the whole database at path: GenerateNightlyDatabase, then the fleet nightlies.
void GenerateFleetDatabase(const std::filesystem::path& path);
// Writes kFleetShards databases dir/shard-II.db: fleet nightly n split the way
// `harness run --shard I/N --nightly fleet-N` splits a suite (case k in shard k % N),
// the input of a `harness merge` of one sharded 10,000-case nightly.
void GenerateFleetShards(const std::filesystem::path& dir, int n);

}  // namespace harness::bench
