// `harness serve-sim --port 0 --profile FILE [--stack-config FILE] [--seed N]`: runs the stand-in
// endpoint until SIGTERM or SIGINT. The first line on stdout is its URL, so a script can
// start it with port 0 and read where it listens.
#pragma once

#include <cstdint>
#include <filesystem>

#include "harness/stack/stack_config.h"

namespace harness::sim {

// Returns the process exit code (0 after a clean stop). A bad profile or an unusable
// port throws harness::FatalError (usage: 2, listen failure: 3). noise_seed draws the
// profile's rerun noise: a server answers the same all its life, another seed differs.
int ServeSim(int port, const std::filesystem::path& profile, const harness::StackConfig& config,
             uint64_t noise_seed = 0);

}  // namespace harness::sim
