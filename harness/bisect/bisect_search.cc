#include "harness/bisect/bisect_search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "harness/results/word_table.h"
#include "harness/stats/stats.h"

namespace harness::bisect {
namespace {

// The search's own words: a finished verdict's is the word its session's status is stored
// as (harness/store/bisect_words.h; bisect_words_test.cc holds the two tables to one
// another), spelled here so that the search depends on no store.
constexpr WordTable<Verdict, 4> kVerdictWords{{
    {Verdict::kSearching, "searching"},
    {Verdict::kCulprit, "culprit"},
    {Verdict::kNoCulprit, "no-culprit"},
    {Verdict::kAmbiguous, "ambiguous"},
}};
static_assert(IsOneWordPerValue(kVerdictWords));

double LogSumExp(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) m = std::max(m, x);
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

double LogAddExp(double a, double b) {
  const double m = std::max(a, b);
  if (!std::isfinite(m)) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

// The per-question model's prior on the share of affected questions under a culprit.
constexpr std::array<double, 5> kAffectedShares = {0.0025, 0.005, 0.01, 0.02, 0.04};

double Entropy(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0) h -= x * std::log(x);
  return h;
}

// Per-position sufficient statistics of one series.
struct Stats {
  std::vector<double> count, sum, sumsq, fails, passes;
  explicit Stats(int positions)
      : count(positions, 0), sum(positions, 0), sumsq(positions, 0), fails(positions, 0), passes(positions, 0) {}
};

// The observations (the stored ones and extra) as per-series statistics, and the runs of
// each series that carry per-question outcomes: such a series follows the per-question
// model, and its values are left out of the statistics.
struct SeriesEvidence {
  std::vector<Stats> stats;
  bool any_status = false;
  std::vector<std::vector<const Observation*>> question_runs;
};

SeriesEvidence GatherEvidence(const std::vector<Observation>& stored, const std::vector<Observation>& extra,
                              int series_count, int positions) {
  SeriesEvidence e;
  e.stats.assign(series_count, Stats(positions));
  e.question_runs.resize(series_count);
  auto add = [&](const Observation& o) {
    if (o.series < 0 || o.series >= series_count) return;
    Stats& s = e.stats[o.series];
    if (o.is_status) {
      e.any_status = true;
      (o.failed ? s.fails : s.passes)[o.position] += 1;
    } else {
      s.count[o.position] += 1;
      s.sum[o.position] += o.value;
      s.sumsq[o.position] += o.value * o.value;
    }
  };
  for (const auto* list : {&stored, &extra})
    for (const auto& o : *list)
      if (!o.is_status && !o.questions.empty() && o.series >= 0 && o.series < series_count)
        e.question_runs[o.series].push_back(&o);
  for (const auto* list : {&stored, &extra})
    for (const auto& o : *list)
      if (o.series < 0 || o.series >= series_count || o.is_status || e.question_runs[o.series].empty()) add(o);
  return e;
}

// Statuses: flipping a position from good to bad changes each run's likelihood ratio.
void AddStatusEvidence(const std::vector<Stats>& stats, double flake_rate, std::vector<double>& logp) {
  const int n = static_cast<int>(logp.size()) - 1;
  const double eps = std::clamp(flake_rate, 1e-9, 0.49);
  const double lr = std::log(1 - eps) - std::log(eps);  // a fail at a bad position vs a good one
  for (const auto& s : stats) {
    double tail = 0;  // sum over positions >= j
    for (int j = n; j >= 1; --j) {
      tail += (s.fails[j] - s.passes[j]) * lr;
      logp[j] += tail;
    }
  }
}

// Metric values of one series: the closed-form change-point marginal of the header comment.
void AddValueEvidence(const Stats& s, const SeriesSpec& spec, const SearchOptions& options, std::vector<double>& logp) {
  const int positions = static_cast<int>(logp.size()), n = positions - 1;
  const double total = std::accumulate(s.count.begin(), s.count.end(), 0.0);
  if (total < 2) return;
  const double sum_all = std::accumulate(s.sum.begin(), s.sum.end(), 0.0);
  const double mean = sum_all / total;
  double ss_within = 0, df_within = 0;
  for (int p = 0; p < positions; ++p)
    if (s.count[p] > 1) {
      ss_within += std::max(0.0, s.sumsq[p] - s.sum[p] * s.sum[p] / s.count[p]);
      df_within += s.count[p] - 1;
    }
  const double sigma0 = spec.noise_sigma;
  const double nu0 = options.sigma_prior_weight;
  const double sigma2 = (nu0 * sigma0 * sigma0 + ss_within) / (nu0 + df_within);
  // The drop's prior: about the gap the endpoints show (mean and its standard error),
  // never smaller than min_effect noise sds: a "drop" as small as one run's noise could
  // never be told from no culprit, so it is not what the search looks for.
  const double d = spec.higher_is_better ? 1.0 : -1.0;
  const double delta_min = options.min_effect * sigma0;
  double mu = delta_min, sd = sigma0;
  if (s.count[0] > 0 && s.count[n] > 0) {
    mu = std::max(delta_min, d * (s.sum[0] / s.count[0] - s.sum[n] / s.count[n]));
    sd = std::sqrt(sigma2 / s.count[0] + sigma2 / s.count[n]);
  }
  const double s2 = sd * sd;
  const double log_prior_mass = LogNormalCdf((mu - delta_min) / sd);
  double m = 0, s_hi = 0;
  for (int j = n; j >= 1; --j) {
    m += s.count[j];
    s_hi += s.sum[j];
    if (m <= 0 || m >= total) continue;
    const double uu = m - m * m / total;
    const double yu = -d * (s_hi - m * mean);
    const double a = uu / sigma2 + 1 / s2;
    const double b = yu / sigma2 + mu / s2;
    logp[j] += -0.5 * std::log(a * s2) + b * b / (2 * a) - mu * mu / (2 * s2) +
               LogNormalCdf((b / a - delta_min) * std::sqrt(a)) - log_prior_mass;
  }
}

// Questions with the same answers in the same runs weigh the same: each pattern (two
// characters of the question's kind, flip_rates.h, then a character per run: '1' right, '0'
// wrong, 'x' no answer) with how many questions show it.
struct QuestionPatterns {
  std::map<std::string, double> count;
  double questions = 0;  // of the series: the counts' sum
  double right_total = 0, answered_total = 0;  // over the runs that answered nearly every question
};

QuestionPatterns GroupQuestions(const std::vector<const Observation*>& runs, const FlipRates* rates) {
  std::size_t questions = 0;
  for (const auto* r : runs) questions = std::max(questions, r->questions.size());
  std::vector<char> whole(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto& s = runs[r]->questions;
    const auto answered = std::count(s.begin(), s.end(), '1') + std::count(s.begin(), s.end(), '0');
    whole[r] = static_cast<double>(answered) >= 0.9 * static_cast<double>(questions);
  }
  QuestionPatterns out;
  out.questions = static_cast<double>(questions);
  std::string key(runs.size() + 2, 'x');
  for (std::size_t q = 0; q < questions; ++q) {
    const int kind = rates ? rates->Kind(static_cast<int>(q)) : 0;
    key[0] = static_cast<char>(kind & 0xff);
    key[1] = static_cast<char>(kind >> 8);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const char c = q < runs[r]->questions.size() ? runs[r]->questions[q] : 'x';
      key[r + 2] = IsAnswer(c) ? c : 'x';
      out.right_total += whole[r] && c == '1';
      out.answered_total += whole[r] && IsAnswer(c);
    }
    out.count[key] += 1;
  }
  return out;
}

// log P(outcomes | unaffected) of a question with these class weights.
double LogUnaffected(const ClassWeights& w, const ClassWeights& p, double right, double wrong) {
  double out = -std::numeric_limits<double>::infinity();
  for (int c = 0; c < kQuestionClasses; ++c)
    if (w[c] > 0) out = LogAddExp(out, std::log(w[c]) + right * std::log(p[c]) + wrong * std::log(1 - p[c]));
  return out;
}

// The per-question model's affected questions: how often one is right before its culprit
// and from it on. A fault is of one of two kinds, and all the questions it affects are of
// its kind; from the culprit on they share one rate (a fault is one change: the questions
// it affects do not each pick their own). Three faults in four break questions that were
// settled right (right but for fa before it): half of them leave those questions wrong but
// for fa, a quarter right in 0.3 of runs, a quarter right in half of them (faults that moved
// a margin part of the way). One in four moves questions near the accuracy boundary: right
// in 0.8 of runs before it (or, 3 in 10, settled right), from it on wrong but for fa or right
// in a quarter of runs, even odds. The second kind is what the stand-in's fault does under
// rerun noise (docs/bisect.md, "On the stand-in"); it weighs less because it explains noise
// more easily: noise that it fits makes no-culprit slower. A fault that leaves its questions
// right half the time is told from borderline noise only when it affects several of them,
// so its shares start at 0.5 % (docs/bisect.md, "Known limits").
struct AffectedShape {
  double log_weight, log_before_right, log_before_wrong, log_after_right, log_after_wrong;
  double before;  // P(right) before the culprit, for the question's history
};

struct FaultKind {
  double log_weight;
  std::vector<AffectedShape> shapes;  // the before-rates a question it affects may have had
  std::vector<double> shares;         // the shares of questions it may affect, equally likely
};

std::vector<FaultKind> FaultKinds(double fa) {
  struct Rate {
    double p, weight;
  };
  auto kind = [](double weight, std::vector<Rate> befores, double after, std::vector<double> shares) {
    FaultKind out{std::log(weight), {}, std::move(shares)};
    for (const Rate& b : befores)
      out.shapes.push_back({std::log(b.weight), std::log(b.p), std::log(1 - b.p), std::log(after), std::log(1 - after), b.p});
    return out;
  };
  const std::vector<double> all(kAffectedShares.begin(), kAffectedShares.end());
  const std::vector<Rate> settled = {{1 - fa, 1}}, borderline = {{0.8, 0.7}, {1 - fa, 0.3}};
  return {kind(0.75 * 0.5, settled, fa, all), kind(0.75 * 0.25, settled, 0.3, all),
          kind(0.75 * 0.25, settled, 0.5, {0.005, 0.01, 0.02, 0.04}), kind(0.25 * 0.5, borderline, fa, all),
          kind(0.25 * 0.5, borderline, 0.25, all)};
}

// One cell of the prior over (fault kind, affected share pi), its prior mass spread evenly
// over the kind's shares.
struct ShareCell {
  std::size_t kind;
  double log_prior, log_share, log_other;  // log P(cell), log pi, log(1 - pi)
};

std::vector<ShareCell> ShareCells(const std::vector<FaultKind>& kinds) {
  std::vector<ShareCell> cells;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    for (double share : kinds[k].shares)
      cells.push_back({k, kinds[k].log_weight - std::log(static_cast<double>(kinds[k].shares.size())), std::log(share),
                       std::log1p(-share)});
  return cells;
}

// A culprit changes at least one question. Each cell's mixture, sum over questions of
// log((1 - pi) + pi LR_q), also holds "none of them affected", which is H_0 itself, with
// probability (1 - pi)^N, N the series' questions. Taking it out (the mixture conditioned on at least one
// affected question) lets the data rule a culprit out entirely; left in, the smallest share
// could never fall below (1 - pi)^N of H_0's likelihood, and no-culprit was reached slowly.
void ConditionOnSomeAffected(std::vector<double>& row, const std::vector<ShareCell>& cells, double questions) {
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const double none = questions * cells[c].log_other;  // log (1 - pi)^N
    const double evidence = row[c];                      // >= none: every LR_q >= 0
    row[c] = cells[c].log_prior + evidence + std::log(-std::expm1(std::min(0.0, none - evidence))) -
             std::log(-std::expm1(none));
  }
}

