#include "reports/report_text.h"

#include <string>

#include <fmt/format.h>

#include "harness/util/utf8.h"

namespace harness::reports {

std::string ShortCommit(const ReportModel& m, std::size_t commit) { return ShortSha(m.commits[commit].sha); }

std::string ReportText(const ReportModel& m) {
  std::string out = fmt::format("{}\nharness report: {} commits ({} .. {}), {} runs\n", m.night.Line(), m.commits.size(),
                                ShortSha(m.commits.front().sha), ShortSha(m.commits.back().sha), m.runs);
  out += ChangesText(m);
  out += FailuresText(m);
  out += SummaryText(m);
  out += FlakyText(m);
  out += TrendsText(m);
  out += FlipsText(m);
  out += BisectText(m);
  return TerminalText(out);
}

}  // namespace harness::reports
