#include "harness/run/run.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "harness/results/metric_names.h"
#include "harness/results/metric_set.h"
#include "harness/run/run_context.h"
#include "harness/run/run_identity.h"
#include "harness/run/run_listener.h"
#include "harness/run/run_lock.h"
#include "harness/stats/false_verdict.h"
#include "harness/store/baseline.h"
#include "harness/util/host.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

// Every registered suite case: case id -> GoogleTest full name (Suite/Fixture.test/N).
std::map<std::string, std::string>& Registered() {
  static std::map<std::string, std::string> cases;
  return cases;
}

// "sequence_parallel/SpTest" + "test_x/0" -> "sequence_parallel/test_x_0": the one place a
// GoogleTest name is read, to filter the cases a run selects (RunCases). Empty when the
// test is not a suite case. A running case is named by its fixture (RunContext::begin_case).
std::optional<std::string> CaseIdOf(const testing::TestInfo& info) {
  const std::string suite_name = info.test_suite_name();
  const std::string name = info.name();
  const auto slash = suite_name.find('/');
  const auto name_slash = name.rfind('/');
  if (slash == std::string::npos || name_slash == std::string::npos) return std::nullopt;
  return suite_name.substr(0, slash) + "/" + name.substr(0, name_slash) + "_" + name.substr(name_slash + 1);
}

// The fault switches of a run's context (an empty list when it has none).
Json FaultsOf(const Json& context) {
  static const Json::json_pointer kFaults("/stack_config/faults");
  return context.contains(kFaults) ? context.at(kFaults) : Json::array();
}

// Finds the interrupted run to resume, or says why none may be. Where the run ran may have
// changed (a server restarted on another port); what it measured may not, and neither may
// its fault switches: half a run with a fault and half without would be no one measurement.
Result<std::optional<int64_t>> FindResumable(RunWriter& store, int64_t commit_id, const RunIdentity& identity,
                                             const RunRequest& request) {
  auto runs = store.InterruptedRuns(commit_id);
  if (!runs) return runs.error();
  // A partial run is never resumed (--questions refuses --resume): finished whole, it would
  // still be marked partial.
  std::erase_if(*runs, [](const RunRow& r) { return r.partial_questions.has_value(); });
  const Json faults = FaultsOf(identity.context);
  auto stored_faults = [](const RunRow& r) {
    const Json context = ParseJsonOrDiscarded(r.context_json);
    return FaultsOf(context.is_object() ? context : Json::object());
  };
  // Shards of one nightly may share a database: each resumes its own shard only.
  for (const auto& r : *runs)
    if (r.config_hash == identity.hash && stored_faults(r) == faults && r.shard == request.shard.Word() &&
        r.nightly == request.nightly)
      return std::optional<int64_t>(r.id);
  if (!runs->empty()) {
    const auto& other = runs->front();
    const std::string difference =
        other.config_hash != identity.hash
            ? DescribeIdentityDifference(other.config_json, identity.json)
            : stored_faults(other) != faults
                  ? fmt::format("stack_config.faults: {} -> {}", stored_faults(other).dump(), faults.dump())
                  : fmt::format("shard {} of nightly '{}'", other.shard, other.nightly);
    return UsageError(fmt::format(
        "--resume: the interrupted run {} of this commit was made with another identity ({}); rerun with the same "
        "flags and config, or without --resume to start a new run",
        other.id, difference));
  }
  return std::optional<int64_t>();
}

// case id -> the parameter row as the listener stores it.
std::map<std::string, std::string> ParamsByCase(const std::vector<SuiteTable>& tables) {
  std::map<std::string, std::string> out;
  for (const auto& t : tables)
    for (const auto& [test, rows] : t.tests)
      for (const auto& row : rows) out[row.CaseId()] = row.params.dump();
  return out;
}

// A resumed run keeps its finished cases, so their rows must not have changed since.
Status CheckResumedParams(ResumeReads& store, int64_t run_id, const std::map<std::string, std::string>& current) {
  auto stored = store.CaseParams(run_id);
  if (!stored) return stored.error();
  for (const auto& [case_id, params] : *stored) {
    auto it = current.find(case_id);
    if (it == current.end() || it->second == params) continue;
    return UsageError(
        fmt::format("--resume: the parameters of {} changed since run {} stored it ({}); rerun without "
                    "--resume to start a new run",
                    case_id, run_id, DescribeIdentityDifference(params, ParseJsonOrDiscarded(it->second))));
  }
  return OkStatus();
}