// log P(outcomes | affected at the culprit by a fault of this kind), each shape's history term given (log P(the
// question's earlier runs | that before-rate) - log P(them | unaffected); 0 without any).
double LogAffected(const std::vector<AffectedShape>& shapes, const std::vector<double>& history, double right_before,
                   double wrong_before, double right_after, double wrong_after) {
  double out = -std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < shapes.size(); ++c) {
    const AffectedShape& a = shapes[c];
    out = LogAddExp(out, a.log_weight + history[c] + right_before * a.log_before_right +
                             wrong_before * a.log_before_wrong + right_after * a.log_after_right +
                             wrong_after * a.log_after_wrong);
  }
  return out;
}

// What a run's outcome at a position may be, per series: a status, or a value drawn
// around the known-bad or known-good end's level with the run-to-run noise.
struct EndLevel {
  bool status = false, usable = false;
  double good = 0, bad = 0, sigma = 0;
  // Per-question series: the newest run at each end stands in for the run's outcome.
  const Observation* good_run = nullptr;
  const Observation* bad_run = nullptr;
};

struct EndLevels {
  std::vector<EndLevel> levels;  // per series
  bool any_value = false;        // a series whose outcome is a value drawn around a level
};

EndLevels LevelsAtEnds(const std::vector<Observation>& observations, const std::vector<SeriesSpec>& series, int n) {
  EndLevels out;
  out.levels.resize(series.size());
  for (int si = 0; si < static_cast<int>(series.size()); ++si) {
    double good_sum = 0, good_n = 0, bad_sum = 0, bad_n = 0;
    EndLevel& l = out.levels[si];
    for (const auto& o : observations) {
      if (o.series != si) continue;
      l.status = o.is_status;
      l.usable = true;
      if (o.position == 0) good_sum += o.value, good_n += 1;
      if (o.position == n) bad_sum += o.value, bad_n += 1;
      if (!o.questions.empty() && o.position == 0) l.good_run = &o;
      if (!o.questions.empty() && o.position == n) l.bad_run = &o;
    }
    if (!l.status && l.usable && (l.good_run || l.bad_run)) {
      l.usable = l.good_run && l.bad_run;
    } else if (!l.status && l.usable) {
      l.usable = good_n > 0 && bad_n > 0;
      if (l.usable) {
        l.good = good_sum / good_n;
        l.bad = bad_sum / bad_n;
        l.sigma = series[si].noise_sigma;
        out.any_value = true;
      }
    }
  }
  return out;
}

