// The pieces of the Markdown summary its sections share (reports/report_markdown.cc writes the
// headline, reports/sections/<section>_markdown.cc a section each): the page written into, and
// what several sections write the same way (a commit, a culprit, a list's "and N more").
// Internal to reports/.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "harness/store/bisect_changes.h"
#include "reports/report_markdown.h"
#include "reports/report_model.h"

namespace harness::reports {

// The page: the model and options it renders, the window's commits by sha, and the Markdown
// written so far.
struct MarkdownPage {
  MarkdownPage(const ReportModel& model, const MarkdownOptions& options);

  const ReportModel& m;
  const MarkdownOptions& o;
  std::map<std::string, std::size_t> commit_index;
  std::string out;
};

// The base of a section's Markdown renderer: the page by the names every renderer uses.
class MarkdownSection {
 public:
  explicit MarkdownSection(MarkdownPage& page)
      : m_(page.m), o_(page.o), commit_index_(page.commit_index), out_(page.out) {}

 protected:
  std::string Sha(const std::string& sha) const;

  // A stored sha is hex, but a damaged or hostile database may hold anything: inside a code
  // span only a backtick could end it, so anything but [0-9a-z] is dropped.
  static std::string HexOnly(const std::string& s);

  std::string Commit(std::size_t i) const;

  void More(std::size_t shown, std::size_t total, const char* what);

  // The culprit linked (with --commit-url), else the words every rendering shows; a session
  // that named several lists them below, as items indented by indent.
  std::string CulpritLine(const CulpritNote& n, const std::string& indent) const;

  // "\n  1. `abc123def456` subject: moved -0.0060 (-0.60 pp), posterior 0.990" per culprit,
  // for two or more; each sha linked like every other.
  std::string CulpritList(const std::vector<BisectChange>& culprits, const std::string& indent) const;

  const ReportModel& m_;
  const MarkdownOptions& o_;
  const std::map<std::string, std::size_t>& commit_index_;
  std::string& out_;
};

// The first line of an outside text, cut and escaped.
std::string Snippet(const std::string& s);

}  // namespace harness::reports
