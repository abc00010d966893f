// The exec stack: a user's command runs once per compile request. The request goes to
// its stdin as JSON, its stdout is the answer (docs/exec-protocol.md):
//   in:  {"format_version": 1, "kind": "compile", "request": {model, tp_size, ...}}
//   out: {"format_version": 1, "ops": [{"op", "input_shapes", "calls", "est_seconds"}], "total_seconds"}
// The command comes from the stack config as an argv array ("exec": {"command": [...]}),
// never through a shell.
#pragma once

#include <memory>

#include "harness/stack/stack.h"

namespace harness {

// Checks the config's exec section (an argv array, a timeout); a bad one is exit 2.
Result<std::unique_ptr<Stack>> MakeExecStack(const StackConfig& config);
// Parses the command's answer; errors name the command and the field.
Result<CompileResult> ParseExecAnswer(const std::string& stdout_text, const std::string& origin);
Json CompileRequestJson(const CompileRequest& r);

}  // namespace harness
