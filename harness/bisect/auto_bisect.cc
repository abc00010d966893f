#include "harness/bisect/auto_bisect.h"

#include <cstdio>

#include <fmt/format.h>

#include "harness/bisect/session_lock.h"
#include "harness/bisect/worktree_command.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness::bisect {
namespace {

std::filesystem::path Absolute(const std::filesystem::path& p) {
  std::error_code ec;
  auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(p), ec);
  return ec ? std::filesystem::absolute(p) : resolved;
}

Status CheckRequest(const AutoBisectRequest& r) {
  if (r.command.empty())
    return UsageError("bisect --auto needs the command that tests a commit, after --: it confirms and bisects with it");
  if (r.max_runs < 0) return UsageError("--max-runs must be at least 0");
  if (r.confirm < 0 || r.confirm > 10) return UsageError("--confirm must be in [0, 10]");
  if (r.confidence <= 0.5 || r.confidence >= 1) return UsageError("--confidence must be in (0.5, 1)");
  if (r.command_timeout_s && !(*r.command_timeout_s > 0 && *r.command_timeout_s <= kMaxTimeoutS))
    return UsageError(fmt::format("--timeout {}: expected seconds in (0, {}]", *r.command_timeout_s, kMaxTimeoutS));
  for (const auto& arg : r.command)
    if (arg.find("{worktree}") != std::string::npos && r.repo.empty())
      return UsageError("{worktree} in the command needs --repo");
  return OkStatus();
}

// One rerun of the bad commit: what it showed of each target. Without a stored result of
// a target's cases, the exit code speaks as in git bisect run (0 good, 125 cannot test,
// 1-127 bad).
Result<ConfirmingRun> Confirm(const AutoBisectRequest& r, Store& store, const std::string& sha,
                              const std::vector<RegressionTarget>& targets, SessionLock& lock) {
  auto before = store.NewestCaseResultId();
  if (!before) return before.error();
  WorktreeCommandSpec spec{r.command, r.repo, r.db, r.command_timeout_s, "confirm"};
  // A confirming rerun is judged as the nightly was (its gate, its pairing): a whole eval.
  if (UsesQuestions(r.command)) spec.questions = EveryQuestionFile("a confirming rerun evaluates every question");
  auto proc = RunCommandAt(spec, sha, lock);
  if (!proc) return proc.error();
  const std::string at = ShortSha(sha);
  if (proc->stop_signal)
    return InfraError(fmt::format("interrupted by {} while confirming at {}", SignalName(proc->stop_signal), at));
  if (proc->timed_out) return InfraError(fmt::format("the command timed out confirming at {}", at));
  if (proc->signal) return InfraError(fmt::format("the command was killed by signal {} at {}", proc->signal, at));
  if (proc->exit_code >= 128 || proc->exit_code < 0)
    return InfraError(fmt::format("the command exited {} confirming at {}: no answer; stderr: {}", proc->exit_code, at,
                                  proc->err.substr(0, 500)));
  ConfirmingRun run{proc->exit_code, {}};
  for (const auto& t : targets) {
    auto again = Reproduces(store, t, sha, *before);
    if (!again) return again.error();
    if (!*again && proc->exit_code != 125) *again = proc->exit_code != 0;
    run.reproduced.push_back(*again);
  }
  return run;
}

Json ConfirmJson(const std::vector<ConfirmingRun>& runs, std::size_t target) {
  Json out = Json::array();
  for (const auto& c : runs) {
    const auto& r = c.reproduced[target];
    out.push_back({{"exit_code", c.exit_code}, {"reproduced", r ? Json(*r) : Json(nullptr)}});
  }
  return out;
}

// The reruns of the bad commit confirm every target at once: one command tests them all.
Status ConfirmAtBad(const AutoBisectRequest& r, Store& store, const std::string& bad,
                    const std::vector<RegressionTarget>& targets, AutoBisectOutcome& out) {
  StopSignals stop_signals;
  auto lock = SessionLock::Create(r.db);
  if (!lock) return lock.error();
  for (int k = 0; k < r.confirm && out.runs_total < r.max_runs; ++k) {
    BisectProgress p{.event = BisectProgress::Event::kConfirmStart, .sha = bad, .step = k + 1,
                     .runs = out.runs_total, .max_runs = r.max_runs};
    if (r.observer) r.observer(p);
    auto run = Confirm(r, store, bad, targets, **lock);
    if (!run) return run.error();
    out.confirming.push_back(std::move(run).value());
    ++out.runs_total;
    if (!r.observer) continue;
    p.event = BisectProgress::Event::kConfirmEnd;
    p.runs = out.runs_total;
    p.exit_code = out.confirming.back().exit_code;
    int shown = 0;
    for (const auto& again : out.confirming.back().reproduced) shown += again.value_or(false);
    p.verdict = fmt::format("reproduced {} of {} regressions", shown, targets.size());
    r.observer(p);
  }
  return OkStatus();
}

