#include "harness/eval/gsm8k_eval.h"

#include <chrono>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "harness/eval/gsm8k_prompt.h"
#include "harness/eval/gsm8k_score.h"
#include "harness/eval/eval_progress.h"

namespace harness {

using openai::Client;
using openai::CompletionRequest;
using openai::CompletionResult;

Result<std::unique_ptr<Gsm8kEval>> Gsm8kEval::Create(Gsm8kEvalOptions options) {
  if (!(options.max_error_rate >= 0 && options.max_error_rate <= 1))
    return UsageError(fmt::format("max_error_rate: must be in [0, 1], got {}", options.max_error_rate));
  std::unique_ptr<Gsm8kEval> eval(new Gsm8kEval());
  auto questions = LoadGsm8k(options.questions_file);
  if (!questions) return questions.error();
  eval->questions_ = std::move(questions).value();
  std::vector<Gsm8kItem> shots;
  if (options.shots > 0) {
    auto loaded = LoadGsm8k(options.shots_file, static_cast<std::size_t>(options.shots));
    if (!loaded) return loaded.error();
    shots = std::move(loaded).value();
  }
  for (int64_t q : options.only)
    if (q < 0 || q >= static_cast<int64_t>(eval->questions_.size()))
      return UsageError(fmt::format("question {} is not one of the {} in {}", q, eval->questions_.size(),
                                    options.questions_file.string()));
  auto prefix = Gsm8kFewShotPrefix(shots, options.shots);
  if (!prefix) return prefix.error();
  eval->prefix_ = std::move(prefix).value();
  const auto asked = options.only.empty() ? eval->questions_.size() : options.only.size();
  const auto allowed = static_cast<int64_t>(std::floor(options.max_error_rate * static_cast<double>(asked)));
  options.client.max_errors = allowed;
  auto client = Client::Create(options.client);
  if (!client) return client.error();
  eval->client_ = std::move(client).value();
  eval->options_ = std::move(options);
  return eval;
}

namespace {

// A resumed run's stored samples go into the report once each (done marks their
// questions); the number of them that are request errors.
Result<int64_t> KeepPriorSamples(const std::vector<Sample>& prior, const std::filesystem::path& questions_file,
                                 std::vector<bool>& done, Gsm8kEvalReport& report) {
  const auto n = static_cast<int64_t>(done.size());
  int64_t prior_errors = 0;
  for (const auto& s : prior) {
    char* end = nullptr;
    const long long q = std::strtoll(s.key.c_str(), &end, 10);
    if (s.key.empty() || *end != '\0' || q < 0 || q >= n)
      return UsageError(fmt::format("resume: stored sample key '{}' is not a question index of {}", s.key,
                                    questions_file.string()));
    if (done[static_cast<std::size_t>(q)]) continue;   // a duplicate row says nothing new
    done[static_cast<std::size_t>(q)] = true;
    prior_errors += s.outcome == SampleOutcome::kError;
    report.samples.push_back(s);
  }
  return prior_errors;
}

// The sample of one answered (or failed) request, scored against the question's label.
Sample AnsweredSample(const CompletionResult& r, const Gsm8kItem& item) {
  Sample s;
  s.key = std::to_string(r.id);
  s.expected = item.label;
  s.latency_s = r.latency_s;
  if (r.ok) {
    const ScoredAnswer scored = ScoreGsm8kResponse(r.text, r.finish_reason, item.label);
    s.outcome = scored.outcome;
    s.extracted = scored.extracted;
    s.tokens = r.completion_tokens;
    s.completion = r.text.substr(0, kMaxStoredCompletionBytes);
  } else {
    s.outcome = SampleOutcome::kError;
  }
  return s;
}

// The report's throughput and summary; an infra error when the requests failed or too many
// of the answers are errors.
void FinishReport(Gsm8kEvalReport& report, const Status& status, double max_error_rate, double wall_s) {
  report.wall_s = wall_s;
  report.output_tokens_per_s = TokensPerSecond(report.output_tokens, report.wall_s);
  report.summary = SummarizeSamples(report.samples);
  if (!status) {
    report.infra_error = status.error();
  } else if (report.summary.error_rate > max_error_rate) {
    report.infra_error = InfraError(fmt::format("{} of {} requests failed ({:.1f}%, limit {:.1f}%)",
                                                report.summary.counts.error, report.questions,
                                                100 * report.summary.error_rate, 100 * max_error_rate));
  }
}

}  // namespace

Result<Gsm8kEvalReport> Gsm8kEval::Run(const std::vector<Sample>& prior,
                                       const std::function<void(const Sample&)>& on_sample) {
  const auto n = static_cast<int64_t>(options_.only.empty() ? questions_.size() : options_.only.size());
  Gsm8kEvalReport report;
  report.questions = n;
  report.samples.reserve(static_cast<std::size_t>(n));
  std::vector<bool> done(questions_.size(), false);
  auto prior_errors = KeepPriorSamples(prior, options_.questions_file, done, report);
  if (!prior_errors) return prior_errors.error();
  std::vector<CompletionRequest> requests;
  auto ask = [&](int64_t q) {
    if (!done[static_cast<std::size_t>(q)])
      requests.push_back({q, Gsm8kPrompt(prefix_, questions_[static_cast<std::size_t>(q)].question)});
  };
  if (options_.only.empty())
    for (int64_t q = 0; q < n; ++q) ask(q);
  else
    for (int64_t q : options_.only) ask(q);
  report.asked = static_cast<int64_t>(requests.size());

  std::optional<EvalProgress> progress;
  if (options_.progress_out) progress.emplace(options_.progress_label, n, n - report.asked, options_.progress_out);
  const auto start = std::chrono::steady_clock::now();
  // A resumed run's earlier failures count against the same limit.
  const int64_t allowed = static_cast<int64_t>(std::floor(options_.max_error_rate * static_cast<double>(n)));
  Status status = OkStatus();
  if (*prior_errors > allowed) {
    status = InfraError(fmt::format("{} of the stored answers are request errors (limit {})", *prior_errors, allowed));
  } else if (!requests.empty()) {
    status = client_->Run(requests, [&](CompletionResult&& r) {
      Sample s = AnsweredSample(r, questions_[static_cast<std::size_t>(r.id)]);
      if (r.ok) report.output_tokens += r.completion_tokens;
      if (progress) progress->Record(r.ok, s.outcome == SampleOutcome::kCorrect);
      on_sample(s);
      report.samples.push_back(std::move(s));
    });
  }
  if (progress) progress->Finish();
  FinishReport(report, status, options_.max_error_rate,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return report;
}

}  // namespace harness
