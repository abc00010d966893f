#include "harness/util/suggest.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance, two rows back for the swap.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[b.size()];
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& known) {
  if (known.empty()) return "";
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const auto& k : known) {
    // The distance is at least the lengths' difference: a name too long or too short to be
    // suggested is not measured (a 60 MB key would cost minutes).
    const std::size_t gap = name.size() > k.size() ? name.size() - k.size() : k.size() - name.size();
    if (gap > std::max<std::size_t>(1, k.size() / 3)) continue;
    const std::size_t d = EditDistance(name, k);
    if (!best || d < best_distance) {
      best = &k;
      best_distance = d;
    }
  }
  if (best && best_distance <= std::max<std::size_t>(1, best->size() / 3)) return fmt::format(" (did you mean '{}'?)", *best);
  return fmt::format(" (known: {})", fmt::join(known, ", "));
}

}  // namespace harness
