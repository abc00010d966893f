#include "harness/bisect/bisector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/bisect/flip_rates.h"
#include "harness/bisect/session_lock.h"
#include "harness/bisect/worktree_command.h"
#include "harness/run/suite_table.h"
#include "harness/store/resolve_commit.h"
#include "harness/util/git.h"
#include "harness/util/paths.h"
#include "harness/util/subprocess.h"
#include "harness/util/versions.h"

namespace harness::bisect {
namespace {

// How many nightlies before the range teach the per-question flip rates (as bisect_bench
// assumes: docs/bisect.md).
constexpr int kFlipHistoryCommits = 8;

// The series the search follows: one per case (its metric or its status), plus one for
// the command's exit code when it stores nothing.
struct Target {
  bool status = false;
  std::string metric;
  std::vector<std::string> cases;
  std::vector<SeriesSpec> specs;  // cases.size() + 1 (the exit-code series)
  std::string words;
  // Per case, the sample keys of its questions when the metric is the suite's headline and
  // the known-good commit stored its samples: each run then reports which of them it got
  // right, and the search reads that (bisect_search.h, the per-question model). Empty: the
  // metric's value only.
  std::vector<std::vector<std::string>> questions;
};

Json TargetJson(const Target& t) {
  Json specs = Json::array();
  for (const auto& s : t.specs) specs.push_back({{"higher_is_better", s.higher_is_better}, {"noise_sigma", s.noise_sigma}});
  return Json{{"status", t.status}, {"metric", t.metric}, {"cases", t.cases},
              {"specs", specs},   {"words", t.words},   {"questions", t.questions}};
}

Result<Target> TargetFromJson(const Json& j, const std::string& origin) {
  JsonObject o(j, origin, "target");
  Target t;
  auto status = o.Bool("status");
  if (!status) return status.error();
  t.status = *status;
  auto metric = o.String("metric", "");
  if (!metric) return metric.error();
  t.metric = *metric;
  auto cases = o.StringList("cases");
  if (!cases) return cases.error();
  t.cases = *cases;
  auto words = o.String("words", "");
  if (!words) return words.error();
  t.words = *words;
  if (!j.contains("specs") || !j["specs"].is_array()) return o.FieldError("specs", "expected a list");
  for (const auto& s : j["specs"])
    t.specs.push_back({s.value("higher_is_better", true), s.value("noise_sigma", 0.0)});
  if (t.specs.size() != t.cases.size() + 1) return o.FieldError("specs", "one per case plus one");
  if (j.contains("questions")) {
    const Json& q = j["questions"];
    auto bad = [&] { return o.FieldError("questions", "expected one list of sample keys per case"); };
    if (!q.is_array() || (!q.empty() && q.size() != t.cases.size())) return bad();
    for (const auto& keys : q) {
      if (!keys.is_array()) return bad();
      auto& out = t.questions.emplace_back();
      for (const auto& k : keys) {
        if (!k.is_string()) return bad();
        out.push_back(k.get<std::string>());
      }
    }
  }
  return t;
}

// The commits from good (position 0) to bad (the last position).
Result<std::vector<CommitInfo>> Positions(const BisectRequest& r, ResultReader& store) {
  if (!r.repo.empty()) {
    auto good = ReadCommit(r.repo, r.good);
    if (!good) return UsageError(fmt::format("--good {}: {}", r.good, good.error().message));
    auto bad = ReadCommit(r.repo, r.bad);
    if (!bad) return UsageError(fmt::format("--bad {}: {}", r.bad, bad.error().message));
    auto range = FirstParentRange(r.repo, good->sha, bad->sha);
    if (!range) return range.error();
    std::vector<CommitInfo> out = {*good};
    for (const auto& sha : *range) out.push_back(CommitInfo{sha, {}, {}, {}, ""});
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
Result<std::string> QuestionOutcomes(ResultReader& store, int64_t case_result_id, const std::vector<std::string>& keys) {
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

// Observations (as JSON, the logged form) of one stored case result. A partial run's result
// is evidence only through its per-question outcomes: its value is over a few chosen
// questions, and no gate judged its status.
Status EvidenceObservations(const Target& t, int series, const CaseEvidence& e, ResultReader& store, Json& out) {
  const bool per_question = series < static_cast<int>(t.questions.size()) && !t.questions[series].empty();
  if (e.partial && (t.status || !per_question)) return OkStatus();
  if (t.status) {
    if (e.status == CaseStatus::kPass || e.status == CaseStatus::kFail)
      out.push_back({{"series", series}, {"failed", e.status == CaseStatus::kFail}});
    return OkStatus();
  }
  if (e.status == CaseStatus::kError) return OkStatus();  // an infrastructure error says nothing of the stack
  auto v = MetricOf(e, t.metric);
  if (!v) return OkStatus();
  Json ob{{"series", series}, {"value", *v}};
  if (per_question) {
    auto q = QuestionOutcomes(store, e.case_result_id, t.questions[series]);
    if (!q) return q.error();
    if (q->find_first_of("01") != std::string::npos) ob["questions"] = *q;
    else if (e.partial) return OkStatus();
  }
  out.push_back(std::move(ob));
  return OkStatus();
}

void AddObservations(Search& search, int position, const Json& evidence) {
  for (const auto& o : evidence.value("observations", Json::array())) {
    Observation ob;
    ob.position = position;
    ob.series = o.value("series", 0);
    if (o.contains("failed")) {
      ob.is_status = true;
      ob.failed = o["failed"].get<bool>();
    } else {
      ob.value = o.value("value", 0.0);
      ob.questions = o.value("questions", "");
    }
    search.Add(ob);
  }
  if (evidence.value("skip", false)) search.Skip(position);
}

std::string StepVerdict(double p_bad, bool skipped, double confidence) {
  if (skipped) return "skip";
  if (p_bad >= confidence) return "bad";
  if (p_bad <= 1 - confidence) return "good";
  return "unknown";
}

// The target of a bisect by status: the cases, each a series that fails or passes.
Target StatusTarget(const BisectRequest& r) {
  Target t;
  t.status = true;
  t.cases = r.cases;
  t.words = fmt::format("status of {}", fmt::join(r.cases, ", "));
  t.specs.assign(r.cases.size() + 1, SeriesSpec{true, 0});
  return t;
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
Result<std::vector<std::string>> CasesToCompare(const BisectRequest& r, const std::string& suite, ResultReader& store,
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
Result<std::optional<CaseAtEnds>> MeansAtEnds(ResultReader& store, const std::string& id, const std::string& metric,
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

// Picks the cases and the metric, and the noise prior of each series.
Result<Target> ChooseTarget(const BisectRequest& r, ResultReader& store, const std::vector<CommitInfo>& commits) {
  if (r.metric.empty()) {
    if (r.cases.empty()) return UsageError("bisect needs --metric SUITE[/METRIC] or --case ID");
    return StatusTarget(r);
  }
  Target t;
  const auto slash = r.metric.find('/');
  const std::string suite = r.metric.substr(0, slash);
  auto table = SuiteNamed(r, suite);
  if (!table) return table.error();
  t.metric = slash == std::string::npos ? table->headline_metric : r.metric.substr(slash + 1);
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
    t.specs.push_back(SeriesSpec{higher_better, NoiseSigma(r, good, (*ends)->n)});
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
  t.specs.push_back(SeriesSpec{true, 0});
  t.words = fmt::format("{} of {}", t.metric, t.cases.empty() ? suite + " (no case worse at bad)" : fmt::format("{}", fmt::join(t.cases, ", ")));
  return t;
}

// One bisect session: the commits, the target, the search, the stored session and its
// steps; RunBisect drives it.
class Session {
 public:
  Session(const BisectRequest& r, Store& store, std::vector<CommitInfo> commits, SessionLock& lock)
      : r_(r), store_(store), commits_(std::move(commits)), n_(static_cast<int>(commits_.size()) - 1), lock_(lock),
        uses_questions_(UsesQuestions(r.command)) {}

  // The cases and series from a replayed log, else chosen now; when the store has nothing
  // at the endpoints and a command can make it, the endpoints are run first.
  Status ChooseTarget() {
    if (r_.replay_steps.is_array() && !r_.replay_steps.empty() && r_.replay_steps.front().contains("target")) {
      auto t = TargetFromJson(r_.replay_steps.front()["target"], "replayed log");
      if (!t) return t.error();
      target_ = *t;
      return OkStatus();
    }
    auto t = bisect::ChooseTarget(r_, store_, commits_);
    if (!t) return t.error();
    target_ = *t;
    if (target_.status || !target_.cases.empty() || r_.command.empty()) return OkStatus();
    for (int k : {0, n_}) {
      std::optional<int64_t> run_id, exit_code;
      auto ev = RunCommand(k, false, run_id, exit_code);
      if (!ev) return ev.error();
    }
    auto again = bisect::ChooseTarget(r_, store_, commits_);
    if (!again) return again.error();
    target_ = *again;
    return OkStatus();
  }

  Status Begin() {
    Json args{{"format_version", kBisectLogFormat}, {"good", commits_.front().sha}, {"bad", commits_.back().sha},
              {"metric", r_.metric}, {"cases", r_.cases}, {"repo", r_.repo.string()}, {"max_runs", r_.max_runs},
              {"confidence", r_.confidence}, {"flake_rate", r_.flake_rate}, {"command", r_.command},
              {"command_timeout_s", r_.command_timeout_s.value_or(0)}, {"full_evals", r_.full_evals},
              {"target", TargetJson(target_)}};
    if (r_.noise_sigma) args["noise_sigma"] = *r_.noise_sigma;
    row_.good = commits_.front().sha;
    row_.bad = commits_.back().sha;
    row_.target = target_.words;
    row_.args_json = args.dump();
    auto id = lock_.Begin(store_, row_);
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
    search_.emplace(n_ + 1, target_.specs, options);
    return LearnFlipRates(options);
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
        auto stored = store_.CaseEvidenceAt(target_.cases[i], sha);
        if (!stored) return stored.error();
        for (const auto& e : *stored) {
          if (e.status == CaseStatus::kError) continue;
          auto q = QuestionOutcomes(store_, e.case_result_id, target_.questions[i]);
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
    if (r_.replay_steps.is_array() && !r_.replay_steps.empty()) return SeedFromReplay();
    for (int k = 0; k <= n_; ++k) {
      Json ev{{"observations", Json::array()}, {"skip", false}};
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
      std::optional<int64_t> run_id, exit_code;
      auto ev = RunCommand(d.next_position, true, run_id, exit_code);
      if (!ev) return Fail(ev.error());
      search_->CountRun();
      if (auto st = Record(d.next_position, "command", *ev, run_id, exit_code); !st) return st.error();
    }
  }

  Result<BisectOutcome> Finish(const Decision& d) {
    out_.verdict = d.verdict;
    out_.confidence = d.confidence;
    if (d.verdict == Verdict::kCulprit) {
      out_.culprit = commits_[d.culprit].sha;
      out_.subject = commits_[d.culprit].subject;
      if (out_.subject.empty() && !r_.repo.empty())
        if (auto c = ReadCommit(r_.repo, out_.culprit)) out_.subject = c->subject;
    }
    for (int j : d.range) out_.range.push_back(commits_[j].sha);
    for (int k : search_->skipped()) out_.skipped.push_back(commits_[k].sha);
    if (d.verdict == Verdict::kAmbiguous && out_.reason.empty())
      out_.reason = search_->runs_requested() >= r_.max_runs ? fmt::format("--max-runs {} reached", r_.max_runs)
                                                              : "skipped commits sit next to the culprit";
    BisectSessionRow fin = row_;
    fin.status = VerdictWord(out_.verdict);
    fin.culprit = out_.culprit;
    fin.confidence = out_.confidence;
    fin.runs = out_.runs;
    fin.result_json = Json{{"verdict", fin.status}, {"culprit", out_.culprit}, {"range", out_.range},
                           {"skipped", out_.skipped}, {"reason", out_.reason},
                           {"questions_evaluated", out_.questions_evaluated}}.dump();
    if (auto s = store_.FinishBisect(out_.session_id, fin); !s) return s.error();
    return out_;
  }

 private:
  Status SeedFromReplay() {
    std::map<std::string, int> index;
    for (int k = 0; k <= n_; ++k) index[commits_[k].sha] = k;
    for (const auto& s : r_.replay_steps) {
      if (!s.contains("sha")) continue;  // the header's target
      auto it = index.find(s.value("sha", ""));
      if (it == index.end()) return UsageError(fmt::format("replayed step {}: not a commit of the range", s.value("sha", "")));
      const Json ev = s.value("evidence", Json::object());
      for (const auto& id : ev.value("case_results", Json::array())) used_results_.insert(id.get<int64_t>());
      if (auto st = Record(it->second, "replay", ev, std::nullopt, std::nullopt); !st) return st;
    }
    return OkStatus();
  }

  // Adds the observations of every not yet used stored result at position k newer than
  // after_id to ev; true when there was any.
  Result<bool> CollectStored(int k, int64_t after_id, Json& ev, std::optional<int64_t>& run_id) {
    bool any = false;
    for (int i = 0; i < static_cast<int>(target_.cases.size()); ++i) {
      auto stored = store_.CaseEvidenceAt(target_.cases[i], commits_[k].sha);
      if (!stored) return stored.error();
      for (const auto& e : *stored)
        if (e.case_result_id > after_id && used_results_.insert(e.case_result_id).second) {
          const std::size_t observed = ev["observations"].size();
          if (auto st = EvidenceObservations(target_, i, e, store_, ev["observations"]); !st) return st.error();
          if (auto st = CountQuestions(e.case_result_id, ev); !st) return st.error();
          if (e.partial && ev["observations"].size() == observed) continue;  // says nothing of this target
          ev["case_results"].push_back(e.case_result_id);
          run_id = e.run_id;
          any = true;
        }
    }
    return any;
  }

  // A case result a command stored (rather than one the store held before): its samples are
  // the questions the run evaluated, counted in the step's evidence and the session's cost.
  Status CountQuestions(int64_t case_result_id, Json& ev) {
    const bool by_command = std::any_of(command_results_.begin(), command_results_.end(), [&](const auto& range) {
      return case_result_id > range.first && case_result_id <= range.second;
    });
    if (!by_command) return OkStatus();
    auto samples = store_.Samples(case_result_id);
    if (!samples) return samples.error();
    const auto asked = static_cast<int64_t>(samples->size());
    ev["questions_evaluated"] = ev.value("questions_evaluated", int64_t{0}) + asked;
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

  // Runs the command at position k in a worktree of it; the evidence is the run it stored
  // (read_back), else its exit code in git's convention.
  Result<Json> RunCommand(int k, bool read_back, std::optional<int64_t>& run_id, std::optional<int64_t>& exit_code) {
    const std::string& sha = commits_[k].sha;
    auto before = store_.NewestCaseResultId();
    if (!before) return before.error();
    auto proc = RunInWorktree(k);
    auto after = store_.NewestCaseResultId();
    if (!after) return after.error();
    command_results_.emplace_back(*before, *after);
    if (!proc) return proc.error();
    ++out_.runs;
    if (proc->stop_signal)
      return InfraError(fmt::format("interrupted by {} while the command ran at {}", SignalName(proc->stop_signal),
                                    ShortSha(sha)));
    if (proc->timed_out) return InfraError(fmt::format("the command timed out at {}", ShortSha(sha)));
    if (proc->signal)
      return InfraError(fmt::format("the command was killed by signal {} at {}", proc->signal, ShortSha(sha)));
    exit_code = proc->exit_code;
    Json ev{{"observations", Json::array()}, {"skip", false}, {"exit_code", proc->exit_code}};
    if (read_back) {
      auto stored = CollectStored(k, *before, ev, run_id);
      if (!stored) return stored.error();
      if (*stored) return ev;  // the command stored a run: that is the evidence
    }
    // git bisect run's convention: 0 good, 125 skip, 1-127 bad, >= 128 abort.
    const int code = proc->exit_code;
    if (code >= 128 || code < 0)
      return InfraError(fmt::format("the command exited {} at {}: that aborts the bisect (git's convention); stderr: {}",
                                    code, ShortSha(sha), proc->err.substr(0, 500)));
    if (code == 125) {
      if (k == 0 || k == n_)
        return UsageError(fmt::format("the command cannot test the {} commit {} (exit 125)",
                                      k == 0 ? "known-good" : "known-bad", ShortSha(sha)));
      ev["skip"] = true;
    } else if (read_back) {
      ev["observations"].push_back({{"series", static_cast<int>(target_.cases.size())}, {"failed", code != 0}});
    }
    return ev;
  }

  Result<ProcessResult> RunInWorktree(int k) {
    WorktreeCommandSpec spec{r_.command, r_.repo, r_.db, r_.command_timeout_s,
                             r_.made_for.empty() ? fmt::format("session {}", out_.session_id) : r_.made_for};
    if (uses_questions_) spec.questions = QuestionsFileText(k);
    return RunCommandAt(spec, commits_[k].sha, lock_);
  }

  Status Record(int k, const std::string& source, const Json& ev, std::optional<int64_t> run_id,
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
    step.verdict = StepVerdict(step.probability_bad, search_->skipped().count(k) > 0, r_.confidence);
    Json decision{{"probability_bad", step.probability_bad}, {"verdict", step.verdict},
                  {"no_culprit", search_->Posterior()[0]}};
    out_.steps.push_back(step);
    return store_.AddBisectStep(out_.session_id, BisectStepRow{step.index, step.sha, source, run_id, exit_code,
                                                               ev.dump(), decision.dump()});
  }

  // Ends the session as an error, stored as far as it went.
  Error Fail(const Error& e) {
    BisectSessionRow fin = row_;
    fin.status = "error";
    fin.runs = out_.runs;
    Json result{{"error", e.message}};
    if (StopSignals::Caught()) result["interrupted"] = true;
    fin.result_json = result.dump();
    static_cast<void>(store_.FinishBisect(out_.session_id, fin));
    return Error{e.code == ExitCode::kUsage ? ExitCode::kUsage : ExitCode::kInfra,
                 fmt::format("bisect session {}: {}", out_.session_id, e.message)};
  }

  const BisectRequest& r_;
  Store& store_;
  std::vector<CommitInfo> commits_;
  int n_;
  Target target_;
  BisectSessionRow row_;
  BisectOutcome out_;
  std::optional<bisect::Search> search_;
  std::set<int64_t> used_results_;
  SessionLock& lock_;
  const bool uses_questions_;  // the command has {questions}: the search picks each run's questions
  // The case result ids each command's run added: (newest before it, newest after it].
  std::vector<std::pair<int64_t, int64_t>> command_results_;
};

}  // namespace

Result<BisectOutcome> RunBisect(const BisectRequest& request, Store& store) {
  if (request.confidence <= 0.5 || request.confidence >= 1) return UsageError("--confidence must be in (0.5, 1)");
  if (request.max_runs < 0) return UsageError("--max-runs must be at least 0");
  if (request.noise_sigma && !(*request.noise_sigma > 0)) return UsageError("--noise-sigma must be positive");
  if (request.command_timeout_s && !(*request.command_timeout_s > 0 && *request.command_timeout_s <= kMaxTimeoutS))
    return UsageError(fmt::format("--timeout {}: expected seconds in (0, {}]; leave it out for no timeout",
                                  *request.command_timeout_s, kMaxTimeoutS));
  for (const auto& arg : request.command)
    if (arg.find("{worktree}") != std::string::npos && request.repo.empty())
      return UsageError("{worktree} in the command needs --repo");
  if (request.db.empty()) return UsageError("bisect needs the database's path");
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
  auto recovered = RecoverDeadSessions(r.db, store);
  if (!recovered) return recovered.error();
  for (const auto& note : *recovered) std::fprintf(stderr, "harness: %s\n", note.c_str());
  auto commits = Positions(r, store);
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

Result<std::string> BisectLog(BisectRecord& store, int64_t session_id) {
  auto s = store.BisectSession(session_id);
  if (!s) return s.error();
  Json header = ParseJsonOrDiscarded(s->args_json);
  if (header.is_discarded()) header = Json::object();
  header["kind"] = "session";
  header["session"] = s->id;
  header["status"] = s->status;
  std::string out = DumpJson(header, -1) + "\n";
  for (const auto& step : s->steps) {
    Json ev = ParseJsonOrDiscarded(step.evidence_json);
    Json line{{"kind", "step"}, {"step", step.step}, {"sha", step.sha}, {"source", step.source}, {"evidence", ev}};
    if (step.run_id) line["run_id"] = *step.run_id;
    if (step.exit_code) line["exit_code"] = *step.exit_code;
    out += DumpJson(line, -1) + "\n";
  }
  return out;
}

namespace {

// A list of strings, or fallback when the key is absent.
Result<std::vector<std::string>> StringListOr(const JsonObject& o, const Json& j, const std::string& key,
                                              std::vector<std::string> fallback) {
  if (!j.contains(key)) return fallback;
  return o.StringList(key);
}

template <class T, class U>
Status Take(Result<T> value, U& out) {
  if (!value) return value.error();
  out = std::move(*value);
  return OkStatus();
}

// The request a session line records; a field of the wrong type is an error naming its line
// and key, a field left out is the default.
Status ParseSessionLine(const JsonObject& o, const Json& j, BisectRequest& r) {
  using D = BisectDefaults;
  std::string repo, one_case;  // logs of format 1 name one case as "case"; 2 a list, "cases"
  bool full_evals = false;
  int64_t max_runs = 0;
  double timeout = 0;          // 0 is how a log says "no timeout"; others are checked like --timeout
  for (const Status& st : {Take(o.String("good", ""), r.good), Take(o.String("bad", ""), r.bad),
                           Take(o.String("metric", ""), r.metric), Take(o.String("repo", ""), repo),
                           Take(o.String("case", ""), one_case), Take(StringListOr(o, j, "cases", {}), r.cases),
                           Take(StringListOr(o, j, "command", {}), r.command),
                           Take(o.Int("max_runs", D::kMaxRuns), max_runs),
                           Take(o.Number("confidence", D::kConfidence), r.confidence),
                           Take(o.Number("flake_rate", D::kFlakeRate), r.flake_rate),
                           Take(o.Number("command_timeout_s", 0.0), timeout),
                           Take(o.Bool("full_evals", false), full_evals)})
    if (!st) return st;
  r.repo = repo;
  if (!j.contains("cases") && !one_case.empty()) r.cases = {one_case};
  r.max_runs = static_cast<int>(max_runs);
  r.full_evals = full_evals;
  if (timeout != 0) r.command_timeout_s = timeout;
  if (j.contains("noise_sigma")) {
    double sigma = 0;
    if (auto st = Take(o.Number("noise_sigma"), sigma); !st) return st;
    r.noise_sigma = sigma;
  }
  return OkStatus();
}

}  // namespace

Result<BisectRequest> ParseBisectLog(const std::string& text, const std::string& origin) {
  BisectRequest r;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;  // lines may be commented out, as in git bisect replay
    auto j = ParseJsonLine(line, origin, lineno);
    if (!j) return j.error();
    JsonObject o(*j, fmt::format("{}:{}", origin, lineno));
    auto kind = o.String("kind");
    if (!kind) return kind.error();
    if (*kind == "session") {
      // Format 1 named one case as "case"; 2 names a list, "cases".
      auto version = o.Int("format_version", 0);
      if (!version) return version.error();
      if (*version != 1)
        if (auto v = o.RequireVersion(kBisectLogFormat); !v) return v.error();
      header = true;
      if (auto st = ParseSessionLine(o, *j, r); !st) return st.error();
      if (!j->contains("target")) return o.FieldError("target", "missing");
      r.replay_steps.push_back({{"target", (*j)["target"]}});
    } else if (*kind == "step") {
      if (!header) return UsageError(fmt::format("{}:{}: a step before the session line", origin, lineno));
      if (!j->contains("sha") || !j->contains("evidence")) return o.FieldError("evidence", "a step needs sha and evidence");
      r.replay_steps.push_back(*j);
    } else {
      return o.FieldError("kind", fmt::format("unknown kind '{}' (session or step)", *kind));
    }
  }
  if (!header) return UsageError(origin + ": no session line: not a bisect log");
  return r;
}

}  // namespace harness::bisect
