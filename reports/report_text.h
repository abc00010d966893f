// `harness report --format text`: the triage in a terminal: the latest run per suite, what
// failed and since when, the flaky thresholds ranked, per-question flips counted, and the
// bisect sessions' answers. Trends are summarised as first/last/min/max, not drawn.
#pragma once

#include <cstddef>
#include <string>

#include "reports/report_model.h"

namespace harness::reports {

std::string ReportText(const ReportModel& m);

// A commit of the window by its short sha, as the sections' text renderings name it.
std::string ShortCommit(const ReportModel& m, std::size_t commit);

}  // namespace harness::reports
