// The load the report's loaders share (reports/report_model.cc and each section's
// reports/sections/<section>.cc): the window of runs and results read first, and what one
// section's loader hands on to the next (the cases the summary counts, the culprits the
// bisect sessions found). Internal to reports/: the renderers see the model only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/results/case_id.h"
#include "harness/results/night_verdict.h"
#include "harness/results/results.h"
#include "harness/store/result_reads.h"
#include "harness/store/store.h"
#include "reports/report_model.h"

namespace harness::reports {

// One finished case result in the window.
struct Loaded {
  StoredCase stored;
  std::vector<Metric> metrics;
  std::size_t commit = 0;
  std::size_t run_index = 0;   // into the window's runs
  std::string config_hash;
  CaseId key;                  // stored.result.case_id, parsed once as it is loaded
};

// A bisect culprit in the window: a change point of the cases it bisected.
struct CulpritPoint {
  std::size_t commit = 0;
  int64_t session = 0;
  std::set<std::string> cases;   // empty: every case
};

struct ReportLoad {
  ReportLoad(ReadOnlyStore& s, ReportReads& r) : store(s), reads(r) {}

  ReadOnlyStore& store;  // its path and bisect sessions; results are read through reads
  ReportReads& reads;
  ReportModel model;
  std::vector<RunRow> runs;
  std::vector<Loaded> results;
  std::map<std::string, std::vector<const Loaded*>> by_case;
  std::vector<const Loaded*> failing;
  std::vector<const Loaded*> latest_cases;    // the cases the summary counts
  std::vector<CulpritPoint> culprit_points;   // bisect culprits in the window
  NightCounts night;
};

// The base of a section's loader: the load's parts by the names every loader uses.
class SectionLoad {
 public:
  explicit SectionLoad(ReportLoad& load)
      : store_(load.store), reads_(load.reads), model_(load.model), runs_(load.runs), results_(load.results),
        by_case_(load.by_case), failing_(load.failing), latest_cases_(load.latest_cases),
        culprit_points_(load.culprit_points), night_(load.night) {}

 protected:
  ReadOnlyStore& store_;
  ReportReads& reads_;
  ReportModel& model_;
  std::vector<RunRow>& runs_;
  std::vector<Loaded>& results_;
  std::map<std::string, std::vector<const Loaded*>>& by_case_;
  std::vector<const Loaded*>& failing_;
  std::vector<const Loaded*>& latest_cases_;
  std::vector<CulpritPoint>& culprit_points_;
  NightCounts& night_;
};

// A run of a sharded nightly (an unsharded run is shard "0/1", NewRun's default).
bool Sharded(const RunRow& run);

// A commit subject as every format shows it: its first line, cut at kMaxSubjectBytes on a
// character boundary (a subject is the committer's text: it may be a megabyte).
std::string CutSubject(const std::string& subject);

}  // namespace harness::reports
