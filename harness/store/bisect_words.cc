#include "harness/store/bisect_words.h"

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
constexpr WordTable<Confirmation, 3> kConfirmationWords{{
    {Confirmation::kConfirmed, "confirmed"},
    {Confirmation::kNotConfirmed, "not-confirmed"},
    {Confirmation::kNotTried, "not-tried"},
}};
constexpr WordTable<RegressionKind, 3> kRegressionKindWords{{
    {RegressionKind::kStatus, "status"},
    {RegressionKind::kGate, "gate"},
    {RegressionKind::kPaired, "paired"},
}};
constexpr WordTable<RegressionVerdict, 5> kRegressionVerdictWords{{
    {RegressionVerdict::kCulprit, "culprit"},
    {RegressionVerdict::kNoCulprit, "no-culprit"},
    {RegressionVerdict::kAmbiguous, "ambiguous"},
    {RegressionVerdict::kNotConfirmed, "not-confirmed"},
    {RegressionVerdict::kUntestable, "untestable"},
}};

// "'x' is none of a, b, c", the stored word shown as text a terminal can take.
std::string NoneOf(const std::string& word, const std::string& words) {
  return fmt::format("'{}' is none of {}", TerminalText(Utf8Prefix(word, 64)), words);
}

}  // namespace

std::string_view Word(SessionStatus s) { return WordIn(kSessionStatusWords, s); }
std::optional<SessionStatus> ParseSessionStatus(std::string_view word) { return ParseIn(kSessionStatusWords, word); }

Result<SessionStatus> StoredStatus(const BisectSessionRow& row) {
  if (auto s = ParseSessionStatus(row.status)) return *s;
  return InfraError(fmt::format("damaged database: bisect session {}: its status {}", row.id,
                                NoneOf(row.status, WordsOf(kSessionStatusWords))));
}

std::string_view Word(Confirmation c) { return WordIn(kConfirmationWords, c); }
std::optional<Confirmation> ParseConfirmation(std::string_view word) { return ParseIn(kConfirmationWords, word); }
std::string_view Word(RegressionKind k) { return WordIn(kRegressionKindWords, k); }
std::optional<RegressionKind> ParseRegressionKind(std::string_view word) { return ParseIn(kRegressionKindWords, word); }

Result<RegressionKind> StoredKind(const RegressionRow& row) {
  if (auto k = ParseRegressionKind(row.kind)) return *k;
  return InfraError(fmt::format("damaged database: regression {}: its kind {}", row.id,
                                NoneOf(row.kind, WordsOf(kRegressionKindWords))));
}

Result<Confirmation> StoredConfirmation(const RegressionRow& row) {
  if (auto c = ParseConfirmation(row.confirmation)) return *c;
  return InfraError(fmt::format("damaged database: regression {}: its confirmation {}", row.id,
                                NoneOf(row.confirmation, WordsOf(kConfirmationWords))));
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
