#include "harness/bisect/auto_bisect.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/bisect/bisect_ranges.h"
#include "harness/bisect/session_lock.h"
#include "harness/bisect/slurm_step.h"
#include "harness/bisect/step_exit.h"
#include "harness/bisect/worktree_command.h"
#include "harness/store/bisect_changes.h"
#include "harness/util/file_lock.h"
#include "harness/util/git.h"
#include "harness/util/input_file.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"
#include "harness/util/utf8.h"

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
  if (auto c = CheckNumberIn(r.max_runs, kMaxRunsRange, "--max-runs"); !c) return c.error();
  if (auto c = CheckNumberIn(r.confirm, kConfirmRange, "--confirm"); !c) return c.error();
  if (auto c = CheckNumberIn(r.jobs, kJobsRange, "--jobs"); !c) return c.error();
  if (auto c = CheckNumberIn(r.max_culprits, kMaxCulpritsRange, "--max-culprits"); !c) return c.error();
  if (auto c = CheckNumberIn(r.confidence, kConfidenceRange, "--confidence"); !c) return c.error();
  return CheckStepCommand(r.command, r.repo, r.command_timeout_s, r.step_start_timeout_s);
}

// One rerun of the bad commit: what it showed of each target. Without a stored result of
// a target's cases, the exit code speaks as in a bisect step (step_exit.h): for a status
// target 0 not shown, 1 and 4-124 shown; otherwise (any code for a metric target; 2, 3,
// 125, 126, 127 for a status) the rerun could not test it, which confirms nothing.
Result<ConfirmingRun> Confirm(const AutoBisectRequest& r, Store& store, const std::string& sha,
                              const std::vector<RegressionTarget>& targets, SessionLock& lock) {
  NightlyReads& reads = store.reader();
  auto before = reads.NewestCaseResultId();
  if (!before) return before.error();
  WorktreeCommandSpec spec{r.command, r.repo, r.db, r.command_timeout_s, "confirm"};
  spec.step_start_timeout_s = r.step_start_timeout_s;
  // A confirming rerun is judged as the nightly was (its gate, its pairing): a whole eval.
  if (UsesQuestions(r.command)) spec.questions = EveryQuestionFile("a confirming rerun evaluates every question");
  auto proc = RunCommandAt(spec, sha, lock);
  if (!proc) return proc.error();
  const std::string at = ShortSha(sha);
  const std::string tail = StderrTail(proc->err);
  const std::string stderr_words = tail.empty() ? "; its stderr was empty" : "; stderr: " + tail;
  if (proc->stop_signal)
    return InfraError(fmt::format("interrupted by {} while confirming at {}", SignalName(proc->stop_signal), at));
  if (proc->timed_out) return InfraError(fmt::format("the command timed out confirming at {}{}", at, stderr_words));
  if (proc->scheduler_ended)  // srun's exit, not the command's: the rerun tested nothing
    return ConfirmingRun{proc->exit_code, std::vector<std::optional<bool>>(targets.size()),
                         std::vector<std::string>(targets.size(), *proc->scheduler_ended + stderr_words)};
  if (proc->signal)
    return InfraError(fmt::format("the command was killed by signal {} at {}{}", proc->signal, at, stderr_words));
  if (MeaningOfExit(proc->exit_code, true) == ExitMeaning::kAbort)
    return InfraError(fmt::format("the command exited {} confirming at {}: no answer{}", proc->exit_code, at,
                                  stderr_words));
  ConfirmingRun run{proc->exit_code, {}, {}};
  for (const auto& t : targets) {
    auto again = Reproduces(reads, t, sha, *before);
    if (!again) return again.error();
    std::string untestable;
    if (!*again) {
      const ExitMeaning meaning = MeaningOfExit(proc->exit_code, t.metric.empty());
      if (meaning == ExitMeaning::kGood || meaning == ExitMeaning::kBad)
        *again = meaning == ExitMeaning::kBad;
      else
        untestable = fmt::format("{}; it stored no result of {} at {}{}", ExitWords(proc->exit_code),
                                 fmt::join(t.CaseIds(), ", "), at, stderr_words);
    }
    run.reproduced.push_back(*again);
    run.untestable.push_back(std::move(untestable));
  }
  return run;
}

