#include "harness/eval/question_list.h"

#include <charconv>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "harness/eval/gsm8k_data.h"
#include "harness/util/input_file.h"

namespace harness {
namespace {

// A key list of every GSM8K question is under 7 KB; a file this large is no key list.
constexpr std::uintmax_t kMaxQuestionListBytes = 1 << 20;

// The line without its comment and surrounding blanks.
std::string EntryOf(std::string line) {
  if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// The question index a key names: the decimal index as the store writes it (std::to_string),
// below total; none otherwise.
std::optional<int64_t> IndexOf(const std::string& key, int64_t total) {
  int64_t q = -1;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), q);
  if (ec != std::errc() || end != key.data() + key.size() || q < 0 || q >= total || std::to_string(q) != key)
    return std::nullopt;
  return q;
}

}  // namespace

Result<QuestionList> LoadQuestionList(const std::filesystem::path& file, int64_t total) {
  auto text = ReadInputFile(file, kMaxQuestionListBytes, "question lists");
  if (!text) return UsageError(fmt::format("--questions {}", text.error().message));
  std::istringstream in(*text);
  std::map<int64_t, int> first_line;  // index -> the line that listed it
  int every_line = 0;                 // the line of '*', if any
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string entry = EntryOf(line);
    if (entry.empty()) continue;
    const std::string where = fmt::format("{}:{}", file.string(), lineno);
    if (entry == "*") {
      if (every_line || !first_line.empty())
        return UsageError(where + ": '*' (every question) must be the file's only entry");
      every_line = lineno;
      continue;
    }
    if (every_line)
      return UsageError(fmt::format("{}: '{}' after '*' (every question) on line {}: '*' must be the only entry",
                                    where, entry, every_line));
    const auto q = IndexOf(entry, total);
    if (!q)
      return UsageError(fmt::format("{}: '{}' is not a question key (keys are the questions' indices 0 to {}, "
                                    "one per line, as the store's samples name them)",
                                    where, entry, total - 1));
    if (auto [it, fresh] = first_line.emplace(*q, lineno); !fresh)
      return UsageError(fmt::format("{}: question {} again (first on line {})", where, entry, it->second));
  }
  QuestionList list;
  list.total = total;
  if (every_line) {
    for (int64_t q = 0; q < total; ++q) list.indices.push_back(q);
    return list;
  }
  if (first_line.empty())
    return UsageError(fmt::format("--questions {}: lists no question (one key per line, or '*' for every question)",
                                  file.string()));
  for (const auto& entry : first_line) list.indices.push_back(entry.first);
  return list;
}

Result<QuestionList> LoadGsm8kQuestionList(const std::filesystem::path& file) {
  auto data = LoadGsm8k(Gsm8kTestFile());
  if (!data) return data.error();
  return LoadQuestionList(file, static_cast<int64_t>(data->size()));
}

}  // namespace harness
