#include "harness/store/bisect_words.h"

#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "harness/results/word_table.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

// In the order an error lists them: the finished verdicts first.
constexpr WordTable<SessionStatus, 5> kSessionStatusWords{{
    {SessionStatus::kCulprit, "culprit"},
    {SessionStatus::kNoCulprit, "no-culprit"},
    {SessionStatus::kAmbiguous, "ambiguous"},
    {SessionStatus::kRunning, "running"},
    {SessionStatus::kError, "error"},
}};
static_assert(IsOneWordPerValue(kSessionStatusWords));
constexpr WordTable<Confirmation, 3> kConfirmationWords{{
    {Confirmation::kConfirmed, "confirmed"},
    {Confirmation::kNotConfirmed, "not-confirmed"},
    {Confirmation::kNotTried, "not-tried"},
}};
static_assert(IsOneWordPerValue(kConfirmationWords));
constexpr WordTable<RegressionKind, 3> kRegressionKindWords{{
    {RegressionKind::kStatus, "status"},
    {RegressionKind::kGate, "gate"},
    {RegressionKind::kPaired, "paired"},
}};
static_assert(IsOneWordPerValue(kRegressionKindWords));
constexpr WordTable<RegressionVerdict, 5> kRegressionVerdictWords{{
    {RegressionVerdict::kCulprit, "culprit"},
    {RegressionVerdict::kNoCulprit, "no-culprit"},
    {RegressionVerdict::kAmbiguous, "ambiguous"},
    {RegressionVerdict::kNotConfirmed, "not-confirmed"},
    {RegressionVerdict::kUntestable, "untestable"},
}};
static_assert(IsOneWordPerValue(kRegressionVerdictWords));

// The value of a stored row's word through its table; for a word outside it, an error
// naming the row ("bisect session 3"), the column and the word (shown as text a terminal can
// take), with the table's words.
template <typename Enum, std::size_t N>
Result<Enum> StoredWord(const WordTable<Enum, N>& table, const std::string& row, std::string_view column,
                        const std::string& word) {
  if (auto v = ParseIn(table, word)) return *v;
  return InfraError(fmt::format("damaged database: {}: its {} '{}' is none of {}", row, column,
                                TerminalText(Utf8Prefix(word, 64)), WordsOf(table)));
}

}  // namespace

std::string_view Word(SessionStatus s) { return WordIn(kSessionStatusWords, s); }
std::optional<SessionStatus> ParseSessionStatus(std::string_view word) { return ParseIn(kSessionStatusWords, word); }

Result<SessionStatus> StoredStatus(const BisectSessionRow& row) {
  return StoredWord(kSessionStatusWords, fmt::format("bisect session {}", row.id), "status", row.status);
}

std::string_view Word(Confirmation c) { return WordIn(kConfirmationWords, c); }
std::optional<Confirmation> ParseConfirmation(std::string_view word) { return ParseIn(kConfirmationWords, word); }
std::string_view Word(RegressionKind k) { return WordIn(kRegressionKindWords, k); }
std::optional<RegressionKind> ParseRegressionKind(std::string_view word) { return ParseIn(kRegressionKindWords, word); }

Result<RegressionKind> StoredKind(const RegressionRow& row) {
  return StoredWord(kRegressionKindWords, fmt::format("regression {}", row.id), "kind", row.kind);
}

Result<Confirmation> StoredConfirmation(const RegressionRow& row) {
  return StoredWord(kConfirmationWords, fmt::format("regression {}", row.id), "confirmation", row.confirmation);
}

std::string_view Word(RegressionVerdict v) { return WordIn(kRegressionVerdictWords, v); }
std::optional<RegressionVerdict> ParseRegressionVerdict(std::string_view word) {
  return ParseIn(kRegressionVerdictWords, word);
}

RegressionVerdict VerdictOfSession(SessionStatus s) {
  switch (s) {
    case SessionStatus::kCulprit: return RegressionVerdict::kCulprit;
    case SessionStatus::kNoCulprit: return RegressionVerdict::kNoCulprit;
    case SessionStatus::kAmbiguous:
    case SessionStatus::kRunning:
    case SessionStatus::kError: break;
  }
  return RegressionVerdict::kAmbiguous;
}

}  // namespace harness