// Target i's confirmation: "confirmed" when every confirming rerun reproduced it.
std::string ConfirmationOf(const AutoBisectRequest& r, const AutoBisectOutcome& out, std::size_t i) {
  if (r.confirm == 0) return "not-tried";
  if (static_cast<int>(out.confirming.size()) != r.confirm)
    return "not-tried";  // the budget ran out before every confirming rerun
  bool all = true;
  for (const auto& c : out.confirming) all = all && c.reproduced[i].value_or(false);
  return all ? "confirmed" : "not-confirmed";
}

// Stores each target as a regression with its confirmation, into out.regressions.
Status RecordRegressions(const AutoBisectRequest& r, BisectRecord& store, const NightlyPair& pair,
                         const std::vector<RegressionTarget>& targets, AutoBisectOutcome& out) {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    AutoRegression g;
    g.target = targets[i];
    g.confirmation = ConfirmationOf(r, out, i);
    auto id = store.AddRegression({0, pair.current.first().id, pair.previous->first().id, g.target.suite,
                                   g.target.kind, g.target.CaseIds(), g.confirmation, ConfirmJson(out.confirming, i).dump(),
                                   std::nullopt, ""});
    if (!id) return id.error();
    g.regression_id = *id;
    out.regressions.push_back(std::move(g));
  }
  return OkStatus();
}

BisectRequest BisectRequestFor(const AutoBisectRequest& r, const RegressionTarget& target, const std::string& good,
                               const std::string& bad, int max_runs) {
  BisectRequest b;
  b.good = good;
  b.bad = bad;
  if (!target.metric.empty()) b.metric = target.suite + "/" + target.metric;
  b.cases = target.CaseIds();
  b.repo = r.repo;
  b.db = r.db;
  b.suites_dir = r.suites_dir;
  b.max_runs = max_runs;
  b.confidence = r.confidence;
  b.command = r.command;
  b.full_evals = r.full_evals;
  b.command_timeout_s = r.command_timeout_s;
  b.observer = r.observer;
  return b;
}

// Bisects the confirmed regressions (every one when confirming was not asked). The budget
// left is shared among them: each gets an equal share of what is left when its turn comes,
// so what one leaves unspent goes to the next.
Status BisectConfirmed(const AutoBisectRequest& r, Store& store, const std::string& good, const std::string& bad,
                       AutoBisectOutcome& out) {
  std::vector<AutoRegression*> to_bisect;
  for (auto& g : out.regressions)
    if (g.confirmation == "confirmed" || (r.confirm == 0 && g.confirmation == "not-tried")) to_bisect.push_back(&g);
  for (std::size_t i = 0; i < to_bisect.size(); ++i) {
    AutoRegression& g = *to_bisect[i];
    const int left = r.max_runs - out.runs_total;
    auto outcome = RunBisect(BisectRequestFor(r, g.target, good, bad, left / static_cast<int>(to_bisect.size() - i)),
                             store);
    if (!outcome) return outcome.error();
    out.runs_total += outcome->runs;
    if (auto s = store.SetRegressionSession(g.regression_id, outcome->session_id); !s) return s.error();
    g.bisect = std::move(outcome).value();
  }
  return OkStatus();
}

}  // namespace

Result<AutoBisectOutcome> RunAutoBisect(const AutoBisectRequest& request, Store& store) {
  if (auto s = CheckRequest(request); !s) return s.error();
  AutoBisectRequest r = request;
  r.db = Absolute(r.db);
  if (!r.repo.empty()) r.repo = Absolute(r.repo);
  auto pair = FindNightlyPair(store, r.run_id);
  if (!pair) return pair.error();
  AutoBisectOutcome out;
  out.nightly = pair->current;
  out.previous = pair->previous;
  auto targets = FindRegressions(store, *pair, r.suites_dir);
  if (!targets) return targets.error();
  if (targets->empty()) return out;
  const std::string good = pair->previous->first().sha, bad = pair->current.first().sha;
  if (auto s = ConfirmAtBad(r, store, bad, *targets, out); !s) return s.error();
  if (auto s = RecordRegressions(r, store, *pair, *targets, out); !s) return s.error();
  if (auto s = BisectConfirmed(r, store, good, bad, out); !s) return s.error();
  return out;
}

}  // namespace harness::bisect
