#include "harness/bisect/bisector.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/bisect/bisect_output.h"
#include "harness/bisect/bisect_ranges.h"
#include "harness/bisect/bisect_words.h"
#include "harness/bisect/culprit_chain.h"
#include "harness/bisect/flip_rates.h"
#include "harness/bisect/session_lock.h"
#include "harness/bisect/slurm_step.h"
#include "harness/bisect/step_exit.h"
#include "harness/bisect/step_pool.h"
#include "harness/bisect/worktree_command.h"
#include "harness/run/suite_table.h"
#include "harness/store/resolve_commit.h"
#include "harness/store/sqlite_db.h"
#include "harness/util/git.h"
#include "harness/util/input_file.h"
#include "harness/util/paths.h"
#include "harness/util/quote.h"
#include "harness/util/subprocess.h"
#include "harness/util/watched_paths.h"

namespace harness::bisect {
namespace {

// How many nightlies before the range teach the per-question flip rates (as bisect_bench
// assumes: docs/bisect.md).
constexpr int kFlipHistoryCommits = 8;

// The series the search follows (BisectTarget, one per case plus one for the command's
// exit code when it stores nothing), as the search takes them.
std::vector<SeriesSpec> SeriesSpecs(const BisectTarget& t) {
  std::vector<SeriesSpec> out;
  for (const auto& s : t.specs) out.push_back(SeriesSpec{s.higher_is_better, s.noise_sigma});
  return out;
}

// The commits from good (position 0) to bad (the last position).
Result<std::vector<CommitInfo>> Positions(const BisectRequest& r, EvidenceReads& store) {
  if (!r.repo.empty()) {
    auto good = ReadCommit(r.repo, r.good);
    if (!good) return UsageError(fmt::format("--good {}: {}", r.good, good.error().message));
    auto bad = ReadCommit(r.repo, r.bad);
    if (!bad) return UsageError(fmt::format("--bad {}: {}", r.bad, bad.error().message));
    auto range = FirstParentRange(r.repo, good->sha, bad->sha);
    if (!range) return range.error();
    std::vector<CommitInfo> out = {*good};
    for (auto& c : *range) out.push_back(std::move(c));
    out.back() = *bad;
    return out;
  }
  auto find = [&](const std::string& flag, const std::string& rev) -> Result<CommitInfo> {
    auto c = ResolveCommit(store, rev, flag);
    if (!c) return c.error().code == ExitCode::kUsage ? UsageError(c.error().message + " (or pass --repo)") : c.error();
    if (!c->first_parent_ordinal)
      return UsageError(fmt::format("{} {}: stored without a first-parent order; pass --repo", flag, rev));
    return c;
  };
  auto good = find("--good", r.good);
  if (!good) return good.error();
  auto bad = find("--bad", r.bad);
  if (!bad) return bad.error();
  if (*good->first_parent_ordinal >= *bad->first_parent_ordinal)
    return UsageError(fmt::format("--good {} is not before --bad {} in first-parent order", r.good, r.bad));
  auto between = store.CommitsInOrdinalRange(*good->first_parent_ordinal, *bad->first_parent_ordinal);
  if (!between) return between.error();
  std::vector<CommitInfo> out = {*good};
  for (auto& c : *between) out.push_back(std::move(c));
  if (out.back().sha != bad->sha)
    return UsageError(fmt::format("the stored commits do not lead from {} to {} in first-parent order", r.good, r.bad));
  return out;
}

std::optional<double> MetricOf(const CaseEvidence& e, const std::string& name, int64_t* n = nullptr) {
  for (const auto& m : e.metrics)
    if (m.name == name) {
      if (n) *n = m.n;
      return m.value;
    }
  return std::nullopt;
}

// Which of the questions (sample keys, in the target's order) the result got right: '1'
// right, '0' wrong (wrong, invalid, truncated), 'x' not answered (a request error), '-' not
// asked (a partial run's other questions).
Result<std::string> QuestionOutcomes(EvidenceReads& store, int64_t case_result_id, const std::vector<std::string>& keys) {
  auto samples = store.Samples(case_result_id);
  if (!samples) return samples.error();
  std::map<std::string, char> outcome;
  for (const auto& s : *samples)
    outcome[s.key] = s.outcome == SampleOutcome::kCorrect ? '1' : s.outcome == SampleOutcome::kError ? 'x' : '0';
  std::string out(keys.size(), '-');
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (auto it = outcome.find(keys[i]); it != outcome.end()) out[i] = it->second;
  return out;
}

// Observations of one stored case result. A partial run's result is evidence only through
// its per-question outcomes: its value is over a few chosen questions, and no gate judged
// its status.
Status EvidenceObservations(const BisectTarget& t, int series, const CaseEvidence& e, EvidenceReads& store,
                            std::vector<LoggedObservation>& out) {
  const bool per_question = series < static_cast<int>(t.questions.size()) && !t.questions[series].empty();
  if (e.partial && (t.status || !per_question)) return OkStatus();
  if (t.status) {
    if (e.status == CaseStatus::kPass || e.status == CaseStatus::kFail)
      out.push_back(LoggedObservation{.series = series, .failed = e.status == CaseStatus::kFail});
    return OkStatus();
  }
  if (e.status == CaseStatus::kError) return OkStatus();  // an infrastructure error says nothing of the stack
  auto v = MetricOf(e, t.metric);
  if (!v) return OkStatus();
  LoggedObservation ob{.series = series, .value = *v};
  if (per_question) {
    auto q = QuestionOutcomes(store, e.case_result_id, t.questions[series]);
    if (!q) return q.error();
    if (q->find_first_of("01") != std::string::npos) ob.questions = *q;
    else if (e.partial) return OkStatus();
  }
  out.push_back(std::move(ob));
  return OkStatus();
}

void AddObservations(CulpritChain& search, int position, const StepEvidence& evidence) {
  for (const auto& logged : evidence.observations) {
    Observation ob;
    ob.position = position;
    ob.series = logged.series;
    ob.is_status = logged.failed.has_value();
    ob.failed = logged.failed.value_or(false);
    if (!ob.is_status) {
      ob.value = logged.value;
      ob.questions = logged.questions;
    }
    search.Add(ob);
  }
  if (evidence.skip) search.Skip(position);
}

// The target of a bisect by status: the cases, each a series that fails or passes.
BisectTarget StatusTarget(const BisectRequest& r) {
  BisectTarget t;
  t.status = true;
  t.cases = r.cases;
  t.words = fmt::format("status of {}", fmt::join(r.cases, ", "));
  t.specs.assign(r.cases.size() + 1, LoggedSeries{true, 0});
  return t;
}

// --metric SUITE[/METRIC], split once at its first '/': the suite, and the metric it names
// (none: the suite's headline metric).
struct MetricFlag {
  std::string suite;
  std::optional<std::string> metric;
};

MetricFlag ParseMetricFlag(const std::string& flag) {
  const auto slash = flag.find('/');
  if (slash == std::string::npos) return {flag, std::nullopt};
  return {flag.substr(0, slash), flag.substr(slash + 1)};
}

Result<SuiteTable> SuiteNamed(const BisectRequest& r, const std::string& suite) {
  auto tables = LoadSuiteTables(r.suites_dir);
  if (!tables) return tables.error();
  for (auto& tb : *tables)
    if (tb.suite == suite) return std::move(tb);
  return UsageError(fmt::format("--metric {}: no suite '{}' in {}", r.metric, suite, r.suites_dir.string()));
}

// The cases to compare: --case's (each of the suite), else the suite's cases stored at
// either end.
Result<std::vector<std::string>> CasesToCompare(const BisectRequest& r, const std::string& suite, EvidenceReads& store,
                                                const std::vector<CommitInfo>& commits) {
  if (!r.cases.empty()) {
    for (const auto& id : r.cases)
      if (id.rfind(suite + "/", 0) != 0)
        return UsageError(fmt::format("--case {} is not a case of suite '{}'", id, suite));
    return r.cases;
  }
  std::set<std::string> ids;
  for (const auto* c : {&commits.front(), &commits.back()}) {
    auto at = store.CaseIdsAt(c->sha, suite + "/");
    if (!at) return at.error();
    ids.insert(at->begin(), at->end());
  }
  return std::vector<std::string>(ids.begin(), ids.end());
}

// A case's mean metric at the good and the bad end (error results are no evidence).
struct CaseAtEnds {
  double good = 0, bad = 0;
  int64_t n = 0;            // the questions behind a value, when the metric says
  int64_t good_result = 0;  // a known-good result whose samples name the questions
};

// None when either end has no result of the case with the metric.
Result<std::optional<CaseAtEnds>> MeansAtEnds(EvidenceReads& store, const std::string& id, const std::string& metric,
                                              const std::vector<CommitInfo>& commits) {
  CaseAtEnds ends;
  double sum[2] = {0, 0}, count[2] = {0, 0};
  for (int side : {0, 1}) {
    auto ev = store.CaseEvidenceAt(id, side == 0 ? commits.front().sha : commits.back().sha);
    if (!ev) return ev.error();
    for (const auto& e : *ev)
      if (e.status != CaseStatus::kError && !e.partial)  // a partial run's value is over a few questions
        if (auto v = MetricOf(e, metric, &ends.n)) {
          sum[side] += *v, count[side] += 1;
          if (side == 0 && !ends.good_result) ends.good_result = e.case_result_id;
        }
  }
  if (count[0] == 0 || count[1] == 0) return std::optional<CaseAtEnds>();
  ends.good = sum[0] / count[0];
  ends.bad = sum[1] / count[1];
  return std::optional<CaseAtEnds>(ends);
}

// The noise prior of a series: --noise-sigma, else a share's binomial noise over n
// questions, else 1% of the value.
double NoiseSigma(const BisectRequest& r, double good, int64_t n) {
  if (r.noise_sigma) return *r.noise_sigma;
  if (n > 0) return std::max(1e-4, 0.4 * std::sqrt(std::max(good * (1 - good), 1e-4) / static_cast<double>(n)));
  return std::max(1e-12, 0.01 * std::abs(good));
}

// Picks the cases and the metric (flag: r.metric parsed), and the noise prior of each series.
Result<BisectTarget> ChooseTarget(const BisectRequest& r, const MetricFlag& flag, EvidenceReads& store,
                                  const std::vector<CommitInfo>& commits) {
  if (r.metric.empty()) {
    if (r.cases.empty()) return UsageError("bisect needs --metric SUITE[/METRIC] or --case ID");
    return StatusTarget(r);
  }
  BisectTarget t;
  const std::string& suite = flag.suite;
  auto table = SuiteNamed(r, suite);
  if (!table) return table.error();
  t.metric = flag.metric.value_or(table->headline_metric);
  if (t.metric.empty())
    return UsageError(fmt::format("--metric {}: suite '{}' declares no headline_metric; name one as {}/METRIC",
                                  r.metric, suite, suite));
  std::optional<bool> higher;
  if (t.metric == table->headline_metric) higher = table->headline_higher_is_better;
  auto cases = CasesToCompare(r, suite, store, commits);
  if (!cases) return cases.error();
  // The cases that are worse at bad than at good; each its own series with its noise prior.
  for (const auto& id : *cases) {
    auto ends = MeansAtEnds(store, id, t.metric, commits);
    if (!ends) return ends.error();
    if (!*ends) continue;
    const double good = (*ends)->good, bad = (*ends)->bad;
    const bool higher_better = higher.value_or(bad < good);  // unknown direction: the way it moved is worse
    if (higher_better ? !(bad < good) : !(bad > good)) continue;
    t.cases.push_back(id);
    t.specs.push_back(LoggedSeries{higher_better, NoiseSigma(r, good, (*ends)->n)});
    // Right answers are what the headline metric counts (a share of questions right), so its
    // per-question outcomes say which questions a drop lost.
    std::vector<std::string> keys;
    if (t.metric == table->headline_metric && higher_better) {
      auto samples = store.Samples((*ends)->good_result);
      if (!samples) return samples.error();
      for (const auto& smp : *samples) keys.push_back(smp.key);
    }
    t.questions.push_back(std::move(keys));
  }
  t.specs.push_back(LoggedSeries{true, 0});
  t.words = fmt::format("{} of {}", t.metric, t.cases.empty() ? suite + " (no case worse at bad)" : fmt::format("{}", fmt::join(t.cases, ", ")));
  return t;
}

// One bisect session: the commits, the target, the search, the stored session and its
// steps; RunBisect drives it.
class Session {
 public:
  Session(const BisectRequest& r, Store& store, std::vector<CommitInfo> commits, SessionLock& lock)
      : r_(r), metric_(ParseMetricFlag(r.metric)), store_(store), reads_(store.reader()),
        commits_(std::move(commits)), n_(static_cast<int>(commits_.size()) - 1), lock_(lock),
        uses_questions_(UsesQuestions(r.command)), started_(std::chrono::steady_clock::now()) {}

