// What a case id may be. A case id ("suite/test_N") names files (golden/ops/<id>.json) and
// reaches the store from suite tables, imported files and merged databases, so every entry
// checks it here: one rule, whatever the source.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace harness {

// Longer ids are refused: a golden file's name must stay within a file system's limits.
inline constexpr std::size_t kMaxCaseIdBytes = 512;

// Why id is not a usable case id, or nothing when it is: refused are the empty id, one
// longer than kMaxCaseIdBytes, a leading '/', a ".." segment between slashes, and NUL or
// any other control character (bytes below 0x20, and 0x7f).
std::optional<std::string> CaseIdProblem(std::string_view id);

// id with control characters spelled \xNN, for messages that quote a refused id.
std::string PrintableCaseId(std::string_view id);

}  // namespace harness
