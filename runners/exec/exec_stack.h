// The exec stack: a user's command runs once per compile request. The request goes to
// its stdin as JSON, its stdout is the answer (docs/exec-protocol.md):
//   in:  {"format_version": 1, "kind": "compile", "request": {model, tp_size, ...}}
//   out: {"format_version": 1, "ops": [{"op", "input_shapes", "calls", "est_seconds"}], "total_seconds"}
// or the command prints a TensorCast performance table (harness/stack/tensorcast_table.h).
// The command comes from the stack config as an argv template ("exec": {"command": [...]})
// whose {placeholders} are filled from the request, never through a shell.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/stack/stack.h"

namespace harness {

// The config's exec section, checked: an argv template, working directory, extra
// environment, timeout and how to read stdout (auto, json, tensorcast-table).
struct ExecSettings {
  std::vector<std::string> command;
  std::string cwd;                                            // empty: the harness's
  std::vector<std::pair<std::string, std::string>> env;       // on top of the harness's
  double timeout_s = 600;
  std::string output = "auto";
};
// The exec section as the stack table declares it: key "exec", its env values not stored.
ConfigSection ExecConfigSection();
// A bad section (an unknown placeholder among them) is a usage error naming the field.
Result<ExecSettings> ParseExecSettings(const StackConfig& config);
Result<std::unique_ptr<Stack>> MakeExecStack(const StackConfig& config);

// Placeholders (harness/util/placeholders.h): the request's fields ({model}, {tp_size},
// {quant}, ...), strings as they are, numbers and booleans as JSON writes them (2, true).
std::vector<std::string> ExecPlaceholderNames();
// Parses the command's answer; errors name the command and the field.
Result<CompileResult> ParseExecAnswer(const std::string& stdout_text, const std::string& origin);
Json CompileRequestJson(const CompileRequest& r);

}  // namespace harness
