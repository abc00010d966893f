#include "harness/stats/verdict.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(JudgeGate, ThreeWayOnTheWilsonInterval) {
  // 1222/1319: Wilson low 0.9111 >= 0.91.
  auto pass = JudgeGate(1222, 1319, 0.91);
  EXPECT_EQ(pass.verdict, GateVerdict::kPass);
  // 1220/1319 (92.5%, the healthy stand-in's rate): low 0.9095 straddles the gate.
  auto near = JudgeGate(1220, 1319, 0.91);
  EXPECT_EQ(near.verdict, GateVerdict::kAtRisk);
  EXPECT_NEAR(near.sample_fail_probability, 0.0230, 5e-4);
  // 1180/1319: high 0.9101 still reaches the gate; 1170: high 0.9030 does not.
  EXPECT_EQ(JudgeGate(1180, 1319, 0.91).verdict, GateVerdict::kAtRisk);
  auto fail = JudgeGate(1170, 1319, 0.91);
  EXPECT_EQ(fail.verdict, GateVerdict::kFail);
  EXPECT_GT(fail.sample_fail_probability, 0.99);
  // Right at the gate a rerun fails about half the time.
  EXPECT_NEAR(JudgeGate(1200, 1319, 0.91).sample_fail_probability, 0.514, 1e-3);
}

TEST(JudgeGate, GateIsInclusiveAndEmptyRunsFail) {
  // 50/100 at gate 0.5: X >= 50 passes, so a rerun fails when X <= 49.
  EXPECT_NEAR(JudgeGate(50, 100, 0.5).sample_fail_probability, BinomialCdf(49, 100, 0.5), 1e-12);
  // 0.55 * 100 is 55.00000000000001 in doubles: 55/100 still meets the gate.
  EXPECT_NEAR(JudgeGate(55, 100, 0.55).sample_fail_probability, BinomialCdf(54, 100, 0.55), 1e-12);
  auto empty = JudgeGate(0, 0, 0.91);
  EXPECT_EQ(empty.verdict, GateVerdict::kFail);
  EXPECT_EQ(empty.sample_fail_probability, 1);
}

// The number after "with p = " in a gate reason.
double StatedP(const std::string& text) {
  const auto at = text.find("with p = ");
  EXPECT_NE(at, std::string::npos) << text;
  return at == std::string::npos ? -1 : std::stod(text.substr(at + 9));
}

// The regression of issue 34: four identical reruns at 0.9234 (Wilson interval of one run
// straddling 0.91) said "AT-RISK ... another rerun fails the gate with p = 0.000".
TEST(DescribeGateConfidence, IdenticalRerunsAboveTheGatePass) {
  const auto gate = JudgeGate(1218, 1319, 0.91);
  ASSERT_EQ(gate.verdict, GateVerdict::kAtRisk);  // the sampling question is unsettled
  const auto c = DescribeGateConfidence(gate, {0.9234, 0.9234, 0.9234, 0.9234});
  EXPECT_EQ(c.question, FlakeQuestion::kRerunNoise);
  EXPECT_EQ(c.verdict, GateVerdict::kPass) << c.text;
  EXPECT_EQ(StatedP(c.text), 0.0) << c.text;
  EXPECT_EQ(DescribeGateConfidence(gate, {0.9234}).verdict, GateVerdict::kAtRisk);
}

// The runs behind a verdict count this run when no rerun is stored (the sampling question),
// and every stored run when there are reruns.
TEST(DescribeGateConfidence, TheRunsBehindItAreThisRunAloneOrEveryStoredRun) {
  const auto gate = JudgeGate(1218, 1319, 0.91);
  EXPECT_EQ(DescribeGateConfidence(gate, {}).runs, 1);
  EXPECT_EQ(DescribeGateConfidence(gate, {}).question, FlakeQuestion::kTrueRate);
  EXPECT_EQ(DescribeGateConfidence(gate, {0.9234}).runs, 1);
  const auto three = DescribeGateConfidence(gate, {0.92, 0.93, 0.925});
  EXPECT_EQ(three.runs, 3);
  EXPECT_NE(three.text.find("over 3 runs of this commit"), std::string::npos) << three.text;
}

