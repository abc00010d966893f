// Answer extraction for GSM8K-style outputs: strict (the last "#### N") first, then
// flexible (the last number anywhere). Numbers are normalised (thousands commas, "$" and
// a trailing period removed, sign kept) to a canonical decimal string, so that "18.00",
// "$18" and "18." all equal "18" and "-3" never equals "3". Comparison is exact: no
// floating point.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace harness {

enum class ExtractionRule { kStrict, kFlexible };

struct ExtractedAnswer {
  std::string number;      // canonical decimal: "-3", "18", "0.5", "1450000"
  ExtractionRule rule = ExtractionRule::kStrict;
};

// Nothing when the text holds no number at all.
std::optional<ExtractedAnswer> ExtractAnswer(std::string_view text);

// The canonical decimal form of a number as written ("$1,450,000.", "-0.50", "18.00");
// nothing when it is not a number.
std::optional<std::string> CanonicalNumber(std::string_view written);

}  // namespace harness
