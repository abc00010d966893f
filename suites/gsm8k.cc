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
#include "harness/results/metric_names.h"
#include "harness/run/case_record.h"
#include "harness/run/run_context.h"
#include "harness/run/suite.h"
#include "harness/stats/verdict.h"
#include "harness/util/git.h"
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

void AddRate(CaseRecord& rec, const std::string& name, double value, int64_t n) { rec.AddMetric({name, value, n, {}, {}}); }
void AddValue(CaseRecord& rec, const std::string& name, double value) { rec.AddMetric({name, value, 0, {}, {}}); }

// What every run stores of a case: accuracy with its Wilson interval, the error, invalid and
// truncated rates, latency and throughput.
void AddSummaryMetrics(CaseRecord& rec, const Gsm8kEvalReport& report) {
  const EvalSummary& s = report.summary;
  rec.AddMetric({metric_names::kAccuracy, s.accuracy, s.counts.answered(), s.accuracy_ci.low, s.accuracy_ci.high});
  AddRate(rec, metric_names::kErrorRate, s.error_rate, report.questions);
  AddRate(rec, metric_names::kInvalidRate, s.invalid_rate, report.questions);
  AddRate(rec, metric_names::kTruncatedRate, s.truncated_rate, report.questions);
  AddValue(rec, metric_names::kLatencyP50Seconds, s.latency_p50_s);
  AddValue(rec, metric_names::kLatencyP90Seconds, s.latency_p90_s);
  AddValue(rec, metric_names::kLatencyP99Seconds, s.latency_p99_s);
  AddValue(rec, metric_names::kOutputTokensPerSecond, report.output_tokens_per_s);
}

// A non-fatal failure whose message is exactly `text` (ADD_FAILURE would put "Failed"
// first, and that first line is what the run's table and the catalogue show).
void Fail(const std::string& text) { GTEST_NONFATAL_FAILURE_(text.c_str()); }

class Gsm8kAccuracy : public SuiteTest {};