  // The cases and series from a replayed log, else chosen now; when the store has nothing
  // at the endpoints and a command can make it, the endpoints are run first.
  Status ChooseTarget() {
    if (r_.replay) {
      target_ = r_.replay->target;
      return OkStatus();
    }
    auto t = bisect::ChooseTarget(r_, metric_, reads_, commits_);
    if (!t) return t.error();
    target_ = *t;
    if (target_.status || !target_.cases.empty() || r_.command.empty()) return OkStatus();
    for (int k : {0, n_}) {
      auto step = StartStep(k, 0);
      if (!step) return step.error();
      step->proc = RunCommandAt(step->spec, commits_[k].sha, lock_);
      auto proc = EndStep(*step);
      if (!proc) return proc.error();
      auto stored = StoredSuiteResult(k, step->before);
      if (!stored) return stored.error();
      if (!*stored)
        return InfraError(fmt::format("the command could not test {}: {}; it stored no result of {} there{}", At(k),
                                      ExitWords(proc->exit_code), r_.metric, StderrWords(proc->err)));
      end_tested_ = true;
    }
    auto again = bisect::ChooseTarget(r_, metric_, reads_, commits_);
    if (!again) return again.error();
    target_ = *again;
    return OkStatus();
  }

  Status Begin() {
    auto watch = WatchedPaths();
    if (!watch) return watch.error();
    out_.watch = std::move(*watch);
    const BisectSessionHeader header{.good = commits_.front().sha, .bad = commits_.back().sha, .metric = r_.metric,
                                     .cases = r_.cases, .repo = r_.repo.string(), .max_runs = r_.max_runs,
                                     .max_culprits = r_.max_culprits,
                                     .confidence = r_.confidence, .flake_rate = r_.flake_rate,
                                     .noise_sigma = r_.noise_sigma, .command = r_.command,
                                     .command_timeout_s = r_.command_timeout_s, .full_evals = r_.full_evals,
                                     .target = target_, .watch = out_.watch};
    row_.good = commits_.front().sha;
    row_.bad = commits_.back().sha;
    row_.target = target_.words;
    row_.args_json = ToJson(header).dump();
    auto id = lock_.Begin(store_.bisect_record(), row_);
    if (!id) return id.error();
    out_.session_id = *id;
    out_.target = target_.words;
    out_.cases = target_.cases;
    for (const auto& keys : target_.questions)
      out_.questions_per_eval = std::max(out_.questions_per_eval, static_cast<int64_t>(keys.size()));
    SearchOptions options;
    options.confidence = r_.confidence;
    options.flake_rate = r_.flake_rate;
    options.max_runs = r_.max_runs;
    // A command without {questions} evaluates every question: the search plans each run so.
    options.questions.full = r_.full_evals || !uses_questions_;
    search_.emplace(n_ + 1, SeriesSpecs(target_), options, r_.max_culprits);
    if (auto st = WeighByWhatChanged(); !st) return st;
    return LearnFlipRates(options);
  }

