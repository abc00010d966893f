#include "harness/bisect/bisect_words.h"

#include <gtest/gtest.h>

#include <cmath>

namespace harness::bisect {
namespace bisect_words_test {

// The stored words, as bisect_sessions, regressions and the JSON outputs have always had them.
TEST(BisectWords, EachWordAsStored) {
  EXPECT_EQ(Word(SessionStatus::kRunning), "running");
  EXPECT_EQ(Word(SessionStatus::kCulprit), "culprit");
  EXPECT_EQ(Word(SessionStatus::kNoCulprit), "no-culprit");
  EXPECT_EQ(Word(SessionStatus::kAmbiguous), "ambiguous");
  EXPECT_EQ(Word(SessionStatus::kError), "error");
  EXPECT_EQ(Word(Confirmation::kConfirmed), "confirmed");
  EXPECT_EQ(Word(Confirmation::kNotConfirmed), "not-confirmed");
  EXPECT_EQ(Word(Confirmation::kNotTried), "not-tried");
  EXPECT_EQ(Word(RegressionKind::kStatus), "status");
  EXPECT_EQ(Word(RegressionKind::kGate), "gate");
  EXPECT_EQ(Word(RegressionKind::kPaired), "paired");
  // A step's verdict and a log line's kind, as the decision JSON and the bisect log write them.
  EXPECT_EQ(Word(StepVerdict::kGood), "good");
  EXPECT_EQ(Word(StepVerdict::kBad), "bad");
  EXPECT_EQ(Word(StepVerdict::kUnknown), "unknown");
  EXPECT_EQ(Word(StepVerdict::kSkip), "skip");
  EXPECT_EQ(Word(LogLineKind::kSession), "session");
  EXPECT_EQ(Word(LogLineKind::kStep), "step");
}

// A step's verdict at each side of both bounds, at two confidences; a skipped commit is
// skip whatever its P(bad).
TEST(BisectWords, AStepIsBadOrGoodFromTheConfidenceOnAndUnknownBetween) {
  for (double c : {0.95, 0.75}) {
    SCOPED_TRACE(c);
    EXPECT_EQ(StepVerdictOf(c, false, c), StepVerdict::kBad);
    EXPECT_EQ(StepVerdictOf(1, false, c), StepVerdict::kBad);
    EXPECT_EQ(StepVerdictOf(std::nextafter(c, 0.0), false, c), StepVerdict::kUnknown);
    EXPECT_EQ(StepVerdictOf(0.5, false, c), StepVerdict::kUnknown);
    EXPECT_EQ(StepVerdictOf(std::nextafter(1 - c, 1.0), false, c), StepVerdict::kUnknown);
    EXPECT_EQ(StepVerdictOf(1 - c, false, c), StepVerdict::kGood);
    EXPECT_EQ(StepVerdictOf(0, false, c), StepVerdict::kGood);
    for (double p : {0.0, 0.5, c, 1.0}) EXPECT_EQ(StepVerdictOf(p, true, c), StepVerdict::kSkip) << p;
  }
}

TEST(BisectWords, EachWordReadsBackAsItself) {
  for (auto s : {SessionStatus::kRunning, SessionStatus::kCulprit, SessionStatus::kNoCulprit, SessionStatus::kAmbiguous,
                 SessionStatus::kError})
    EXPECT_EQ(ParseSessionStatus(Word(s)), s) << Word(s);
  for (auto c : {Confirmation::kConfirmed, Confirmation::kNotConfirmed, Confirmation::kNotTried})
    EXPECT_EQ(ParseConfirmation(Word(c)), c) << Word(c);
  for (auto k : {RegressionKind::kStatus, RegressionKind::kGate, RegressionKind::kPaired})
    EXPECT_EQ(ParseRegressionKind(Word(k)), k) << Word(k);
  // A search's verdict is the session's status word; one still searching is running.
  for (auto v : {Verdict::kCulprit, Verdict::kNoCulprit, Verdict::kAmbiguous}) {
    EXPECT_EQ(Word(StatusOf(v)), VerdictWord(v));
    EXPECT_EQ(FinishedVerdict(StatusOf(v)), v);
  }
  EXPECT_EQ(StatusOf(Verdict::kSearching), SessionStatus::kRunning);
  EXPECT_EQ(FinishedVerdict(SessionStatus::kRunning), std::nullopt);
  EXPECT_EQ(FinishedVerdict(SessionStatus::kError), std::nullopt);
}

// What bisect --auto said of a regression, as its JSON, the JUnit line and the report print
// it; a bisected one's word is its session's status word, a rerun that did not show it the
// confirmation's, and a session that could not finish is ambiguous.
TEST(BisectWords, ARegressionsVerdictInTheWordsEveryOutputPrints) {
  EXPECT_EQ(Word(RegressionVerdict::kCulprit), "culprit");
  EXPECT_EQ(Word(RegressionVerdict::kNoCulprit), "no-culprit");
  EXPECT_EQ(Word(RegressionVerdict::kAmbiguous), "ambiguous");
  EXPECT_EQ(Word(RegressionVerdict::kNotConfirmed), "not-confirmed");
  EXPECT_EQ(Word(RegressionVerdict::kUntestable), "untestable");
  for (auto v : {RegressionVerdict::kCulprit, RegressionVerdict::kNoCulprit, RegressionVerdict::kAmbiguous,
                 RegressionVerdict::kNotConfirmed, RegressionVerdict::kUntestable})
    EXPECT_EQ(ParseRegressionVerdict(Word(v)), v) << Word(v);
  EXPECT_FALSE(ParseRegressionVerdict("Culprit"));
  EXPECT_FALSE(ParseRegressionVerdict("running"));
  for (auto s : {SessionStatus::kCulprit, SessionStatus::kNoCulprit, SessionStatus::kAmbiguous})
    EXPECT_EQ(Word(VerdictOfSession(s)), Word(s));
  EXPECT_EQ(VerdictOfSession(SessionStatus::kRunning), RegressionVerdict::kAmbiguous);
  EXPECT_EQ(VerdictOfSession(SessionStatus::kError), RegressionVerdict::kAmbiguous);
  EXPECT_EQ(Word(RegressionVerdict::kNotConfirmed), Word(Confirmation::kNotConfirmed));
}

// A bisect log's line kinds, as `bisect --log` has always written them and --replay reads
// them; any other word is none (the reader's error names it: bisect_trust_e2e_test.cc).
TEST(BisectWords, ALogLinesKind) {
  EXPECT_EQ(Word(LogLineKind::kSession), "session");
  EXPECT_EQ(Word(LogLineKind::kStep), "step");
  for (auto k : {LogLineKind::kSession, LogLineKind::kStep}) EXPECT_EQ(ParseLogLineKind(Word(k)), k) << Word(k);
  for (const char* w : {"", "sesion", "Step", "step ", "steps"}) EXPECT_FALSE(ParseLogLineKind(w)) << w;
}

// A word outside a table is no word: not a near one, not its label, not the search's own
// "searching" (never stored), and a stored one is an error naming it.
TEST(BisectWords, AnUnknownWordIsNoneAndAStoredOneAnError) {
  for (const char* w : {"", "Culprit", "culprit ", "searching", "pass", "confirmed\n"}) {
    EXPECT_FALSE(ParseSessionStatus(w)) << w;
    EXPECT_FALSE(ParseConfirmation(w)) << w;
    EXPECT_FALSE(ParseRegressionKind(w)) << w;
  }
  BisectSessionRow session;
  session.id = 7;
  session.status = "finished\x1b[2J";
  auto status = StoredStatus(session);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ExitCode::kInfra);
  EXPECT_NE(status.error().message.find("bisect session 7"), std::string::npos) << status.error().message;
  EXPECT_NE(status.error().message.find("'finished"), std::string::npos) << status.error().message;
  EXPECT_EQ(status.error().message.find('\x1b'), std::string::npos) << "terminal text: " << status.error().message;
  RegressionRow regression;
  regression.id = 3;
  regression.kind = "paired";
  regression.confirmation = "maybe";
  ASSERT_TRUE(StoredKind(regression));
  auto confirmation = StoredConfirmation(regression);
  ASSERT_FALSE(confirmation);
  EXPECT_NE(confirmation.error().message.find("regression 3: its confirmation 'maybe' is none of confirmed, "
                                              "not-confirmed, not-tried"),
            std::string::npos)
      << confirmation.error().message;
  regression.kind = "gates";
  auto kind = StoredKind(regression);
  ASSERT_FALSE(kind);
  EXPECT_NE(kind.error().message.find("its kind 'gates' is none of status, gate, paired"), std::string::npos)
      << kind.error().message;
}

}  // namespace bisect_words_test
}  // namespace harness::bisect
