#include "harness/ingest/ingest.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/ingest/gtest_json.h"
#include "harness/ingest/junit_xml.h"
#include "harness/ingest/lm_eval.h"
#include "harness/ingest/sglang_gsm8k.h"
#include "harness/ingest/tensorcast_ingest.h"
#include "harness/results/case_id.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

// --case (as CheckIngestOptions parsed it) names the single case of a file.
Status ApplyCaseId(std::vector<ParsedRun>& runs, const std::optional<CaseId>& id) {
  if (!id) return OkStatus();
  for (auto& run : runs) {
    if (run.cases.size() != 1)
      return UsageError(fmt::format("{}: --case names one case, but the file holds {}", run.source, run.cases.size()));
    run.cases[0].suite = id->suite();
    run.cases[0].result.case_id = id->str();
  }
  return OkStatus();
}

void CutText(std::string& text) { text.resize(Utf8Prefix(text, kMaxIngestedTextBytes).size()); }

Status CheckName(const std::string& source, const char* what, const std::string& name) {
  if (name.size() <= kMaxIngestedTextBytes) return OkStatus();
  return UsageError(fmt::format("{}: {} '{}...' is {} bytes, more than the {} a stored name may have", source, what,
                                ValidUtf8(Utf8Prefix(name, 60)), name.size(), kMaxIngestedTextBytes));
}

// Texts are cut, names refused (kMaxIngestedTextBytes).
Status BoundStoredTexts(ParsedRun& run) {
  for (auto& c : run.cases) {
    auto& r = c.result;  // its case id is bounded by CaseIdProblem
    CutText(r.message);
    for (const auto& m : r.metrics)
      if (auto s = CheckName(run.source, "metric name", m.name); !s) return s;
    for (const auto& op : r.ops) {
      if (auto s = CheckName(run.source, "op name", op.op); !s) return s;
      if (auto s = CheckName(run.source, "input shapes", op.input_shapes); !s) return s;
    }
    for (auto& sample : c.samples) {
      if (auto s = CheckName(run.source, "sample key", sample.key); !s) return s;
      CutText(sample.expected);
      CutText(sample.extracted);
    }
  }
  return OkStatus();
}

}  // namespace

Result<std::optional<CaseId>> CheckIngestOptions(const IngestOptions& o) {
  if (o.case_id.empty()) return std::optional<CaseId>();
  if (auto problem = CaseIdProblem(o.case_id))
    return UsageError(fmt::format("--case '{}': {}", PrintableCaseId(o.case_id), *problem));
  CaseId id(o.case_id);
  if (id.suite().empty() || id.name().empty())
    return UsageError(fmt::format("--case '{}': a case id is SUITE/NAME", o.case_id));
  if (!o.suite.empty() && o.suite != id.suite())
    return UsageError(fmt::format("--case '{}' is not in --suite '{}'", o.case_id, o.suite));
  return std::optional<CaseId>(std::move(id));
}

const std::vector<std::string>& IngestFormats() {
  static const std::vector<std::string> kFormats = {"junit",        "gtest-json",       "lm-eval",
                                                    "sglang-gsm8k", "sglang-gsm8k-raw", "tensorcast-table"};
  return kFormats;
}

std::uintmax_t MaxIngestFileBytes(std::string_view format) {
  constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;
  // A JUnit report carries test output; the others are summaries.
  if (format == "junit") return 256 * kMiB;
  for (const auto& f : IngestFormats())
    if (f == format) return 64 * kMiB;
  return 0;
}

