#include "runners/refstack/sim/sim_server.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "harness/util/json_file.h"
#include "runners/refstack/sim/http_listener.h"

namespace harness::sim {
namespace {

using nlohmann::json;

constexpr int kDefaultMaxTokens = 512;
constexpr uint64_t kFaultStream = 5;
constexpr std::string_view kUnknownQuestionAnswer = " I do not recognise this question.";

void SendError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  json body = {{"error", {{"message", message}, {"type", "invalid_request_error"}, {"code", status}}}};
  res.set_content(body.dump(), "application/json");
}

// Whitespace-separated words: the stand-in's notion of a token.
int64_t CountWords(std::string_view text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

// Cuts text after its first max_words words; true when something was cut.
bool CutToWords(std::string& text, int64_t max_words) {
  int64_t words = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in_word) {
      if (words == max_words) {
        text.resize(i);
        return true;
      }
      ++words;
    }
    in_word = !space;
  }
  return false;
}

struct ParsedRequest {
  std::string prompt;
  int64_t max_tokens = kDefaultMaxTokens;
  std::vector<std::string> stop;
};

// The prompt (completions: "prompt"; chat: the last user message), max_tokens and stop,
// or a message for a 400.
std::variant<ParsedRequest, std::string> ParseRequest(const std::string& body, bool chat) {
  const json j = ParseJsonOrDiscarded(body);
  if (j.is_discarded() || !j.is_object()) return std::string("the request body is not a JSON object");
  ParsedRequest r;
  if (chat) {
    const auto messages = j.find("messages");
    if (messages == j.end() || !messages->is_array()) return std::string("messages: expected an array");
    for (const auto& m : *messages)
      // Compared as JSON: value("role", "") would throw on a role of another type (a 500).
      if (m.is_object() && m.contains("role") && m["role"] == "user" && m.contains("content") &&
          m["content"].is_string())
        r.prompt = m["content"].get<std::string>();
    if (r.prompt.empty()) return std::string("messages: no user message with string content");
  } else {
    const auto prompt = j.find("prompt");
    if (prompt != j.end() && prompt->is_string()) {
      r.prompt = prompt->get<std::string>();
    } else if (prompt != j.end() && prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
      r.prompt = (*prompt)[0].get<std::string>();
    } else {
      return std::string("prompt: expected a string");
    }
  }
  if (const auto max_tokens = j.find("max_tokens"); max_tokens != j.end() && !max_tokens->is_null()) {
    if (!max_tokens->is_number_integer() || max_tokens->get<int64_t>() < 1)
      return std::string("max_tokens: expected a positive integer");
    r.max_tokens = max_tokens->get<int64_t>();
  }
  if (const auto stop = j.find("stop"); stop != j.end() && !stop->is_null()) {
    if (stop->is_string()) {
      r.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const auto& s : *stop) {
        if (!s.is_string()) return std::string("stop: expected strings");
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      return std::string("stop: expected a string or a list of strings");
    }
  }
  return r;
}

// An answer as the request asks for it: cut at the first stop string it holds, then to
// max_tokens words (finish "length").
struct Completion {
  std::string text;
  std::string finish = "stop";
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

Completion ShapeAnswer(std::string text, const ParsedRequest& request) {
  Completion c;
  c.text = std::move(text);
  for (const auto& s : request.stop)
    if (const auto at = c.text.find(s); !s.empty() && at != std::string::npos) c.text.resize(at);
  if (CutToWords(c.text, request.max_tokens)) c.finish = "length";
  c.completion_tokens = CountWords(c.text);
  c.prompt_tokens = CountWords(request.prompt);
  return c;
}

// The response body in the shape of the chat or the completions API.
json CompletionBody(const Completion& c, bool chat, uint64_t id, const std::string& model) {
  json choice = {{"index", 0}, {"finish_reason", c.finish}};
  if (chat) {
    choice["message"] = {{"role", "assistant"}, {"content", c.text}};
  } else {
    choice["text"] = c.text;
    choice["logprobs"] = nullptr;
  }
  return {{"id", fmt::format("cmpl-sim-{}", id)},
          {"object", chat ? "chat.completion" : "text_completion"},
          {"created", static_cast<int64_t>(std::time(nullptr))},
          {"model", model},
          {"choices", json::array({choice})},
          {"usage",
           {{"prompt_tokens", c.prompt_tokens},
            {"completion_tokens", c.completion_tokens},
            {"total_tokens", c.prompt_tokens + c.completion_tokens}}}};
}

}  // namespace

SimServer::SimServer(SimProfile profile, const StackConfig& config, std::vector<Gsm8kItem> questions,
                     uint64_t noise_seed)
    : profile_(std::move(profile)),
      model_(profile_, config.HasFault(kFp8ScaleFault), std::move(questions), noise_seed),
      attempts_(static_cast<std::size_t>(model_.size()), 0) {}

