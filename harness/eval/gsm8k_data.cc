#include "harness/eval/gsm8k_data.h"

#include <fstream>

#include <fmt/format.h>

#include "harness/util/json_file.h"
#include "harness/util/paths.h"

namespace harness {

Result<Gsm8kItem> ParseGsm8kLine(const std::string& line, const std::string& file, int line_number) {
  auto parsed = ParseJsonLine(line, file, line_number);
  if (!parsed) return parsed.error();
  const Json& j = *parsed;
  const std::string origin = fmt::format("{}:{}", file, line_number);
  if (!j.is_object()) return UsageError(origin + ": expected a JSON object with \"question\" and \"answer\"");
  for (const char* key : {"question", "answer"}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      return UsageError(fmt::format("{}: field \"{}\": expected a string", origin, key));
  }
  Gsm8kItem item;
  item.question = j.at("question").get<std::string>();
  item.answer = j.at("answer").get<std::string>();
  const auto marker = item.answer.rfind("####");
  if (marker == std::string::npos)
    return UsageError(origin + ": field \"answer\": no final \"#### N\" line");
  std::string label = item.answer.substr(marker + 4);
  const auto first = label.find_first_not_of(" \t");
  const auto last = label.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return UsageError(origin + ": field \"answer\": \"####\" is not followed by a number");
  item.label = label.substr(first, last - first + 1);
  return item;
}

Result<std::vector<Gsm8kItem>> LoadGsm8k(const std::filesystem::path& path, std::size_t max_items) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UsageError(path.string() + ": cannot open file");
  std::vector<Gsm8kItem> items;
  std::string line;
  int line_no = 0;
  while (items.size() < max_items && std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines carry nothing
    auto item = ParseGsm8kLine(line, path.string(), line_no);
    if (!item) return item.error();
    items.push_back(std::move(item).value());
  }
  if (items.empty()) return UsageError(path.string() + ": no GSM8K items");
  return items;
}

std::string RemoveCalculatorAnnotations(std::string_view solution) {
  std::string out;
  out.reserve(solution.size());
  std::size_t i = 0;
  while (i < solution.size()) {
    const auto open = solution.find("<<", i);
    if (open == std::string_view::npos) break;
    const auto close = solution.find(">>", open + 2);
    if (close == std::string_view::npos) break;  // an unclosed "<<" is text, not an annotation
    out.append(solution.substr(i, open - i));
    i = close + 2;
  }
  out.append(solution.substr(i));
  return out;
}

std::filesystem::path Gsm8kTestFile() { return GoldenDir() / "gsm8k" / "test.jsonl"; }
std::filesystem::path Gsm8kTrainFile() { return GoldenDir() / "gsm8k" / "train.jsonl"; }

}  // namespace harness
