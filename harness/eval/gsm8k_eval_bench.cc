// Speed of the eval loop's client (docs/gsm8k.md, "Speed"):
//
// BM_CppVsPythonClient: the 1319 GSM8K prompts (5-shot) to the zero-latency stand-in on
//   loopback with 64 in flight, first through the C++ client, then through a Python
//   standard-library client (bench_client.py: urllib + ThreadPoolExecutor, run as a
//   subprocess) against the same server, in the same run. Counters: requests/s and CPU
//   per request of each (the C++ loop thread's CPU; the Python process's CPU around its
//   request loop) and the ratio of requests/s. Goal: ratio >= 5.
// BM_FullGsm8kRun: what one gsm8k case costs end to end against the zero-latency
//   stand-in: load the data, start the stand-in (its FP8 kernel batch included), ask
//   all 1319 questions, score, summarise. Goal: < 10 s.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "harness/eval/gsm8k_data.h"
#include "harness/eval/gsm8k_eval.h"
#include "harness/eval/gsm8k_prompt.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"
#include "runners/openai/openai_client.h"
#include "runners/refstack/sim/sim_server.h"

extern char** environ;

namespace harness::openai {
namespace {

constexpr int kInFlight = 64;

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The stand-in and the prompts, shared by the iterations.
struct Fixture {
  std::vector<Gsm8kItem> questions = ValueOrThrow(LoadGsm8k(Gsm8kTestFile()));
  std::vector<CompletionRequest> requests;
  std::filesystem::path prompts_file = std::filesystem::temp_directory_path() / "gsm8k_eval_bench_prompts.jsonl";
  std::unique_ptr<sim::SimServer> server;
  std::string url;

  Fixture() {
    const auto shots = ValueOrThrow(LoadGsm8k(Gsm8kTrainFile()));
    const std::string prefix = ValueOrThrow(Gsm8kFewShotPrefix(shots, 5));
    std::ofstream out(prompts_file);
    for (std::size_t q = 0; q < questions.size(); ++q) {
      requests.push_back({static_cast<int64_t>(q), Gsm8kPrompt(prefix, questions[q].question)});
      out << nlohmann::json{{"prompt", requests.back().prompt}}.dump() << "\n";
    }
    server = std::make_unique<sim::SimServer>(ValueOrThrow(sim::LoadSimProfile(GoldenDir() / "sim" / "default.json")),
                                              StackConfig{}, questions);
    url = ValueOrThrow(server->Start(0));
  }
};

Fixture& Shared() {
  static Fixture f;
  return f;
}

struct Measured {
  double wall_s = 0, cpu_s = 0;
  int64_t ok = 0;
};

Measured RunCppClient(const Fixture& f) {
  ClientOptions o;
  o.target = {f.url, "refstack-sim", false, ""};
  o.max_in_flight = kInFlight;
  auto client = ValueOrThrow(Client::Create(o));
  Measured m;
  const double cpu0 = ThreadCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = client->Run(f.requests, [&m](CompletionResult&& r) { m.ok += r.ok; });
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpu_s = ThreadCpuSeconds() - cpu0;
  if (!s) throw FatalError(s.error());
  return m;
}

// Runs bench_client.py by argv and reads its JSON line.
Result<Measured> RunPythonClient(const Fixture& f) {
  int out[2];
  if (pipe(out) != 0) return InfraError("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args = {"python3", BENCH_CLIENT_SCRIPT, "--url", f.url, "--model", "refstack-sim",
                                   "--prompts", f.prompts_file.string(), "--workers", std::to_string(kInFlight)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return InfraError("cannot start python3");
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return InfraError("bench_client.py failed");
  const auto j = ParseJsonOrDiscarded(text);
  if (j.is_discarded()) return InfraError("bench_client.py printed no JSON: " + text);
  return Measured{j["wall_s"].get<double>(), j["cpu_s"].get<double>(), j["ok"].get<int64_t>()};
}

void BM_CppVsPythonClient(benchmark::State& state) {
  Fixture& f = Shared();
  const auto n = static_cast<double>(f.requests.size());
  Measured cpp, py;   // summed over the iterations
  double rounds = 0;
  for (auto _ : state) {
    const Measured c = RunCppClient(f);
    auto p = RunPythonClient(f);
    if (!p) {
      state.SkipWithError(p.error().message.c_str());
      return;
    }
    const auto all = static_cast<int64_t>(f.requests.size());
    if (c.ok != all || p->ok != all) {
      state.SkipWithError("not every request succeeded");
      return;
    }
    cpp.wall_s += c.wall_s;
    cpp.cpu_s += c.cpu_s;
    py.wall_s += p->wall_s;
    py.cpu_s += p->cpu_s;
    ++rounds;
  }
  const double requests = n * rounds;
  state.counters["cpp_req_per_s"] = requests / cpp.wall_s;
  state.counters["py_req_per_s"] = requests / py.wall_s;
  state.counters["req_per_s_ratio"] = py.wall_s / cpp.wall_s;
  state.counters["cpp_cpu_us_per_req"] = 1e6 * cpp.cpu_s / requests;
  state.counters["py_cpu_us_per_req"] = 1e6 * py.cpu_s / requests;
  state.counters["cpu_per_req_ratio"] = py.cpu_s / cpp.cpu_s;
}
BENCHMARK(BM_CppVsPythonClient)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_FullGsm8kRun(benchmark::State& state) {
  double accuracy = 0;
  for (auto _ : state) {
    const auto questions = ValueOrThrow(LoadGsm8k(Gsm8kTestFile()));
    auto profile = ValueOrThrow(sim::LoadSimProfile(GoldenDir() / "sim" / "default.json"));
    sim::SimServer server(std::move(profile), StackConfig{}, questions);
    Gsm8kEvalOptions o;
    o.client.target = {ValueOrThrow(server.Start(0)), "refstack-sim", false, ""};
    o.progress_out = nullptr;
    auto eval = ValueOrThrow(Gsm8kEval::Create(o));
    const auto report = ValueOrThrow(eval->Run({}, [](const Sample&) {}));
    if (report.samples.size() != questions.size() || report.infra_error) {
      state.SkipWithError("the run did not answer every question");
      return;
    }
    accuracy = report.summary.accuracy;
  }
  state.counters["accuracy"] = accuracy;
}
BENCHMARK(BM_FullGsm8kRun)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace harness::openai

BENCHMARK_MAIN();
