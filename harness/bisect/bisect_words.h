// The words of bisect's record are the store's (harness/store/bisect_words.h: SessionStatus,
// Confirmation, RegressionKind, RegressionVerdict, each with one table, and the row readers
// that make a word outside it an error naming it). Here what ties them to the search: a
// search's verdict as the session's status, and back (docs/bisect.md, "Stored words").
#pragma once

#include <optional>
#include <string_view>

#include "harness/bisect/bisect_search.h"
#include "harness/store/bisect_words.h"

namespace harness::bisect {

// A step's verdict on its commit at the time (BisectStep, its decision JSON, the progress
// line): bad or good once P(bad) is past the confidence either way, unknown between, skip for
// a commit that could not be tested. Written, never read back (the decision JSON is shown as stored).
enum class StepVerdict { kGood, kBad, kUnknown, kSkip };
// good, bad, unknown, skip.
std::string_view Word(StepVerdict v);
// Skip for a commit that could not be tested; else bad when P(bad) is at least the
// confidence, good when it is at most 1 - confidence, unknown between.
StepVerdict StepVerdictOf(double p_bad, bool skipped, double confidence);

// What a line of a bisect log is (its "kind": `bisect --log` writes them, --replay reads them
// back, docs/bisect.md): the session's header, then one line per step.
enum class LogLineKind { kSession, kStep };
// session, step.
std::string_view Word(LogLineKind k);
// Nothing for a word outside the table: the log reader makes that an error naming it.
std::optional<LogLineKind> ParseLogLineKind(std::string_view word);

// A search's answer as the session's status (a search still searching: running).
SessionStatus StatusOf(Verdict v);
// The verdict a finished session stored; none for one that did not finish (running, error).
std::optional<Verdict> FinishedVerdict(SessionStatus s);

}  // namespace harness::bisect
