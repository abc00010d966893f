// The stack interface: what the compile suites (sequence_parallel, gmm) ask of the system
// under test, whichever stack `harness run --stack NAME` picked from the table in
// runners/stacks.cc (refstack, exec, openai); a stack that does not compile makes them skip.
// Not every suite goes through Compile: gsm8k asks an OpenAI-compatible endpoint
// (--endpoint, or the stand-in it starts when the stack runs the reference kernels) and
// fp8_scale_layout calls the reference kernels itself, skipping on a stack that does not run
// them. Suites ask a stack what it can do, never its name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"
#include "harness/stack/stack_config.h"

namespace harness {

// What to compile. Field names follow the modelled system (msmodeling's UserInputConfig).
struct CompileRequest {
  std::string model;                 // e.g. "Qwen/Qwen3-32B" (golden/models/<org>/<name>.json)
  int tp_size = 1;
  int query_len = 128;               // tokens per query
  int num_queries = 1;               // batch
  int num_layers_override = 0;       // 0: the config's num_hidden_layers
  std::string quant = "none";        // none | w8a8 | w4a8 | fp8 | mxfp4
  bool disable_repetition = false;
  bool enable_sequence_parallel = false;
  std::string word_embedding_tp = "row";  // row | col
  std::string device;                // empty: the stack config's device
};

struct CompileResult {
  std::vector<OpRow> ops;            // one row per (op, input shapes), sorted by est time desc
  std::string table_text;            // rendered performance table
  double total_seconds = 0;
  std::vector<std::string> notes;    // what a table reader skipped (an elision row, a cut last row)
  // Number of calls of `op` summed over every shape (0 when absent).
  int64_t Calls(std::string_view op) const {
    int64_t n = 0;
    for (const auto& r : ops) if (r.op == op) n += r.calls;
    return n;
  }
};

// An OpenAI-compatible endpoint named on the command line (--endpoint/--model/--chat)
// or by the openai stack's config. The API key is read from the environment variable
// api_key_env at request time; the key itself is never stored.
struct EndpointTarget {
  std::string base_url;        // e.g. http://127.0.0.1:30000
  std::string model;
  bool chat = false;
  std::string api_key_env;     // empty: no Authorization header
  // The model ids the server lists at GET /v1/models (sorted), when it answered: part of
  // what is measured, so a server that swapped its model never pairs with the night before.
  std::vector<std::string> served_models;
};

// The eval endpoint a stack serves for one run (Stack::OpenEvalEndpoint): what its config
// names, checked before anything starts, and whatever keeps it up. Start brings up a server
// the config launches (once every other input is checked) and fills in where it listens;
// destroying the session stops it, however the run ends.
class EvalEndpointSession {
 public:
  virtual ~EvalEndpointSession() = default;
  // The run's database names where the server's log goes (beside it).
  virtual Status Start(const std::filesystem::path& db) = 0;
  EndpointTarget endpoint;
  std::string server_log;  // the started server's output; empty when none was started
};

class Stack {
 public:
  virtual ~Stack() = default;
  virtual std::string_view name() const = 0;
  // False for stacks that only serve eval loops (openai): compile suites skip there.
  virtual bool SupportsCompile() const { return true; }
  // True for the embedded reference stack: its FP8 kernels run in this process, so a suite
  // may call them itself (fp8_scale_layout) or start the stand-in LM endpoint that answers
  // through them (gsm8k without --endpoint). Other stacks bring such results in otherwise
  // (`harness ingest`, an endpoint).
  virtual bool RunsReferenceKernels() const { return false; }
  // True for a stack that is an OpenAI-compatible server (openai): its config's "openai"
  // section names the endpoint the eval suites ask (or the server to launch).
  virtual bool ServesEvalEndpoint() const { return false; }
  // The endpoint its config section names (ServesEvalEndpoint only); a bad section is a
  // usage error naming origin (the config file) and the field.
  virtual Result<std::unique_ptr<EvalEndpointSession>> OpenEvalEndpoint(const StackConfig& /*config*/,
                                                                        const std::string& /*origin*/) const {
    return UsageError("the " + std::string(name()) + " stack serves no eval endpoint: name one with --endpoint URL");
  }
  virtual Result<CompileResult> Compile(const CompileRequest& request) = 0;
};

// Builds the stack named by config.stack, or lists the known names (exit 2).
Result<std::unique_ptr<Stack>> MakeStack(const StackConfig& config);
// The names of the stack table, in order.
std::vector<std::string> StackNames();
// The config sections the table's stacks own, in table order (exec, openai).
const std::vector<ConfigSection>& StackConfigSections();
// A stack config file whose sections are those of the stack table.
Result<StackConfig> LoadStackConfig(const std::filesystem::path& path);

}  // namespace harness