std::optional<double> ParseNumber(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (!text.empty() && text.back() == 's') text.remove_suffix(1);  // GoogleTest's "0.1s"
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Status CheckUniqueCaseIds(const std::vector<FinishedCase>& cases, const std::string& origin) {
  std::map<std::string, int> seen;
  for (const auto& c : cases)
    if (++seen[c.result.case_id] == 2)
      return UsageError(fmt::format("{}: case '{}' appears more than once (the store keeps one result per case "
                                    "and run)",
                                    origin, c.result.case_id));
  return OkStatus();
}

CaseStatus WorseStatus(CaseStatus a, CaseStatus b) {
  auto rank = [](CaseStatus s) {
    switch (s) {
      case CaseStatus::kError: return 4;
      case CaseStatus::kFail: return 3;
      case CaseStatus::kRunning: return 2;
      case CaseStatus::kSkip: return 1;
      case CaseStatus::kPass: return 0;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

std::vector<FinishedCase> MergeRepeatedCases(std::vector<FinishedCase> cases) {
  // Linear in the repeats: the metric names each merged case holds are a hash set (a scan of
  // its metrics per repeat was quadratic when repeats name new metrics), and a message stops
  // growing once it is past what is stored (BoundStoredTexts cuts it there: same text).
  std::vector<FinishedCase> out;
  std::unordered_map<std::string, std::size_t> at;            // case id -> index in out
  std::vector<std::unordered_set<std::string>> metric_names;  // per case in out
  for (auto& c : cases) {
    auto [it, fresh] = at.emplace(c.result.case_id, out.size());
    if (fresh) {
      metric_names.emplace_back();
      for (const auto& m : c.result.metrics) metric_names.back().insert(m.name);
      out.push_back(std::move(c));
      continue;
    }
    CaseResult& into = out[it->second].result;
    into.status = WorseStatus(into.status, c.result.status);
    if (!c.result.message.empty() && into.message.size() <= kMaxIngestedTextBytes) {
      if (!into.message.empty()) into.message += '\n';
      into.message += c.result.message;
    }
    into.duration_s += c.result.duration_s;
    for (auto& m : c.result.metrics)
      if (metric_names[it->second].insert(m.name).second) into.metrics.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<ParsedRun>> ParseIngestFile(std::string_view format, const std::string& text,
                                               const std::string& origin, const IngestOptions& o) {
  if (!o.samples.empty() && format != "lm-eval" && format != "sglang-gsm8k")
    return UsageError("--samples belongs to --format lm-eval (its per-sample files) or sglang-gsm8k (the raw results)");
  auto case_id = CheckIngestOptions(o);
  if (!case_id) return case_id.error();
  std::vector<ParsedRun> runs;
  // The content hashed is the file alone: its samples, given now or later, attach to the
  // one run a file becomes at a commit.
  auto one = [&](Result<std::vector<FinishedCase>> cases) -> Status {
    if (!cases) return cases.error();
    runs.push_back(ParsedRun{origin, text, std::move(*cases), !o.samples.empty()});
    return OkStatus();
  };
  Status s = OkStatus();
  if (format == "junit") {
    s = one(ParseJunitXml(text, origin, o.suite));
  } else if (format == "gtest-json") {
    s = one(ParseGtestJson(text, origin, o.suite));
  } else if (format == "lm-eval") {
    std::vector<LmEvalSamplesFile> files;
    for (std::size_t i = 0; i < o.samples.size(); ++i) files.push_back({o.samples[i], o.sample_origins[i]});
    s = one(ParseLmEval(text, origin, o.suite, o.filter_name, files));
  } else if (format == "sglang-gsm8k") {
    auto parsed = ParseSglangGsm8k(text, origin, o.suite);
    if (!parsed) return parsed.error();
    runs = std::move(*parsed);
    if (!o.samples.empty()) {
      // bench_sglang.py rewrites its raw file on every run and appends one result line:
      // the raw results are the last line's.
      if (runs.empty()) return UsageError(fmt::format("{}: no result line for the raw results of {}", origin, o.sample_origins[0]));
      if (o.samples.size() != 1) return UsageError("--samples: sglang writes one raw results file per run; give one");
      auto rows = ParseSglangRawResults(o.samples[0], o.sample_origins[0]);
      if (!rows) return rows.error();
      ApplySglangSamples(runs.back().cases.at(0), std::move(*rows));
      runs.back().has_samples = true;
    }
  } else if (format == "sglang-gsm8k-raw") {
    auto c = ParseSglangGsm8kRaw(text, origin, o.suite);
    if (!c) return c.error();
    runs.push_back(ParsedRun{origin, text, {std::move(*c)}, false});
  } else if (format == "tensorcast-table") {
    auto c = ParseTensorCastFile(text, origin, o.suite);
    if (!c) return c.error();
    runs.push_back(ParsedRun{origin, text, {std::move(*c)}, false});
  } else {
    return UsageError(fmt::format("--format '{}' is not one of {}", format, fmt::join(IngestFormats(), ", ")));
  }
  if (!s) return s.error();
  if (auto c = ApplyCaseId(runs, *case_id); !c) return c.error();
  // Names from the file (and --suite) become case ids, and a case id names a golden file.
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      if (auto problem = CaseIdProblem(c.result.case_id))
        return UsageError(fmt::format("{}: case id '{}' {}", run.source, PrintableCaseId(c.result.case_id), *problem));
  for (auto& run : runs)
    if (auto b = BoundStoredTexts(run); !b) return b.error();
  return runs;
}

}  // namespace harness
