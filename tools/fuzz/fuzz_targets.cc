#include "tools/fuzz/fuzz_targets.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

#include "harness/eval/answer_extract.h"
#include "harness/golden/golden_ops.h"
#include "harness/ingest/ingest.h"
#include "harness/run/suite_table.h"
#include "harness/stack/stack_config.h"
#include "harness/stack/tensorcast_table.h"
#include "harness/util/json_file.h"
#include "runners/exec/exec_stack.h"
#include "runners/openai/openai_client.h"
#include "runners/openai/openai_config.h"

namespace harness::fuzz {
namespace {

constexpr FuzzTarget kTargets[] = {
    {"answer_extract", AnswerExtract}, {"suite_table", SuiteTable},         {"stack_config", StackConfig},
    {"golden_ops", GoldenOps},         {"openai_response", OpenaiResponse}, {"exec_answer", ExecAnswer},
    {"tensorcast_table", TensorCastTable}, {"ingest_junit", IngestJunit},   {"ingest_gtest_json", IngestGtestJson},
    {"ingest_lm_eval", IngestLmEval},      {"ingest_sglang_gsm8k", IngestSglangGsm8k},
    {"ingest_tensorcast", IngestTensorCast},
};

std::string Text(const uint8_t* data, std::size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// The loaders read files (their messages name file:line), so the input goes to one.
std::filesystem::path Scratch(const std::string& name, const std::string& text) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("harness-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// A refusal is a usage error that names the file it read (origin:line..., or origin: path).
void CheckRefusal(const Error& e, std::initializer_list<std::string_view> origins) {
  if (e.code != ExitCode::kUsage) std::abort();
  for (auto origin : origins)
    if (e.message.rfind(std::string(origin) + ":", 0) == 0) return;
  std::abort();
}

bool Finite(double v) { return std::isfinite(v); }

// What an accepted op row promises: a name, a whole call count, a finite non-negative time.
void CheckOp(const OpRow& op) {
  if (op.op.empty() || op.calls < 0 || !Finite(op.est_seconds) || op.est_seconds < 0) std::abort();
}

void CheckTable(const CompileResult& t) {
  double sum = 0;
  for (const auto& op : t.ops) {
    CheckOp(op);
    sum += op.est_seconds;
  }
  if (!Finite(t.total_seconds) || t.total_seconds < 0 || !Finite(sum)) std::abort();
}

// What an accepted ingest file promises the store: finished cases with ids SUITE/NAME, unique
// in their run, finite numbers, samples with a key and a known outcome, and every text within
// kMaxIngestedTextBytes.
void CheckRuns(const std::vector<ParsedRun>& runs) {
  auto bounded = [](const std::string& text) { return text.size() <= kMaxIngestedTextBytes; };
  for (const auto& run : runs) {
    if (!CheckUniqueCaseIds(run.cases, run.source)) std::abort();
    for (const auto& c : run.cases) {
      const auto& r = c.result;
      if (c.suite.empty() || r.case_id.rfind(c.suite + "/", 0) != 0 || r.case_id.size() == c.suite.size() + 1)
        std::abort();
      if (!bounded(r.case_id) || !bounded(r.message)) std::abort();
      if (r.status == CaseStatus::kRunning || !Finite(r.duration_s) || r.duration_s < 0) std::abort();
      for (const auto& m : r.metrics)
        if (m.name.empty() || !bounded(m.name) || !Finite(m.value) || m.n < 0 || (m.low && !Finite(*m.low)) ||
            (m.high && !Finite(*m.high)))
          std::abort();
      for (const auto& op : r.ops) {
        CheckOp(op);
        if (!bounded(op.op) || !bounded(op.input_shapes)) std::abort();
      }
      std::set<std::string> keys;
      for (const auto& sample : c.samples) {
        const bool scored = sample.outcome == SampleOutcome::kCorrect || sample.outcome == SampleOutcome::kWrong;
        if (sample.key.empty() || !keys.insert(sample.key).second || !scored || !bounded(sample.key) ||
            !bounded(sample.expected) || !bounded(sample.extracted))
          std::abort();
      }
    }
  }
}

int Ingest(std::string_view format, const std::string& text, const IngestOptions& options = {}) {
  auto runs = ParseIngestFile(format, text, "fuzz.in", options);
  if (!runs) {
    CheckRefusal(runs.error(), {"fuzz.in", "samples_fuzz.jsonl"});
    return 0;
  }
  CheckRuns(*runs);
  return 0;
}

}  // namespace

std::span<const FuzzTarget> FuzzTargets() { return kTargets; }

int AnswerExtract(const uint8_t* data, std::size_t size) {
  const std::string text = Text(data, size);
  if (auto a = ExtractAnswer(text)) {
    // An extracted number is canonical: canonicalizing it again changes nothing.
    auto again = CanonicalNumber(a->number);
    if (!again || *again != a->number) std::abort();
  }
  (void)CanonicalNumber(text);
  return 0;
}

int SuiteTable(const uint8_t* data, std::size_t size) {
  const std::string text = Text(data, size);
  // The table must be named after its suite to get past that check into the params.
  std::string name = "fuzz";
  auto j = ParseJsonOrDiscarded(text);
  if (j.is_object() && j.contains("suite") && j["suite"].is_string() && IsIdentifier(j["suite"].get<std::string>()))
    name = j["suite"].get<std::string>();
  (void)LoadSuiteTable(Scratch(name + ".json", text));
  return 0;
}

int StackConfig(const uint8_t* data, std::size_t size) {
  auto config =
      LoadStackConfig(Scratch("stack.json", Text(data, size)), {ExecConfigSection(), openai::OpenAiConfigSection()});
  // The stacks' own sections, as `harness run` checks them before anything starts.
  if (config) {
    (void)ParseExecSettings(*config);
    (void)openai::ParseOpenAiSettings(*config, "stack.json");
  }
  return 0;
}

int GoldenOps(const uint8_t* data, std::size_t size) {
  auto table = LoadGoldenOpTable(Scratch("golden.json", Text(data, size)));
  if (table) (void)DiffOpTables(table->ops, table->ops);
  return 0;
}

int OpenaiResponse(const uint8_t* data, std::size_t size) {
  const std::string body = Text(data, size);
  for (bool chat : {false, true}) {
    openai::CompletionResult r;
    (void)openai::ParseCompletionResponse(body, chat, r);
  }
  return 0;
}

int ExecAnswer(const uint8_t* data, std::size_t size) {
  (void)ParseExecAnswer(Text(data, size), "fuzz");
  return 0;
}

int TensorCastTable(const uint8_t* data, std::size_t size) {
  auto t = ParseTensorCastTable(Text(data, size), "fuzz.txt");
  if (!t) {
    CheckRefusal(t.error(), {"fuzz.txt"});
    return 0;
  }
  CheckTable(*t);
  // The table as printed (table_text) reads back as the same table.
  auto again = ParseTensorCastTable(t->table_text, "again.txt");
  if (!again || again->ops != t->ops || again->total_seconds != t->total_seconds || again->table_text != t->table_text)
    std::abort();
  return 0;
}

int IngestJunit(const uint8_t* data, std::size_t size) { return Ingest("junit", Text(data, size)); }

int IngestGtestJson(const uint8_t* data, std::size_t size) { return Ingest("gtest-json", Text(data, size)); }

int IngestLmEval(const uint8_t* data, std::size_t size) {
  const std::string text = Text(data, size);
  const std::size_t nul = text.find('\0');
  IngestOptions options;
  if (nul != std::string::npos) {
    options.samples = {text.substr(nul + 1)};
    options.sample_origins = {"samples_fuzz.jsonl"};
  }
  return Ingest("lm-eval", text.substr(0, nul), options);
}

// Result lines, then after a NUL the raw per-question results (--samples) of the last line.
int IngestSglangGsm8k(const uint8_t* data, std::size_t size) {
  const std::string text = Text(data, size);
  const std::size_t nul = text.find('\0');
  IngestOptions options;
  if (nul != std::string::npos) {
    options.samples = {text.substr(nul + 1)};
    options.sample_origins = {"samples_fuzz.jsonl"};
    // The raw file alone is a format of its own.
    Ingest("sglang-gsm8k-raw", text.substr(nul + 1));
  }
  return Ingest("sglang-gsm8k", text.substr(0, nul), options);
}

int IngestTensorCast(const uint8_t* data, std::size_t size) { return Ingest("tensorcast-table", Text(data, size)); }

}  // namespace harness::fuzz
