// The stack table: name -> factory. Adding a stack is one row here.
#include <fmt/format.h>

#include "harness/stack/stack.h"
#include "harness/util/suggest.h"
#include "runners/exec/exec_stack.h"
#include "runners/openai/openai_config.h"
#include "runners/openai/openai_stack.h"
#include "runners/refstack/refstack.h"

namespace harness {
namespace {

// A stack's name, its factory and the config section it owns (null: none; refstack's
// settings are the common fields and its fault switches).
struct StackEntry {
  const char* name;
  Result<std::unique_ptr<Stack>> (*make)(const StackConfig&);
  ConfigSection (*section)();
};

constexpr StackEntry kStacks[] = {
    {"refstack", MakeRefStack, nullptr},
    {"exec", MakeExecStack, ExecConfigSection},
    {"openai", openai::MakeOpenAiStack, openai::OpenAiConfigSection},
};

}  // namespace

std::vector<std::string> StackNames() {
  std::vector<std::string> names;
  for (const auto& s : kStacks) names.push_back(s.name);
  return names;
}

const std::vector<ConfigSection>& StackConfigSections() {
  static const std::vector<ConfigSection> sections = [] {
    std::vector<ConfigSection> all;
    for (const auto& s : kStacks)
      if (s.section) all.push_back(s.section());
    return all;
  }();
  return sections;
}

Result<StackConfig> LoadStackConfig(const std::filesystem::path& path) {
  return LoadStackConfig(path, StackConfigSections());
}

Result<std::unique_ptr<Stack>> MakeStack(const StackConfig& config) {
  for (const auto& s : kStacks)
    if (config.stack == s.name) return s.make(config);
  return UsageError(fmt::format("unknown stack '{}'{}", config.stack, DidYouMean(config.stack, StackNames())));
}

}  // namespace harness
