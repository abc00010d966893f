#include "runners/exec/exec_stack.h"

#include <fmt/format.h>

#include <map>

#include "harness/stack/tensorcast_table.h"
#include "harness/util/placeholders.h"
#include "harness/util/subprocess.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

constexpr size_t kStderrTailBytes = 2000;

// The message with the last of the command's stderr, and how much of its stderr was
// never kept (the head and tail RunProcess keeps are bounded).
std::string WithStderr(const std::string& message, const ProcessResult& run) {
  const std::string tail = OutputTail(run.err, kStderrTailBytes);
  if (tail.empty()) return message;
  if (run.err_dropped == 0) return fmt::format("{}; stderr: {}", message, tail);
  return fmt::format("{}; stderr ({} bytes of it dropped), its end: {}", message, run.err_dropped, tail);
}

// The value of each placeholder for a request: the protocol's request fields as text.
std::map<std::string, std::string> PlaceholderValues(const CompileRequest& r) {
  std::map<std::string, std::string> v;
  const Json fields = CompileRequestJson(r);
  for (auto it = fields.begin(); it != fields.end(); ++it)
    v[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  return v;
}

}  // namespace

std::vector<std::string> ExecPlaceholderNames() {
  std::vector<std::string> names;
  for (const auto& [key, value] : PlaceholderValues({})) names.push_back(key);
  return names;
}

namespace {

class ExecStack : public Stack {
 public:
  ExecStack(const StackConfig& config, ExecSettings settings) : config_(config), settings_(std::move(settings)) {}
  std::string_view name() const override { return "exec"; }

  Result<CompileResult> Compile(const CompileRequest& request) override {
    CompileRequest r = request;
    if (r.device.empty()) r.device = config_.device;
    const auto values = PlaceholderValues(r);
    std::vector<std::string> argv;
    for (const auto& arg : settings_.command) argv.push_back(FillTemplate(arg, values));
    Json in{{"format_version", kExecProtocolFormat}, {"kind", "compile"}, {"request", CompileRequestJson(r)},
            {"faults", config_.faults}};
    auto run = RunProcess(argv, {.cwd = settings_.cwd, .env = settings_.env, .stdin_data = in.dump(),
                                 .timeout_s = settings_.timeout_s});
    if (!run) return run.error();
    const std::string& prog = argv.front();
    if (run->timed_out)
      return InfraError(WithStderr(fmt::format("{}: no answer within {} s", prog, settings_.timeout_s), *run));
    if (run->signal) return InfraError(WithStderr(fmt::format("{}: killed by signal {}", prog, run->signal), *run));
    if (run->exit_code != 0)
      return InfraError(WithStderr(fmt::format("{}: exit code {}", prog, run->exit_code), *run));
    // An answer is small (a table of ops); one past the bound is no answer, not one to cut.
    if (run->out_dropped > 0)
      return InfraError(WithStderr(fmt::format("{}: its answer on stdout is over {} bytes ({} bytes dropped)", prog,
                                               kMaxOutputBytes, run->out_dropped),
                                   *run));
    // An answer that does not parse is the command's failure, not bad input to the harness
    // (docs/exec-protocol.md): infrastructure, like a non-zero exit.
    const bool table = settings_.output == "tensorcast-table" ||
                       (settings_.output == "auto" && LooksLikeTensorCastTable(run->out));
    auto answer = table ? ParseTensorCastTable(run->out, prog + " (stdout)") : ParseExecAnswer(run->out, prog + " (stdout)");
    if (!answer) return InfraError(WithStderr(answer.error().message, *run));
    return answer;
  }

 private:
  StackConfig config_;
  ExecSettings settings_;
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

ConfigSection ExecConfigSection() { return {"exec", {"/exec/env"}}; }

Result<ExecSettings> ParseExecSettings(const StackConfig& config) {
  // Checked before any case runs: a bad config is an input error (exit 2), not N case errors.
  const std::string origin = "stack config";
  if (!config.raw.contains("exec"))
    return UsageError(origin + ": the exec stack needs \"exec\": {\"command\": [\"program\", \"arg\", ...]}");
  if (!config.raw["exec"].is_object()) return UsageError(origin + ": exec: expected an object");
  JsonObject exec(config.raw["exec"], origin, "exec");
  if (auto k = exec.KnownKeys({"command", "cwd", "env", "timeout_s", "output"}); !k) return k.error();
  ExecSettings s;
  auto command = exec.StringList("command");
  if (!command) return exec.FieldError("command", "expected an argv array of strings, e.g. [\"python3\", \"stack.py\"]");
  if (command->empty() || command->front().empty()) return exec.FieldError("command", "must name a program");
  const auto known = ExecPlaceholderNames();
  for (size_t i = 0; i < command->size(); ++i)
    if (auto checked = CheckPlaceholders((*command)[i], known); !checked)
      return exec.FieldError(fmt::format("command[{}]", i), checked.error().message);
  s.command = std::move(command).value();
  auto cwd = exec.String("cwd", "");
  if (!cwd) return cwd.error();
  s.cwd = *cwd;
  if (exec.Has("env")) {
    const Json& env = config.raw["exec"]["env"];
    if (!env.is_object()) return exec.FieldError("env", "expected an object of NAME: \"value\"");
    for (const auto& [k, v] : env.items()) {
      if (!v.is_string()) return exec.FieldError("env." + k, "expected a string");
      if (k.empty() || k.find('=') != std::string::npos) return exec.FieldError("env." + k, "not a variable name");
      s.env.emplace_back(k, v.get<std::string>());
    }
  }
  auto timeout = exec.Number("timeout_s", 600);
  if (!timeout) return timeout.error();
  if (!(*timeout > 0) || *timeout > 86400) return exec.FieldError("timeout_s", "must be in (0, 86400] seconds");
  s.timeout_s = *timeout;
  auto output = exec.String("output", "auto");
  if (!output) return output.error();
  if (*output != "auto" && *output != "json" && *output != "tensorcast-table")
    return exec.FieldError("output", fmt::format("'{}': expected auto, json or tensorcast-table", *output));
  s.output = *output;
  return s;
}

Result<std::unique_ptr<Stack>> MakeExecStack(const StackConfig& config) {
  auto settings = ParseExecSettings(config);
  if (!settings) return settings.error();
  return std::unique_ptr<Stack>(std::make_unique<ExecStack>(config, std::move(settings).value()));
}

}  // namespace harness
