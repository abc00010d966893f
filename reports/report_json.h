// `harness report --format json`: the report model itself (format kReportFormat).
#pragma once

#include <cstddef>
#include <string>

#include "harness/util/json_file.h"
#include "reports/report_model.h"

namespace harness::reports {

Json ReportJson(const ReportModel& m);

// A commit of the window by its full sha, as the sections' JSON names it.
const std::string& CommitSha(const ReportModel& m, std::size_t commit);

}  // namespace harness::reports
