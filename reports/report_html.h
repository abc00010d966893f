// The triage report as one self-contained HTML file: inline CSS, SVG and one small
// script (filters kept in the URL fragment), a Content Security Policy that forbids every
// network access and allows only that script (by its SHA-256). Sections summary, failures,
// trends, flaky, flips and bisect (docs/report.md). Deterministic: the same model gives the
// same bytes.
#pragma once

#include <string>

#include "reports/report_model.h"

namespace harness::reports {

struct HtmlOptions {
  std::string commit_url;  // --commit-url template with {sha}; empty: commits are not links
  std::string title = "harness report";
};

std::string ReportHtml(const ReportModel& m, const HtmlOptions& o);

// The inline filter script and its CSP source expression ('sha256-BASE64').
const std::string& ReportScript();
std::string ScriptHashSource(const std::string& script);

}  // namespace harness::reports