// A run at position as it would come out if the position is bad (or good), its values t
// noise sds from their level.
std::vector<Observation> HypotheticalRun(const std::vector<EndLevel>& levels, int position, bool bad, double t) {
  std::vector<Observation> extra;
  for (int si = 0; si < static_cast<int>(levels.size()); ++si) {
    const EndLevel& l = levels[si];
    if (!l.usable) continue;
    if (l.status) {
      extra.push_back({position, si, true, 0, bad});
    } else if (l.good_run) {
      extra.push_back(*(bad ? l.bad_run : l.good_run));
      extra.back().position = position;
    } else {
      extra.push_back({position, si, false, (bad ? l.bad : l.good) + t * l.sigma, false});
    }
  }
  return extra;
}

}  // namespace

std::string_view VerdictWord(Verdict v) { return WordIn(kVerdictWords, v); }

Search::Search(int positions, std::vector<SeriesSpec> series, SearchOptions options)
    : positions_(std::max(positions, 2)), series_(std::move(series)), options_(options) {}

void Search::Add(const Observation& o) {
  if (o.position < 0 || o.position >= positions_) return;
  observations_.push_back(o);
}

void Search::Skip(int position) {
  // The endpoints define the range; they cannot be skipped.
  if (position > 0 && position < positions_ - 1) skipped_.insert(position);
}

