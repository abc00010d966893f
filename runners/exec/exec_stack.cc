#include "runners/exec/exec_stack.h"

#include <fmt/format.h>

#include "harness/util/versions.h"

#include "harness/util/subprocess.h"

namespace harness {
namespace {

class ExecStack : public Stack {
 public:
  ExecStack(const StackConfig& config, std::vector<std::string> command, double timeout_s)
      : config_(config), command_(std::move(command)), timeout_s_(timeout_s) {}
  std::string_view name() const override { return "exec"; }

  Result<CompileResult> Compile(const CompileRequest& request) override {
    const auto* command = &command_;
    const auto* timeout = &timeout_s_;
    CompileRequest r = request;
    if (r.device.empty()) r.device = config_.device;
    Json in{{"format_version", kExecProtocolFormat}, {"kind", "compile"}, {"request", CompileRequestJson(r)},
            {"faults", config_.faults}};
    auto run = RunProcess(*command, {.stdin_data = in.dump(), .timeout_s = *timeout});
    if (!run) return run.error();
    const std::string& prog = command->front();
    if (run->timed_out) return InfraError(fmt::format("{}: no answer within {} s", prog, *timeout));
    if (run->signal) return InfraError(fmt::format("{}: killed by signal {}", prog, run->signal));
    if (run->exit_code != 0) {
      std::string err = run->err.substr(0, 2000);
      return InfraError(fmt::format("{}: exit code {}: {}", prog, run->exit_code, err));
    }
    // An answer that does not parse is the command's failure, not bad input to the harness
    // (docs/exec-protocol.md): infrastructure, like a non-zero exit.
    auto answer = ParseExecAnswer(run->out, prog + " (stdout)");
    if (!answer) return InfraError(answer.error().message);
    return answer;
  }

 private:
  StackConfig config_;
  std::vector<std::string> command_;
  double timeout_s_;
};

}  // namespace

Json CompileRequestJson(const CompileRequest& r) {
  return Json{{"model", r.model},
              {"tp_size", r.tp_size},
              {"query_len", r.query_len},
              {"num_queries", r.num_queries},
              {"num_layers_override", r.num_layers_override},
              {"quant", r.quant},
              {"disable_repetition", r.disable_repetition},
              {"enable_sequence_parallel", r.enable_sequence_parallel},
              {"word_embedding_tp", r.word_embedding_tp},
              {"device", r.device}};
}

Result<CompileResult> ParseExecAnswer(const std::string& stdout_text, const std::string& origin) {
  auto j = ParseJson(stdout_text, origin);
  if (!j) return j.error();
  JsonObject o(*j, origin);
  if (auto v = o.RequireVersion(kExecProtocolFormat); !v) return v.error();
  if (!o.Has("ops") || !o.json()["ops"].is_array()) return o.FieldError("ops", "expected a list of op rows");
  CompileResult result;
  const auto& ops = o.json()["ops"];
  for (std::size_t i = 0; i < ops.size(); ++i) {
    JsonObject row(ops[i], origin, fmt::format("ops[{}]", i));
    auto op = row.String("op");
    if (!op) return op.error();
    auto shapes = row.String("input_shapes", "");
    if (!shapes) return shapes.error();
    auto calls = row.Int("calls");
    if (!calls) return calls.error();
    auto est = row.Number("est_seconds", 0);
    if (!est) return est.error();
    result.ops.push_back(OpRow{*op, *shapes, *calls, *est});
  }
  auto total = o.Number("total_seconds", 0);
  if (!total) return total.error();
  result.total_seconds = *total;
  return result;
}

Result<std::unique_ptr<Stack>> MakeExecStack(const StackConfig& config) {
  // Checked before any case runs: a bad config is an input error (exit 2), not N case errors.
  const std::string origin = "stack config";
  if (!config.raw.contains("exec"))
    return UsageError(origin + ": the exec stack needs \"exec\": {\"command\": [\"program\", \"arg\", ...]}");
  if (!config.raw["exec"].is_object()) return UsageError(origin + ": exec: expected an object");
  JsonObject exec(config.raw["exec"], origin, "exec");
  if (auto k = exec.KnownKeys({"command", "timeout_s"}); !k) return k.error();
  auto command = exec.StringList("command");
  if (!command) return exec.FieldError("command", "expected an argv array of strings, e.g. [\"python3\", \"stack.py\"]");
  if (command->empty() || command->front().empty()) return exec.FieldError("command", "must name a program");
  auto timeout = exec.Number("timeout_s", 600);
  if (!timeout) return timeout.error();
  if (!(*timeout > 0) || *timeout > 86400) return exec.FieldError("timeout_s", "must be in (0, 86400] seconds");
  return std::unique_ptr<Stack>(std::make_unique<ExecStack>(config, std::move(command).value(), *timeout));
}

}  // namespace harness
