// harness ingest --format FORMAT FILE... --commit SHA [--repo PATH] [--suite NAME]
//                [--case ID] [--samples FILE]... [--filter-name NAME] [--db PATH]
// Imports results produced elsewhere (docs/ingest.md; the work is harness/ingest/ingest_files.h):
// each file is read whole, then written in one transaction; the same file again for the same
// commit adds nothing.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/ingest/ingest_files.h"
#include "harness/store/resolve_commit.h"
#include "harness/store/store.h"
#include "harness/util/host.h"

namespace harness {
namespace {

struct IngestCliOptions {
  IngestRequest request;
  std::string commit;
  std::string repo = ".";
  std::string db = DefaultDbPath();
};

int IngestCommand(const IngestCliOptions& o) {
  const IngestOptions options = ValueOrThrow(PrepareIngest(o.request));  // before the database is created
  CommitInfo commit = ResolveCommitOption(o.commit, o.repo);
  auto store = ValueOrThrow(Store::Open(o.db));
  commit.sha = ValueOrThrow(StoredSpelling(store->reader(), commit.sha));  // one commit, one sha
  ValueOrThrow(IngestFiles(store->writer(), o.request, options, commit, Hostname(),
                           [](const std::string& line) { std::printf("%s\n", line.c_str()); }));
  return static_cast<int>(ExitCode::kPass);
}

}  // namespace

CommandMain SetupIngest(CLI::App& app) {
  auto o = std::make_shared<IngestCliOptions>();
  IngestRequest& r = o->request;
  app.add_option("--format", r.format, fmt::format("Format of the files: {}", fmt::join(IngestFormats(), "|")))
      ->required();
  app.add_option("files", r.files, "Files to import, each in one transaction")->required();
  app.add_option("--commit", o->commit, "Commit the results belong to: a hex sha, or a revision of --repo")->required();
  app.add_option("--repo", o->repo, "Git repository that knows --commit (default: .)");
  app.add_option("--suite", r.suite, "Suite of the imported cases (default: per format, docs/ingest.md)");
  app.add_option("--case", r.case_id, "Case id SUITE/NAME for a file holding one case (e.g. to pair with gsm8k/test_0)");
  // One path per --samples, so "--samples s.jsonl results.json" leaves results.json a FILE.
  app.add_option("--samples", r.samples,
                 "Per-sample results of the one FILE: lm-eval --log_samples files (repeatable), or sglang's "
                 "--raw-result-file for the last line of an sglang-gsm8k FILE")
      ->allow_extra_args(false);
  app.add_option("--filter-name", r.filter_name,
                 "lm-eval: the filter read for accuracy, interval and samples (default strict-match)");
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  return [o] { return IngestCommand(*o); };
}

}  // namespace harness
