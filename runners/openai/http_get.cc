#include "runners/openai/http_get.h"

#include <curl/curl.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "runners/openai/curl_global.h"

namespace harness::openai {
namespace {

struct Body {
  std::string text;
  std::size_t max_bytes = 0;
};

size_t Append(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t n = size * count;
  if (body->text.size() + n > body->max_bytes) return 0;  // aborts the transfer
  body->text.append(data, n);
  return n;
}

}  // namespace

std::optional<HttpAnswer> HttpGet(const std::string& url, const std::string& api_key_env, double timeout_s,
                                  std::size_t max_body_bytes) {
  CurlGlobalInitOnce();
  std::unique_ptr<CURL, void (*)(CURL*)> easy(curl_easy_init(), curl_easy_cleanup);
  if (!easy) return std::nullopt;
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(nullptr, curl_slist_free_all);
  if (!api_key_env.empty())
    if (const char* key = std::getenv(api_key_env.c_str()); key && *key)
      headers.reset(curl_slist_append(nullptr, fmt::format("Authorization: Bearer {}", key).c_str()));
  Body body{.text = {}, .max_bytes = max_body_bytes};
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(e) != CURLE_OK) return std::nullopt;
  HttpAnswer answer;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &answer.status);
  answer.body = std::move(body.text);
  return answer;
}

}  // namespace harness::openai