int Search::RunsAt(int position) const {
  // A run gives one observation per series it measured, so the runs at a position are the
  // observations of its best-covered series: two target cases of one run are one run.
  std::map<int, int> per_series;
  int runs = 0;
  for (const Observation& o : observations_)
    if (o.position == position) runs = std::max(runs, ++per_series[o.series]);
  return runs;
}

std::vector<double> Search::LogPosteriorOf(const std::vector<Observation>& extra) const {
  const int n = positions_ - 1;  // culprit hypotheses 1..n
  std::vector<double> logp(positions_, 0.0);
  logp[0] = std::log(options_.prior_no_culprit);
  for (int j = 1; j <= n; ++j)
    logp[j] = std::log((1 - options_.prior_no_culprit) * (prior_weights_.empty() ? 1.0 / n : prior_weights_[j]));
  const SeriesEvidence e = GatherEvidence(observations_, extra, static_cast<int>(series_.size()), positions_);
  for (int si = 0; si < static_cast<int>(e.question_runs.size()); ++si)
    if (!e.question_runs[si].empty()) AddQuestionEvidence(e.question_runs[si], si, logp);
  if (e.any_status) AddStatusEvidence(e.stats, options_.flake_rate, logp);
  for (std::size_t si = 0; si < series_.size(); ++si) AddValueEvidence(e.stats[si], series_[si], options_, logp);
  return logp;
}

void Search::AddQuestionEvidence(const std::vector<const Observation*>& unsorted, int series,
                                 std::vector<double>& logp) const {
  const int n = positions_ - 1;
  std::vector<const Observation*> runs = unsorted;
  std::stable_sort(runs.begin(), runs.end(), [](auto* a, auto* b) { return a->position < b->position; });
  const FlipRates* rates =
      series < static_cast<int>(rates_.size()) && !rates_[series].empty() ? &rates_[series] : nullptr;
  const QuestionPatterns patterns = GroupQuestions(runs, rates);
  const ClassWeights p = RightProbabilities(options_.solid_flip);
  const std::vector<FaultKind> kinds = FaultKinds(std::clamp(options_.affected_flip, 1e-6, 0.4));
  const std::vector<ShareCell> cells = ShareCells(kinds);
  std::vector<std::vector<double>> history(kinds.size());
  for (std::size_t k = 0; k < kinds.size(); ++k) history[k].assign(kinds[k].shapes.size(), 0.0);
  const double alpha = patterns.answered_total > 0 ? patterns.right_total / patterns.answered_total : 0.9;
  const ClassWeights fixed = FixedClassPrior(alpha, options_.fragile_share);
  // H_j splits the runs (by position) into the first split[j] before the culprit and the rest.
  std::vector<int> split(positions_, 0);
  std::vector<char> needed(runs.size() + 1, 0);
  for (int j = 1; j <= n; ++j) {
    while (split[j] < static_cast<int>(runs.size()) && runs[split[j]]->position < j) ++split[j];
    needed[split[j]] = 1;
    if (j < n) split[j + 1] = split[j];
  }
  std::vector<std::vector<double>> sum(runs.size() + 1, std::vector<double>(cells.size(), 0.0));
  std::vector<double> log_ratio(kinds.size());
  for (const auto& [key, count] : patterns.count) {
    const int kind = static_cast<unsigned char>(key[0]) | static_cast<unsigned char>(key[1]) << 8;
    double right = 0, wrong = 0;
    for (std::size_t r = 2; r < key.size(); ++r) right += key[r] == '1', wrong += key[r] == '0';
    if (right + wrong == 0) continue;
    const double log_unaffected = LogUnaffected(rates ? rates->WeightsOfKind(kind) : fixed, p, right, wrong);
    for (std::size_t k = 0; rates && k < kinds.size(); ++k)
      for (std::size_t c = 0; c < kinds[k].shapes.size(); ++c)
        history[k][c] = rates->HistoryLogRatioOfKind(kind, kinds[k].shapes[c].before);
    double right_before = 0, wrong_before = 0;
    for (std::size_t s = 0; s <= runs.size(); ++s) {
      if (s > 0) right_before += key[s + 1] == '1', wrong_before += key[s + 1] == '0';
      if (!needed[s]) continue;
      for (std::size_t k = 0; k < kinds.size(); ++k)
        log_ratio[k] = LogAffected(kinds[k].shapes, history[k], right_before, wrong_before, right - right_before,
                                   wrong - wrong_before) -
                       log_unaffected;
      for (std::size_t c = 0; c < cells.size(); ++c)
        sum[s][c] += count * LogAddExp(cells[c].log_other, cells[c].log_share + log_ratio[cells[c].kind]);
    }
  }
  for (std::size_t s = 0; s <= runs.size(); ++s)
    if (needed[s]) ConditionOnSomeAffected(sum[s], cells, patterns.questions);
  for (int j = 1; j <= n; ++j) logp[j] += LogSumExp(sum[split[j]]);
}

