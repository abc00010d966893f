#include "runners/refstack/sim/sim_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>

#include "harness/eval/answer_extract.h"
#include "harness/util/hash.h"
#include "runners/refstack/kernels/fp8_error.h"
#include "runners/refstack/kernels/row_error.h"

namespace harness::sim {
namespace {

// Streams keep the draws for different purposes independent.
enum Stream : uint64_t {
  kMarginStream = 1,
  kNoNumberStream = 2,
  kWrongOffsetStream = 3,
  kGemmStream = 4,
  kRerunPickStream = 6,   // 5 is the server's fault stream
  kRerunRadiusStream = 7,
  kRerunAngleStream = 8,
};

constexpr std::string_view kNoNumberAnswer =
    " I am not able to work this one out from the information given.";

std::string Trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

}  // namespace

uint64_t Mix(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b) {
  return SplitMix64(SplitMix64(SplitMix64(SplitMix64(seed) ^ stream) ^ a) ^ b);
}

double Uniform01(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

double HealthyRowErrorBound(int k) { return kernels::Fp8GemmBoundCoefficient(k); }

SimModel::SimModel(const SimProfile& profile, bool scale_unrepaired, std::vector<Gsm8kItem> questions,
                   uint64_t noise_seed)
    : profile_(profile),
      questions_(std::move(questions)),
      row_errors_(kernels::Fp8GemmRowErrors(profile.batch_rows, profile.gemm_k, profile.gemm_n, scale_unrepaired,
                                            Mix(profile.seed, kGemmStream, 0))),
      margin_scale_(HealthyRowErrorBound(profile.gemm_k) / kHealthyAccuracyShift) {
  index_.reserve(questions_.size());
  for (int i = 0; i < size(); ++i) index_.emplace(Trim(questions_[i].question), i);
  std::vector<std::pair<uint64_t, int>> shuffle;
  for (int q = 0; q < size(); ++q) shuffle.emplace_back(Mix(profile_.seed, kMarginStream, static_cast<uint64_t>(q)), q);
  std::sort(shuffle.begin(), shuffle.end());
  draws_.resize(shuffle.size());
  for (std::size_t rank = 0; rank < shuffle.size(); ++rank)
    draws_[static_cast<std::size_t>(shuffle[rank].second)] =
        (static_cast<double>(rank) + 0.5) / static_cast<double>(shuffle.size());
  if (profile_.rerun_flip_rate <= 0) return;
  // The noise seed goes into the draws' last word, so each run picks its own questions
  // and moves them by its own amounts, while the profile's seed still keeps it reproducible.
  for (int q = 0; q < size(); ++q) {
    const auto uq = static_cast<uint64_t>(q);
    if (Uniform01(Mix(profile_.seed, kRerunPickStream, uq, noise_seed)) >= profile_.rerun_flip_rate) continue;
    // Box-Muller; 1 - U keeps the logarithm's argument in (0, 1].
    const double u1 = 1.0 - Uniform01(Mix(profile_.seed, kRerunRadiusStream, uq, noise_seed));
    const double u2 = Uniform01(Mix(profile_.seed, kRerunAngleStream, uq, noise_seed));
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    draws_[static_cast<std::size_t>(q)] -= profile_.rerun_rank_sd * z;
  }
}

int SimModel::FindQuestion(std::string_view prompt) const {
  constexpr std::string_view kQuestion = "Question:";
  const auto start = prompt.rfind(kQuestion);
  if (start == std::string_view::npos) return -1;
  std::string_view rest = prompt.substr(start + kQuestion.size());
  if (const auto end = rest.find("\nAnswer:"); end != std::string_view::npos) rest = rest.substr(0, end);
  const auto it = index_.find(Trim(rest));
  return it == index_.end() ? -1 : it->second;
}

double SimModel::Margin(int q) const {
  return (profile_.base_accuracy - draws_[static_cast<std::size_t>(q)]) * margin_scale_;
}

double SimModel::RowError(int q) const { return row_errors_[static_cast<std::size_t>(q) % row_errors_.size()]; }

AnswerKind SimModel::Kind(int q) const {
  if (Margin(q) > RowError(q)) return AnswerKind::kRight;
  const double u = Uniform01(Mix(profile_.seed, kNoNumberStream, static_cast<uint64_t>(q)));
  return u < profile_.no_number_share ? AnswerKind::kNoNumber : AnswerKind::kWrongNumber;
}

std::string SimModel::Answer(int q) const {
  const Gsm8kItem& item = questions_[static_cast<std::size_t>(q)];
  const AnswerKind kind = Kind(q);
  if (kind == AnswerKind::kNoNumber) return std::string(kNoNumberAnswer);
  std::string text = " " + RemoveCalculatorAnnotations(item.answer);
  if (kind == AnswerKind::kRight) return text;
  // A wrong final number: the label moved by 1..9 either way.
  const auto label = CanonicalNumber(item.label).value_or("0");
  const uint64_t bits = Mix(profile_.seed, kWrongOffsetStream, static_cast<uint64_t>(q));
  const long long offset = static_cast<long long>(1 + bits % 9) * ((bits >> 32) & 1 ? 1 : -1);
  const long long wrong = std::strtoll(label.c_str(), nullptr, 10) + offset;
  const auto marker = text.rfind("####");
  return text.substr(0, marker) + "#### " + std::to_string(wrong);
}

}  // namespace harness::sim