SimServer::~SimServer() { Stop(); }

int SimServer::RequestsFor(int q) const {
  std::lock_guard lock(counts_mu_);
  return attempts_.at(static_cast<std::size_t>(q));
}

int64_t SimServer::TotalRequests() const {
  std::lock_guard lock(counts_mu_);
  return total_requests_;
}

int SimServer::NextAttempt(int q) {
  std::lock_guard lock(counts_mu_);
  ++total_requests_;
  if (q < 0) return 0;
  return attempts_[static_cast<std::size_t>(q)]++;
}

SimServer::Fault SimServer::FaultFor(int q, int attempt) const {
  if (q < 0) return Fault::kNone;   // only the eval's own questions meet transport faults
  const auto& f = profile_.faults;
  double u = Uniform01(Mix(profile_.seed, kFaultStream, static_cast<uint64_t>(q), static_cast<uint64_t>(attempt)));
  for (auto [rate, fault] : {std::pair{f.http_5xx, Fault::k5xx}, std::pair{f.http_429, Fault::k429},
                             std::pair{f.slow, Fault::kSlow}, std::pair{f.malformed_json, Fault::kMalformed},
                             std::pair{f.dropped_connection, Fault::kDropped}}) {
    if (u < rate) return fault;
    u -= rate;
  }
  return Fault::kNone;
}

bool SimServer::SleepUnlessStopped(double seconds) {
  if (seconds <= 0) return !stopping_;
  std::unique_lock lock(sleep_mu_);
  return !sleep_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_.load(); });
}

bool SimServer::AnsweredWithFault(int q, httplib::Response& res) {
  switch (FaultFor(q, NextAttempt(q))) {
    case Fault::k5xx:
      SendError(res, 503, "the stand-in is overloaded (profile fault)");
      return true;
    case Fault::k429:
      res.set_header("Retry-After", fmt::format("{:g}", profile_.faults.retry_after_s));
      SendError(res, 429, "rate limited (profile fault)");
      return true;
    case Fault::kSlow:
      if (!SleepUnlessStopped(profile_.faults.slow_s)) {
        SendError(res, 503, "stopping");
        return true;
      }
      return false;  // then answer, long after the client gave up
    case Fault::kMalformed:
      res.set_content(R"({"id": "cmpl-sim", "object": "text_completion", "choices": [{"text": "Janet)",
                      "application/json");
      return true;
    case Fault::kDropped:
      // Headers promise a body; returning false closes the connection instead.
      res.set_content_provider(64, "application/json",
                               [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
      return true;
    case Fault::kNone:
      break;
  }
  return false;
}

void SimServer::Complete(const httplib::Request& req, httplib::Response& res, bool chat) {
  auto parsed = ParseRequest(req.body, chat);
  if (auto* why = std::get_if<std::string>(&parsed)) return SendError(res, 400, *why);
  auto& request = std::get<ParsedRequest>(parsed);
  const int q = model_.FindQuestion(request.prompt);
  if (AnsweredWithFault(q, res)) return;
  const Completion c = ShapeAnswer(q >= 0 ? model_.Answer(q) : std::string(kUnknownQuestionAnswer), request);
  if (!SleepUnlessStopped(profile_.first_token_s + profile_.per_token_s * static_cast<double>(c.completion_tokens)))
    return SendError(res, 503, "stopping");
  res.set_content(CompletionBody(c, chat, response_id_++, profile_.model).dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

void SimServer::Route() {
  http_->Post("/v1/completions",
              [this](const httplib::Request& req, httplib::Response& res) { Complete(req, res, false); });
  http_->Post("/v1/chat/completions",
              [this](const httplib::Request& req, httplib::Response& res) { Complete(req, res, true); });
  http_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json body = {{"object", "list"},
                 {"data", json::array({{{"id", profile_.model}, {"object", "model"}, {"owned_by", "harness"}}})}};
    res.set_content(body.dump(), "application/json");
  });
}

Result<std::string> SimServer::Start(int port) {
  if (http_) return UsageError("the stand-in endpoint is already started");
  http_ = std::make_unique<HttpRoutes>();
  Route();
  // Bounded connections, request time and size (http_listener.h), so that slow or huge
  // requests cannot starve the others or exhaust memory.
  listener_ = std::make_unique<HttpListener>(*http_, HttpLimits{});
  auto bound = listener_->Start(port);
  if (!bound) {
    listener_.reset();
    http_.reset();
    return InfraError(fmt::format("stand-in endpoint: {}", bound.error().message));
  }
  return fmt::format("http://127.0.0.1:{}", *bound);
}

void SimServer::Stop() {
  if (!http_) return;
  {
    std::lock_guard lock(sleep_mu_);
    stopping_ = true;
  }
  sleep_cv_.notify_all();
  listener_->Stop();
  listener_.reset();
  http_.reset();
}

}  // namespace harness::sim
