// The gsm8k suite: GSM8K accuracy of an OpenAI-compatible endpoint, gated and compared
// with the baseline commit question by question (docs/gsm8k.md).
//
// Without --endpoint a case starts the stand-in endpoint in-process; its answers go
// through the reference FP8 kernels with a batch of sim_batch_rows rows, so the run's
// fault switches (fp8-scale-unrepaired) reach accuracy only through the kernels' error.
// A profile with rerun noise draws it from the run's noise seed (--seed, else the run id).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "harness/eval/gsm8k_data.h"
#include "harness/eval/gsm8k_eval.h"
#include "harness/eval/gsm8k_judge.h"
#include "harness/results/metric_names.h"
#include "harness/run/run_context.h"
#include "harness/run/suite.h"
#include "harness/util/paths.h"
#include "runners/refstack/sim/sim_server.h"

namespace harness {
namespace {

Gsm8kEvalOptions EvalOptions(const JsonObject& p, const std::string& case_id) {
  Gsm8kEvalOptions o;
  o.shots = static_cast<int>(ValueOrThrow(p.Int("shots")));
  o.max_error_rate = ValueOrThrow(p.Number("max_error_rate"));
  o.progress_label = case_id;
  auto& c = o.client;
  c.generation.max_tokens = static_cast<int>(ValueOrThrow(p.Int("max_tokens")));
  c.generation.temperature = ValueOrThrow(p.Number("temperature"));
  c.generation.top_p = ValueOrThrow(p.Number("top_p"));
  c.generation.seed = ValueOrThrow(p.Int("seed"));
  c.generation.stop = ValueOrThrow(p.StringList("stop"));
  c.max_in_flight = static_cast<int>(ValueOrThrow(p.Int("max_in_flight")));
  c.timeout_s = ValueOrThrow(p.Number("timeout_s"));
  c.max_attempts = static_cast<int>(ValueOrThrow(p.Int("max_attempts")));
  c.max_response_bytes = ValueOrThrow(p.Int("max_response_bytes"));
  return o;
}

// Why this row does not run against the run's stack, or empty: against --endpoint only the
// with_endpoint rows run; without one, the stand-in needs the reference kernels in process.
std::string SkipReason(const JsonObject& p, const RunContext& run) {
  if (run.endpoint) {
    if (ValueOrThrow(p.Bool("with_endpoint"))) return "";
    return "this row varies the stand-in's batch (sim_batch_rows); against --endpoint only the with_endpoint rows run";
  }
  if (run.stack != nullptr && run.stack->RunsReferenceKernels()) return "";
  return fmt::format("gsm8k needs an OpenAI-compatible endpoint for stack '{}' (harness run --endpoint URL --model NAME)",
                     run.stack_config.stack);
}

// The stand-in endpoint a case starts, and the model name it answers to.
struct StandIn {
  std::unique_ptr<sim::SimServer> server;
  std::string model;
};

// The stand-in of the row's profile and batch, answering through the reference kernels
// with the run's fault switches and noise seed; not yet started.
StandIn StandInFor(const JsonObject& p, const RunContext& run, const std::string& questions) {
  auto profile = ValueOrThrow(sim::LoadSimProfile(GoldenDir() / ValueOrThrow(p.String("sim_profile"))));
  if (p.Has("sim_batch_rows")) {
    const int64_t rows = ValueOrThrow(p.Int("sim_batch_rows"));
    if (rows < 1 || rows > 4096) throw FatalError(p.FieldError("sim_batch_rows", "must be in [1, 4096]"));
    profile.batch_rows = static_cast<int>(rows);
  }
  const std::string model = profile.model;
  return {std::make_unique<sim::SimServer>(std::move(profile), run.stack_config, ValueOrThrow(LoadGsm8k(questions)),
                                           run.noise_seed.value_or(0)),
          model};
}

class Gsm8kAccuracy : public SuiteTest {
 protected:
  // A whole run is gated with its reruns' spread and paired with its baseline; a partial
  // run and a row that skips read neither.
  CaseNeeds Needs() const override {
    if (Context().questions || !SkipReason(Param(), Context()).empty()) return {};
    return {.baseline = true, .rerun_metric = metric_names::kAccuracy};
  }
};

// Runs the eval against the endpoint (or the stand-in it starts), streaming each answered
// question into the record, then hands the report to JudgeGsm8k and reports its outcome.
TEST_P(Gsm8kAccuracy, test_gsm8k_accuracy) {
  const JsonObject p = Param();
  const RunContext& run = Context();
  if (const std::string why = SkipReason(p, run); !why.empty()) GTEST_SKIP() << why;
  Gsm8kEvalOptions options = EvalOptions(p, GetParam().CaseId());
  if (run.questions) options.only = *run.questions;
  StandIn stand_in;
  if (run.endpoint) {
    options.client.target = *run.endpoint;
  } else {
    stand_in = StandInFor(p, run, options.questions_file);
    auto url = stand_in.server->Start(0);
    if (!url) {
      Record().SetInfraError(url.error().message);
      FAIL() << url.error().message;
    }
    options.client.target = EndpointTarget{*url, stand_in.model, Need(p.Bool("chat")), ""};
  }
  auto eval = Need(Gsm8kEval::Create(options));
  CaseRecord& rec = Record();
  const auto report = Need(eval->Run(Inputs().prior_samples, [&rec](const Sample& s) { rec.AddSample(s); }));
  stand_in.server.reset();

  Gsm8kJudgeInputs judge;
  judge.report = &report;
  if (run.questions) judge.partial_of = static_cast<int64_t>(eval->questions().size());
  if (Inputs().baseline) judge.baseline = &*Inputs().baseline;
  judge.rerun_accuracies = Inputs().reruns;
  judge.rule = {Need(p.Number("gate")), Need(p.Bool("fail_at_risk")), Need(p.Number("alpha"))};
  Report(JudgeGsm8k(judge).outcome);
}

HARNESS_INSTANTIATE(gsm8k, Gsm8kAccuracy, test_gsm8k_accuracy);

}  // namespace
}  // namespace harness
