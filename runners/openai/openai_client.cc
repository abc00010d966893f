#include "runners/openai/openai_client.h"

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <queue>
#include <random>

#include <curl/curl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/util/json_file.h"
#include "runners/openai/curl_global.h"

namespace harness::openai {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct EasyCleanup {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct MultiCleanup {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct SlistCleanup {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// One in-flight request: an easy handle reused for every request it carries, so the
// multi handle's connection cache keeps the keep-alive connections warm.
struct Transfer {
  std::unique_ptr<CURL, EasyCleanup> easy;
  std::size_t request = 0;
  bool active = false;
  std::string body;
  std::string response;
  std::size_t max_response = 0;   // the cap on response; over it the transfer is aborted
  bool over_cap = false;          // the write callback aborted this attempt at the cap
  double retry_after_s = -1;   // from a Retry-After header, -1 when absent
  Clock::time_point started;
  char error[CURL_ERROR_SIZE] = {};
};

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (n > t->max_response - std::min(t->max_response, t->response.size())) {
    // A short count makes curl abort the transfer with CURLE_WRITE_ERROR; nothing more is kept.
    t->over_cap = true;
    return 0;
  }
  t->response.append(data, n);
  return n;
}

size_t ReadHeader(char* data, size_t size, size_t count, void* user) {
  const std::string_view line(data, size * count);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() && strncasecmp(line.data(), kName.data(), kName.size()) == 0) {
    // Delay-seconds form only; an HTTP-date falls back to our own backoff.
    const std::string value(line.substr(kName.size()));
    char* end = nullptr;
    const double seconds = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && seconds >= 0) static_cast<Transfer*>(user)->retry_after_s = seconds;
  }
  return size * count;
}

// Curl errors that no retry can fix.
bool IsPermanent(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_PEER_FAILED_VERIFICATION:
      return true;
    default:
      return false;
  }
}

std::string RequestBody(const ClientOptions& o, const std::string& prompt) {
  json body = {{"model", o.target.model},
               {"max_tokens", o.generation.max_tokens},
               {"temperature", o.generation.temperature},
               {"top_p", o.generation.top_p},
               {"seed", o.generation.seed},
               {"stop", o.generation.stop}};
  if (o.target.chat) {
    body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
  } else {
    body["prompt"] = prompt;
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The easy handles of one Run: every one posts to url with headers, its body capped and
// its speed watched as the options say.
Result<std::vector<std::unique_ptr<Transfer>>> MakeTransfers(const ClientOptions& o, long count, const std::string& url,
                                                             curl_slist* headers) {
  std::vector<std::unique_ptr<Transfer>> slots;
  for (long i = 0; i < count; ++i) {
    auto t = std::make_unique<Transfer>();
    t->easy.reset(curl_easy_init());
    if (!t->easy) return InfraError("libcurl: cannot create an easy handle");
    CURL* e = t->easy.get();
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, ReadHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(o.connect_timeout_s, o.timeout_s) * 1000));
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (o.low_speed_limit_bytes_per_s > 0) {
      curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(o.low_speed_limit_bytes_per_s));
      curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.low_speed_time_s));
    }
    t->max_response = static_cast<std::size_t>(o.max_response_bytes);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
    slots.push_back(std::move(t));
  }
  return slots;
}

// What one finished attempt got: fills r (ok, text, error) and says whether another
// attempt could change it.
bool ClassifyAttempt(const ClientOptions& o, const Transfer& t, CURLcode code, long status, CompletionResult& r) {
  if (t.over_cap) {
    r.error = fmt::format("response body over {} bytes", o.max_response_bytes);
    return false;  // the same server sends the same body again
  }
  if (code == CURLE_OPERATION_TIMEDOUT && r.latency_s < 0.9 * o.timeout_s && t.error[0]) {
    // Not the attempt's clock: the connect timeout or the low-speed limit, which curl names.
    r.error = fmt::format("timed out: {}", t.error);
    return true;
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    r.error = fmt::format("timed out after {:g} s", o.timeout_s);
    return true;
  }
  if (code != CURLE_OK) {
    r.error = fmt::format("connection: {}", t.error[0] ? t.error : curl_easy_strerror(code));
    return !IsPermanent(code);
  }
  if (status != 200) {
    r.error = fmt::format("HTTP {}", status);
    return status == 429 || status >= 500;
  }
  if (auto why = ParseCompletionResponse(t.response, o.target.chat, r)) {
    r.error = "malformed response: " + *why;
    r.text.clear();
    return true;
  }
  r.ok = true;
  return true;
}

