// The stand-in's "model": it recognises the GSM8K test question a prompt asks last and
// answers with that question's reference solution (calculator annotations removed),
// ending in "#### N". Whether N is right is decided per question:
//
//   u_q      = (rank_q + 1/2) / n                        (rank_q: q's place in a seeded shuffle)
//   margin_q = (base_accuracy - u_q + w * z_q * s_q) * B / delta        (how sure the model is)
//   e_q      = Fp8GemmRowErrors(M, K, N, fault, seed)[q mod M]
//   correct  <=>  margin_q > e_q
//
// The shuffle makes exactly base_accuracy of the questions have a positive margin, so the
// stand-in's accuracy has no sampling luck of its own: only the kernels move it.
// B is the healthy FP8 path's documented error bound, the coefficient c_K of
// runners/refstack/kernels/fp8_error.h (|y - ref| <= c_K sum_k |x||w|: the relative error
// of a row whose products share a sign), and delta the most accuracy healthy kernels may
// cost: 0.5 pp, a third of the 95% sampling half-width at n = 1319 and p = 0.925
// (+-1.42 pp). A healthy row error e <= B flips only questions with u_q in
// (p - delta * e / B, p); a broken kernel's larger row errors flip proportionally more,
// so a fault lowers accuracy only through the error it really causes.
//
// Rerun noise (profile rerun_flip_rate r, per-run noise seed): a real server at
// temperature 0 is not reproducible under dynamic batching, and the questions that flip
// between its reruns are the borderline ones. So each run, question q is perturbed
// (s_q = 1) with probability r, drawn from (seed, noise seed, q), and its rank moves by
// w * z_q, z_q ~ N(0, 1) from the same draw: w (the profile's rerun_rank_sd, default 2 pp
// of rank) keeps the questions that can ever flip within a few w of the boundary (about 100
// of 1319 at 2 pp) and far-away ones never do; E[D] below grows in proportion to w.
// Because the ranks are evenly spread around the boundary, symmetric noise leaves the
// expected number of right answers where it was (healthy 1218/1319 at M = 64) and a
// fault's row errors cost on average what they cost without noise. With P_q the
// probability that q is right in one run, P_q = (1 - r) [correct without noise]
// + r Phi((p - delta e_q / B - u_q) / w), two runs disagree on E[D] = sum 2 P_q (1 - P_q)
// questions and the count of right answers has variance sum P_q (1 - P_q) = E[D] / 2, so
// sigma(accuracy) = sqrt(E[D] / 2) / n. golden/sim/noisy.json's r = 0.65 gives E[D] = 22
// discordant questions and sigma = 0.25 pp (docs/gsm8k.md has the measured figures).
// r = 0 (default.json) perturbs nothing: every run answers identically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "harness/eval/gsm8k_data.h"
#include "runners/refstack/sim/sim_profile.h"

namespace harness::sim {

// delta above: the accuracy healthy kernels may cost at most.
inline constexpr double kHealthyAccuracyShift = 0.005;
// B above, for the GEMM's inner size K.
double HealthyRowErrorBound(int k);

// Deterministic draws: a 64-bit mix of (seed, stream, a, b) and a uniform [0, 1) value.
uint64_t Mix(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b = 0);
double Uniform01(uint64_t bits);

enum class AnswerKind { kRight, kWrongNumber, kNoNumber };

class SimModel {
 public:
  // scale_unrepaired: the stack config's "fp8-scale-unrepaired" fault switch. noise_seed:
  // this run's draw of the rerun noise (no effect when the profile's rerun_flip_rate is 0).
  SimModel(const SimProfile& profile, bool scale_unrepaired, std::vector<Gsm8kItem> questions,
           uint64_t noise_seed = 0);

  // The index of the question in the prompt's last "Question: ...\nAnswer:" block, or -1.
  int FindQuestion(std::string_view prompt) const;

  double Margin(int q) const;
  double RowError(int q) const;
  AnswerKind Kind(int q) const;
  // The answer text for question q (kind as above).
  std::string Answer(int q) const;

  int size() const { return static_cast<int>(questions_.size()); }
  const std::vector<double>& row_errors() const { return row_errors_; }

 private:
  SimProfile profile_;
  std::vector<Gsm8kItem> questions_;
  std::unordered_map<std::string, int> index_;   // question text -> index
  std::vector<double> draws_;                    // u_q, minus this run's rank noise w * z_q * s_q
  std::vector<double> row_errors_;               // one per row of the M-row batch
  double margin_scale_;                          // B / delta
};

}  // namespace harness::sim