  // The watched paths: --watch's and the "watch" lists of the suites of the target's cases
  // (a replayed log's are the ones it logged, the suites' included), sorted, once each.
  Result<std::vector<std::string>> WatchedPaths() const {
    std::set<std::string> all(r_.watch.begin(), r_.watch.end());
    if (!r_.replay && !target_.cases.empty() && std::filesystem::is_directory(r_.suites_dir)) {
      auto tables = LoadSuiteTables(r_.suites_dir);
      if (!tables) return tables.error();
      for (const auto& t : *tables)
        for (const auto& id : target_.cases)
          if (id.rfind(t.suite + "/", 0) == 0) all.insert(t.watch.begin(), t.watch.end());
    }
    return std::vector<std::string>(all.begin(), all.end());
  }

  // Priors from what a commit changed: the commits of the range whose changes (git, against
  // its first parent) touch a watched path together hold kWatchedPrior of the culprit prior
  // (UnwatchedWeight). Without a repository there are no changed files, and when every
  // commit or none touches one the weights are all alike: then the prior stays flat, exactly
  // as without a watch.
  Status WeighByWhatChanged() {
    if (out_.watch.empty() || r_.repo.empty()) return OkStatus();
    std::vector<char> touches(n_ + 1, 0);
    for (int j = 1; j <= n_; ++j) {
      auto changed = ChangedFiles(r_.repo, commits_[j].sha);
      if (!changed)
        return Error{changed.error().code, fmt::format("the files commit {} changed (for --watch): {}",
                                                       ShortSha(commits_[j].sha), changed.error().message)};
      if (!TouchesWatched(*changed, out_.watch)) continue;
      touches[j] = 1;
      out_.watched.push_back(commits_[j].sha);
    }
    out_.changes_read = n_;
    std::vector<double> weights = WatchedPriorWeights(touches);
    if (weights.empty()) return OkStatus();
    out_.unwatched_weight = *std::min_element(weights.begin() + 1, weights.end());  // a watched one weighs 1
    search_->SetPriorWeights(std::move(weights));
    out_.priors_applied = true;
    return OkStatus();
  }

  // Each per-question series learns which of its questions flip from the stored results of
  // the nightlies before the range (the first-parent ancestors of the known-good commit, up
  // to kFlipHistoryCommits; flip_rates.h). They are not observations: they say nothing of
  // where the culprit is. Without a repository, or with no such results, the fixed prior.
  Status LearnFlipRates(const SearchOptions& options) {
    if (target_.status || r_.repo.empty()) return OkStatus();
    auto ancestors = FirstParentAncestors(r_.repo, commits_.front().sha, kFlipHistoryCommits);
    if (!ancestors) return ancestors.error();
    for (int i = 0; i < static_cast<int>(target_.cases.size()); ++i) {
      if (i >= static_cast<int>(target_.questions.size()) || target_.questions[i].empty()) continue;
      std::vector<std::string> history;
      for (const auto& sha : *ancestors) {
        auto stored = reads_.CaseEvidenceAt(target_.cases[i], sha);
        if (!stored) return stored.error();
        for (const auto& e : *stored) {
          if (e.status == CaseStatus::kError) continue;
          auto q = QuestionOutcomes(reads_, e.case_result_id, target_.questions[i]);
          if (!q) return q.error();
          if (q->find_first_of("01") != std::string::npos) history.push_back(std::move(*q));
        }
      }
      out_.flip_history_runs += static_cast<int>(history.size());
      if (!history.empty())
        search_->SetFlipRates(i, FlipRates::Estimate(history, options.solid_flip, options.fragile_share));
    }
    return OkStatus();
  }

  // Free evidence: a replayed log's steps as written, else every stored result.
  Status SeedEvidence() {
    if (!target_.status && target_.cases.empty()) return OkStatus();
    if (r_.replay) return SeedFromReplay();
    for (int k = 0; k <= n_; ++k) {
      StepEvidence ev;
      std::optional<int64_t> run_id;
      auto added = CollectStored(k, 0, ev, run_id);
      if (!added) return added.error();
      if (*added)
        if (auto st = Record(k, "store", ev, run_id, std::nullopt); !st) return st;
    }
    return OkStatus();
  }

  // Asks the search, runs what it asks for, until it answers (or cannot go on).
  Result<Decision> Search() {
    if (!target_.status && target_.cases.empty()) {
      out_.reason = fmt::format("no case of {} is worse at {} than at {}", r_.metric, ShortSha(commits_.back().sha),
                                ShortSha(commits_.front().sha));
      return Decision{Verdict::kNoCulprit, -1, -1, {}, 1.0};
    }
    if (r_.jobs > 1 && !r_.command.empty()) return SearchSideBySide();
    for (;;) {
      if (const int sig = StopSignals::Caught())
        return Fail(InfraError(fmt::format("interrupted by {}", SignalName(sig))));
      Decision d = search_->Decide();
      if (d.verdict != Verdict::kSearching) return d;
      if (r_.command.empty()) {
        out_.reason = fmt::format("the store has too little evidence and no command follows -- to run {}",
                                  ShortSha(commits_[d.next_position].sha));
        return Decision{Verdict::kAmbiguous, -1, -1, search_->CredibleRange(), d.confidence};
      }
      if (auto st = CommandStep(d.next_position); !st) return Fail(st.error());
    }
  }