// The whole run's cases for its summary: this invocation's, and the ones a resumed run
// finished before, read back with their metrics.
Result<std::vector<CaseResult>> WholeRun(ResumeReads& store, int64_t run_id, std::vector<CaseResult> now) {
  auto stored = store.Cases(run_id);
  if (!stored) return stored.error();
  std::vector<CaseResult> all;
  for (auto& c : *stored) {
    auto it = std::find_if(now.begin(), now.end(), [&](const CaseResult& r) { return r.case_id == c.result.case_id; });
    if (it != now.end()) {
      all.push_back(*it);
      continue;
    }
    auto metrics = store.Metrics(c.id);
    if (!metrics) return metrics.error();
    c.result.metrics = std::move(metrics).value();
    all.push_back(std::move(c.result));
  }
  return all;
}

// The cases a resumed run stored before: the finished ones are kept, the one that was
// running gets its stored samples back.
struct ResumedCases {
  std::set<std::string> finished;
  std::map<std::string, int64_t> interrupted;  // case id -> its stored row
};

// Reopens the interrupted run after checking that its cases' rows are unchanged.
Status Reopen(Store& store, int64_t run_id, const std::map<std::string, std::string>& params, ResumedCases& resumed) {
  ResumeReads& reads = store.reader();
  if (auto s = CheckResumedParams(reads, run_id, params); !s) return s;
  if (auto s = store.writer().ReopenRun(run_id); !s) return s;
  auto cases = reads.Cases(run_id);
  if (!cases) return cases.error();
  for (const auto& c : *cases) {
    if (c.result.status != CaseStatus::kRunning) resumed.finished.insert(c.result.case_id);
    else resumed.interrupted[c.result.case_id] = c.id;
  }
  std::fprintf(stderr, "harness: resuming run %lld (%zu cases already finished)\n", static_cast<long long>(run_id),
               resumed.finished.size());
  return OkStatus();
}

// The run's identity, with what the run is made for in its context; an explicit baseline
// must have been run with the same identity.
Result<RunIdentity> IdentityFor(const RunRequest& request, BaselineReads& store) {
  auto identity = MakeRunIdentity(request.stack_config, request.endpoint, request.tables);
  if (!identity) return identity.error();
  if (!request.made_for.empty()) identity->context["bisect"] = request.made_for;
  if (request.rerun_of) identity->context["rerun_of"] = *request.rerun_of;
  if (!request.server_log.empty()) identity->context["server_log"] = request.server_log;
  if (!request.baseline_rev.empty())
    if (auto s = CheckExplicitBaseline(store, request.repo, request.baseline_rev, identity->hash); !s) return s.error();
  return identity;
}

// The interrupted run --resume continues; none without --resume or when there is none to
// resume (then a new run begins).
Result<std::optional<int64_t>> ResumedRun(RunWriter& store, int64_t commit_id, const RunIdentity& identity,
                                          const RunRequest& request) {
  if (!request.resume) return std::optional<int64_t>();
  auto found = FindResumable(store, commit_id, identity, request);
  if (!found) return found.error();
  if (!*found) std::fprintf(stderr, "harness: no interrupted run of this commit and identity; starting a new run\n");
  return found;
}

NewRun NewRunOf(int64_t commit_id, const RunIdentity& identity, const RunRequest& request) {
  NewRun run{commit_id, request.stack_config.stack, identity.hash, identity.json.dump(), Hostname(),
             kHarnessVersion, request.shard.Word(), request.nightly, identity.context.dump()};
  if (request.questions) run.partial_questions = static_cast<int64_t>(request.questions->size());
  return run;
}

// How a case's inputs are read before it runs: its samples stored by the interrupted run,
// and as it asks, its baseline and its earlier reruns' metric at this commit.
using InputsReader = std::function<Result<CaseInputs>(const std::string& case_id, const CaseNeeds& needs)>;
InputsReader ReadInputsFrom(Store& store, const RunRequest& request, const RunIdentity& identity, int64_t run_id,
                            const std::map<std::string, std::string>& params, const ResumedCases& resumed) {
  BaselineReads& reads = store.reader();
  BaselineLookup baseline =
      MakeBaselineLookup(reads, request.repo, request.baseline_rev, request.commit, identity.hash, run_id, params);
  return [&reads, &resumed, baseline = std::move(baseline), sha = request.commit.sha, hash = identity.hash, run_id,
          params](const std::string& case_id, const CaseNeeds& needs) -> Result<CaseInputs> {
    CaseInputs in;
    if (auto row = resumed.interrupted.find(case_id); row != resumed.interrupted.end()) {
      auto samples = reads.Samples(row->second);
      if (!samples) return samples.error();
      in.prior_samples = std::move(samples).value();
    }
    if (needs.baseline) {
      auto b = baseline(case_id);
      if (!b) return b.error();
      in.baseline = std::move(b).value();
    }
    if (!needs.rerun_metric.empty()) {
      auto it = params.find(case_id);
      auto values =
          reads.MetricAt({case_id, hash, it == params.end() ? "{}" : it->second, run_id, false}, sha, needs.rerun_metric);
      if (!values) return values.error();
      in.reruns = std::move(values).value();
    }
    return in;
  };
}