Json ConfirmJson(const std::vector<ConfirmingRun>& runs, std::size_t target) {
  Json out = Json::array();
  for (const auto& c : runs) {
    const auto& r = c.reproduced[target];
    Json j{{"exit_code", c.exit_code}, {"reproduced", r ? Json(*r) : Json(nullptr)}};
    if (!c.untestable[target].empty()) j["untestable"] = c.untestable[target];
    out.push_back(std::move(j));
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
    p.reproduced = fmt::format("reproduced {} of {} regressions", shown, targets.size());
    r.observer(p);
  }
  return OkStatus();
}

// Target i's confirmation: confirmed when every confirming rerun reproduced it.
Confirmation ConfirmationOf(const AutoBisectRequest& r, const AutoBisectOutcome& out, std::size_t i) {
  if (r.confirm == 0) return Confirmation::kNotTried;
  if (static_cast<int>(out.confirming.size()) != r.confirm)
    return Confirmation::kNotTried;  // the budget ran out before every confirming rerun
  bool all = true;  // a rerun that could not test it has no answer (reproduced empty): not confirmed
  for (const auto& c : out.confirming) all = all && c.untestable[i].empty() && c.reproduced[i].value_or(false);
  return all ? Confirmation::kConfirmed : Confirmation::kNotConfirmed;
}

// Stores each target as a regression with its confirmation, into out.regressions.
Status RecordRegressions(const AutoBisectRequest& r, BisectRecord& store, const NightlyPair& pair,
                         const std::vector<RegressionTarget>& targets, AutoBisectOutcome& out) {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    AutoRegression g;
    g.target = targets[i];
    g.confirmation = ConfirmationOf(r, out, i);
    for (const auto& c : out.confirming)
      if (g.untestable.empty() && !c.untestable[i].empty()) g.untestable = c.untestable[i];
    auto id = store.AddRegression({0, pair.current.first().id, pair.previous->first().id, g.target.suite,
                                   std::string(Word(g.target.kind)), g.target.CaseIds(),
                                   std::string(Word(g.confirmation)), ConfirmJson(out.confirming, i).dump(),
                                   std::nullopt, ""});
    if (!id) return id.error();
    g.regression_id = *id;
    out.regressions.push_back(std::move(g));
  }
  return OkStatus();
}

BisectRequest BisectRequestFor(const AutoBisectRequest& r, const RegressionTarget& target, const std::string& good,
                               const std::string& bad, int max_runs, const Nightly& nightly) {
  BisectRequest b;
  for (const auto& shard : nightly.runs)  // the nightly ends with its last shard (ISO times order as text)
    b.nightly_finished_at = std::max(b.nightly_finished_at, shard.finished_at);
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
  b.jobs = r.jobs;
  b.max_culprits = r.max_culprits;
  b.command_timeout_s = r.command_timeout_s;
  b.step_start_timeout_s = r.step_start_timeout_s;
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
    if (g.confirmation == Confirmation::kConfirmed || (r.confirm == 0 && g.confirmation == Confirmation::kNotTried))
      to_bisect.push_back(&g);
  for (std::size_t i = 0; i < to_bisect.size(); ++i) {
    AutoRegression& g = *to_bisect[i];
    const int left = r.max_runs - out.runs_total;
    auto outcome = RunBisect(
        BisectRequestFor(r, g.target, good, bad, left / static_cast<int>(to_bisect.size() - i), out.nightly), store);
    if (!outcome) return outcome.error();
    out.runs_total += outcome->runs;
    if (auto s = store.bisect_record().SetRegressionSession(g.regression_id, outcome->session_id); !s) return s.error();
    g.bisect = std::move(outcome).value();
  }
  return OkStatus();
}

