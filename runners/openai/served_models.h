// Which models an OpenAI-compatible server says it serves (GET /v1/models). A run records
// them in its measured identity (harness/run/run_identity.h): a server that swapped its
// model behind the same name never pairs with the night before, and --resume refuses it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/stack/stack.h"

namespace harness::openai {

// The sorted model ids of a /v1/models body ({"data": [{"id": ...}, ...]}), or nothing when
// the body is no such list. Reads untrusted bytes.
std::optional<std::vector<std::string>> ParseModelList(const std::string& body);

// Asks the target's server (with its API key, when it has one) within timeout_s. Empty when
// the server does not answer that route, or answers something else: many servers do not
// implement it, and the run then goes on keyed by the requested model alone.
std::vector<std::string> ServedModels(const EndpointTarget& target, double timeout_s);

}  // namespace harness::openai
