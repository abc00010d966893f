// Importing results produced elsewhere (`harness ingest`, docs/ingest.md): one reader per
// format turns a file's text into finished cases (results values only); the CLI writes
// them with Store::WriteIngestedRuns, one transaction per file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/results/case_id.h"
#include "harness/results/results.h"
#include "harness/util/error.h"

namespace harness {

// The lm-eval filter read when --filter-name is not given: GSM8K's strict answer format.
inline constexpr const char* kDefaultLmEvalFilter = "strict-match";

// What every reader is told besides the text.
struct IngestOptions {
  std::string suite;                 // --suite: the suite of every case (empty: the format's default)
  std::string case_id;               // --case: the id of a single-case file's case (empty: derived)
  // --samples: lm-eval's per-sample files, or sglang's raw results (--raw-result-file) of the
  // result file's last line; texts with sample_origins.
  std::vector<std::string> samples;
  std::vector<std::string> sample_origins;
  std::string filter_name = kDefaultLmEvalFilter;  // lm-eval --filter-name
};

// One run to store: where it came from, the bytes that identify it (the same bytes in the
// same format for the same commit are stored once) and its cases.
struct ParsedRun {
  std::string source;                // the file, or file:line for one line of a JSON-lines file
  std::string content;               // hashed for the ingested_files row (never the samples)
  std::vector<FinishedCase> cases;
  bool has_samples = false;          // --samples gave this run's samples: they attach to an earlier ingest
};

// The options alone, before any file is read: --case must be a case id (CaseIdProblem)
// of the form SUITE/NAME and in --suite when both are given. Usage error naming the flag;
// else --case parsed (none when it is not given).
Result<std::optional<CaseId>> CheckIngestOptions(const IngestOptions& options);

// The format names `--format` accepts, in the order the docs list them.
const std::vector<std::string>& IngestFormats();

// The largest file of a format ingest reads (docs/ingest.md): a file is held whole and
// parsed into a tree several times its size. 0 for an unknown format.
std::uintmax_t MaxIngestFileBytes(std::string_view format);
// The largest --samples file: one line per document, prompts and answers included.
inline constexpr std::uintmax_t kMaxLmEvalSamplesFileBytes = std::uintmax_t{256} << 20;

// Every text ingest stores is bounded: a message, a sample's expected or extracted answer
// is cut at this many bytes (on a character boundary), and a name (metric, sample key, op
// name, input shapes) longer than this is refused: cut, two names could become one. Case
// ids have their own, smaller bound (kMaxCaseIdBytes).
inline constexpr std::size_t kMaxIngestedTextBytes = 4096;

// Reads text (from origin, a file name) in format. Malformed input is a usage error naming
// origin:line(:column), or origin and the JSON path of the field for JSON structure; so is a
// case id CaseIdProblem refuses (naming origin and the id). Stored texts are bounded by
// kMaxIngestedTextBytes.
Result<std::vector<ParsedRun>> ParseIngestFile(std::string_view format, const std::string& text,
                                               const std::string& origin, const IngestOptions& options);

// Shared by the readers: "0.25" / "0.25s" -> seconds; a number or a string that is wholly
// a finite number -> that number.
std::optional<double> ParseNumber(std::string_view text);
// Refuses two cases with one id (the store keeps one row per case and run).
Status CheckUniqueCaseIds(const std::vector<FinishedCase>& cases, const std::string& origin);

// The worse of two statuses of one test: error > fail > skip > pass.
CaseStatus WorseStatus(CaseStatus a, CaseStatus b);
// Two results of one test name in a report are one case (pytest writes a second <testcase>
// when a test's teardown errors; mocha repeats titles): the worst status, every message in
// file order (joined by a newline), the durations added, the metrics of the first that
// names each. Keeps the order of first appearance. For the readers of test reports, whose
// cases carry no samples.
std::vector<FinishedCase> MergeRepeatedCases(std::vector<FinishedCase> cases);

}  // namespace harness
