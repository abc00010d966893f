// A shard of a nightly, "I/N" (shard I of N, 0-based), as `harness run --shard` takes it,
// the GoogleTest sharding variables name it and runs.shard stores it: parsed in this one
// place by the run, the store's nightly gaps and the report alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace harness {

struct Shard {
  int index = 0;  // 0-based, like GTEST_SHARD_INDEX
  int count = 1;
  std::string Word() const;  // "I/N", as runs.shard stores it
};

// "I/N" with I and N of 1 to 6 decimal digits each and 0 <= I < N; nothing else (no sign,
// no space, no N past 999999).
std::optional<Shard> ParseShardWord(std::string_view text);

}  // namespace harness
