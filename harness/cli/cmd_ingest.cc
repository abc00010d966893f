// harness ingest --format FORMAT FILE... --commit SHA [--repo PATH] [--suite NAME]
//                [--case ID] [--samples FILE]... [--filter-name NAME] [--db PATH]
// Imports results produced elsewhere (docs/ingest.md): each file is read whole (a regular
// file within its format's size limit), then written in one transaction; the same file
// again for the same commit adds nothing.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/ingest/ingest.h"
#include "harness/store/identity_rule.h"
#include "harness/store/store.h"
#include "harness/util/hash.h"
#include "harness/util/input_file.h"
#include "harness/util/json_file.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

struct IngestCliOptions {
  std::string format;
  std::vector<std::string> files;
  std::vector<std::string> samples;
  std::string commit;
  std::string repo = ".";
  std::string suite;
  std::string case_id;
  std::string filter_name = kDefaultLmEvalFilter;
  std::string db = DefaultDbPath();
};

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The run identity of an import: the source format, how its cases were named and (lm-eval)
// the filter its accuracy is read with. Runs ingested the same way pair with each other as
// reruns (compare, baselines). Whether samples were given is no part of it: samples given
// later attach to the run their file became.
Json IngestIdentity(const IngestCliOptions& o) {
  Json ingest{{"format", o.format}, {"suite", o.suite}, {"case", o.case_id}};
  if (o.format == "lm-eval") ingest["filter"] = o.filter_name;
  return Json{{"format_version", kRunIdentityFormat}, {"ingest", ingest}};
}

int IngestCommand(const IngestCliOptions& o) {
  const auto& formats = IngestFormats();
  if (std::find(formats.begin(), formats.end(), o.format) == formats.end())
    throw FatalError(ExitCode::kUsage, fmt::format("--format '{}' is not one of {}", o.format, fmt::join(formats, ", ")));
  if (!o.samples.empty() && o.files.size() != 1)
    throw FatalError(ExitCode::kUsage, "--samples belongs to one results file: give exactly one FILE");
  IngestOptions options{o.suite, o.case_id, {}, {}, o.filter_name};
  for (const auto& s : o.samples) {
    options.samples.push_back(ValueOrThrow(ReadInputFile(s, kMaxLmEvalSamplesFileBytes, "samples files")));
    options.sample_origins.push_back(s);
  }
  ValueOrThrow(CheckIngestOptions(options));  // before the database is created
  const CommitInfo commit = ResolveCommitOption(o.commit, o.repo);
  auto store = ValueOrThrow(Store::Open(o.db));
  const int64_t commit_id = ValueOrThrow(store->UpsertCommit(commit));
  const SplitIdentity identity = SplitRunIdentity(IngestIdentity(o));
  const NewRun run{commit_id, "ingest:" + o.format, identity.hash, identity.measured.dump(), Hostname(),
                   kHarnessVersion, "0/1"};
  // File by file: a bad file stops the command, the files before it stay ingested.
  for (const auto& path : o.files) {
    const std::string text = ValueOrThrow(ReadInputFile(path, MaxIngestFileBytes(o.format), o.format + " files"));
    auto parsed = ValueOrThrow(ParseIngestFile(o.format, text, path, options));
    std::vector<IngestedRun> writes;
    std::vector<bool> has_samples;
    for (auto& p : parsed) {
      has_samples.push_back(p.has_samples);
      writes.push_back(IngestedRun{run, std::move(p.cases), IngestedFile{Fnv1a64Hex(p.content), o.format, p.source}});
    }
    auto ids = ValueOrThrow(store->WriteIngestedRuns(writes));
    for (std::size_t i = 0; i < writes.size(); ++i) {
      const auto& w = writes[i];
      if (!ids[i]) {
        // Ingested before: samples given now attach to that run (one run per file and commit).
        const auto attached =
            has_samples[i] ? ValueOrThrow(store->AttachIngestedSamples(w)) : std::optional<AttachedSamples>();
        if (attached && attached->cases > 0)
          std::printf("%s: already ingested for %s as run %lld: %lld samples added to %d case(s)\n",
                      w.file.path.c_str(), commit.sha.c_str(), static_cast<long long>(attached->run_id),
                      static_cast<long long>(attached->samples), attached->cases);
        else
          std::printf("%s: already ingested for %s, nothing added\n", w.file.path.c_str(), commit.sha.c_str());
        continue;
      }
      std::vector<CaseResult> results;
      for (const auto& c : w.cases) results.push_back(c.result);
      const StatusCounts n = CountStatuses(results);
      std::printf("%s: run %lld (%s) at %s: %zu cases, %d pass, %d fail, %d error, %d skip\n", w.file.path.c_str(),
                  static_cast<long long>(*ids[i]), run.stack.c_str(), commit.sha.c_str(), w.cases.size(), n.pass,
                  n.fail, n.error, n.skip);
    }
  }
  return static_cast<int>(ExitCode::kPass);
}

}  // namespace

CommandMain SetupIngest(CLI::App& app) {
  auto o = std::make_shared<IngestCliOptions>();
  app.add_option("--format", o->format, fmt::format("Format of the files: {}", fmt::join(IngestFormats(), "|")))
      ->required();
  app.add_option("files", o->files, "Files to import, each in one transaction")->required();
  app.add_option("--commit", o->commit, "Commit the results belong to: a hex sha, or a revision of --repo")->required();
  app.add_option("--repo", o->repo, "Git repository that knows --commit (default: .)");
  app.add_option("--suite", o->suite, "Suite of the imported cases (default: per format, docs/ingest.md)");
  app.add_option("--case", o->case_id, "Case id SUITE/NAME for a file holding one case (e.g. to pair with gsm8k/test_0)");
  // One path per --samples, so "--samples s.jsonl results.json" leaves results.json a FILE.
  app.add_option("--samples", o->samples,
                 "Per-sample results of the one FILE: lm-eval --log_samples files (repeatable), or sglang's "
                 "--raw-result-file for the last line of an sglang-gsm8k FILE")
      ->allow_extra_args(false);
  app.add_option("--filter-name", o->filter_name,
                 "lm-eval: the filter read for accuracy, interval and samples (default strict-match)");
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  return [o] { return IngestCommand(*o); };
}

}  // namespace harness
