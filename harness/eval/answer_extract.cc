#include "harness/eval/answer_extract.h"

#include <cctype>
#include <vector>

namespace harness {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A number token found in text: [begin, end) spans the sign, "$", digits, inner commas
// and a decimal part. A comma or period belongs to the number only when a digit follows,
// so "5, 6" is two numbers and "18." ends at 18.
struct Token {
  std::size_t begin, end;
};

// Reads the number that starts at text[i] (a '-', '$' or digit), or nothing.
std::optional<Token> NumberAt(std::string_view text, std::size_t i) {
  const std::size_t begin = i;
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '$') ++i;
  if (i < text.size() && text[i] == '-' && text[begin] != '-') ++i;  // "$-5"
  if (i >= text.size() || !IsDigit(text[i])) return std::nullopt;
  while (i < text.size()) {
    if (IsDigit(text[i])) {
      ++i;
    } else if (text[i] == ',' && i + 1 < text.size() && IsDigit(text[i + 1])) {
      ++i;
    } else {
      break;
    }
  }
  if (i + 1 < text.size() && text[i] == '.' && IsDigit(text[i + 1])) {
    ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
  }
  return Token{begin, i};
}

// A '-' is a sign only where a number can start: not inside "16-3" or "x-2".
bool CanStartSignedNumber(std::string_view text, std::size_t i) {
  if (i == 0) return true;
  const unsigned char prev = static_cast<unsigned char>(text[i - 1]);
  return !(std::isalnum(prev) || prev == ')' || prev == '_');
}

std::vector<Token> NumberTokens(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool may_start = IsDigit(c) || c == '$' || (c == '-' && CanStartSignedNumber(text, i));
    if (may_start) {
      if (auto t = NumberAt(text, i)) {
        tokens.push_back(*t);
        i = t->end;
        continue;
      }
    }
    ++i;
  }
  return tokens;
}

}  // namespace

std::optional<std::string> CanonicalNumber(std::string_view written) {
  bool negative = false;
  std::string digits;      // integer part
  std::string fraction;
  bool in_fraction = false;
  bool seen_digit = false;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const char c = written[i];
    if (c == '-' && !seen_digit && !negative) {
      negative = true;
    } else if (c == '$' && !seen_digit) {
      continue;
    } else if (c == ',' && seen_digit && !in_fraction) {
      continue;
    } else if (c == '.' && !in_fraction) {
      if (i + 1 == written.size()) break;  // a trailing period ends a sentence
      in_fraction = true;
    } else if (IsDigit(c)) {
      seen_digit = true;
      (in_fraction ? fraction : digits).push_back(c);
    } else {
      return std::nullopt;
    }
  }
  if (!seen_digit) return std::nullopt;
  const auto nonzero = digits.find_first_not_of('0');
  digits = nonzero == std::string::npos ? "0" : digits.substr(nonzero);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  std::string out = digits;
  if (!fraction.empty()) out += "." + fraction;
  if (negative && out != "0") out.insert(out.begin(), '-');
  return out;
}

std::optional<ExtractedAnswer> ExtractAnswer(std::string_view text) {
  // Strict: the number right after the last "####" (spaces and "$" allowed between).
  if (const auto marker = text.rfind("####"); marker != std::string_view::npos) {
    std::size_t i = marker + 4;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (auto t = NumberAt(text, i)) {
      if (auto n = CanonicalNumber(text.substr(t->begin, t->end - t->begin)))
        return ExtractedAnswer{*n, ExtractionRule::kStrict};
    }
  }
  // Flexible: the last number anywhere.
  const auto tokens = NumberTokens(text);
  for (auto it = tokens.rbegin(); it != tokens.rend(); ++it) {
    if (auto n = CanonicalNumber(text.substr(it->begin, it->end - it->begin)))
      return ExtractedAnswer{*n, ExtractionRule::kFlexible};
  }
  return std::nullopt;
}

}  // namespace harness
