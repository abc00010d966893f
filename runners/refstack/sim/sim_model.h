// The stand-in's "model": it recognises the GSM8K test question a prompt asks last and
// answers with that question's reference solution (calculator annotations removed),
// ending in "#### N". Whether N is right is decided deterministically per question:
//
//   u_q      = (rank_q + 1/2) / n                        (rank_q: q's place in a seeded shuffle)
//   margin_q = (base_accuracy - u_q) * B / delta        (how sure the model is)
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
  // scale_unrepaired: the stack config's "fp8-scale-unrepaired" fault switch.
  SimModel(const SimProfile& profile, bool scale_unrepaired, std::vector<Gsm8kItem> questions);

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
  std::vector<double> draws_;                    // u_q
  std::vector<double> row_errors_;               // one per row of the M-row batch
  double margin_scale_;                          // B / delta
};

}  // namespace harness::sim
