#include "harness/bisect/bisect_words.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "harness/results/word_table.h"
#include "harness/util/utf8.h"

namespace harness::bisect {
namespace {

// A finished session's status is its verdict's word (VerdictWord), not a second copy of it.
constexpr WordTable<SessionStatus, 2> kUnfinishedWords{{
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

// "'x' is none of a, b, c", the stored word shown as text a terminal can take.
std::string NoneOf(const std::string& word, const std::string& words) {
  return fmt::format("'{}' is none of {}", TerminalText(Utf8Prefix(word, 64)), words);
}

constexpr std::array<Verdict, 3> kFinished{Verdict::kCulprit, Verdict::kNoCulprit, Verdict::kAmbiguous};

}  // namespace

SessionStatus StatusOf(Verdict v) {
  switch (v) {
    case Verdict::kSearching: return SessionStatus::kRunning;
    case Verdict::kCulprit: return SessionStatus::kCulprit;
    case Verdict::kNoCulprit: return SessionStatus::kNoCulprit;
    case Verdict::kAmbiguous: break;
  }
  return SessionStatus::kAmbiguous;
}

std::optional<Verdict> FinishedVerdict(SessionStatus s) {
  for (Verdict v : kFinished)
    if (StatusOf(v) == s) return v;
  return std::nullopt;
}

std::string_view Word(SessionStatus s) {
  if (auto v = FinishedVerdict(s)) return VerdictWord(*v);
  return WordIn(kUnfinishedWords, s);
}

std::optional<SessionStatus> ParseSessionStatus(std::string_view word) {
  for (Verdict v : kFinished)
    if (word == VerdictWord(v)) return StatusOf(v);
  return ParseIn(kUnfinishedWords, word);
}

Result<SessionStatus> StoredStatus(const BisectSessionRow& row) {
  if (auto s = ParseSessionStatus(row.status)) return *s;
  std::string words;
  for (Verdict v : kFinished) words += std::string(VerdictWord(v)) + ", ";
  return InfraError(fmt::format("damaged database: bisect session {}: its status {}", row.id,
                                NoneOf(row.status, words + WordsOf(kUnfinishedWords))));
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

}  // namespace harness::bisect
