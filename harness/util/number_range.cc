#include "harness/util/number_range.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/util/quote.h"

namespace harness {
namespace {

// A bound as written in the range: whole bounds in full ("18446744073709551615", not
// "1.8e+19"), others in their shortest form.
std::string Bound(long double v) {
  if (v == std::floor(v) && std::fabs(v) < 1.9e19L)
    return v < 0 ? fmt::format("{}", static_cast<long long>(v)) : fmt::format("{}", static_cast<unsigned long long>(v));
  return fmt::format("{}", static_cast<double>(v));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Skips digits from i; how many there were.
std::size_t Digits(std::string_view s, std::size_t& i) {
  const std::size_t from = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i - from;
}

// [-]digits[.digits][e[+-]digits] (or [-].digits...), nothing else; whole: [-]digits.
bool WellFormed(std::string_view s, bool whole) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  std::size_t mantissa = Digits(s, i);
  if (whole) return mantissa > 0 && i == s.size();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += Digits(s, i);
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (Digits(s, i) == 0) return false;
  }
  return i == s.size();
}

Error NotInRange(std::string_view text, const NumberRange& range, std::string_view what) {
  const std::string why = fmt::format("{} is not {}", Quote(text), range.Describe());
  return UsageError(what.empty() ? why : fmt::format("{}: {}", what, why));
}

}  // namespace

bool NumberRange::Contains(long double v) const {
  const bool above = lo_open ? v > lo : v >= lo;
  const bool below = hi_open ? v < hi : v <= hi;
  return above && below && (!integer || v == std::floor(v));
}

std::string NumberRange::Describe() const {
  return fmt::format("{} in {}{}, {}{}", integer ? "a whole number" : "a number", lo_open ? '(' : '[', Bound(lo),
                     Bound(hi), hi_open ? ')' : ']');
}

Result<long double> ParseNumberIn(std::string_view text, const NumberRange& range, std::string_view what) {
  if (!WellFormed(text, range.integer)) return NotInRange(text, range, what);
  const std::string s(text);
  errno = 0;
  char* end = nullptr;
  long double v = 0;
  if (range.integer && s[0] == '-') v = static_cast<long double>(std::strtoll(s.c_str(), &end, 10));
  else if (range.integer) v = static_cast<long double>(std::strtoull(s.c_str(), &end, 10));
  else v = std::strtold(s.c_str(), &end);
  // ERANGE: an integer that does not fit 64 bits, or a number past long double's range
  // (an underflow to 0 is refused too: 1e-5000 is not what anyone meant by 0).
  if (errno == ERANGE || end != s.c_str() + s.size() || !std::isfinite(v) || !range.Contains(v))
    return NotInRange(text, range, what);
  return v;
}

Status CheckNumberIn(long double value, const NumberRange& range, std::string_view what) {
  if (range.Contains(value)) return OkStatus();
  const std::string why = fmt::format("{} is not {}", static_cast<double>(value), range.Describe());
  return UsageError(what.empty() ? why : fmt::format("{}: {}", what, why));
}

}  // namespace harness
