#include "runners/refstack/refstack.h"

#include "harness/paths.h"
#include "runners/refstack/compiler/compiler.h"

namespace {

class RefStack final : public harness::Stack {
 public:
  explicit RefStack(const harness::StackConfig& config) {
    env_.golden_dir = harness::GoldenDir();
    env_.default_device = config.device;
    env_.precision = config.precision;
    env_.faults = refstack::compiler::CompileFaults::From(config);
  }

  std::string_view name() const override { return "refstack"; }

  harness::Result<harness::CompileResult> Compile(const harness::CompileRequest& request) override {
    auto compiled = refstack::compiler::CompileModel(request, env_);
    if (!compiled) return compiled.error();
    return refstack::compiler::ToCompileResult(compiled->table);
  }

 private:
  refstack::compiler::CompileEnvironment env_;
};

}  // namespace

std::unique_ptr<harness::Stack> MakeRefStack(const harness::StackConfig& config) {
  return std::make_unique<RefStack>(config);
}