// Over a grid of means, spreads, question counts and rerun counts, the verdict word and
// the reason it states agree: with reruns the word is AT-RISK exactly when the stated p
// of the other side is at least kAtRiskProbability, else the side of the gate the mean is
// on; without, the stated interval's relation to the gate.
TEST(DescribeGateConfidence, WordAndReasonAgreeOverTheGrid) {
  const double gate = 0.91;
  int checked = 0, at_risk = 0, passed = 0, failed = 0;
  for (int64_t n : {50, 1319, 5000})
    for (double mean = 0.85; mean <= 0.97 + 1e-9; mean += 0.005) {
      const auto correct = static_cast<int64_t>(std::llround(mean * static_cast<double>(n)));
      const auto judged = JudgeGate(correct, n, gate);
      for (double sd : {0.0, 0.001, 0.005, 0.02})
        for (int runs : {1, 2, 3, 5, 10}) {
          std::vector<double> accuracies;
          for (int k = 0; k < runs; ++k) accuracies.push_back(mean + (k % 2 == 0 ? sd : -sd));
          const auto c = DescribeGateConfidence(judged, accuracies);
          ++checked;
          const double p = StatedP(c.text);
          if (runs >= 2) {
            ASSERT_EQ(c.question, FlakeQuestion::kRerunNoise);
            double m = 0;
            for (double a : accuracies) m += a;
            m /= static_cast<double>(runs);
            const GateVerdict side = m >= gate ? GateVerdict::kPass : GateVerdict::kFail;
            ASSERT_EQ(c.verdict, p >= kAtRiskProbability ? GateVerdict::kAtRisk : side) << c.text;
            ASSERT_NE(c.text.find(m >= gate ? "another rerun fails" : "another rerun passes"), std::string::npos) << c.text;
          } else {
            ASSERT_EQ(c.question, FlakeQuestion::kTrueRate);
            ASSERT_EQ(c.verdict, judged.verdict);
            const char* words = c.verdict == GateVerdict::kPass     ? "lies at or above the gate"
                                : c.verdict == GateVerdict::kAtRisk ? "straddles the gate"
                                                                    : "lies below the gate";
            ASSERT_NE(c.text.find(words), std::string::npos) << c.text;
            const bool straddles = judged.ci.low < gate && judged.ci.high >= gate;
            ASSERT_EQ(c.verdict == GateVerdict::kAtRisk, straddles) << c.text;
          }
          at_risk += c.verdict == GateVerdict::kAtRisk;
          passed += c.verdict == GateVerdict::kPass;
          failed += c.verdict == GateVerdict::kFail;
        }
    }
  // The grid holds every verdict many times over, under both questions.
  EXPECT_GT(checked, 1000);
  EXPECT_GT(at_risk, 100) << checked;
  EXPECT_GT(passed, 100) << checked;
  EXPECT_GT(failed, 100) << checked;
}

TEST(VerdictNames, AreTheDesignWords) {
  EXPECT_EQ(Word(GateVerdict::kAtRisk), "AT-RISK");
  EXPECT_EQ(Word(GateVerdict::kPass), "PASS");
  EXPECT_EQ(Word(BaselineVerdict::kRegressed), "REGRESSED");
  EXPECT_EQ(Word(BaselineVerdict::kImproved), "IMPROVED");
}

TEST(JudgeMcNemar, DirectionAndSignificance) {
  auto regressed = JudgeMcNemar(24, 10, 1319);
  EXPECT_EQ(regressed.verdict, BaselineVerdict::kRegressed);
  EXPECT_NEAR(regressed.test.p_value, 0.024, 5e-4);
  EXPECT_NEAR(regressed.accuracy_delta, -14.0 / 1319.0, 1e-12);
  EXPECT_EQ(JudgeMcNemar(10, 24, 1319).verdict, BaselineVerdict::kImproved);
  EXPECT_EQ(JudgeMcNemar(35, 20, 1319).verdict, BaselineVerdict::kSame);   // p = 0.058
  EXPECT_EQ(JudgeMcNemar(5, 0, 1319).verdict, BaselineVerdict::kSame);     // p = 0.0625
  EXPECT_EQ(JudgeMcNemar(6, 0, 1319).verdict, BaselineVerdict::kRegressed);
}

std::vector<Sample> Outcomes(const std::vector<const char*>& outcomes) {
  std::vector<Sample> s;
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    s.push_back({std::to_string(i), ParseSampleOutcome(outcomes[i]).value(), "", "", 0, 0});
  return s;
}