  // A culprit the chain named, as the outcome shows it: its commit and subject.
  BisectChange ChangeAt(const Change& c) const {
    BisectChange out{commits_[c.position].sha, commits_[c.position].subject, c.confidence, c.size};
    if (out.subject.empty() && !r_.repo.empty())
      if (auto commit = ReadCommit(r_.repo, out.sha)) out.subject = commit->subject;
    return out;
  }

  Result<BisectOutcome> Finish(const Decision& d) {
    out_.verdict = d.verdict;
    out_.confidence = d.confidence;
    for (const Change& c : d.changes) out_.changes.push_back(ChangeAt(c));
    if (d.verdict == Verdict::kCulprit) {
      out_.culprit = commits_[d.culprit].sha;
      // The chain names the first culprit first: its subject is read once, in ChangeAt.
      const bool first = !out_.changes.empty() && out_.changes.front().sha == out_.culprit;
      out_.subject = first ? out_.changes.front().subject : ChangeAt(Change{d.culprit}).subject;
    }
    if (d.unsettled) out_.reason = "a search after the first culprit ended without an answer: more changes may be in the range";
    for (int j : d.range) out_.range.push_back(commits_[j].sha);
    for (int k : search_->skipped()) out_.skipped.push_back(commits_[k].sha);
    if (d.verdict == Verdict::kAmbiguous && out_.reason.empty())
      out_.reason = search_->runs_requested() >= r_.max_runs ? fmt::format("--max-runs {} reached", r_.max_runs)
                                                              : "skipped commits sit next to the culprit";
    BisectSessionRow fin = row_;
    fin.status = Word(StatusOf(out_.verdict));
    fin.culprit = out_.culprit;
    fin.confidence = out_.confidence;
    fin.runs = out_.runs;
    Json result{{"verdict", fin.status}, {"culprit", out_.culprit}, {"range", out_.range}, {"skipped", out_.skipped},
                {"reason", out_.reason}, {"questions_evaluated", out_.questions_evaluated},
                {"changes", ChangesJson(out_.changes)}};
    out_.timing = Timing();
    AddTiming(result, *out_.timing);
    fin.result_json = result.dump();
    if (auto s = store_.bisect_record().FinishBisect(out_.session_id, fin); !s) return s.error();
    return out_;
  }

 private:
  // The session's time so far: wall time since it started, its steps, its rounds (the longest
  // chain of steps each started after the one before it ended: the steps with --jobs 1), and,
  // for bisect --auto, since the nightly ended.
  BisectTiming Timing() const {
    BisectTiming t;
    t.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    t.steps = out_.runs;
    t.rounds = finished_depth_;
    if (const auto nightly = store_sql::UtcEpochSeconds(r_.nightly_finished_at)) {
      const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      t.seconds_after_nightly = std::max(0.0, now - static_cast<double>(*nightly));
    }
    return t;
  }

  Status SeedFromReplay() {
    std::map<std::string, int> index;
    for (int k = 0; k <= n_; ++k) index[commits_[k].sha] = k;
    for (const auto& s : r_.replay->steps) {
      auto it = index.find(s.sha);
      if (it == index.end()) return UsageError(fmt::format("replayed step {}: not a commit of the range", s.sha));
      used_results_.insert(s.evidence.case_results.begin(), s.evidence.case_results.end());
      if (auto st = Record(it->second, "replay", s.evidence, std::nullopt, std::nullopt); !st) return st;
    }
    return OkStatus();
  }

  // What made run_id, as `harness run` recorded it ($HARNESS_BISECT in its context's
  // "bisect": "session N step S"); empty for a run no bisect step made.
  Result<std::string> RunMadeFor(int64_t run_id) {
    if (auto it = run_made_for_.find(run_id); it != run_made_for_.end()) return it->second;
    auto run = reads_.Run(run_id);
    if (!run) return run.error();
    const Json context = ParseJsonOrDiscarded(run->context_json);
    std::string made_for;
    if (context.is_object() && context.contains("bisect") && context["bisect"].is_string())
      made_for = context["bisect"].get<std::string>();
    return run_made_for_[run_id] = made_for;
  }

  // Adds the observations of every not yet used stored result at position k newer than
  // after_id to ev; true when there was any. With made_for (a step's own), a result of a run
  // another step made is not this step's (two steps at one commit at once, --jobs).
  Result<bool> CollectStored(int k, int64_t after_id, StepEvidence& ev, std::optional<int64_t>& run_id,
                             const std::string& made_for = "") {
    bool any = false;
    for (int i = 0; i < static_cast<int>(target_.cases.size()); ++i) {
      auto stored = reads_.CaseEvidenceAt(target_.cases[i], commits_[k].sha);
      if (!stored) return stored.error();
      for (const auto& e : *stored) {
        if (e.case_result_id <= after_id || used_results_.count(e.case_result_id)) continue;
        if (!made_for.empty()) {
          auto by = RunMadeFor(e.run_id);
          if (!by) return by.error();
          if (!by->empty() && *by != made_for) continue;
        }
        if (used_results_.insert(e.case_result_id).second) {
          const std::size_t observed = ev.observations.size();
          if (auto st = EvidenceObservations(target_, i, e, reads_, ev.observations); !st) return st.error();
          if (auto st = CountQuestions(e.case_result_id, ev); !st) return st.error();
          if (e.partial && ev.observations.size() == observed) continue;  // says nothing of this target
          ev.case_results.push_back(e.case_result_id);
          run_id = e.run_id;
          any = true;
        }
      }
    }
    return any;
  }

  // A case result a command stored (rather than one the store held before): its samples are
  // the questions the run evaluated, counted in the step's evidence and the session's cost.
  Status CountQuestions(int64_t case_result_id, StepEvidence& ev) {
    const bool by_command = std::any_of(command_results_.begin(), command_results_.end(), [&](const auto& range) {
      return case_result_id > range.first && case_result_id <= range.second;
    });
    if (!by_command) return OkStatus();
    auto samples = reads_.Samples(case_result_id);
    if (!samples) return samples.error();
    const auto asked = static_cast<int64_t>(samples->size());
    ev.questions_evaluated = ev.questions_evaluated.value_or(0) + asked;
    out_.questions_evaluated += asked;
    return OkStatus();
  }

  // The text of the file {questions} names for a run at position k: one key per line, the
  // keys Search::QuestionsFor chooses for each per-question series, or '*' (every question)
  // for a whole eval: before the target is chosen, for a target without per-question
  // outcomes, and when the search chooses every question (always with --full-evals).
  std::string QuestionsFileText(int k) const {
    std::vector<std::string> keys;
    std::set<std::string> listed;
    bool whole = !search_ || target_.status;
    bool any_series = false;
    for (int i = 0; i < static_cast<int>(target_.questions.size()) && !whole; ++i) {
      const auto& all = target_.questions[i];
      if (all.empty()) continue;
      any_series = true;
      const std::vector<int> chosen = search_->QuestionsFor(k, i);
      whole = chosen.empty() || chosen.size() >= all.size();
      for (int q : chosen)
        if (q < static_cast<int>(all.size()) && listed.insert(all[q]).second) keys.push_back(all[q]);
    }
    whole = whole || !any_series;
    if (whole) return EveryQuestionFile(fmt::format("every question at {}", commits_[k].sha));
    std::string text = fmt::format("# harness bisect: {} questions chosen at {}\n", keys.size(), commits_[k].sha);
    for (const auto& key : keys) text += key + "\n";
    return text;
  }