TEST_P(Gsm8kAccuracy, test_gsm8k_accuracy) {
  const JsonObject p = Param();
  const RunContext& run = CurrentRun();
  CaseRecord& rec = CurrentCase();
  const std::string case_id = GetParam().CaseId();
  Gsm8kEvalOptions options = EvalOptions(p, case_id);
  if (run.questions) options.only = *run.questions;

  std::unique_ptr<sim::SimServer> stand_in;
  if (run.endpoint) {
    if (!Need(p.Bool("with_endpoint")))
      GTEST_SKIP() << "this row varies the stand-in's batch (sim_batch_rows); against --endpoint only the "
                      "with_endpoint rows run";
    options.client.target = *run.endpoint;
  } else {
    if (run.stack_config.stack != "refstack")
      GTEST_SKIP() << "gsm8k needs an OpenAI-compatible endpoint for stack '" << run.stack_config.stack
                   << "' (harness run --endpoint URL --model NAME)";
    auto profile = Need(sim::LoadSimProfile(GoldenDir() / Need(p.String("sim_profile"))));
    if (p.Has("sim_batch_rows")) {
      const int64_t rows = Need(p.Int("sim_batch_rows"));
      if (rows < 1 || rows > 4096) throw FatalError(p.FieldError("sim_batch_rows", "must be in [1, 4096]"));
      profile.batch_rows = static_cast<int>(rows);
    }
    const std::string model = profile.model;
    stand_in = std::make_unique<sim::SimServer>(std::move(profile), run.stack_config,
                                                Need(LoadGsm8k(options.questions_file)), run.noise_seed.value_or(0));
    auto url = stand_in->Start(0);
    if (!url) {
      rec.SetInfraError(url.error().message);
      FAIL() << url.error().message;
    }
    options.client.target = EndpointTarget{*url, model, Need(p.Bool("chat")), ""};
  }

  auto eval = Need(Gsm8kEval::Create(options));
  const auto report = Need(eval->Run(rec.prior_samples(), [&rec](const Sample& s) { rec.AddSample(s); }));
  stand_in.reset();
  const EvalSummary& s = report.summary;
  const int64_t questions = report.questions;
  if (report.infra_error) {
    // Never a silent accuracy number: the case is an infrastructure error (exit 3).
    AddRate(rec, metric_names::kErrorRate, s.error_rate, questions);
    rec.SetInfraError(report.infra_error->message);
    FAIL() << "gsm8k: " << report.infra_error->message;
  }

  AddSummaryMetrics(rec, report);
  if (run.questions) {
    // A partial run is bisect evidence: its few questions, chosen for telling commits apart,
    // are no sample of the test set, so it is neither gated nor paired with a baseline.
    rec.AddNote(fmt::format("partial run: {} of {} questions, {}/{} right; no gate, no baseline (bisect evidence)",
                            questions, eval->questions().size(), s.counts.correct, s.counts.answered()));
    return;
  }
  const GateJudgement gate = JudgeGate(s.counts.correct, s.counts.answered(), Need(p.Number("gate")));
  AddValue(rec, metric_names::kGate, gate.gate);
  rec.AddMetric(VerdictMetric(metric_names::kGateVerdict, gate.verdict));
  std::vector<double> run_accuracies;
  if (run.reruns) run_accuracies = Need(run.reruns(case_id, metric_names::kAccuracy));
  run_accuracies.push_back(s.accuracy);
  const GateConfidence confidence = DescribeGateConfidence(gate, run_accuracies);
  AddValue(rec, metric_names::kGateSampleFailProbability, gate.sample_fail_probability);
  if (confidence.question == FlakeQuestion::kRerunNoise)
    AddRate(rec, metric_names::kGateRerunNoiseFailProbability, confidence.fail_probability, confidence.runs);
  const std::string accuracy_text =
      fmt::format("gsm8k accuracy {:.4f} ({}/{}, 95% CI [{:.4f}, {:.4f}]; invalid {:.1f}%, truncated {:.1f}%, errors {})",
                  s.accuracy, s.counts.correct, s.counts.answered(), s.accuracy_ci.low, s.accuracy_ci.high,
                  100 * s.invalid_rate, 100 * s.truncated_rate, s.counts.error);
  const std::string gate_text =
      fmt::format("{} at gate {:.2f} ({})", Word(gate.verdict), gate.gate, confidence.text);
  const bool gate_fails =
      gate.verdict == GateVerdict::kFail || (gate.verdict == GateVerdict::kAtRisk && Need(p.Bool("fail_at_risk")));
  if (gate_fails) Fail("gsm8k " + gate_text + ": " + accuracy_text);
  else rec.AddNote(gate_text + ": " + accuracy_text);

  if (!run.baseline) return;   // outside `harness run` there is no store to compare with
  const auto baseline = Need(run.baseline(case_id));
  if (!baseline) return;
  const BaselineJudgement paired = CompareToBaseline(baseline->samples, report.samples, Need(p.Number("alpha")));
  rec.AddMetric(VerdictMetric(metric_names::kBaselineVerdict, paired.verdict));
  AddRate(rec, metric_names::kBaselinePaired, static_cast<double>(paired.paired), paired.paired);
  AddValue(rec, metric_names::kMcNemarB, static_cast<double>(paired.test.b));
  AddValue(rec, metric_names::kMcNemarC, static_cast<double>(paired.test.c));
  AddValue(rec, metric_names::kMcNemarP, paired.test.p_value);
  AddValue(rec, metric_names::kMcNemarMidP, paired.test.mid_p);
  const std::string paired_text = fmt::format(
      "{} vs baseline {} (run {}): losses b = {}, gains c = {} of {} paired questions, exact McNemar p = {:.3g}",
      Word(paired.verdict), ShortSha(baseline->sha), baseline->run_id, paired.test.b,
      paired.test.c, paired.paired, paired.test.p_value);
  if (paired.verdict == BaselineVerdict::kRegressed) Fail("gsm8k " + paired_text + ": " + accuracy_text);
  else rec.AddNote(paired_text);
}

HARNESS_INSTANTIATE(gsm8k, Gsm8kAccuracy, test_gsm8k_accuracy);

}  // namespace
}  // namespace harness
