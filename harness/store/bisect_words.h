// The words of the bisect record (bisect_record.h), one table each: a session's status, a
// regression's confirmation and kind, and what bisect --auto said of a regression (derived
// from those rows, never stored: its JSON, the nightly's JUnit and the report show it).
// Word writes the stored and printed word, Parse reads it back where it enters (a stored
// row); nothing for a word outside the table, and the row readers here make that an error
// naming the word, never a default. Here beside the rows, so that bisect (which writes and
// reads them) and reports/ (which reads them) hold one vocabulary: reports/ may not include
// bisect (docs/architecture.md). The rows keep the words as text, as stored; each reader
// parses them once where it reads a row (docs/bisect.md, "Stored words").
#pragma once

#include <optional>
#include <string_view>

#include "harness/store/bisect_record.h"
#include "harness/util/error.h"

namespace harness {

// A bisect session's status (bisect_sessions.status): running until it ends, then the
// search's verdict (culprit, no-culprit, ambiguous) or error (it could not finish: a failed
// command, an interrupt, a lock it could not take).
enum class SessionStatus { kRunning, kCulprit, kNoCulprit, kAmbiguous, kError };
// running, culprit, no-culprit, ambiguous, error.
std::string_view Word(SessionStatus s);
std::optional<SessionStatus> ParseSessionStatus(std::string_view word);
// The stored row's status; an error naming the session and the word for one outside the table.
Result<SessionStatus> StoredStatus(const BisectSessionRow& row);

// An auto-bisect regression's confirmation (regressions.confirmation): every confirming
// rerun of the bad commit showed it, one did not (or could not test it), or the reruns were
// not asked for or not all run (the budget).
enum class Confirmation { kConfirmed, kNotConfirmed, kNotTried };
// confirmed, not-confirmed, not-tried.
std::string_view Word(Confirmation c);
std::optional<Confirmation> ParseConfirmation(std::string_view word);

// How a case regressed (harness/bisect/regressions.h), in ascending order of worth: a
// target takes its worst case's kind, paired > gate > status.
enum class RegressionKind { kStatus, kGate, kPaired };
// status, gate, paired.
std::string_view Word(RegressionKind k);
std::optional<RegressionKind> ParseRegressionKind(std::string_view word);

// The stored regression row's kind and confirmation; an error naming the regression, the
// column and the word for one outside its table.
Result<RegressionKind> StoredKind(const RegressionRow& row);
Result<Confirmation> StoredConfirmation(const RegressionRow& row);

// What bisect --auto said of a regression: its session's verdict (culprit, no-culprit,
// ambiguous: a session that could not finish is ambiguous too), or, not bisected, that a
// rerun of the bad commit did not show it (not-confirmed) or could not test it
// (untestable), else ambiguous (the budget ran out before it was confirmed).
enum class RegressionVerdict { kCulprit, kNoCulprit, kAmbiguous, kNotConfirmed, kUntestable };
// culprit, no-culprit, ambiguous, not-confirmed, untestable.
std::string_view Word(RegressionVerdict v);
std::optional<RegressionVerdict> ParseRegressionVerdict(std::string_view word);
// A bisected regression's verdict from its session's status.
RegressionVerdict VerdictOfSession(SessionStatus s);

}  // namespace harness