  // Position k in words for a message: "the known-good end 1a2b3c4d", "the known-bad end
  // ...", or an interior commit's short sha.
  std::string At(int k) const {
    if (k == 0) return "the known-good end " + ShortSha(commits_[k].sha);
    if (k == n_) return "the known-bad end " + ShortSha(commits_[k].sha);
    return ShortSha(commits_[k].sha);
  }

  static std::string StderrWords(const std::string& err) {
    const std::string tail = StderrTail(err);
    return tail.empty() ? "; its stderr was empty" : "; stderr: " + tail;
  }

  // A command step from its start to its end: where and in which slot it runs, the newest
  // case result id before it, what it is made for ("session N step S", $HARNESS_BISECT), its
  // place in the chain of steps (rounds) and, once it ended, its process.
  struct StepRun {
    int k = 0, slot = 0, depth = 0;
    int64_t before = 0;
    std::string made_for;
    WorktreeCommandSpec spec;
    std::optional<Result<StepProcess>> proc;
  };

  // A step at position k in slot, ready for RunCommandAt (its questions chosen now).
  Result<StepRun> StartStep(int k, int slot) {
    auto newest = reads_.NewestCaseResultId();
    if (!newest) return newest.error();
    StepRun s;
    s.k = k;
    s.slot = slot;
    s.before = *newest;
    s.depth = finished_depth_ + 1;
    s.made_for = r_.made_for.empty() ? fmt::format("session {} step {}", out_.session_id, ++steps_started_) : r_.made_for;
    s.spec = WorktreeCommandSpec{r_.command, r_.repo, r_.db, r_.command_timeout_s, s.made_for};
    s.spec.step_start_timeout_s = r_.step_start_timeout_s;
    s.spec.slot = slot;
    if (uses_questions_)
      s.spec.questions = whole_eval_ ? EveryQuestionFile(fmt::format("every question at {}", commits_[k].sha))
                                     : QuestionsFileText(k);
    return s;
  }

  // The end of a step whose command ran. An interrupt, a timeout, a signal or an exit >= 128
  // is an error (exit 3) naming where and the end of its stderr: no answer, whatever it stored.
  Result<StepProcess> EndStep(StepRun& s) {
    auto after = reads_.NewestCaseResultId();
    if (!after) return after.error();
    command_results_.emplace_back(s.before, *after);
    auto& proc = *s.proc;
    if (!proc) return proc.error();
    ++out_.runs;
    finished_depth_ = std::max(finished_depth_, s.depth);
    const std::string at = At(s.k);
    if (proc->stop_signal)
      return InfraError(fmt::format("interrupted by {} while the command ran at {}", SignalName(proc->stop_signal), at));
    if (proc->timed_out) return InfraError(fmt::format("the command timed out at {}{}", at, StderrWords(proc->err)));
    if (proc->scheduler_ended) return *proc;  // srun's exit, not the command's: EvidenceOf says why it is no evidence
    if (proc->signal)
      return InfraError(
          fmt::format("the command was killed by signal {} at {}{}", proc->signal, at, StderrWords(proc->err)));
    if (MeaningOfExit(proc->exit_code, true) == ExitMeaning::kAbort)
      return InfraError(fmt::format("the command exited {} at {}: that aborts the bisect (git's convention){}",
                                    proc->exit_code, at, StderrWords(proc->err)));
    return *proc;
  }

  // Whether the command's run at position k stored a result (not an error, not partial) of
  // a case the metric's target could be chosen from: --case's, else the suite's.
  Result<bool> StoredSuiteResult(int k, int64_t before) {
    std::vector<std::string> ids = r_.cases;
    if (ids.empty()) {
      auto at = reads_.CaseIdsAt(commits_[k].sha, metric_.suite + "/");
      if (!at) return at.error();
      ids = *at;
    }
    for (const auto& id : ids) {
      auto stored = reads_.CaseEvidenceAt(id, commits_[k].sha);
      if (!stored) return stored.error();
      for (const auto& e : *stored)
        if (e.case_result_id > before && e.status != CaseStatus::kError && !e.partial) return true;
    }
    return false;
  }

  // Runs the command at position k in a worktree of it, in slot (EvidenceOf).
  Result<StepEvidence> RunCommand(int k, std::optional<int64_t>& run_id, std::optional<int64_t>& exit_code,
                                  int slot = 0) {
    auto step = StartStep(k, slot);
    if (!step) return step.error();
    step->proc = RunCommandAt(step->spec, commits_[k].sha, lock_);
    return EvidenceOf(*step, run_id, exit_code);
  }

  // What a step whose command ran says. The evidence is a result of a target case its run
  // stored; without one its exit code speaks (step_exit.h), or the step could not test the
  // commit: a skip with the reason at an interior commit, an error (exit 3) at an end, since
  // every hypothesis is measured against the ends.
  Result<StepEvidence> EvidenceOf(StepRun& step, std::optional<int64_t>& run_id, std::optional<int64_t>& exit_code) {
    const int k = step.k;
    auto proc = EndStep(step);
    if (!proc) return proc.error();
    exit_code = proc->exit_code;
    StepEvidence ev{.exit_code = proc->exit_code};
    if (proc->scheduler_ended) return Untestable(k, *proc->scheduler_ended, ev, proc->err);
    auto stored = CollectStored(k, step.before, ev, run_id, step.made_for);
    if (!stored) return stored.error();
    if (!ev.observations.empty()) return ev;  // the command stored a result of the target: that is the evidence
    const ExitMeaning meaning = MeaningOfExit(proc->exit_code, target_.status);
    if (meaning == ExitMeaning::kGood || meaning == ExitMeaning::kBad) {
      ev.observations.push_back(
          LoggedObservation{.series = static_cast<int>(target_.cases.size()), .failed = meaning == ExitMeaning::kBad});
      return ev;
    }
    return Untestable(k,
                      fmt::format("{}; it stored {} of {}", ExitWords(proc->exit_code),
                                  *stored ? "only results that say nothing (errors, or partial runs)" : "no result",
                                  fmt::join(target_.cases, ", ")),
                      ev, proc->err);
  }

  // A step that could not test the commit: skipped with its reason inside the range, an
  // error (exit 3) at an end.
  Result<StepEvidence> Untestable(int k, const std::string& why, StepEvidence ev, const std::string& err) {
    ev.skip = true;
    ev.untestable = why;
    ev.stderr_tail = StderrTail(err);
    if (k == 0 || k == n_)
      return InfraError(fmt::format("the command could not test {}: {}{}", At(k), ev.untestable, StderrWords(err)));
    return ev;
  }