TEST(CompareToBaseline, PairsByKeyAndSkipsErrorsAndMissing) {
  // keys: 0..7 in the baseline; the current run lacks key 7 and has an extra key 8.
  auto baseline = Outcomes({"correct", "correct", "wrong", "invalid", "correct", "error", "correct", "correct"});
  auto current = Outcomes({"wrong", "correct", "correct", "correct", "truncated", "wrong", "error", "correct", "correct"});
  current.erase(current.begin() + 7);   // key 7 missing now
  auto j = CompareToBaseline(baseline, current);
  // paired: 0,1,2,3,4 (5 has an error before, 6 an error now, 7 missing now, 8 missing before)
  EXPECT_EQ(j.paired, 5);
  EXPECT_EQ(j.test.b, 2);   // keys 0 and 4 lost
  EXPECT_EQ(j.test.c, 2);   // keys 2 and 3 gained
  EXPECT_EQ(j.verdict, BaselineVerdict::kSame);
}

// Outcomes "pass" and "fail" (selftest samples, ingested test results) pair like "correct"
// and "wrong": a pass that became a fail is a loss.
TEST(CompareToBaseline, PassAndFailOutcomesPairLikeCorrectAndWrong) {
  auto j = CompareToBaseline(Outcomes({"pass", "pass", "pass", "pass", "pass", "pass", "fail"}),
                             Outcomes({"fail", "fail", "fail", "fail", "fail", "fail", "pass"}));
  EXPECT_EQ(j.paired, 7);
  EXPECT_EQ(j.test.b, 6);
  EXPECT_EQ(j.test.c, 1);
  auto same = CompareToBaseline(Outcomes({"pass", "fail"}), Outcomes({"pass", "fail"}));
  EXPECT_EQ(same.test.b + same.test.c, 0);
}

TEST(CompareToBaseline, ManyLossesRegress) {
  std::vector<Sample> baseline, current;
  for (int i = 0; i < 100; ++i) {
    baseline.push_back({std::to_string(i), SampleOutcome::kCorrect, "", "", 0, 0});
    current.push_back({std::to_string(i), i < 8 ? SampleOutcome::kWrong : SampleOutcome::kCorrect, "", "", 0, 0});
  }
  auto j = CompareToBaseline(baseline, current);
  EXPECT_EQ(j.test.b, 8);
  EXPECT_EQ(j.test.c, 0);
  EXPECT_EQ(j.verdict, BaselineVerdict::kRegressed);
  EXPECT_EQ(CompareToBaseline(current, baseline).verdict, BaselineVerdict::kImproved);
  EXPECT_EQ(CompareToBaseline(baseline, baseline).verdict, BaselineVerdict::kSame);
}


// The gate line names its question: the sampling question without reruns, rerun noise with
// two or more runs of the commit; each number is the chance of scoring below the gate.
TEST(DescribeGateConfidence, NamesTheQuestionItsNumberAnswers) {
  const GateJudgement gate = JudgeGate(1218, 1319, 0.91);
  const GateConfidence alone = DescribeGateConfidence(gate, {gate.accuracy});
  EXPECT_EQ(alone.question, FlakeQuestion::kTrueRate);
  EXPECT_DOUBLE_EQ(alone.fail_probability, gate.sample_fail_probability);
  EXPECT_EQ(alone.runs, 1);
  EXPECT_NE(alone.text.find("sampling question"), std::string::npos) << alone.text;
  EXPECT_NE(alone.text.find("1319 questions"), std::string::npos) << alone.text;
  EXPECT_NE(alone.text.find("not measured"), std::string::npos) << alone.text;

  // Three identical reruns (a deterministic server): another rerun never fails.
  const GateConfidence same = DescribeGateConfidence(gate, {gate.accuracy, gate.accuracy, gate.accuracy});
  EXPECT_EQ(same.question, FlakeQuestion::kRerunNoise);
  EXPECT_EQ(same.runs, 3);
  EXPECT_EQ(same.fail_probability, 0);
  EXPECT_NE(same.text.find("rerun noise over 3 runs"), std::string::npos) << same.text;

  // Reruns around the gate: the predictive chance of the next one below it, from their
  // spread, on the right side whichever side the mean is.
  const std::vector<double> above = {0.915, 0.912, 0.918};
  const GateConfidence up = DescribeGateConfidence(gate, above);
  EXPECT_NEAR(up.fail_probability, RerunNoiseEstimate(above, 0.91).probability, 1e-12);
  EXPECT_LT(up.fail_probability, 0.5);
  const std::vector<double> below = {0.905, 0.908, 0.902};
  const GateConfidence down = DescribeGateConfidence(gate, below);
  EXPECT_NEAR(down.fail_probability, 1 - RerunNoiseEstimate(below, 0.91).probability, 1e-12);
  EXPECT_GT(down.fail_probability, 0.5);
}

}  // namespace
}  // namespace harness
