// `harness ingest` once its flags are read (docs/ingest.md): the samples files are read and
// checked before any database is touched, then each results file is read whole (a regular
// file within its format's size limit), parsed and written in one transaction; samples given
// for a file ingested before attach to the run it became.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/ingest/ingest.h"
#include "harness/store/run_writer.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

namespace harness {

struct IngestRequest {
  std::string format;
  std::vector<std::string> files;
  std::vector<std::string> samples;  // --samples paths, for the one file
  std::string suite;
  std::string case_id;
  std::string filter_name = kDefaultLmEvalFilter;
};

// What comes before the database: a known format, --samples with exactly one file, the
// samples files read (bounded) and the options checked (CheckIngestOptions). Usage errors.
Result<IngestOptions> PrepareIngest(const IngestRequest& request);

// Writes every file of the request at `commit` (ingested on `host`), one line per run
// written or skipped through `report`, as each file is done: a bad file stops the import and
// is the answer, and the files before it stay ingested.
Status IngestFiles(RunWriter& store, const IngestRequest& request, const IngestOptions& options,
                   const CommitInfo& commit, const std::string& host,
                   const std::function<void(const std::string& line)>& report);

}  // namespace harness
