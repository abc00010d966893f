// One small GET to an OpenAI-compatible server: its model list (served_models.h), its
// readiness route (server_launch.h). The API key goes only into the Authorization header.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace harness::openai {

struct HttpAnswer {
  long status = 0;
  std::string body;
};

// The answer to GET url within timeout_s, with "Authorization: Bearer $api_key_env" when
// that variable is named and set. Nothing when none came: no connection, a timeout, or a
// body over max_body_bytes (a server that sends more is not answering this route).
std::optional<HttpAnswer> HttpGet(const std::string& url, const std::string& api_key_env, double timeout_s,
                                  std::size_t max_body_bytes);

}  // namespace harness::openai
