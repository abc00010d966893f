// "did you mean ...?" for a misspelt name among known ones.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace harness {

// Levenshtein distance (insertions, deletions, substitutions, adjacent swaps).
std::size_t EditDistance(std::string_view a, std::string_view b);
// " (did you mean 'x'?)" for the nearest known name within a third of its length, else
// " (known: a, b, c)"; "" when known is empty.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& known);

}  // namespace harness
