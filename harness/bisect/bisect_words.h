// The words of bisect's record, one table each (bisect_words.cc), as the results model has
// them for case statuses and verdicts (harness/results/results.h): Word writes the stored and
// printed word, Parse reads it back where it enters (a stored row); nothing for a word
// outside the table, and the row readers here make that an error naming the word, never a
// default. The store's rows keep the words as text (reports/ reads them so); bisect holds
// the enums between its edges (docs/bisect.md, "Stored words").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "harness/bisect/bisect_search.h"
#include "harness/store/bisect_record.h"
#include "harness/util/error.h"

namespace harness::bisect {

// A bisect session's status (bisect_sessions.status): running until it ends, then the
// search's verdict (culprit, no-culprit, ambiguous: VerdictWord) or error (it could not
// finish: a failed command, an interrupt, a lock it could not take).
enum class SessionStatus { kRunning, kCulprit, kNoCulprit, kAmbiguous, kError };
// running, culprit, no-culprit, ambiguous, error.
std::string_view Word(SessionStatus s);
std::optional<SessionStatus> ParseSessionStatus(std::string_view word);
// A search's answer as the session's status (a search still searching: running).
SessionStatus StatusOf(Verdict v);
// The verdict a finished session stored; none for one that did not finish (running, error).
std::optional<Verdict> FinishedVerdict(SessionStatus s);
// The stored row's status; an error naming the session and the word for one outside the table.
Result<SessionStatus> StoredStatus(const BisectSessionRow& row);

// An auto-bisect regression's confirmation (regressions.confirmation): every confirming
// rerun of the bad commit showed it, one did not (or could not test it), or the reruns were
// not asked for or not all run (the budget).
enum class Confirmation { kConfirmed, kNotConfirmed, kNotTried };
// confirmed, not-confirmed, not-tried.
std::string_view Word(Confirmation c);
std::optional<Confirmation> ParseConfirmation(std::string_view word);

// How a case regressed (regressions.h), in ascending order of worth: a target takes its
// worst case's kind, paired > gate > status.
enum class RegressionKind { kStatus, kGate, kPaired };
// status, gate, paired.
std::string_view Word(RegressionKind k);
std::optional<RegressionKind> ParseRegressionKind(std::string_view word);

// The stored regression row's kind and confirmation; an error naming the regression, the
// column and the word for one outside its table.
Result<RegressionKind> StoredKind(const RegressionRow& row);
Result<Confirmation> StoredConfirmation(const RegressionRow& row);

}  // namespace harness::bisect