// The scheduling of one Run: which request goes into a free slot (a retry that is due,
// else the next new one), what a finished attempt becomes (a delivered result or a retry
// after backoff with jitter, or Retry-After on 429), and how long to wait.
class Batch {
 public:
  Batch(const ClientOptions& o, const std::vector<CompletionRequest>& requests, CURLM* multi,
        const std::function<void(CompletionResult&&)>& on_result)
      : o_(o), requests_(requests), multi_(multi), on_result_(on_result), attempts_(requests.size(), 0),
        rng_(o.jitter_seed) {}

  void AddSlot(Transfer* t) { free_.push_back(t); }
  bool done() const { return delivered_ >= requests_.size(); }
  std::size_t delivered() const { return delivered_; }
  bool TooManyErrors() const { return o_.max_errors >= 0 && errors_ > o_.max_errors; }
  Error ErrorLimit() const {
    return InfraError(fmt::format("{} requests failed after retries (limit {}); last: {}", errors_, o_.max_errors,
                                  last_error_));
  }

  void FillSlots() {
    const auto now = Clock::now();
    while (!free_.empty()) {
      if (!retries_.empty() && retries_.top().ready <= now) {
        const std::size_t index = retries_.top().request;
        retries_.pop();
        Start(index);
      } else if (next_new_ < requests_.size()) {
        Start(next_new_++);
      } else {
        break;
      }
    }
  }

  // Handles every finished transfer; false when none finished. stop: deliver nothing more.
  bool DrainFinished(const std::atomic<bool>& stop) {
    bool any = false;
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
      if (stop) break;  // nothing more reaches the caller once it asked to stop
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
      const CURLcode code = msg->data.result;
      curl_multi_remove_handle(multi_, msg->easy_handle);
      t->active = false;
      free_.push_back(t);
      Finish(t, code);
      any = true;
    }
    return any;
  }

  // How long to wait for the network: until the next retry is due, at most 100 ms (also
  // how often the stop flag is looked at).
  int PollTimeoutMs() const {
    if (retries_.empty() || free_.empty()) return 100;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(retries_.top().ready - Clock::now());
    return static_cast<int>(std::clamp<int64_t>(wait.count() + 1, 0, 100));
  }

 private:
  struct Retry {
    Clock::time_point ready;
    std::size_t request;
    bool operator>(const Retry& other) const { return ready > other.ready; }
  };

  void Start(std::size_t index) {
    Transfer* t = free_.back();
    free_.pop_back();
    t->request = index;
    t->body = RequestBody(o_, requests_[index].prompt);
    t->response.clear();
    t->over_cap = false;
    t->retry_after_s = -1;
    t->error[0] = '\0';
    curl_easy_setopt(t->easy.get(), CURLOPT_POSTFIELDS, t->body.data());
    curl_easy_setopt(t->easy.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(t->body.size()));
    t->started = Clock::now();
    t->active = true;
    ++attempts_[index];
    curl_multi_add_handle(multi_, t->easy.get());
  }

  void Finish(Transfer* t, CURLcode code) {
    const std::size_t index = t->request;
    CompletionResult r;
    r.id = requests_[index].id;
    r.attempts = attempts_[index];
    r.latency_s = std::chrono::duration<double>(Clock::now() - t->started).count();
    long status = 0;
    curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &status);
    const bool retryable = ClassifyAttempt(o_, *t, code, status, r);
    if (r.ok || !retryable || attempts_[index] >= o_.max_attempts) {
      if (!r.ok) r.error += fmt::format(" (after {} attempt{})", r.attempts, r.attempts == 1 ? "" : "s");
      Deliver(std::move(r));
      // An aborted body can be max_response_bytes; give the memory back, not just the size.
      if (t->over_cap) std::string().swap(t->response);
      return;
    }
    double delay =
        std::min(o_.backoff_max_s, o_.backoff_initial_s * std::pow(2.0, attempts_[index] - 1)) * jitter_(rng_);
    if (status == 429 && t->retry_after_s >= 0) delay = std::max(delay, std::min(t->retry_after_s, o_.retry_after_max_s));
    retries_.push({Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay)), index});
  }

  void Deliver(CompletionResult&& r) {
    ++delivered_;
    if (!r.ok) {
      ++errors_;
      last_error_ = r.error;
    }
    on_result_(std::move(r));
  }

  const ClientOptions& o_;
  const std::vector<CompletionRequest>& requests_;
  CURLM* multi_;
  const std::function<void(CompletionResult&&)>& on_result_;
  std::vector<Transfer*> free_;
  std::priority_queue<Retry, std::vector<Retry>, std::greater<>> retries_;
  std::vector<int> attempts_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> jitter_{0.5, 1.0};
  std::size_t next_new_ = 0, delivered_ = 0;
  int64_t errors_ = 0;
  std::string last_error_;
};

}  // namespace

