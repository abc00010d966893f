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

// Whether the table's N values are the enum's first N (0 to N - 1), each once and in any order,
// and no word is there twice: each table is checked where it is defined (static_assert), so a
// value named twice (and with it, one left without its word) or one word for two values does
// not compile.
template <typename Enum, std::size_t N>
constexpr bool IsOneWordPerValue(const WordTable<Enum, N>& table) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].first) >= N) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (table[j].first == table[i].first || table[j].second == table[i].second) return false;
  }
  return true;
}

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