// What the suites' bodies see while the run runs: the stack and its endpoint, the noise
// seed, the questions of a partial run, and their inputs.
void FillRunContext(RunContext& ctx, const RunRequest& request, Stack& stack, int64_t run_id, InputsReader inputs) {
  ctx.stack_config = request.stack_config;
  ctx.stack = &stack;
  ctx.endpoint = request.endpoint;
  ctx.noise_seed = request.noise_seed.value_or(static_cast<uint64_t>(run_id));
  ctx.questions = request.questions;
  ctx.inputs = std::move(inputs);
}

// Runs the requested cases a resumed run has not finished through GoogleTest; the returned
// listener has stored them and holds their results.
std::unique_ptr<RunListener> RunCases(const RunRequest& request, const std::set<std::string>& finished, Store& store,
                                      int64_t run_id, RunContext& ctx) {
  std::vector<std::string> names;
  for (const auto& id : request.case_ids)
    if (!finished.count(id)) names.push_back(Registered().at(id));
  const std::string gtest_filter = names.empty() ? "-*" : fmt::format("{}", fmt::join(names, ":"));
  GTEST_FLAG_SET(filter, gtest_filter);
  // The cases are this shard's already; GoogleTest would shard them a second time.
  unsetenv("GTEST_TOTAL_SHARDS");
  unsetenv("GTEST_SHARD_INDEX");

  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  // Ours again after the run, so a rerun (RerunAtRisk) appends a fresh one for its own run.
  std::unique_ptr<RunListener> listener(new RunListener(store.writer(), run_id, ctx.record));
  ctx.begin_case = [l = listener.get()](const StartingCase& c) { l->BeginCase(c); };
  listeners.Append(listener.get());
  if (RUN_ALL_TESTS() != 0) {}  // the listener has every verdict; its results decide the exit code
  listeners.Release(listener.get());
  ctx.begin_case = nullptr;
  return listener;
}

// The run's result from its listener's, and the run finished in the store with its status.
Result<RunResult> FinishedRun(Store& store, int64_t run_id, bool resumed, const RunIdentity& identity,
                              const RunListener& listener) {
  RunResult result;
  result.run_id = run_id;
  result.identity_hash = identity.hash;
  result.context = identity.context;
  result.store_error = listener.store_error();
  result.cases = listener.results();
  if (resumed) {  // the summary covers the whole run, not only this invocation
    auto all = WholeRun(store.reader(), run_id, std::move(result.cases));
    if (!all) return all.error();
    result.cases = std::move(all).value();
  }
  result.status = CountStatuses(result.cases).Overall();
  if (result.store_error) result.status = RunStatus::kError;
  if (auto s = store.writer().FinishRun(run_id, result.status); !s) {
    if (!result.store_error) result.store_error = s.error();
    result.status = RunStatus::kError;
  }
  return result;
}

}  // namespace

Result<std::vector<SuiteTable>> PrepareSuites(const std::filesystem::path& suites_dir) {
  auto tables = LoadSuiteTables(suites_dir);
  if (!tables) return tables.error();
  InstallSuiteTables(*tables);
  int gtest_argc = 1;
  char gtest_arg0[] = "harness";
  char* gtest_argv[] = {gtest_arg0, nullptr};
  testing::InitGoogleTest(&gtest_argc, gtest_argv);
  auto* unit = testing::UnitTest::GetInstance();
  Registered().clear();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const auto* info = suite->GetTestInfo(j);
      if (auto id = CaseIdOf(*info)) Registered()[*id] = std::string(info->test_suite_name()) + "." + info->name();
    }
  }
  // Every table row must have a TEST_P behind it, or the table names a test that does not exist.
  for (const auto& t : *tables)
    for (const auto& [test, rows] : t.tests)
      for (const auto& row : rows)
        if (!Registered().count(row.CaseId()))
          return UsageError(
              fmt::format("{}: tests.{}: no test of that name in suite '{}' of this binary", t.path, test, t.suite));
  return tables;
}

