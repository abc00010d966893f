// The embedded reference stack, "refstack": its Compile builds the requested model from
// golden/models, runs the reference compiler's passes and returns the estimated
// performance table. Fault switches and the device/precision defaults come from the
// StackConfig it is made with.
#pragma once

#include <memory>

#include "harness/stack/stack.h"
#include "harness/stack/stack_config.h"

// An unknown device profile is a usage error.
harness::Result<std::unique_ptr<harness::Stack>> MakeRefStack(const harness::StackConfig& config);