std::vector<std::string> StringsOf(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// A stored session as the outcome its bisect reported (without its steps); none when it did
// not finish. A malformed list of its culprits is a warning: it names its first culprit only.
Result<std::optional<BisectOutcome>> StoredOutcome(BisectRecord& store, int64_t id, const std::filesystem::path& repo,
                                                   std::vector<std::string>& warnings) {
  auto s = store.BisectSession(id);
  if (!s) return s.error();
  auto status = StoredStatus(*s);
  if (!status) return status.error();
  const auto verdict = FinishedVerdict(*status);  // none: it did not finish
  if (!verdict) return std::optional<BisectOutcome>();
  BisectOutcome o;
  o.session_id = id;
  o.verdict = *verdict;
  o.culprit = s->culprit;
  o.confidence = s->confidence;
  o.runs = static_cast<int>(s->runs);
  o.target = s->target;
  const Json result = ParseJsonOrDiscarded(s->result_json);
  o.range = StringsOf(result, "range");
  o.skipped = StringsOf(result, "skipped");
  if (result.is_object() && result.contains("reason") && result["reason"].is_string()) o.reason = result["reason"];
  o.timing = BisectTimingOf(result);
  if (auto changes = ChangesFromJson(result, fmt::format("bisect session {}", id)))
    o.changes = std::move(changes).value();
  else
    warnings.push_back(changes.error().message + ": its culprits beyond the first are not shown");
  if (!o.culprit.empty() && !repo.empty())
    if (auto c = ReadCommit(repo, o.culprit)) o.subject = c->subject;
  return std::optional<BisectOutcome>(std::move(o));
}

// A stored regression as the run that stored it reported it; none when that run stopped
// part-way (a confirmed regression without a finished bisect).
Result<std::optional<AutoRegression>> StoredRegression(const AutoBisectRequest& r, BisectRecord& store,
                                                       const RegressionRow& row,
                                                       const std::vector<RegressionTarget>& targets,
                                                       std::vector<std::string>& warnings) {
  auto kind = StoredKind(row);
  if (!kind) return kind.error();
  auto confirmation = StoredConfirmation(row);
  if (!confirmation) return confirmation.error();
  AutoRegression g;
  for (const auto& t : targets)
    if (t.suite == row.suite && t.CaseIds() == row.cases) g.target = t;  // the same store finds the same targets
  if (g.target.cases.empty()) {
    // The nightlies' results do not change, so this is a row whose cases a changed suite
    // table (another headline metric) or a hand-edited store no longer finds: shown as
    // stored, which has no metric or per-case values to show.
    warnings.push_back(fmt::format("regression {} ({}): its cases are no longer found regressed in this nightly pair; "
                                   "shown as stored, without its metric and per-case values",
                                   row.id, row.suite));
    g.target.suite = row.suite;
    g.target.kind = *kind;
    for (const auto& id : row.cases) g.target.cases.push_back({id, *kind, 0, 0});
  }
  g.regression_id = row.id;
  g.confirmation = *confirmation;
  const Json confirm = ParseJsonOrDiscarded(row.confirm_json);
  if (confirm.is_array())
    for (const auto& c : confirm)
      if (g.untestable.empty() && c.is_object() && c.contains("untestable") && c["untestable"].is_string())
        g.untestable = c["untestable"];
  if (!row.session_id) {
    if (*confirmation == Confirmation::kConfirmed) return std::optional<AutoRegression>();
    return std::optional<AutoRegression>(std::move(g));
  }
  auto outcome = StoredOutcome(store, *row.session_id, r.repo, warnings);
  if (!outcome) return outcome.error();
  if (!*outcome) return std::optional<AutoRegression>();
  g.bisect = std::move(**outcome);
  return std::optional<AutoRegression>(std::move(g));
}

// The answer an earlier bisect --auto stored for the nightly: its regressions with their
// confirmations and finished sessions. None when it stored none, or stopped part-way: then
// the nightly is answered anew. The pair has its previous nightly (RunAutoBisect).
Result<std::optional<AutoBisectOutcome>> StoredAnswer(const AutoBisectRequest& r, Store& store,
                                                      const NightlyPair& pair) {
  using Answer = std::optional<AutoBisectOutcome>;
  auto rows = store.bisect_record().Regressions();
  if (!rows) return rows.error();
  auto targets = FindRegressions(store.reader(), pair.current, *pair.previous, r.suites_dir);
  if (!targets) return targets.error();
  AutoBisectOutcome out;
  out.nightly = pair.current;
  out.previous = pair.previous;
  out.stored = true;
  for (const auto& row : *rows) {
    if (row.run_id != pair.current.first().id) continue;
    auto g = StoredRegression(r, store.bisect_record(), row, *targets, out.warnings);
    if (!g) return g.error();
    if (!*g) return Answer();
    out.runs_total += (*g)->bisect ? (*g)->bisect->runs : 0;
    if (out.regressions.empty()) {  // one set of confirming reruns served every target
      const Json confirm = ParseJsonOrDiscarded(row.confirm_json);
      for (const auto& c : confirm.is_array() ? confirm : Json::array()) {
        const int64_t code = c.is_object() && c.contains("exit_code") && c["exit_code"].is_number_integer()
                                 ? c["exit_code"].get<int64_t>()
                                 : 0;
        out.confirming.push_back(ConfirmingRun{code, {}, {}});
        ++out.runs_total;
      }
    }
    out.regressions.push_back(std::move(**g));
  }
  if (out.regressions.empty()) return Answer();
  return Answer(std::move(out));
}

// Held while bisect --auto works on the nightly whose first shard is run_id: the file names
// the holder's pid, for the message another bisect --auto gives.
Result<std::unique_ptr<FileLock>> ClaimNightly(const std::filesystem::path& db, int64_t run_id) {
  std::filesystem::path path = db;
  path += fmt::format(".auto-bisect-{}.lock", run_id);
  auto lock = FileLock::Acquire(path, FileLock::Wait::kNo);
  if (!lock) return lock.error();
  if (!*lock) {
    auto holder = ReadInputFile(path, 4096, "lock files");
    std::string who = holder ? ValidUtf8(*holder) : "";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    return InfraError(fmt::format("bisect --auto of nightly run {} is already running in {} (it holds {}): one answer "
                                  "per nightly; run this again when it has finished, to read its answer",
                                  run_id, who.empty() ? "another process" : who, path.string()));
  }
  std::ofstream(path, std::ios::trunc) << fmt::format("process {}\n", getpid());
  return lock;
}

}  // namespace

