#include "tools/fuzz/fuzz_targets.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "harness/eval/answer_extract.h"
#include "harness/golden/golden_ops.h"
#include "harness/run/suite_table.h"
#include "harness/stack/stack_config.h"
#include "harness/util/json_file.h"
#include "runners/exec/exec_stack.h"
#include "runners/openai/openai_client.h"

namespace harness::fuzz {
namespace {

constexpr FuzzTarget kTargets[] = {
    {"answer_extract", AnswerExtract}, {"suite_table", SuiteTable},         {"stack_config", StackConfig},
    {"golden_ops", GoldenOps},         {"openai_response", OpenaiResponse}, {"exec_answer", ExecAnswer},
};

std::string Text(const uint8_t* data, std::size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// The loaders read files (their messages name file:line), so the input goes to one.
std::filesystem::path Scratch(const std::string& name, const std::string& text) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("harness-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

std::span<const FuzzTarget> FuzzTargets() { return kTargets; }

int AnswerExtract(const uint8_t* data, std::size_t size) {
  const std::string text = Text(data, size);
  if (auto a = ExtractAnswer(text)) {
    // An extracted number is canonical: canonicalizing it again changes nothing.
    auto again = CanonicalNumber(a->number);
    if (!again || *again != a->number) std::abort();
  }
  (void)CanonicalNumber(text);
  return 0;
}

int SuiteTable(const uint8_t* data, std::size_t size) {
  const std::string text = Text(data, size);
  // The table must be named after its suite to get past that check into the params.
  std::string name = "fuzz";
  auto j = Json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("suite") && j["suite"].is_string() && IsIdentifier(j["suite"].get<std::string>()))
    name = j["suite"].get<std::string>();
  (void)LoadSuiteTable(Scratch(name + ".json", text));
  return 0;
}

int StackConfig(const uint8_t* data, std::size_t size) {
  (void)LoadStackConfig(Scratch("stack.json", Text(data, size)));
  return 0;
}

int GoldenOps(const uint8_t* data, std::size_t size) {
  auto table = LoadGoldenOpTable(Scratch("golden.json", Text(data, size)));
  if (table) (void)DiffOpTables(table->ops, table->ops);
  return 0;
}

int OpenaiResponse(const uint8_t* data, std::size_t size) {
  const std::string body = Text(data, size);
  for (bool chat : {false, true}) {
    openai::CompletionResult r;
    (void)openai::ParseCompletionResponse(body, chat, r);
  }
  return 0;
}

int ExecAnswer(const uint8_t* data, std::size_t size) {
  (void)ParseExecAnswer(Text(data, size), "fuzz");
  return 0;
}

}  // namespace harness::fuzz