void Search::SetPriorWeights(std::vector<double> weights) {
  prior_weights_.clear();
  if (weights.empty()) return;
  const int n = positions_ - 1;
  weights.resize(positions_, 1.0);
  double total = 0;
  for (int j = 1; j <= n; ++j) {
    // Never zero: a build or config change can break anything.
    if (!(weights[j] >= kMinPriorWeight) || !std::isfinite(weights[j])) weights[j] = kMinPriorWeight;
    total += weights[j];
  }
  weights[0] = 0;
  for (int j = 1; j <= n; ++j) weights[j] /= total;
  prior_weights_ = std::move(weights);
}

double UnwatchedWeight(int watched, int unwatched, double watched_prior) {
  if (watched <= 0 || unwatched <= 0 || !(watched_prior > 0 && watched_prior < 1)) return 1;
  return std::min(1.0, static_cast<double>(watched) / unwatched * (1 - watched_prior) / watched_prior);
}

std::vector<double> WatchedPriorWeights(const std::vector<char>& touches, double watched_prior) {
  const int n = static_cast<int>(touches.size()) - 1;
  if (n < 1) return {};
  const int watched = static_cast<int>(std::count_if(touches.begin() + 1, touches.end(), [](char t) { return t != 0; }));
  if (watched == 0 || watched == n) return {};
  std::vector<double> weights(n + 1, UnwatchedWeight(watched, n - watched, watched_prior));
  for (int j = 1; j <= n; ++j)
    if (touches[j]) weights[j] = 1;
  return weights;
}

void Search::SetFlipRates(int series, FlipRates rates) {
  if (series < 0) return;
  if (series >= static_cast<int>(rates_.size())) rates_.resize(series + 1);
  rates_[series] = std::move(rates);
}

std::vector<int> Search::QuestionsFor(int position, int series) const {
  const int n = positions_ - 1;
  std::vector<const std::string*> ends;
  std::size_t questions = 0;
  for (const Observation& o : observations_) {
    if (o.series != series || o.is_status || o.questions.empty()) continue;
    questions = std::max(questions, o.questions.size());
    if (o.position == 0 || o.position == n) ends.push_back(&o.questions);
  }
  QuestionChoice choice = options_.questions;
  if (position == 0 || position == n || RunsAt(position) > 0)
    choice.control_share = std::max(choice.control_share, choice.rerun_control_share);
  static const FlipRates kNone;
  const FlipRates& rates = series >= 0 && series < static_cast<int>(rates_.size()) ? rates_[series] : kNone;
  const uint64_t salt = static_cast<uint64_t>(position) * 1000003u + static_cast<uint64_t>(RunsAt(position));
  return ChooseQuestions(static_cast<int>(questions), ends, rates, salt, choice);
}

std::vector<double> Search::Posterior() const {
  auto logp = LogPosteriorOf({});
  const double z = LogSumExp(logp);
  for (double& x : logp) x = std::exp(x - z);
  return logp;
}

std::vector<int> Search::CredibleRange() const {
  const auto post = Posterior();
  double total = 0;
  for (int j = 1; j < positions_; ++j) total += post[j];
  std::vector<int> range;
  double cdf = 0;
  for (int j = 1; j < positions_; ++j) {
    const double before = cdf;
    cdf += total > 0 ? post[j] / total : 0;
    if (cdf >= 0.025 && before <= 0.975) range.push_back(j);
  }
  return range;
}

double Search::ProbabilityBad(int position) const {
  auto post = Posterior();
  double p = 0;
  for (int j = 1; j <= std::min(position, positions_ - 1); ++j) p += post[j];
  return p;
}

std::vector<int> Search::GroupHeads() const {
  std::vector<int> head(positions_, 0);
  int next_unskipped = positions_ - 1;
  for (int j = positions_ - 1; j >= 1; --j) {
    if (!skipped_.count(j)) next_unskipped = j;
    head[j] = next_unskipped;
  }
  return head;
}

