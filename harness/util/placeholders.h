// Argument templates with {name} placeholders, filled in without a shell: the exec stack's
// argv (runners/exec/exec_stack.h) and the openai stack's server launch
// (runners/openai/server_launch.h). {{ and }} are literal braces.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/util/error.h"

namespace harness {

// The placeholder names in arg, in order; an unclosed '{' or an unmatched '}' is a usage error.
Result<std::vector<std::string>> PlaceholdersOf(const std::string& arg);
// arg with each placeholder replaced by its value (one that has none becomes "").
std::string FillTemplate(const std::string& arg, const std::map<std::string, std::string>& values);
// Every placeholder of arg is one of known; else a usage error "unknown placeholder {x}
// (did you mean 'y'?)" or "... (known: a, b)", for the caller to prefix with the field.
Status CheckPlaceholders(const std::string& arg, const std::vector<std::string>& known);

}  // namespace harness
