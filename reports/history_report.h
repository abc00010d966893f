// `harness history`: per commit and case, the runs stored there shown together (count, the
// metric's mean, each run's status; a verdict metric as its words), as a table or as JSON
// (format kHistoryFormat).
#pragma once

#include <string>
#include <vector>

#include "harness/store/result_reader.h"
#include "harness/util/json_file.h"

namespace harness::reports {

// The runs of one case at one commit, in store order (oldest run first).
struct HistoryGroup {
  std::string sha;
  std::optional<int64_t> ordinal;
  std::string subject;
  std::string case_id;
  std::vector<HistoryRow> runs;
  std::optional<double> mean;  // of the runs that stored the metric; none for verdict metrics
};
std::vector<HistoryGroup> GroupHistory(const std::vector<HistoryRow>& rows);

std::string HistoryText(const HistoryQuery& q, const std::vector<HistoryRow>& rows);
Json HistoryJson(const HistoryQuery& q, const std::vector<HistoryRow>& rows);
// DumpJson(HistoryJson(q, rows)), byte for byte, written without building the tree: the
// history of a 10,000-case suite over 20 commits is 200,000 runs, and the tree of it took
// seconds to build, print and free (docs/store.md, "At fleet scale").
std::string HistoryJsonText(const HistoryQuery& q, const std::vector<HistoryRow>& rows);

}  // namespace harness::reports