  // One command step the search asked for at position k, recorded, then what the ends say
  // of the command (VouchForCommand).
  Status CommandStep(int k) {
    std::optional<int64_t> run_id, exit_code;
    Notify(BisectProgress::Event::kStepStart, k);
    auto ev = RunCommand(k, run_id, exit_code);
    if (!ev) return ev.error();
    search_->CountRun();
    if (auto st = Record(k, "command", *ev, run_id, exit_code); !st) return st;
    Notify(BisectProgress::Event::kStepEnd, k);
    return VouchForCommand(k, *ev);
  }

  // --jobs K: up to K steps at once, each in a slot of its own (its worktree, its reaper,
  // its entry in the session lock). A step that ends is recorded at once and the next choice
  // (Search::Decide beside the runs in flight; DecideBatch when several slots are free) starts
  // in its slot. The first error (an untestable end, a timeout, an interrupt) stops the
  // other steps (SIGTERM to each group) and, once every one has ended and been cleaned up,
  // ends the session as one step at a time would; what they stored is not evidence.
  Result<Decision> SearchSideBySide() {
    StepPool pool(r_.jobs);
    std::map<int, StepRun> running;  // by slot
    std::optional<Error> failure;
    for (;;) {
      if (!failure)
        if (const int sig = StopSignals::Caught()) failure = InfraError(fmt::format("interrupted by {}", SignalName(sig)));
      if (!failure) {
        auto answer = StartSteps(pool, running);
        if (!answer) failure = answer.error();
        else if (*answer) return **answer;
      }
      if (failure) pool.StopAll();
      if (running.empty()) break;
      for (int slot : pool.WaitForEnded(0.1)) {
        StepRun step = std::move(running.at(slot));
        running.erase(slot);
        if (failure) {
          static_cast<void>(EndStep(step));  // counted as run, not evidence
          continue;
        }
        if (auto st = RecordSideBySide(step); !st) failure = st.error();
      }
    }
    return Fail(*failure);
  }

  // Fills the free slots with the search's choices beside the runs in flight. The answer when
  // the search gives one with nothing in flight; none while it waits or steps run.
  Result<std::optional<Decision>> StartSteps(StepPool& pool, std::map<int, StepRun>& running) {
    for (;;) {
      std::vector<int> pending;
      for (const auto& [slot, step] : running) pending.push_back(step.k);
      const int free = r_.jobs - static_cast<int>(running.size());
      if (free <= 0) return std::optional<Decision>();
      std::vector<int> chosen;
      if (free > 1) chosen = search_->DecideBatch(pending, free);
      if (chosen.empty()) {
        const Decision d = search_->Decide(pending);
        if (d.verdict != Verdict::kSearching) return running.empty() ? std::optional<Decision>(d) : std::nullopt;
        if (d.next_position < 0) return std::optional<Decision>();
        chosen = {d.next_position};
      }
      for (int k : chosen) {
        const int slot = pool.FreeSlot();
        auto step = StartStep(k, slot);
        if (!step) return step.error();
        search_->CountRun();  // before the next choice: the budget counts runs in flight
        Notify(BisectProgress::Event::kStepStart, k, static_cast<int>(running.size()));
        step->spec.cancel = pool.stop_flag();
        StepRun& placed = running.emplace(slot, std::move(*step)).first->second;
        pool.Start(slot, [this, &placed] { placed.proc = RunCommandAt(placed.spec, commits_[placed.k].sha, lock_); });
      }
    }
  }

  // A step that ended beside others: recorded as CommandStep records one (its run was
  // counted when it started), then the ends vouch for the command in its slot.
  Status RecordSideBySide(StepRun& step) {
    std::optional<int64_t> run_id, exit_code;
    auto ev = EvidenceOf(step, run_id, exit_code);
    if (!ev) return ev.error();
    if (auto st = Record(step.k, "command", *ev, run_id, exit_code); !st) return st;
    Notify(BisectProgress::Event::kStepEnd, step.k);
    return VouchForCommand(step.k, *ev, step.slot);
  }

  // The ends vouch for the command (as mozregression verifies them): a step at the known-good
  // end must reproduce it as good; the first interior commit the command could not test,
  // before it has tested an end in this session, has the known-good end run (a whole eval)
  // to tell a broken command from a broken commit.
  Status VouchForCommand(int k, const StepEvidence& ev, int slot = 0) {
    if (k == 0 || k == n_) {
      end_tested_ = true;
      return k == 0 ? GoodEndReproduces(ev) : OkStatus();
    }
    if (ev.untestable.empty() || end_tested_ || search_->runs_requested() >= r_.max_runs) return OkStatus();
    std::optional<int64_t> run_id, exit_code;
    whole_eval_ = true;
    Notify(BisectProgress::Event::kStepStart, 0);
    auto good = RunCommand(0, run_id, exit_code, slot);
    whole_eval_ = false;
    if (!good)
      return Error{good.error().code,
                   fmt::format("{} could not be tested, so the command ran at the known-good end: {}; the command is "
                               "broken, not the commit",
                               ShortSha(commits_[k].sha), good.error().message)};
    search_->CountRun();
    if (auto st = Record(0, "command", *good, run_id, exit_code); !st) return st;
    Notify(BisectProgress::Event::kStepEnd, 0);
    return VouchForCommand(0, *good, slot);
  }

  // Series i in words: its case, or the command's exit code.
  std::string SeriesName(int i) const {
    return i < static_cast<int>(target_.cases.size()) ? target_.cases[i] : "the command's exit code";
  }

  // The mean of the whole-eval values of series i at position k in the steps so far (the
  // newest step left out when skip_last); none without one.
  std::optional<double> WholeMean(int k, int series, bool skip_last) const {
    double sum = 0;
    int count = 0;
    const std::size_t steps = out_.steps.size() - (skip_last && !out_.steps.empty() ? 1 : 0);
    for (std::size_t s = 0; s < steps; ++s) {
      if (out_.steps[s].sha != commits_[k].sha) continue;
      for (const auto& ob : out_.steps[s].evidence.observations)
        if (ob.series == series && !ob.failed && ob.questions.find('-') == std::string::npos) sum += ob.value, ++count;
    }
    if (count == 0) return std::nullopt;
    return sum / count;
  }

