#include "runners/openai/served_models.h"

#include <algorithm>

#include "harness/util/json_file.h"
#include "runners/openai/http_get.h"
#include "runners/openai/openai_client.h"

namespace harness::openai {
namespace {

// A model list is a few hundred bytes; a server that sends more is not answering this route.
constexpr std::size_t kMaxBody = 1 << 20;

}  // namespace

std::optional<std::vector<std::string>> ParseModelList(const std::string& body) {
  const auto j = ParseJsonOrDiscarded(body);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) return std::nullopt;
  std::vector<std::string> ids;
  for (const auto& m : j["data"]) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) return std::nullopt;
    ids.push_back(m["id"].get<std::string>());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<std::string> ServedModels(const EndpointTarget& target, double timeout_s) {
  const auto answer = HttpGet(V1Url(target.base_url, "/models"), target.api_key_env, timeout_s, kMaxBody);
  if (!answer || answer->status != 200) return {};
  return ParseModelList(answer->body).value_or(std::vector<std::string>{});
}

}  // namespace harness::openai
