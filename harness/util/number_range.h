// The range of a number that comes from outside: a flag, a config or log field. One
// parser for every numeric flag (harness/cli/numeric_option.h) and one range check for the
// same values read from files, so nan, inf, hex, blanks, trailing junk and overflow are
// refused everywhere alike, with a message naming where the value came from, the value
// (cut, util/quote.h) and the range.
#pragma once

#include <string>
#include <string_view>

#include "harness/util/error.h"

namespace harness {

struct NumberRange {
  long double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;  // (lo, ...  and ..., hi)
  bool integer = false;                   // whole numbers only, written as decimal digits

  // false for nan (every comparison with it is).
  bool Contains(long double v) const;
  // "a number in (0.5, 1)", "a whole number in [0, 65535]".
  std::string Describe() const;
};

// Closed ranges of whole numbers and of numbers, and an open-ended one.
constexpr NumberRange WholeIn(long double lo, long double hi) { return {lo, hi, false, false, true}; }
constexpr NumberRange NumberIn(long double lo, long double hi, bool lo_open = false, bool hi_open = false) {
  return {lo, hi, lo_open, hi_open, false};
}

// text as a number in range: decimal only ([-]digits[.digits][e[+-]digits]; no '+', hex,
// nan, inf, blanks or anything after it), finite, and for a whole range an integer that
// fits. A usage error "WHAT: 'TEXT' is not RANGE" otherwise (without "WHAT: " when what is
// empty: CLI11 puts the flag's name in front itself).
Result<long double> ParseNumberIn(std::string_view text, const NumberRange& range, std::string_view what);

// The same check of a value that arrived as a number (a JSON field, a log line).
Status CheckNumberIn(long double value, const NumberRange& range, std::string_view what);

}  // namespace harness
