// The openai stack: an OpenAI-compatible server the eval suites talk to; compile suites
// skip. It owns its config section (openai_config.h): the endpoint it names and, when the
// section has "launch", the server it starts for the run and stops after it
// (server_launch.h).
#pragma once

#include <memory>

#include "harness/stack/stack.h"

namespace harness::openai {

Result<std::unique_ptr<Stack>> MakeOpenAiStack(const StackConfig& config);

}  // namespace harness::openai
