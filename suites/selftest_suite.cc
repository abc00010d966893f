// The selftest suite: cases whose parameters say what they report and how they end, so
// tests of `harness run` (and a newcomer) can see the machinery work without a stack.
//   outcome: pass | fail | skip | error   metric: value of metric "value"
//   samples: how many samples to stream    ops: how many op rows to store
//   sleep_ms: wait before finishing (for kill tests)
//   report_baseline: store metric baseline_samples (-1 when there is no baseline)
//   note: a line for the summary, kept even when the case passes
//   state_file: a JSON file whose "outcome" and "samples" override the row's. The row
//     (part of the run's identity) stays the same while the file plays the stack under
//     test changing from commit to commit, as in baseline tests.
#include <chrono>
#include <thread>

#include "harness/results/metric_names.h"
#include "harness/run/case_record.h"
#include "harness/run/run_context.h"
#include "harness/run/suite.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

class SelftestOutcome : public SuiteTest {
 protected:
  CaseNeeds Needs() const override { return {.baseline = Need(Param().Bool("report_baseline", false))}; }
};

TEST_P(SelftestOutcome, test_outcome) {
  auto p = Param();
  std::string outcome = Need(p.String("outcome"));
  int64_t samples = Need(p.Int("samples", 0));
  if (p.Has("state_file")) {
    const Json state = Need(ReadJsonFile(Need(p.String("state_file"))));
    const JsonObject s(state, Need(p.String("state_file")));
    outcome = Need(s.String("outcome", outcome));
    samples = Need(s.Int("samples", samples));
  }
  const int64_t ops = Need(p.Int("ops", 0));
  const int64_t sleep_ms = Need(p.Int("sleep_ms", 0));
  CaseRecord& rec = Record();
  for (int64_t i = 0; i < samples; ++i) {
    bool done_before = false;
    for (const auto& s : Inputs().prior_samples) done_before |= s.key == std::to_string(i);
    if (done_before) continue;
    rec.AddSample({std::to_string(i), i % 2 ? SampleOutcome::kWrong : SampleOutcome::kCorrect, std::to_string(i),
                   std::to_string(i), 0.001 * i, i});
    if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  }
  std::vector<OpRow> rows;
  for (int64_t i = 0; i < ops; ++i)
    rows.push_back({"selftest.op" + std::to_string(i) + ".default", "[1, 64, 5120], [5120]", i + 1, 1e-6 * (i + 1)});
  rec.SetOps(rows);
  rec.AddMetric({metric_names::kSelftestValue, Need(p.Number("metric", 0)), samples, std::nullopt, std::nullopt});
  if (Need(p.Bool("report_baseline", false))) {
    const auto& baseline = Inputs().baseline;
    const double seen = baseline ? static_cast<double>(baseline->samples.size()) : -1.0;
    rec.AddMetric({metric_names::kSelftestBaselineSamples, seen, 0, {}, {}});
  }
  if (p.Has("note")) rec.AddNote(Need(p.String("note")));
  if (outcome == "skip") GTEST_SKIP() << "the row asks to be skipped";
  if (outcome == "error") {
    rec.SetInfraError("the row asks for an infrastructure error");
    FAIL() << "infrastructure error";
  }
  EXPECT_EQ(outcome, "pass") << "the row asks to fail";
}

HARNESS_INSTANTIATE(selftest, SelftestOutcome, test_outcome);

}  // namespace
}  // namespace harness
