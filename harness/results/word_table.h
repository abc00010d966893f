// One table of words per enum, and the three reads of it every table needs: the word of a
// value (WordIn), the value of a word (ParseIn: none for a word outside the table, which its
// caller makes an error or a warning naming the word, never a default) and the words listed
// for such a message (WordsOf). results.cc and the bisect words (harness/store/bisect_words.h)
// hold their tables in this shape. Here, not in harness/util/, because results may include
// nothing of ours (docs/architecture.md) and every layer that has words may include results.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace harness {

template <typename Enum, std::size_t N>
using WordTable = std::array<std::pair<Enum, std::string_view>, N>;

template <typename Enum, std::size_t N>
constexpr std::string_view WordIn(const WordTable<Enum, N>& table, Enum v) {
  for (const auto& [value, word] : table)
    if (value == v) return word;
  return "?";  // not reached: every value has its word
}

template <typename Enum, std::size_t N>
constexpr std::optional<Enum> ParseIn(const WordTable<Enum, N>& table, std::string_view word) {
  for (const auto& [value, w] : table)
    if (w == word) return value;
  return std::nullopt;
}

// "a, b, c": the table's words in its order.
template <typename Enum, std::size_t N>
std::string WordsOf(const WordTable<Enum, N>& table) {
  std::string out;
  for (const auto& [value, w] : table) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

}  // namespace harness
