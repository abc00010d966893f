#include "runners/refstack/refstack.h"

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compiler.h"
#include "runners/refstack/compiler/device.h"

namespace {

class RefStack final : public harness::Stack {
 public:
  explicit RefStack(const harness::StackConfig& config) {
    env_.golden_dir = harness::GoldenDir();
    env_.default_device = config.device;
    env_.precision = config.precision;
    env_.faults = harness::compiler::CompileFaults::From(config);
  }

  std::string_view name() const override { return "refstack"; }
  bool RunsReferenceKernels() const override { return true; }

  harness::Result<harness::CompileResult> Compile(const harness::CompileRequest& request) override {
    auto compiled = harness::compiler::CompileModel(request, env_);
    if (!compiled) return compiled.error();
    return harness::compiler::ToCompileResult(compiled->table);
  }

 private:
  harness::compiler::CompileEnvironment env_;
};

}  // namespace

harness::Result<std::unique_ptr<harness::Stack>> MakeRefStack(const harness::StackConfig& config) {
  // An unknown device is an input error before any case runs, not a failure per case.
  auto device = harness::compiler::LoadDeviceProfile(harness::GoldenDir() / "devices", config.device);
  if (!device) return device.error();
  return std::unique_ptr<harness::Stack>(std::make_unique<RefStack>(config));
}
