#include "runners/openai/openai_config.h"

#include "harness/util/placeholders.h"

namespace harness::openai {

ConfigSection OpenAiConfigSection() { return {"openai", {"/openai/launch/env"}}; }

Result<OpenAiSettings> ParseOpenAiSettings(const StackConfig& config, const std::string& origin) {
  const Json section = config.raw.value("openai", Json::object());
  if (!section.is_object()) return UsageError(origin + ": openai: expected an object");
  JsonObject o(section, origin, "openai");
  if (auto k = o.KnownKeys({"base_url", "model", "chat", "api_key_env", "launch"}); !k) return k.error();
  OpenAiSettings s;
  if (o.Has("launch")) {
    auto launch = ParseLaunchSettings(o);
    if (!launch) return launch.error();
    s.launch = std::move(launch).value();
  }
  if (!s.launch && !o.Has("base_url"))
    return o.FieldError("base_url", "missing: where the server listens (\"http://127.0.0.1:30000\"), or \"launch\": "
                                    "{\"command\": [...]} for the harness to start it");
  auto base_url = o.String("base_url", "http://127.0.0.1:{port}");
  if (!base_url) return base_url.error();
  if (s.launch)
    if (auto checked = CheckPlaceholders(*base_url, LaunchPlaceholderNames()); !checked)
      return o.FieldError("base_url", checked.error().message);
  // A URL with an empty host ("http:///v1") names no server; curl would say so only at the
  // first request, after a launch had waited out its whole readiness timeout.
  if (const auto scheme = base_url->find("://");
      scheme != std::string::npos && (scheme + 3 == base_url->size() || (*base_url)[scheme + 3] == '/'))
    return o.FieldError("base_url", "'" + *base_url + "' has no host after '://'");
  s.base_url = *base_url;
  auto model = o.String("model");
  if (!model) return model.error();
  s.model = *model;
  auto chat = o.Bool("chat", false);
  if (!chat) return chat.error();
  s.chat = *chat;
  auto key = o.String("api_key_env", "");
  if (!key) return key.error();
  s.api_key_env = *key;
  return s;
}

}  // namespace harness::openai