Result<AutoBisectOutcome> RunAutoBisect(const AutoBisectRequest& request, Store& store) {
  if (auto s = CheckRequest(request); !s) return s.error();
  AutoBisectRequest r = request;
  r.db = Absolute(r.db);
  if (!r.repo.empty()) r.repo = Absolute(r.repo);
  auto pair = FindNightlyPair(store.reader(), r.run_id);
  if (!pair) return pair.error();
  if (!pair->previous) {  // the first nightly of its identity: nothing to regress from
    AutoBisectOutcome out;
    out.nightly = pair->current;
    return out;
  }
  auto claim = ClaimNightly(r.db, pair->current.first().id);
  if (!claim) return claim.error();
  if (!r.again) {
    auto stored = StoredAnswer(r, store, *pair);
    if (!stored) return stored.error();
    if (*stored) return std::move(**stored);
  }
  // A new answer replaces what an earlier run stored (with --again, or one that stopped part-way).
  if (auto s = store.bisect_record().DeleteRegressionsOf(pair->current.first().id); !s) return s.error();
  AutoBisectOutcome out;
  out.nightly = pair->current;
  out.previous = pair->previous;
  auto targets = FindRegressions(store.reader(), pair->current, *pair->previous, r.suites_dir);
  if (!targets) return targets.error();
  if (targets->empty()) return out;
  const std::string good = pair->previous->first().sha, bad = pair->current.first().sha;
  if (auto s = ConfirmAtBad(r, store, bad, *targets, out); !s) return s.error();
  if (auto s = RecordRegressions(r, store.bisect_record(), *pair, *targets, out); !s) return s.error();
  if (auto s = BisectConfirmed(r, store, good, bad, out); !s) return s.error();
  return out;
}

}  // namespace harness::bisect
