#include "runners/refstack/sim/serve_sim.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/eval/gsm8k_data.h"
#include "runners/refstack/sim/sim_server.h"

namespace harness::sim {

int ServeSim(int port, const std::filesystem::path& profile_path, const harness::StackConfig& config,
             uint64_t noise_seed) {
  if (port < 0 || port > 65535) throw FatalError(UsageError(fmt::format("--port: {} is not a TCP port", port)));
  auto profile = ValueOrThrow(LoadSimProfile(profile_path));
  auto questions = ValueOrThrow(LoadGsm8k(Gsm8kTestFile()));
  // Block the stop signals before the server starts its threads (they inherit the mask),
  // so only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  SimServer server(std::move(profile), config, std::move(questions), noise_seed);
  const std::string url = ValueOrThrow(server.Start(port));
  fmt::print("{}\n", url);
  std::fflush(stdout);
  fmt::print(stderr,
             "harness serve-sim: stand-in endpoint for demos and tests (profile {}, M = {}, rerun flip rate {}, "
             "noise seed {}, faults: {})\n",
             profile_path.string(), server.profile().batch_rows, server.profile().rerun_flip_rate, noise_seed,
             config.faults.empty() ? std::string("none") : fmt::format("{}", fmt::join(config.faults, ", ")));
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server.Stop();
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  return 0;
}

}  // namespace harness::sim
