#include "harness/run/failure_text.h"

#include <fmt/format.h>

#include "harness/util/paths.h"

namespace harness {
namespace {

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (true) {
    const auto nl = s.find('\n', start);
    lines.push_back(s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return lines;
}

bool Indented(std::string_view line) { return line.starts_with("  "); }

// How many leading lines of the message are GoogleTest's assertion text (0: none known).
std::size_t FrameworkLines(const std::vector<std::string_view>& lines) {
  const std::string_view first = lines.front();
  std::size_t n = 1;
  if (first.starts_with("Value of: ")) {  // EXPECT_TRUE/FALSE, EXPECT_THAT
    while (n < lines.size() && (lines[n].starts_with("  Actual:") || lines[n].starts_with("Expected:") ||
                                lines[n].starts_with("  Which is:")))
      ++n;
    return n;
  }
  if (first == "Expected equality of these values:") {  // EXPECT_EQ and kin, with a diff for strings
    while (n < lines.size() && Indented(lines[n])) ++n;
    if (n < lines.size() && lines[n] == "With diff:") {
      ++n;
      while (n < lines.size() && (lines[n].starts_with("@@") || lines[n].starts_with(" ") ||
                                  lines[n].starts_with("-") || lines[n].starts_with("+")))
        ++n;
    }
    return n;
  }
  if (first.starts_with("The difference between ")) {  // EXPECT_NEAR: three "evaluates to" lines
    while (n < lines.size() && n < 4 && lines[n].find(" evaluates to ") != std::string_view::npos) ++n;
    return n;
  }
  if (first.starts_with("Expected: (") || first == "Failed" || first.starts_with("Expected: ")) return 1;
  return 0;
}

std::string Join(const std::vector<std::string_view>& lines, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) out += (i == from ? "" : "\n") + std::string(lines[i]);
  return out;
}

}  // namespace

GtestMessage SplitGtestMessage(std::string_view message) {
  const auto lines = Lines(message);
  const std::size_t n = FrameworkLines(lines);
  return {Join(lines, 0, n), Join(lines, n, lines.size())};
}

void FailureText::Add(std::string_view file, int line, std::string_view message) {
  GtestMessage m = SplitGtestMessage(message);
  const std::string where = fmt::format("{}:{}", WithoutSourceRoot(std::string(file)), line);
  if (m.finding.empty()) {  // the assertion said nothing more: its own text is the finding
    m.finding = m.framework;
    m.framework.clear();
  }
  findings_.push_back(WithoutSourceRoot(std::move(m.finding)));
  details_.push_back(m.framework.empty() ? where : where + ": " + WithoutSourceRoot(std::move(m.framework)));
}

void FailureText::AddPlain(std::string_view text) { findings_.push_back(WithoutSourceRoot(std::string(text))); }

std::string FailureText::Text() const {
  std::string out;
  for (const auto& part : findings_) out += (out.empty() ? "" : "\n") + part;
  for (const auto& part : details_) out += (out.empty() ? "" : "\n") + part;
  return out;
}

std::string WithoutSourceRoot(std::string text) {
  for (const std::string& root : {SourceRoot().string(), DataRoot().string()}) {
    if (root.empty() || root == "/") continue;
    const std::string prefix = root.ends_with('/') ? root : root + "/";
    for (std::size_t at = 0; (at = text.find(prefix, at)) != std::string::npos;) text.erase(at, prefix.size());
  }
  return text;
}

}  // namespace harness