std::optional<std::string> ParseCompletionResponse(const std::string& body, bool chat, CompletionResult& result) {
  const json j = ParseJsonOrDiscarded(body);
  if (j.is_discarded()) return fmt::format("not JSON, or nested deeper than {} levels", kMaxJsonDepth);
  if (!j.is_object()) return "not a JSON object";
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object())
    return "no choices[0]";
  const json& choice = (*choices)[0];
  if (chat) {
    const auto message = choice.find("message");
    if (message == choice.end() || !message->is_object()) return "no choices[0].message";
    const auto content = message->find("content");
    // A null content is a real answer (a reasoning model that spent its budget): empty text.
    if (content != message->end() && content->is_string()) {
      result.text = content->get<std::string>();
    } else if (content != message->end() && !content->is_null()) {
      return "choices[0].message.content is not a string";
    }
  } else {
    const auto text = choice.find("text");
    if (text == choice.end() || !text->is_string()) return "no choices[0].text";
    result.text = text->get<std::string>();
  }
  if (const auto finish = choice.find("finish_reason"); finish != choice.end() && finish->is_string())
    result.finish_reason = finish->get<std::string>();
  if (const auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    if (const auto tokens = usage->find("completion_tokens"); tokens != usage->end() && tokens->is_number_integer())
      result.completion_tokens = tokens->get<int64_t>();
  }
  return std::nullopt;
}

std::string V1Url(const std::string& base_url, const std::string& route) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (!(base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0)) base += "/v1";
  return base + route;
}

std::string EndpointUrl(const EndpointTarget& target) {
  return V1Url(target.base_url, target.chat ? "/chat/completions" : "/completions");
}