  // A command step at the known-good end must find it good. Status: no target case (nor the
  // exit code) fails there. Metric: not every whole-eval value the run measured lies at or
  // beyond the known-bad end's mean in the bad direction while also more than 3 noise
  // sigmas from the known-good end's own level (a run at the bad level that noise could
  // not put there); a partial run's value, over a few chosen questions, is not compared.
  Status GoodEndReproduces(const StepEvidence& ev) {
    std::vector<std::string> bad_like;
    int compared = 0;
    for (const auto& ob : ev.observations) {
      if (ob.failed) {
        if (*ob.failed) bad_like.push_back(fmt::format("{} fails there", SeriesName(ob.series)));
        ++compared;
        continue;
      }
      if (ob.questions.find('-') != std::string::npos || ob.series >= static_cast<int>(target_.specs.size())) continue;
      const auto bad = WholeMean(n_, ob.series, false);
      if (!bad) continue;
      ++compared;
      const LoggedSeries& spec = target_.specs[ob.series];
      const bool beyond = spec.higher_is_better ? ob.value <= *bad : ob.value >= *bad;
      const auto good = WholeMean(0, ob.series, true);
      const bool unlike_good = !good || std::abs(ob.value - *good) > 3 * spec.noise_sigma;
      if (beyond && unlike_good)
        bad_like.push_back(fmt::format("{} measured {:.4f} there, at or beyond the known-bad end's {:.4f}{}",
                                       SeriesName(ob.series), ob.value, *bad,
                                       good ? fmt::format(" (the known-good end's was {:.4f})", *good) : ""));
    }
    // A status that fails is enough; a metric's values must all look bad.
    const bool reproduces =
        bad_like.empty() || (!target_.status && static_cast<int>(bad_like.size()) < compared);
    if (reproduces) return OkStatus();
    return InfraError(fmt::format("{} does not reproduce as good when the command runs it: {}", At(0),
                                  fmt::join(bad_like, "; ")));
  }

  Status Record(int k, const std::string& source, const StepEvidence& ev, std::optional<int64_t> run_id,
                std::optional<int64_t> exit_code) {
    AddObservations(*search_, k, ev);
    BisectStep step;
    step.index = static_cast<int>(out_.steps.size());
    step.sha = commits_[k].sha;
    step.source = source;
    step.run_id = run_id;
    step.exit_code = exit_code;
    step.evidence = ev;
    step.probability_bad = search_->ProbabilityBad(k);
    step.verdict = StepVerdictOf(step.probability_bad, search_->skipped().count(k) > 0, r_.confidence);
    Json decision{{"probability_bad", step.probability_bad}, {"verdict", Word(step.verdict)},
                  {"no_culprit", search_->Posterior()[0]}};
    out_.steps.push_back(step);
    return store_.bisect_record().AddBisectStep(
        out_.session_id,
        BisectStepRow{step.index, step.sha, source, run_id, exit_code, ToJson(ev).dump(), decision.dump()});
  }

  // Tells the observer where the session is: the commit, the leading hypothesis, the cost so far.
  // A step that starts while in_flight others run (--jobs) is numbered after them.
  void Notify(BisectProgress::Event event, int k, int in_flight = 0) const {
    if (!r_.observer) return;
    const std::vector<double> posterior = search_->Posterior();
    const auto best = static_cast<std::size_t>(std::max_element(posterior.begin(), posterior.end()) - posterior.begin());
    BisectProgress p{.event = event, .sha = commits_[k].sha, .subject = commits_[k].subject,
                     .step = static_cast<int>(out_.steps.size()) + in_flight + 1, .runs = out_.runs, .max_runs = r_.max_runs,
                     .questions = out_.questions_evaluated, .leading = best == 0 ? "" : commits_[best].sha,
                     .leading_p = posterior[best]};
    if (event == BisectProgress::Event::kStepEnd) {
      p.step -= 1;  // the step just recorded
      p.verdict = out_.steps.back().verdict;
      p.exit_code = out_.steps.back().exit_code;
      p.stored_results = out_.steps.back().run_id.has_value();
    }
    r_.observer(p);
  }

  // Ends the session as an error, stored as far as it went.
  Error Fail(const Error& e) {
    BisectSessionRow fin = row_;
    fin.status = Word(SessionStatus::kError);
    fin.runs = out_.runs;
    Json result{{"error", e.message}};
    if (StopSignals::Caught()) result["interrupted"] = true;
    AddTiming(result, Timing());
    fin.result_json = result.dump();
    static_cast<void>(store_.bisect_record().FinishBisect(out_.session_id, fin));
    return Error{e.code == ExitCode::kUsage ? ExitCode::kUsage : ExitCode::kInfra,
                 fmt::format("bisect session {}: {}", out_.session_id, e.message)};
  }

  const BisectRequest& r_;
  const MetricFlag metric_;  // r_.metric parsed
  Store& store_;          // its bisect record; results are read through reads_
  EvidenceReads& reads_;
  std::vector<CommitInfo> commits_;
  int n_;
  BisectTarget target_;
  BisectSessionRow row_;
  BisectOutcome out_;
  std::optional<bisect::CulpritChain> search_;
  std::set<int64_t> used_results_;
  SessionLock& lock_;
  const bool uses_questions_;  // the command has {questions}: the search picks each run's questions
  bool end_tested_ = false;   // the command has tested an end in this session
  bool whole_eval_ = false;   // the next run evaluates every question (the ends vouching for the command)
  const std::chrono::steady_clock::time_point started_;  // the session's wall time starts here
  // The case result ids each command's run added: (newest before it, newest after it].
  std::vector<std::pair<int64_t, int64_t>> command_results_;
  int steps_started_ = 0;   // command steps started: S of "session N step S"
  int finished_depth_ = 0;  // the longest chain of steps one after another that has ended (rounds)
  std::map<int64_t, std::string> run_made_for_;  // RunMadeFor's answers
};

}  // namespace

Result<BisectOutcome> RunBisect(const BisectRequest& request, Store& store) {
  if (auto c = CheckNumberIn(request.confidence, kConfidenceRange, "--confidence"); !c) return c.error();
  if (auto c = CheckNumberIn(request.flake_rate, kFlakeRateRange, "--flake-rate"); !c) return c.error();
  if (auto c = CheckNumberIn(request.max_runs, kMaxRunsRange, "--max-runs"); !c) return c.error();
  if (auto c = CheckNumberIn(request.jobs, kJobsRange, "--jobs"); !c) return c.error();
  if (request.noise_sigma)
    if (auto c = CheckNumberIn(*request.noise_sigma, kNoiseSigmaRange, "--noise-sigma"); !c) return c.error();
  if (auto c = CheckStepCommand(request.command, request.repo, request.command_timeout_s,
                                request.step_start_timeout_s);
      !c)
    return c.error();
  if (request.db.empty()) return UsageError("bisect needs the database's path");
  for (const auto& w : request.watch)
    if (auto problem = WatchPathProblem(w)) return UsageError(fmt::format("--watch {}: {}", Quote(w), *problem));
  if (!request.watch.empty() && request.repo.empty() && !request.replay)
    return UsageError("--watch needs --repo: what each commit changed comes from git");
  // The command runs in a worktree: every path it is handed is absolute (symbolic links
  // resolved, as the kernel reads `dir/../x`).
  BisectRequest r = request;
  auto absolute = [](const std::filesystem::path& p) {
    std::error_code ec;
    auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(p), ec);
    return ec ? std::filesystem::absolute(p) : resolved;
  };
  r.db = absolute(r.db);
  if (!r.repo.empty()) r.repo = absolute(r.repo);
  StopSignals stop_signals;
  auto recovered = RecoverDeadSessions(r.db, store.bisect_record());
  if (!recovered) return recovered.error();
  for (const auto& note : *recovered) std::fprintf(stderr, "harness: %s\n", note.c_str());
  auto commits = Positions(r, store.reader());
  if (!commits) return commits.error();
  auto lock = SessionLock::Create(r.db);
  if (!lock) return lock.error();
  Session session(r, store, std::move(commits).value(), **lock);
  if (auto s = session.ChooseTarget(); !s) return s.error();
  if (auto s = session.Begin(); !s) return s.error();
  if (auto s = session.SeedEvidence(); !s) return s.error();
  auto decision = session.Search();
  if (!decision) return decision.error();
  return session.Finish(*decision);
}

