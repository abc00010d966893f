// Per-question flip rates learned from the store (issue 20 §3): runs of one commit and
// identity repeated, and the nightly history, tell which GSM8K questions are borderline.
//
// The search's per-question model (bisect_search.h) puts each unaffected question in one of
// seven classes: settled right (right with probability 1 - solid_flip), settled wrong (right
// with probability solid_flip) and borderline, right with probability 0.1, 0.2, 0.5, 0.8 or
// 0.9 (the outer two for questions that flip now and then: without them a question right in
// 9 of 10 runs reads as settled, and its one wrong answer as a culprit's work). The fixed
// prior weighs them alpha (1 - fragile_share), (1 - alpha)(1 - fragile_share) and
// fragile_share / 5 each, alpha the share of right answers. The estimator:
//   1. counts, per question, its right answers r and answers k over the given runs;
//   2. fits the seven class weights to all questions by EM (the class probabilities stay
//      fixed), the fixed prior worth `prior_questions` questions as a Dirichlet pseudo-count
//      (it holds the weights where the data cannot: with no question answered twice,
//      borderline and settled cannot be told apart and the fixed prior is used as it is);
//   3. gives each question the posterior of its class given its own r of k (weights
//      w_c p_c^r (1 - p_c)^(k - r), normalised): a question right four times of four is
//      all but surely settled right, one right twice of four surely borderline, one never
//      seen keeps the fitted mixture. Its flip rate is the chance two runs disagree,
//      sum_c w_c 2 p_c (1 - p_c).
// Cold start: no runs gives the fixed prior to every question; one run gives each question
// its settled side but no flip evidence. The runs must be of commits before the searched
// range (reruns of the known-good commit, nightlies before it) and not also be given to the
// search as observations (that would count them twice).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace harness::bisect {

inline constexpr int kQuestionClasses = 7;
inline constexpr int kFirstBorderlineClass = 2;
using ClassWeights = std::array<double, kQuestionClasses>;

// P(right) of each class: settled right, settled wrong, borderline 0.1, 0.2, 0.5, 0.8, 0.9.
ClassWeights RightProbabilities(double solid_flip);
// The fixed prior's class weights.
ClassWeights FixedClassPrior(double right_share, double fragile_share);

class FlipRates {
 public:
  FlipRates() = default;  // no history: every question keeps the fixed prior
  // runs: per-question outcomes ('1' right, '0' wrong, anything else no answer), one string
  // per run, all of commits before the culprit could be.
  static FlipRates Estimate(const std::vector<std::string>& runs, double solid_flip, double fragile_share,
                            double prior_questions = 200);

  bool empty() const { return kind_.empty(); }
  int questions() const { return static_cast<int>(kind_.size()); }
  // Questions of one kind (the same r of k) share everything below: a grouping key.
  int Kind(int q) const { return q < questions() ? kind_[q] : 0; }
  int kinds() const { return static_cast<int>(kinds_.size()); }
  const ClassWeights& WeightsOfKind(int kind) const { return kinds_[kind].weights; }
  // log P(its history | right with probability before_right, as an affected question was
  // before its culprit) - log P(its history | unaffected, the fitted mixture).
  double HistoryLogRatioOfKind(int kind, double before_right) const;
  const ClassWeights& Weights(int q) const { return WeightsOfKind(Kind(q)); }
  double Borderline(int q) const;  // posterior probability the question is borderline
  double FlipRate(int q) const;    // probability two runs disagree
  const ClassWeights& mixture() const { return mixture_; }
  int runs() const { return runs_; }

 private:
  struct KindInfo {
    int right = 0, answered = 0;
    ClassWeights weights{};
    double log_unaffected = 0;  // log P(its history | unaffected)
  };
  std::vector<int> kind_;
  std::vector<KindInfo> kinds_;
  ClassWeights mixture_{};
  double solid_flip_ = 0.002;
  int runs_ = 0;
};

}  // namespace harness::bisect
