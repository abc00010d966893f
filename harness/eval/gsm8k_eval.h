// The GSM8K eval loop: k-shot prompts from the train split, every test question not yet
// answered sent through the OpenAI-compatible client, each response scored and handed
// on as a Sample the moment it arrives (the suite streams it into the store), then the
// whole case summarised. A resumed run passes the samples already stored and only the
// remaining questions are asked.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"
#include "harness/eval/gsm8k_data.h"
#include "harness/eval/eval_summary.h"
#include "runners/openai/openai_client.h"

namespace harness {

struct Gsm8kEvalOptions {
  openai::ClientOptions client;
  int shots = 5;                                     // from shots_file[0:shots]
  std::filesystem::path questions_file = Gsm8kTestFile();
  std::filesystem::path shots_file = Gsm8kTrainFile();
  // A partial run (question_list.h): the question indices to ask, ascending, each below the
  // data set's size. Empty: every question.
  std::vector<int64_t> only;
  // More failed requests than this share of all questions is an infrastructure
  // failure, never a silent accuracy number.
  double max_error_rate = 0.02;
  std::string progress_label = "gsm8k";
  std::FILE* progress_out = stderr;                  // nullptr: no progress line
};

struct Gsm8kEvalReport {
  std::vector<Sample> samples;     // the prior ones and this run's, one per question asked so far
  int64_t questions = 0;           // in the data set, or in `only` when it is given
  int64_t asked = 0;               // sent in this run
  double wall_s = 0;               // this run
  int64_t output_tokens = 0;       // this run's answered samples
  double output_tokens_per_s = 0;  // this run
  EvalSummary summary;             // over samples
  std::optional<Error> infra_error;
};

class Gsm8kEval {
 public:
  // Loads the data and builds the prompts; bad files or options are usage errors.
  static Result<std::unique_ptr<Gsm8kEval>> Create(Gsm8kEvalOptions options);

  // on_sample runs on the calling thread once per newly answered question.
  Result<Gsm8kEvalReport> Run(const std::vector<Sample>& prior, const std::function<void(const Sample&)>& on_sample);

  // Thread-safe: ends a running Run early (its report then carries an infra error).
  void RequestStop() { client_->RequestStop(); }

  const std::vector<Gsm8kItem>& questions() const { return questions_; }

 private:
  Gsm8kEval() = default;
  Gsm8kEvalOptions options_;
  std::vector<Gsm8kItem> questions_;
  std::string prefix_;
  std::unique_ptr<openai::Client> client_;
};

}  // namespace harness
