#include "harness/results/shard.h"

#include <algorithm>

#include <fmt/format.h>

namespace harness {
namespace {

std::optional<int> ParseCount(std::string_view s) {
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int n = 0;
  for (char c : s) n = n * 10 + (c - '0');
  return n;
}

}  // namespace

std::string Shard::Word() const { return fmt::format("{}/{}", index, count); }

std::optional<Shard> ParseShardWord(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto index = ParseCount(text.substr(0, slash));
  const auto count = ParseCount(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *index >= *count) return std::nullopt;
  return Shard{*index, *count};
}

}  // namespace harness