double Search::ExpectedEntropyAfter(int position, const std::vector<double>& posterior) const {
  const int n = positions_ - 1;
  double p_bad = 0;
  for (int j = 1; j <= position; ++j) p_bad += posterior[j];
  // The run's outcome if the position is bad or good: a status, or a value drawn around the
  // known-bad or known-good end's level with the run-to-run noise (three-point Gauss-Hermite
  // quadrature: level + sigma * {-sqrt 3, 0, +sqrt 3}, weights 1/6, 2/3, 1/6), so a noisy
  // run is not credited with more than it can tell.
  static constexpr double kNodes[] = {-1.7320508075688772, 0.0, 1.7320508075688772};
  static constexpr double kWeights[] = {1.0 / 6, 2.0 / 3, 1.0 / 6};
  const EndLevels ends = LevelsAtEnds(observations_, series_, n);
  const auto heads = GroupHeads();
  // A run inside the range evaluates only its chosen questions: so does the hypothetical one.
  std::vector<std::string> masks(series_.size());
  for (int si = 0; si < static_cast<int>(series_.size()); ++si)
    if (ends.levels[si].good_run) {
      masks[si].assign(ends.levels[si].good_run->questions.size(), 0);
      for (int q : QuestionsFor(position, si)) masks[si][q] = 1;
    }
  auto grouped_entropy = [&](std::vector<Observation> extra) {
    for (Observation& o : extra)
      for (std::size_t q = 0; q < o.questions.size() && o.series < static_cast<int>(masks.size()); ++q)
        if (q < masks[o.series].size() && !masks[o.series][q]) o.questions[q] = '-';
    auto logp = LogPosteriorOf(extra);
    const double z = LogSumExp(logp);
    std::vector<double> mass(positions_, 0.0);
    mass[0] = std::exp(logp[0] - z);
    for (int j = 1; j <= n; ++j) mass[heads[j]] += std::exp(logp[j] - z);
    return Entropy(mass);
  };
  double expected = 0;
  for (bool bad : {true, false}) {
    const double p_state = bad ? p_bad : 1 - p_bad;
    if (p_state <= 0) continue;
    if (!ends.any_value) {
      expected += p_state * grouped_entropy(HypotheticalRun(ends.levels, position, bad, 0));
      continue;
    }
    for (int k = 0; k < 3; ++k)
      expected += p_state * kWeights[k] * grouped_entropy(HypotheticalRun(ends.levels, position, bad, kNodes[k]));
  }
  return expected;
}

Decision Search::VerifyCulprit(int best, double confidence, const std::vector<int>& heads) const {
  const int n = positions_ - 1;
  Decision d;
  std::vector<int> group;
  for (int j = 1; j <= n; ++j)
    if (heads[j] == best) group.push_back(j);
  d.confidence = confidence;
  if (group.size() > 1) {
    d.verdict = Verdict::kAmbiguous;
    d.range = group;
    return d;
  }
  // Verify before reporting: the culprit and its parent each need two runs (the store's
  // and a replayed log's count: they were runs too), counted as runs, not observations.
  const bool budget_left = runs_requested_ < options_.max_runs;
  if (budget_left && RunsAt(best) < 2) {
    d.next_position = best;
    return d;
  }
  if (budget_left && RunsAt(best - 1) < 2) {
    d.next_position = best - 1;
    return d;
  }
  d.verdict = Verdict::kCulprit;
  d.culprit = best;
  return d;
}

// Candidates: the endpoints (they settle "no culprit") and the positions around the
// median of the culprit posterior (they halve the rest), as Flake Aware Culprit Finding
// does; expected entropy picks among them.
std::set<int> Search::MedianCandidates(const std::vector<double>& post) const {
  const int n = positions_ - 1;
  std::set<int> candidates = {0, n};
  double total = 0;
  for (int j = 1; j <= n; ++j) total += post[j];
  double cdf = 0;
  for (int j = 1; j <= n; ++j) {
    cdf += post[j];
    if (cdf >= total / 2) {
      for (int k = j - 1; k >= 0; --k)
        if (!skipped_.count(k)) { candidates.insert(k); break; }
      for (int k = j; k <= n; ++k)
        if (!skipped_.count(k)) { candidates.insert(k); break; }
      break;
    }
  }
  return candidates;
}

