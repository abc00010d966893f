// `harness report --format markdown`: a short summary of the triage for where people look
// first: GitHub's job summary ($GITHUB_STEP_SUMMARY) and GitLab merge-request notes. The
// overall verdict, the suites' counts, missing shards, regressions (cases that started
// failing at their latest commit) and older failures, the answers of bisect sessions over the
// window, the most likely false verdicts, and a link to the full HTML report. Bounded: every
// list stops at kMarkdownMaxItems and names how many more the HTML shows (docs/report.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "reports/report_model.h"

namespace harness::reports {

inline constexpr std::size_t kMarkdownMaxItems = 20;      // per list
inline constexpr std::size_t kMarkdownMaxTextBytes = 300; // of each message or settle text
inline constexpr double kMarkdownFlakyMin = 0.05;         // a threshold shown when P(false verdict) is at least this

struct MarkdownOptions {
  std::string html_url;    // the full HTML report, linked when set (http/https; the command checks)
  std::string commit_url;  // --commit-url template with {sha}; empty: commits are not links
};

// Text that came from outside (case ids, messages, hosts, subjects) as literal Markdown text
// (CommonMark, GitHub and GitLab): every ASCII punctuation character is backslash-escaped,
// so none of them starts emphasis, code, a link, HTML, a heading, a list, a table cell
// (`|`), a mention (`@`, escaped on GitLab) or a reference; newlines and every other control
// character become a space, so the text stays in its table row or list item; invalid UTF-8
// and bidirectional overrides (U+202A..U+202E, U+2066..U+2069) become U+FFFD.
std::string MarkdownEscape(std::string_view text);

// A URL as a Markdown link destination: bytes that would end or break it (space and other
// controls, `(`, `)`, `<`, `>`, `|`, `\`, backtick, quotes) percent-encoded.
std::string MarkdownUrl(std::string_view url);

std::string ReportMarkdown(const ReportModel& m, const MarkdownOptions& o);

}  // namespace harness::reports
