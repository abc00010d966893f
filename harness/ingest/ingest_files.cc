#include "harness/ingest/ingest_files.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/store/identity_rule.h"
#include "harness/util/hash.h"
#include "harness/util/input_file.h"
#include "harness/util/json_file.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

// The run identity of an import: the source format, how its cases were named and (lm-eval)
// the filter its accuracy is read with. Runs ingested the same way pair with each other as
// reruns (compare, baselines). Whether samples were given is no part of it: samples given
// later attach to the run their file became.
Json IngestIdentity(const IngestRequest& r) {
  Json ingest{{"format", r.format}, {"suite", r.suite}, {"case", r.case_id}};
  if (r.format == "lm-eval") ingest["filter"] = r.filter_name;
  return Json{{"format_version", kRunIdentityFormat}, {"ingest", ingest}};
}

// The line for a file ingested before: samples attached to its run, or nothing added.
Result<std::string> AlreadyIngested(RunWriter& store, const IngestedRun& w, bool has_samples, const CommitInfo& commit) {
  std::optional<AttachedSamples> attached;
  if (has_samples) {
    auto a = store.AttachIngestedSamples(w);
    if (!a) return a.error();
    attached = *a;
  }
  if (attached && attached->cases > 0)
    return fmt::format("{}: already ingested for {} as run {}: {} samples added to {} case(s)", w.file.path, commit.sha,
                       attached->run_id, attached->samples, attached->cases);
  return fmt::format("{}: already ingested for {}, nothing added", w.file.path, commit.sha);
}

std::string Written(const IngestedRun& w, int64_t run_id, const CommitInfo& commit) {
  std::vector<CaseResult> results;
  for (const auto& c : w.cases) results.push_back(c.result);
  const StatusCounts n = CountStatuses(results);
  return fmt::format("{}: run {} ({}) at {}: {} cases, {} pass, {} fail, {} error, {} skip", w.file.path, run_id,
                     w.run.stack, commit.sha, w.cases.size(), n.pass, n.fail, n.error, n.skip);
}

}  // namespace

Result<IngestOptions> PrepareIngest(const IngestRequest& r) {
  const auto& formats = IngestFormats();
  if (std::find(formats.begin(), formats.end(), r.format) == formats.end())
    return UsageError(fmt::format("--format '{}' is not one of {}", r.format, fmt::join(formats, ", ")));
  if (!r.samples.empty() && r.files.size() != 1)
    return UsageError("--samples belongs to one results file: give exactly one FILE");
  IngestOptions options{r.suite, r.case_id, {}, {}, r.filter_name};
  for (const auto& path : r.samples) {
    auto text = ReadInputFile(path, kMaxLmEvalSamplesFileBytes, "samples files");
    if (!text) return text.error();
    options.samples.push_back(std::move(*text));
    options.sample_origins.push_back(path);
  }
  if (auto s = CheckIngestOptions(options); !s) return s.error();
  return options;
}

Status IngestFiles(RunWriter& store, const IngestRequest& r, const IngestOptions& options, const CommitInfo& commit,
                   const std::string& host, const std::function<void(const std::string& line)>& report) {
  auto commit_id = store.UpsertCommit(commit);
  if (!commit_id) return commit_id.error();
  const SplitIdentity identity = SplitRunIdentity(IngestIdentity(r));
  const NewRun run{*commit_id, "ingest:" + r.format, identity.hash, identity.measured.dump(), host, kHarnessVersion,
                   "0/1"};
  for (const auto& path : r.files) {
    auto text = ReadInputFile(path, MaxIngestFileBytes(r.format), r.format + " files");
    if (!text) return text.error();
    auto parsed = ParseIngestFile(r.format, *text, path, options);
    if (!parsed) return parsed.error();
    if (parsed->empty()) report(fmt::format("{}: no result line in it, nothing stored", path));
    std::vector<IngestedRun> writes;
    std::vector<bool> has_samples;
    for (auto& p : *parsed) {
      has_samples.push_back(p.has_samples);
      writes.push_back(IngestedRun{run, std::move(p.cases), IngestedFile{Fnv1a64Hex(p.content), r.format, p.source}});
    }
    auto ids = store.WriteIngestedRuns(writes);
    if (!ids) return ids.error();
    for (std::size_t i = 0; i < writes.size(); ++i) {
      auto line = (*ids)[i] ? Result<std::string>(Written(writes[i], *(*ids)[i], commit))
                            : AlreadyIngested(store, writes[i], has_samples[i], commit);
      if (!line) return line.error();
      report(*line);
    }
  }
  return OkStatus();
}

}  // namespace harness
