#include "harness/bisect/flip_rates.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace harness::bisect {
namespace {

double LogLikelihood(double p, int right, int answered) {
  return right * std::log(p) + (answered - right) * std::log(1 - p);
}

// Posterior class weights of a question with `right` of `answered`, from the mixture w.
ClassWeights PosteriorOf(const ClassWeights& w, const ClassWeights& p, int right, int answered, double* log_marginal) {
  ClassWeights out{};
  double top = -1e300;
  std::array<double, kQuestionClasses> logs{};
  for (int c = 0; c < kQuestionClasses; ++c) {
    logs[c] = std::log(std::max(w[c], 1e-300)) + LogLikelihood(p[c], right, answered);
    top = std::max(top, logs[c]);
  }
  double total = 0;
  for (int c = 0; c < kQuestionClasses; ++c) total += out[c] = std::exp(logs[c] - top);
  for (double& x : out) x /= total;
  if (log_marginal) *log_marginal = top + std::log(total);
  return out;
}

}  // namespace

ClassWeights RightProbabilities(double solid_flip) {
  const double f0 = std::clamp(solid_flip, 1e-6, 0.1);
  return {1 - f0, f0, 0.1, 0.2, 0.5, 0.8, 0.9};
}

ClassWeights FixedClassPrior(double right_share, double fragile_share) {
  const double alpha = std::clamp(right_share, 1e-3, 1 - 1e-3);
  const double phi = std::clamp(fragile_share, 1e-6, 0.5);
  constexpr double kBorderline = kQuestionClasses - kFirstBorderlineClass;
  ClassWeights out{alpha * (1 - phi), (1 - alpha) * (1 - phi)};
  for (int c = kFirstBorderlineClass; c < kQuestionClasses; ++c) out[c] = phi / kBorderline;
  return out;
}

FlipRates FlipRates::Estimate(const std::vector<std::string>& runs, double solid_flip, double fragile_share,
                              double prior_questions) {
  FlipRates out;
  out.solid_flip_ = solid_flip;
  out.runs_ = static_cast<int>(runs.size());
  std::size_t questions = 0;
  for (const auto& r : runs) questions = std::max(questions, r.size());
  // Kind 0 is "never answered": the fitted mixture.
  std::map<std::pair<int, int>, int> kind_of = {{{0, 0}, 0}};
  out.kinds_.push_back({});
  std::vector<double> kind_count = {0};
  double right_total = 0, answered_total = 0;
  bool repeated = false;
  for (std::size_t q = 0; q < questions; ++q) {
    int right = 0, answered = 0;
    for (const auto& r : runs) {
      const char c = q < r.size() ? r[q] : '-';
      right += c == '1';
      answered += c == '0' || c == '1';
    }
    right_total += right;
    answered_total += answered;
    repeated = repeated || answered >= 2;
    auto [it, fresh] = kind_of.emplace(std::pair{right, answered}, static_cast<int>(out.kinds_.size()));
    if (fresh) {
      out.kinds_.push_back({right, answered, {}, 0});
      kind_count.push_back(0);
    }
    out.kind_.push_back(it->second);
    kind_count[it->second] += 1;
  }
  const ClassWeights p = RightProbabilities(solid_flip);
  const ClassWeights prior = FixedClassPrior(answered_total > 0 ? right_total / answered_total : 0.9, fragile_share);
  out.mixture_ = prior;
  // EM for the class weights, only when some question was answered twice (else borderline
  // and settled cannot be told apart and the fixed prior stands).
  for (int iter = 0; repeated && iter < 200; ++iter) {
    ClassWeights next{};
    for (int c = 0; c < kQuestionClasses; ++c) next[c] = prior_questions * prior[c];
    for (std::size_t k = 0; k < out.kinds_.size(); ++k) {
      const ClassWeights post = PosteriorOf(out.mixture_, p, out.kinds_[k].right, out.kinds_[k].answered, nullptr);
      for (int c = 0; c < kQuestionClasses; ++c) next[c] += kind_count[k] * post[c];
    }
    double total = 0;
    for (double x : next) total += x;
    for (double& x : next) x /= total;
    out.mixture_ = next;
  }
  for (auto& k : out.kinds_) k.weights = PosteriorOf(out.mixture_, p, k.right, k.answered, &k.log_unaffected);
  return out;
}

double FlipRates::HistoryLogRatioOfKind(int kind, double before_right) const {
  const KindInfo& k = kinds_[kind];
  return LogLikelihood(before_right, k.right, k.answered) - k.log_unaffected;
}

double FlipRates::Borderline(int q) const {
  const ClassWeights& w = Weights(q);
  double share = 0;
  for (int c = kFirstBorderlineClass; c < kQuestionClasses; ++c) share += w[c];
  return share;
}

double FlipRates::FlipRate(int q) const {
  const ClassWeights& w = Weights(q);
  const ClassWeights p = RightProbabilities(solid_flip_);
  double rate = 0;
  for (int c = 0; c < kQuestionClasses; ++c) rate += w[c] * 2 * p[c] * (1 - p[c]);
  return rate;
}

}  // namespace harness::bisect
