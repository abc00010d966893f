// `harness report --format json`: the report model itself (format kReportFormat).
#pragma once

#include "harness/util/json_file.h"
#include "reports/report_model.h"

namespace harness::reports {

Json ReportJson(const ReportModel& m);

}  // namespace harness::reports
