// harness serve-sim: the stand-in OpenAI-compatible endpoint, for demos and tests.
#include <CLI/CLI.hpp>

#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/util/paths.h"
#include "harness/stack/stack.h"
#include "runners/refstack/sim/serve_sim.h"

namespace harness {
namespace {

struct ServeSimOptions {
  int port = 0;
  std::string profile;
  std::string stack_config;
  uint64_t seed = 0;
};

}  // namespace

CommandMain SetupServeSim(CLI::App& app) {
  auto o = std::make_shared<ServeSimOptions>();
  AddNumericOption(app, "--port", o->port, WholeIn(0, 65535),
                   "Port on 127.0.0.1 (0: any free port; the URL is the first line printed)");
  app.add_option("--profile", o->profile, "Stand-in profile JSON (default: golden/sim/default.json)");
  app.add_option("--stack-config", o->stack_config, "Stack config whose faults the stand-in's kernels apply");
  AddNumericOption(app, "--seed", o->seed, kSeedRange, "Noise seed of the profile's rerun noise (rerun_flip_rate; default 0)");
  return [o] {
    StackConfig config;
    if (!o->stack_config.empty()) config = ValueOrThrow(LoadStackConfig(o->stack_config));
    std::filesystem::path profile = o->profile.empty() ? GoldenDir() / "sim" / "default.json" : std::filesystem::path(o->profile);
    return sim::ServeSim(o->port, profile, config, o->seed);
  };
}

}  // namespace harness
