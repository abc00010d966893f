#include "runners/openai/openai_stack.h"

#include <optional>
#include <utility>

#include "runners/openai/openai_config.h"
#include "runners/openai/server_launch.h"

namespace harness::openai {
namespace {

// The endpoint of the config's section; with launch, the server started by Start and
// stopped with its process group when the session ends.
class OpenAiEndpointSession : public EvalEndpointSession {
 public:
  explicit OpenAiEndpointSession(OpenAiSettings settings) : launch_(std::move(settings.launch)) {
    endpoint = EndpointTarget{settings.base_url, settings.model, settings.chat, settings.api_key_env};
  }

  Status Start(const std::filesystem::path& db) override {
    if (!launch_) return OkStatus();
    auto server = LaunchedServer::Launch(*launch_, {endpoint.base_url, endpoint.model, endpoint.api_key_env},
                                         ServerLogPath(db));
    if (!server) return server.error();
    server_ = std::move(server).value();
    endpoint.base_url = server_->base_url();
    server_log = server_->log().string();
    return OkStatus();
  }

 private:
  std::optional<LaunchSettings> launch_;
  std::unique_ptr<LaunchedServer> server_;
};

// Eval loops only: the suites talk to its OpenAI-compatible endpoint; compile suites skip.
class OpenAiStack : public Stack {
 public:
  std::string_view name() const override { return "openai"; }
  bool SupportsCompile() const override { return false; }
  bool ServesEvalEndpoint() const override { return true; }
  Result<CompileResult> Compile(const CompileRequest&) override {
    return UsageError("the openai stack serves eval loops only; it cannot compile");
  }
  Result<std::unique_ptr<EvalEndpointSession>> OpenEvalEndpoint(const StackConfig& config,
                                                                const std::string& origin) const override {
    auto settings = ParseOpenAiSettings(config, origin);
    if (!settings) return settings.error();
    return std::unique_ptr<EvalEndpointSession>(std::make_unique<OpenAiEndpointSession>(std::move(settings).value()));
  }
};

}  // namespace

Result<std::unique_ptr<Stack>> MakeOpenAiStack(const StackConfig&) {
  return std::unique_ptr<Stack>(std::make_unique<OpenAiStack>());
}

}  // namespace harness::openai
