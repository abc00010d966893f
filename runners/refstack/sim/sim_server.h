// The stand-in LM endpoint: an OpenAI-compatible HTTP server on 127.0.0.1 (cpp-httplib)
// with /v1/completions, /v1/chat/completions and /v1/models, answering GSM8K questions
// through SimModel. A stand-in for demos and tests, not a language model.
//
// Transport faults come from the profile: for question q's a-th request (a counted by
// the server, from 0) the draw Uniform01(seed, q, a) picks 5xx, 429 (with Retry-After),
// a reply slower than slow_s, a cut-off JSON body, a dropped connection, or a normal
// answer. Normal answers wait first_token_s + per_token_s * completion tokens.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/util/error.h"
#include "harness/eval/gsm8k_data.h"
#include "harness/stack/stack_config.h"
#include "runners/refstack/sim/sim_model.h"
#include "runners/refstack/sim/sim_profile.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace harness::sim {

class HttpListener;
class HttpRoutes;

// The stack config's fault switch the stand-in's FP8 path reads.
inline constexpr std::string_view kFp8ScaleFault = "fp8-scale-unrepaired";

class SimServer {
 public:
  // noise_seed: this run's draw of the profile's rerun noise (SimModel).
  SimServer(SimProfile profile, const StackConfig& config, std::vector<Gsm8kItem> questions, uint64_t noise_seed = 0);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  // Listens on 127.0.0.1:port (0: any free port) and returns "http://127.0.0.1:PORT". The
  // connections, request time and request size are bounded (http_listener.h: HttpLimits).
  Result<std::string> Start(int port = 0);
  // Stops listening, wakes sleeping handlers and joins the server's threads. Idempotent.
  void Stop();

  const SimModel& model() const { return model_; }
  const SimProfile& profile() const { return profile_; }
  // Requests the server has seen for question q (every attempt counts).
  int RequestsFor(int q) const;
  int64_t TotalRequests() const;

 private:
  enum class Fault { kNone, k5xx, k429, kSlow, kMalformed, kDropped };
  Fault FaultFor(int q, int attempt) const;
  int NextAttempt(int q);
  // Sleeps up to seconds; false when Stop() cut it short.
  bool SleepUnlessStopped(double seconds);
  // Answers with question q's fault for this attempt when the profile gives it one; false
  // when the request is to be answered.
  bool AnsweredWithFault(int q, httplib::Response& res);
  // One completion request (chat: of the chat API): its answer, after the profile's delay.
  void Complete(const httplib::Request& req, httplib::Response& res, bool chat);
  void Route();

  SimProfile profile_;
  SimModel model_;
  std::unique_ptr<HttpRoutes> http_;
  std::unique_ptr<HttpListener> listener_;
  std::atomic<bool> stopping_{false};
  std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
  mutable std::mutex counts_mu_;
  std::vector<int> attempts_;              // per question
  int64_t total_requests_ = 0;
  std::atomic<uint64_t> response_id_{0};
};

}  // namespace harness::sim
