// A client for OpenAI-compatible completion endpoints (sglang, vLLM, the stand-in in
// runners/refstack/sim), built on the libcurl multi interface: one thread drives up to
// max_in_flight transfers over reused keep-alive connections.
//
// Every request ends in exactly one result, delivered to the callback as it arrives:
// either a well-formed 200 response, or an error after the retries are spent. Connection
// errors, timeouts, 429 (honouring Retry-After), 5xx and malformed JSON are retried with
// exponential backoff and jitter; other 4xx are not (retrying cannot change them).
//
// Memory is bounded per transfer: a body over max_response_bytes aborts that transfer and
// ends the request as the error "response body over N bytes", without a retry (the same
// server would send the same body again, and a retry would only repeat the cost). A
// transfer slower than low_speed_limit_bytes_per_s for low_speed_time_s is a timeout and
// is retried like one. Together they stop a runaway or endless (chunked) response long
// before timeout_s: at most max_in_flight * max_response_bytes of bodies are held.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/stack/stack.h"

namespace harness::openai {

struct GenerationParams {
  int max_tokens = 512;
  double temperature = 0;
  double top_p = 1;
  int64_t seed = 1234;
  // Stop strings that cannot fire inside reasoning text (never a bare "Question").
  std::vector<std::string> stop = {"Question:", "\n\nQuestion"};
};

struct ClientOptions {
  EndpointTarget target;          // base URL, model, chat or completion, api_key_env
  GenerationParams generation;
  int max_in_flight = 64;
  double timeout_s = 600;         // per attempt, never one clock for the whole run
  double connect_timeout_s = 10;
  // A GSM8K completion is a few KB (512 tokens); 4 MiB leaves room for long reasoning
  // answers while 64 in flight hold at most 256 MiB.
  int64_t max_response_bytes = int64_t{4} << 20;
  // A stalled stream (below 1 byte/s for 30 s) fails long before timeout_s; 0 disables.
  int64_t low_speed_limit_bytes_per_s = 1;
  double low_speed_time_s = 30;
  int max_attempts = 4;           // first try plus three retries
  double backoff_initial_s = 0.5;
  double backoff_max_s = 10;
  double retry_after_max_s = 60;  // a Retry-After above this is capped
  uint64_t jitter_seed = 1;
  // Stop with an infrastructure error once more requests than this have failed after
  // their retries (-1: never); a dead endpoint then costs one backoff, not the whole run.
  int64_t max_errors = -1;
};

struct CompletionRequest {
  int64_t id = 0;                 // the caller's key (the question index)
  std::string prompt;
};

struct CompletionResult {
  int64_t id = 0;
  bool ok = false;                // a well-formed 200 response
  std::string text;               // choices[0].text or choices[0].message.content
  std::string finish_reason;      // "stop", "length", ... ("" when the server sent null)
  int64_t completion_tokens = 0;  // usage.completion_tokens (0 when absent)
  double latency_s = 0;           // of the last attempt
  int attempts = 0;
  std::string error;              // when !ok: what the last attempt got
};

// Why a 200 body is unusable, or nothing when it parsed into result (text, finish reason,
// completion tokens). Reads untrusted bytes: a fuzz target drives it (tools/fuzz/).
std::optional<std::string> ParseCompletionResponse(const std::string& body, bool chat, CompletionResult& result);

// base_url + "/v1" + route ("/v1" is not doubled when base_url already ends in it).
std::string V1Url(const std::string& base_url, const std::string& route);
// The endpoint URL for the target: base_url + "/v1/completions" or "/v1/chat/completions"
// ("/v1" is not doubled when base_url already ends in it).
std::string EndpointUrl(const EndpointTarget& target);

class Client {
 public:
  // Checks the options (usage errors name the option).
  static Result<std::unique_ptr<Client>> Create(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends every request and calls on_result once per request, on this thread, as
  // results arrive. Returns an infrastructure error when stopped by max_errors, a usage
  // error when the API key variable is unset, and an infrastructure error "stopped after
  // N of M requests" when RequestStop was called
  // (results already delivered stay delivered).
  Status Run(const std::vector<CompletionRequest>& requests,
             const std::function<void(CompletionResult&&)>& on_result);

  // Thread-safe: makes the running (or next) Run abort its transfers and return soon;
  // the client stays stopped.
  void RequestStop();

 private:
  explicit Client(ClientOptions options);
  ClientOptions options_;
  std::atomic<bool> stop_{false};
  std::mutex wake_mu_;
  void* running_multi_ = nullptr;   // the running loop's CURLM*, guarded by wake_mu_
};

}  // namespace harness::openai