Result<std::vector<std::string>> SelectCases(const std::vector<SuiteTable>& tables,
                                             const std::vector<std::string>& suites, const std::string& filter) {
  std::set<std::string> wanted;
  std::vector<std::string> known;
  for (const auto& t : tables) known.push_back(t.suite);
  if (suites.empty()) {
    for (const auto& t : tables)
      if (t.nightly) wanted.insert(t.suite);
  } else {
    for (const auto& s : suites) {
      if (std::find(known.begin(), known.end(), s) == known.end())
        return UsageError(fmt::format("unknown suite '{}' (known: {})", s, fmt::join(known, ", ")));
      wanted.insert(s);
    }
  }
  std::vector<std::string> out, in_suites;
  for (const auto& t : tables) {
    if (!wanted.count(t.suite)) continue;
    for (const auto& [test, rows] : t.tests)
      for (const auto& row : rows) {
        in_suites.push_back(row.CaseId());
        if (!filter.empty() && fnmatch(filter.c_str(), row.CaseId().c_str(), 0) != 0) continue;
        out.push_back(row.CaseId());
      }
  }
  if (out.empty())
    return UsageError(fmt::format("no case matches '{}' (known: {})", filter.empty() ? "*" : filter,
                                  fmt::join(in_suites, ", ")));
  return out;
}

Result<RunResult> RunSuites(const RunRequest& request, Stack& stack, Store& store) {
  if (request.questions && request.resume)
    return UsageError("--questions with --resume: a partial run is never resumed; run it again without --resume");
  if (request.questions && request.questions->empty()) return UsageError("--questions: no question to evaluate");
  auto identity = IdentityFor(request, store.reader());
  if (!identity) return identity.error();
  auto commit_id = store.writer().UpsertCommit(request.commit);
  if (!commit_id) return commit_id.error();

  auto resumed = ResumedRun(store.writer(), *commit_id, *identity, request);
  if (!resumed) return resumed.error();
  int64_t run_id = 0;
  if (*resumed) {
    run_id = **resumed;
  } else {
    auto id = store.writer().BeginRun(NewRunOf(*commit_id, *identity, request));
    if (!id) return id.error();
    run_id = *id;
  }
  // A live run holds this lock until it exits (even by kill -9), so it is never resumed twice.
  auto lock = RunLock::Acquire(store.path(), run_id);
  if (!lock) return lock.error();
  const auto params = ParamsByCase(request.tables);
  ResumedCases resumed_cases;
  // The run has its row: its context is bound to the rows of its tables from here, and
  // unbound on every way out.
  RunContext ctx;
  FillRunContext(ctx, request, stack, run_id,
                 ReadInputsFrom(store, request, *identity, run_id, params, resumed_cases));
  const BoundRun bound(ctx, RunSlotsOf(request.tables));
  if (*resumed)
    if (auto s = Reopen(store, run_id, params, resumed_cases); !s) return s.error();
  const std::unique_ptr<RunListener> listener = RunCases(request, resumed_cases.finished, store, run_id, ctx);
  return FinishedRun(store, run_id, resumed->has_value(), *identity, *listener);
}

Result<std::vector<RunResult>> RerunAtRisk(const RunRequest& request, const RunResult& first, int max_reruns,
                                           Stack& stack, Store& store) {
  // Per AT-RISK case: its accuracy in every run so far and its gate.
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, double> gates;
  for (const auto& c : first.cases) {
    // The gate verdict alone: a case that "fail_at_risk" failed is the one whose reruns matter.
    const MetricSet metrics(c.metrics);
    if (metrics.Gate() != GateVerdict::kAtRisk) continue;
    values[c.case_id];
    if (auto a = metrics.Value(metric_names::kAccuracy)) values[c.case_id].push_back(*a);
    if (auto g = metrics.Value(metric_names::kGate)) gates[c.case_id] = *g;
  }
  std::vector<RunResult> reruns;
  for (int k = 1; k <= max_reruns; ++k) {
    RunRequest again = request;
    again.resume = false;
    again.rerun_of = first.run_id;
    again.case_ids.clear();
    for (const auto& [id, seen] : values) {
      // Settled: two or more results whose mean's 95% interval clears the gate (or that
      // agree exactly), so another rerun would not change what the report says.
      const auto gate = gates.find(id);
      if (gate != gates.end() && seen.size() >= 2) {
        const FalseVerdictEstimate e = RerunNoiseEstimate(seen, gate->second);
        if (e.needed >= 0 && e.needed <= e.observations) continue;
      }
      again.case_ids.push_back(id);
    }
    if (again.case_ids.empty()) break;
    if (request.noise_seed) again.noise_seed = *request.noise_seed + static_cast<uint64_t>(k);
    auto r = RunSuites(again, stack, store);
    if (!r) return r.error();
    for (const auto& c : r->cases)
      if (auto it = values.find(c.case_id); it != values.end())
        if (auto a = MetricSet(c.metrics).Value(metric_names::kAccuracy)) it->second.push_back(*a);
    reruns.push_back(std::move(*r));
    if (reruns.back().store_error) break;
  }
  return reruns;
}

}  // namespace harness