namespace {

// One part's term of a partition's entropy (nats): -p log p, 0 for an empty part.
double PartTerm(double p) { return p > 0 ? -p * std::log(p) : 0.0; }

// The entropy (nats) of which of the parts the cuts split the culprit posterior into holds
// the culprit: a run at cut c is bad exactly when the culprit is at or before c, so without
// noise a batch of runs at the cuts tells the part and no more. "No culprit" shows as every
// run good, as a culprit after the last cut does.
double PartitionEntropy(const std::vector<double>& post, std::vector<int> cuts) {
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const int n = static_cast<int>(post.size()) - 1;
  std::vector<double> parts;
  double part = 0;
  std::size_t next = 0;
  for (int j = 1; j <= n; ++j) {
    part += post[j];
    while (next < cuts.size() && cuts[next] < j) ++next;
    if (next < cuts.size() && cuts[next] == j) parts.push_back(part), part = 0, ++next;
  }
  parts.push_back(part + post[0]);
  double h = 0;
  for (double p : parts) h += PartTerm(p);
  return h;
}

// The `count` positions among `candidates` that, with the `fixed` cuts, split the culprit
// posterior into the most even parts (the highest PartitionEntropy): exact, by dynamic
// programming over the cuts in position order, since a part's term depends only on its two
// ends. Moving one cut at a time stops short of it: 12 equally likely commits, cut greedily
// into parts of 1, 2, 3, 3 and 3, are not made 2, 2, 2, 3, 3 by any single move. Empty when
// the candidates are too few.
std::vector<int> MostEvenCuts(const std::vector<double>& post, const std::vector<int>& fixed,
                              const std::vector<int>& candidates, int count) {
  const int n = static_cast<int>(post.size()) - 1;
  std::vector<double> cdf(n + 1, 0.0);  // cdf[k]: the culprit posterior of positions 1..k
  for (int j = 1; j <= n; ++j) cdf[j] = cdf[j - 1] + post[j];
  std::map<int, bool> points;  // each possible cut inside the range: whether it is fixed
  for (int c : candidates)
    if (c >= 1 && c < n) points[c] = false;
  for (int c : fixed)
    if (c >= 1 && c < n) points[c] = true;
  std::vector<int> at = {0};     // the cuts in order, after a virtual one at 0
  std::vector<char> must = {1};  // fixed: every choice keeps it
  for (const auto& [pos, is_fixed] : points) at.push_back(pos), must.push_back(is_fixed);
  const int m = static_cast<int>(at.size());
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  // best[i][u]: the entropy terms of the parts up to cut i, with i a cut and u candidates taken.
  std::vector<std::vector<double>> best(m, std::vector<double>(count + 1, kNone));
  std::vector<std::vector<int>> from(m, std::vector<int>(count + 1, -1));
  best[0][0] = 0;
  for (int i = 1; i < m; ++i)
    for (int u = must[i] ? 0 : 1; u <= count; ++u) {
      const int before = must[i] ? u : u - 1;
      for (int prev = i - 1; prev >= 0; --prev) {
        if (best[prev][before] > kNone) {
          const double h = best[prev][before] + PartTerm(cdf[at[i]] - cdf[at[prev]]);
          if (h > best[i][u] + 1e-12) best[i][u] = h, from[i][u] = prev;
        }
        if (must[prev]) break;  // no part passes over a fixed cut
      }
    }
  int last = -1;
  double best_h = kNone;
  for (int i = m - 1; i >= 0; --i) {
    if (best[i][count] > kNone) {
      const double h = best[i][count] + PartTerm(cdf[n] - cdf[at[i]] + post[0]);  // no culprit shows as the last part
      if (h > best_h + 1e-12) best_h = h, last = i;
    }
    if (must[i]) break;
  }
  std::vector<int> out;  // none when last < 0: too few candidates
  for (int i = last, u = count; i > 0;) {
    const int prev = from[i][u];
    if (!must[i]) out.push_back(at[i]), --u;
    i = prev;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int Search::SpreadChoice(const std::vector<double>& post, const std::vector<int>& pending) const {
  const int n = positions_ - 1;
  // A cut that splits off at least this much (nats) comes before verification runs.
  constexpr double kUsefulCut = 0.1;
  const double now = PartitionEntropy(post, pending);
  double best_h = now;
  int cut = -1;
  std::vector<int> cuts = pending;
  cuts.push_back(0);
  for (int k = 1; k <= n; ++k) {
    if (skipped_.count(k)) continue;
    cuts.back() = k;
    const double h = PartitionEntropy(post, cuts);
    if (h > best_h + 1e-9) best_h = h, cut = k;
  }
  if (cut >= 0 && best_h - now >= kUsefulCut) return cut;
  // Verification: a culprit is reported once it and its parent have two runs each. The run
  // most likely to be wanted for that, over the culprit hypotheses, starts now rather than
  // in a round of its own after the batch that settles the culprit.
  auto in_flight = [&](int k) { return RunsAt(k) + static_cast<int>(std::count(pending.begin(), pending.end(), k)); };
  std::vector<double> wanted(positions_, 0.0);
  for (int j = 1; j <= n; ++j)
    for (int k : {j, j - 1})
      if (in_flight(k) < 2 && !skipped_.count(k)) wanted[k] += post[j];
  const int verify = static_cast<int>(std::max_element(wanted.begin(), wanted.end()) - wanted.begin());
  constexpr double kVerifyEarly = 0.35;  // the chance it is wanted, at least
  if (wanted[verify] >= kVerifyEarly) return verify;
  return -1;  // nothing worth a step now: wait for a run to come back
}

std::vector<int> Search::DecideBatch(const std::vector<int>& pending, int slots) {
  std::vector<int> all = pending, chosen;
  // The runs in flight were counted as they started; each new one needs a run of the budget.
  const int budget = std::max(0, options_.max_runs - runs_requested_);
  for (int i = 0; i < std::min(slots, budget); ++i) {
    const Decision d = Decide(all);
    if (d.verdict != Verdict::kSearching || d.next_position < 0) break;
    all.push_back(d.next_position);
    chosen.push_back(d.next_position);
  }
  // Chosen together: the new cuts at commits not run yet go, all at once, to where with the
  // others the parts are most even. Greedy placement from the single best choice leaves
  // one part twice the others.
  const auto post = Posterior();
  auto free_cut = [&](int k) { return k >= 1 && k < positions_ - 1 && RunsAt(k) == 0 && !skipped_.count(k); };
  std::vector<int> fixed, movable, candidates;  // movable: indices into `all`
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i >= pending.size() && free_cut(all[i]) && std::count(all.begin(), all.end(), all[i]) == 1)
      movable.push_back(static_cast<int>(i));
    else
      fixed.push_back(all[i]);
  }
  for (int k = 1; k < positions_ - 1; ++k)
    if (free_cut(k) && std::count(fixed.begin(), fixed.end(), k) == 0) candidates.push_back(k);
  const std::vector<int> cuts = MostEvenCuts(post, fixed, candidates, static_cast<int>(movable.size()));
  if (cuts.size() == movable.size())
    for (std::size_t c = 0; c < cuts.size(); ++c) chosen[movable[c] - pending.size()] = cuts[c];
  return chosen;
}

Decision Search::Decide(const std::vector<int>& pending) {
  const int n = positions_ - 1;
  const auto post = Posterior();
  const auto heads = GroupHeads();
  std::vector<double> mass(positions_, 0.0);
  for (int j = 1; j <= n; ++j) mass[heads[j]] += post[j];
  const int best = static_cast<int>(std::max_element(mass.begin() + 1, mass.end()) - mass.begin());
  Decision d;
  d.confidence = std::max(post[0], mass[best]);
  // Runs at a position, the pending ones counted as run.
  auto runs_at = [&](int k) { return RunsAt(k) + static_cast<int>(std::count(pending.begin(), pending.end(), k)); };
  const bool waiting = !pending.empty();
  if (post[0] >= options_.confidence) {
    if (waiting) return d;  // the answer waits for the runs in flight
    d.verdict = Verdict::kNoCulprit;
    d.confidence = post[0];
    return d;
  }
  if (mass[best] >= options_.confidence) {
    if (!waiting) return VerifyCulprit(best, mass[best], heads);
    const bool single = std::count(heads.begin() + 1, heads.end(), best) == 1;
    if (single && runs_requested_ < options_.max_runs) {
      if (runs_at(best) < 2) d.next_position = best;
      else if (runs_at(best - 1) < 2) d.next_position = best - 1;
    }
    return d;
  }
  if (runs_requested_ >= options_.max_runs) {
    if (waiting) return d;
    // Out of runs: the 95% credible range of the culprit hypotheses.
    d.verdict = Verdict::kAmbiguous;
    d.range = CredibleRange();
    return d;
  }
  // The known-good end is every metric hypothesis's reference: expected entropy with the
  // levels plugged in cannot see how little a couple of runs pin it down, so it is rerun
  // whenever it has fewer than half the runs of the known-bad end.
  const bool any_value = std::any_of(observations_.begin(), observations_.end(),
                                     [](const Observation& o) { return !o.is_status; });
  // No culprit is near the confidence asked: a run or two at the ends may settle it, so no
  // more than kNearAnswerRuns go out at once (one step at a time it stops at the run that
  // does; a full batch overshoots by the rest: tuned on bisect_bench --seed-base 7000).
  if (waiting && post[0] >= kNearAnswer && static_cast<int>(pending.size()) >= kNearAnswerRuns) return d;
  if (any_value && 2 * runs_at(0) < runs_at(n)) {
    d.next_position = 0;
    return d;
  }
  if (any_value && post[0] >= 0.5 && runs_at(n) < 10) {
    d.next_position = n;
    return d;
  }
  if (waiting) {
    d.next_position = SpreadChoice(post, pending);
    return d;
  }
  d.next_position = LeastExpectedEntropy(post);
  return d;
}

int Search::LeastExpectedEntropy(const std::vector<double>& post) const {
  double best_h = std::numeric_limits<double>::infinity();
  int choice = -1;
  for (int k : MedianCandidates(post)) {
    if (skipped_.count(k)) continue;
    const double h = ExpectedEntropyAfter(k, post);
    if (h < best_h - 1e-12) {
      best_h = h;
      choice = k;
    }
  }
  return choice;
}

}  // namespace harness::bisect
