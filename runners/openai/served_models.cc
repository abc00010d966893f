#include "runners/openai/served_models.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/util/json_file.h"
#include "runners/openai/openai_client.h"

namespace harness::openai {
namespace {

// A model list is a few hundred bytes; a server that sends more is not answering this route.
constexpr std::size_t kMaxBody = 1 << 20;

size_t Append(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t n = size * count;
  if (body->size() + n > kMaxBody) return 0;  // aborts the transfer
  body->append(data, n);
  return n;
}

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
  std::unique_ptr<CURL, void (*)(CURL*)> easy(curl_easy_init(), curl_easy_cleanup);
  if (!easy) return {};
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(nullptr, curl_slist_free_all);
  if (!target.api_key_env.empty())
    if (const char* key = std::getenv(target.api_key_env.c_str()); key && *key)
      headers.reset(curl_slist_append(nullptr, fmt::format("Authorization: Bearer {}", key).c_str()));
  const std::string url = V1Url(target.base_url, "/models");
  std::string body;
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(e) != CURLE_OK) return {};
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) return {};
  return ParseModelList(body).value_or(std::vector<std::string>{});
}

}  // namespace harness::openai