Result<std::string> BisectLog(BisectRecordReader& store, int64_t session_id) {
  auto s = store.BisectSession(session_id);
  if (!s) return s.error();
  const std::string origin = fmt::format("bisect session {}", s->id);
  auto read = BisectSessionHeaderFromJson(ParseJsonOrDiscarded(s->args_json), origin);
  if (!read) return read.error();
  Json header = ToJson(*read);
  header["kind"] = Word(LogLineKind::kSession);
  header["session"] = s->id;
  auto status = StoredStatus(*s);
  if (!status) return status.error();
  header["status"] = Word(*status);
  std::string out = DumpJson(header, -1) + "\n";
  for (const auto& step : s->steps) {
    auto ev = StepEvidenceFromJson(ParseJsonOrDiscarded(step.evidence_json), fmt::format("{} step {}", origin, step.step));
    if (!ev) return ev.error();
    Json line{{"kind", Word(LogLineKind::kStep)}, {"step", step.step}, {"sha", step.sha}, {"source", step.source}, {"evidence", ToJson(*ev)}};
    if (step.run_id) line["run_id"] = *step.run_id;
    if (step.exit_code) line["exit_code"] = *step.exit_code;
    out += DumpJson(line, -1) + "\n";
  }
  return out;
}

namespace {

// The request a session line records: the header's fields, the defaults where it leaves
// them out. The target is what the search needs: one series per case plus one.
Status RequestFromLog(const JsonObject& o, BisectRequest& r) {
  auto header = BisectSessionHeaderFromJson(o.json(), o.origin());
  if (!header) return header.error();
  if (!header->target) return o.FieldError("target", "missing");
  const BisectTarget& target = *header->target;
  if (target.specs.size() != target.cases.size() + 1) return o.FieldError("target.specs", "one per case plus one");
  if (!target.status && target.metric.empty()) return o.FieldError("target", "names neither a status nor a metric");
  r.good = header->good;
  r.bad = header->bad;
  r.metric = header->metric;
  r.cases = header->cases;
  r.repo = header->repo;
  r.command = header->command;
  // A hand-edited log is input like a flag: the flags' ranges (bisect_ranges.h).
  const std::pair<const char*, std::optional<double>> numbers[] = {
      {"max_runs", header->max_runs ? std::optional<double>(static_cast<double>(*header->max_runs)) : std::nullopt},
      {"max_culprits",
       header->max_culprits ? std::optional<double>(static_cast<double>(*header->max_culprits)) : std::nullopt},
      {"confidence", header->confidence}, {"flake_rate", header->flake_rate}, {"noise_sigma", header->noise_sigma}};
  const NumberRange ranges[] = {kMaxRunsRange, kMaxCulpritsRange, kConfidenceRange, kFlakeRateRange, kNoiseSigmaRange};
  for (std::size_t i = 0; i < std::size(numbers); ++i)
    if (numbers[i].second)
      if (auto checked = CheckNumberIn(*numbers[i].second, ranges[i], ""); !checked)
        return o.FieldError(numbers[i].first, checked.error().message);
  r.max_runs = static_cast<int>(header->max_runs.value_or(BisectDefaults::kMaxRuns));
  r.max_culprits = static_cast<int>(header->max_culprits.value_or(1));
  r.confidence = header->confidence.value_or(BisectDefaults::kConfidence);
  r.flake_rate = header->flake_rate.value_or(BisectDefaults::kFlakeRate);
  r.noise_sigma = header->noise_sigma;
  r.command_timeout_s = header->command_timeout_s;
  r.full_evals = header->full_evals;
  for (std::size_t i = 0; i < header->watch.size(); ++i)
    if (auto problem = WatchPathProblem(header->watch[i]))
      return o.FieldError(fmt::format("watch[{}]", i), fmt::format("{} {}", Quote(header->watch[i]), *problem));
  r.watch = header->watch;
  r.replay = ReplayLog{target, {}};
  return OkStatus();
}

// A step line's commit and evidence; an observation of a series the target does not have
// is an error naming it.
Result<ReplayedStep> ReplayedStepFromLog(const JsonObject& o, const BisectTarget& target) {
  if (!o.Has("evidence")) return o.FieldError("evidence", "a step needs sha and evidence");
  auto sha = o.String("sha");
  if (!sha) return sha.error();
  auto ev = StepEvidenceFromJson(o.json().at("evidence"), o.origin());
  if (!ev) return ev.error();
  for (std::size_t i = 0; i < ev->observations.size(); ++i)
    if (ev->observations[i].series >= static_cast<int>(target.specs.size()))
      return o.FieldError(fmt::format("evidence.observations[{}].series", i),
                          fmt::format("the target has series 0 to {}", target.specs.size() - 1));
  return ReplayedStep{*sha, std::move(*ev)};
}

}  // namespace

Result<BisectRequest> ParseBisectLog(const std::string& text, const std::string& origin) {
  BisectRequest r;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;  // lines may be commented out, as in git bisect replay
    auto j = ParseJsonLine(line, origin, lineno);
    if (!j) return j.error();
    JsonObject o(*j, fmt::format("{}:{}", origin, lineno));
    auto word = o.String("kind");
    if (!word) return word.error();
    const std::optional<LogLineKind> kind = ParseLogLineKind(*word);
    if (!kind)
      return o.FieldError("kind", fmt::format("unknown kind '{}' ({} or {})", *word, Word(LogLineKind::kSession),
                                              Word(LogLineKind::kStep)));
    if (*kind == LogLineKind::kSession) {
      if (r.replay) return UsageError(fmt::format("{}:{}: a second session line (a log is one session)", origin, lineno));
      if (auto st = RequestFromLog(o, r); !st) return st.error();
    } else {
      if (!r.replay) return UsageError(fmt::format("{}:{}: a step before the session line", origin, lineno));
      auto step = ReplayedStepFromLog(o, r.replay->target);
      if (!step) return step.error();
      r.replay->steps.push_back(std::move(*step));
    }
  }
  if (!r.replay) return UsageError(origin + ": no session line: not a bisect log");
  return r;
}

Result<BisectRequest> ReadBisectLog(const std::filesystem::path& file) {
  auto text = ReadInputFile(file, kMaxBisectLogBytes, "bisect logs");
  if (!text) return text.error();
  return ParseBisectLog(*text, file.string());
}

}  // namespace harness::bisect