Client::Client(ClientOptions options) : options_(std::move(options)) { CurlGlobalInitOnce(); }
Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::Create(ClientOptions o) {
  if (o.target.base_url.empty()) return UsageError("endpoint: the base URL is empty");
  if (o.target.model.empty()) return UsageError("endpoint: the model name is empty");
  if (o.max_in_flight < 1) return UsageError(fmt::format("max_in_flight: must be at least 1, got {}", o.max_in_flight));
  if (o.max_attempts < 1) return UsageError(fmt::format("max_attempts: must be at least 1, got {}", o.max_attempts));
  if (!(o.timeout_s > 0)) return UsageError(fmt::format("timeout_s: must be positive, got {}", o.timeout_s));
  if (o.max_response_bytes < 1)
    return UsageError(fmt::format("max_response_bytes: must be at least 1, got {}", o.max_response_bytes));
  if (o.low_speed_limit_bytes_per_s < 0)
    return UsageError(fmt::format("low_speed_limit_bytes_per_s: must not be negative, got {}", o.low_speed_limit_bytes_per_s));
  if (o.low_speed_limit_bytes_per_s > 0 && !(o.low_speed_time_s >= 1))
    return UsageError(fmt::format("low_speed_time_s: must be at least 1 (curl counts whole seconds), got {}", o.low_speed_time_s));
  if (o.generation.max_tokens < 1) return UsageError(fmt::format("max_tokens: must be at least 1, got {}", o.generation.max_tokens));
  if (o.target.chat && o.generation.stop.size() > 4)
    return UsageError(fmt::format("stop: chat completions accept at most 4 stop strings, got {}", o.generation.stop.size()));
  for (const auto& s : o.generation.stop)
    if (s.empty()) return UsageError("stop: an empty stop string would end every answer at once");
  return std::unique_ptr<Client>(new Client(std::move(o)));
}

void Client::RequestStop() {
  stop_ = true;
  std::lock_guard lock(wake_mu_);
  if (running_multi_) curl_multi_wakeup(static_cast<CURLM*>(running_multi_));
}

Status Client::Run(const std::vector<CompletionRequest>& requests,
                   const std::function<void(CompletionResult&&)>& on_result) {
  const ClientOptions& o = options_;
  std::unique_ptr<curl_slist, SlistCleanup> headers(curl_slist_append(nullptr, "Content-Type: application/json"));
  // Without this curl waits up to a second for "100 Continue" before sending a body > 1 KiB.
  curl_slist_append(headers.get(), "Expect:");
  if (!o.target.api_key_env.empty()) {
    const char* key = std::getenv(o.target.api_key_env.c_str());
    if (!key || !*key)
      return UsageError(fmt::format("environment variable {} (the target's api_key_env) is not set", o.target.api_key_env));
    curl_slist_append(headers.get(), fmt::format("Authorization: Bearer {}", key).c_str());
  }
  std::unique_ptr<CURLM, MultiCleanup> multi(curl_multi_init());
  if (!multi) return InfraError("libcurl: cannot create a multi handle");
  const long in_flight = std::min<long>(o.max_in_flight, std::max<long>(1, static_cast<long>(requests.size())));
  curl_multi_setopt(multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, in_flight);
  curl_multi_setopt(multi.get(), CURLMOPT_MAXCONNECTS, in_flight);
  auto made = MakeTransfers(o, in_flight, EndpointUrl(o.target), headers.get());
  if (!made) return made.error();
  std::vector<std::unique_ptr<Transfer>> slots = std::move(made).value();
  {
    std::lock_guard lock(wake_mu_);
    running_multi_ = multi.get();
  }
  // Detach every transfer before the handles go away, whichever way Run returns.
  struct Detach {
    Client* self;
    CURLM* multi;
    std::vector<std::unique_ptr<Transfer>>& slots;
    ~Detach() {
      for (auto& t : slots)
        if (t->active) curl_multi_remove_handle(multi, t->easy.get());
      std::lock_guard lock(self->wake_mu_);
      self->running_multi_ = nullptr;
    }
  } detach{this, multi.get(), slots};

  Batch batch(o, requests, multi.get(), on_result);
  for (auto& t : slots) batch.AddSlot(t.get());
  while (!batch.done()) {
    if (stop_) return InfraError(fmt::format("stopped after {} of {} requests", batch.delivered(), requests.size()));
    if (batch.TooManyErrors()) return batch.ErrorLimit();
    batch.FillSlots();
    int running = 0;
    curl_multi_perform(multi.get(), &running);
    if (batch.DrainFinished(stop_)) continue;  // refill the freed slots before waiting
    curl_multi_poll(multi.get(), nullptr, 0, batch.PollTimeoutMs(), nullptr);
  }
  if (batch.TooManyErrors()) return batch.ErrorLimit();
  return OkStatus();
}

}  // namespace harness::openai
