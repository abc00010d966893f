// A case's failure message as a person reads it: the finding first, in the suite's domain
// words with its numbers, then where it failed (paths relative to the repository root) and
// the test framework's own text. GoogleTest writes its assertion text ("Value of:
// check.ok()", "Expected equality of these values: ...") before the suite's explanation;
// FailureText puts it after.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace harness {

struct GtestMessage {
  std::string framework;   // GoogleTest's assertion text; empty when not recognised
  std::string finding;     // what the suite streamed into the assertion (may be empty)
};

// Splits one failure's message (TestPartResult::message()) into GoogleTest's assertion
// text and the suite's finding. A message that starts with no known assertion text is all
// finding.
GtestMessage SplitGtestMessage(std::string_view message);

// Collects a case's failures in order; Text() is the case's message: every finding (the
// first one is the headline), then one detail line per failure, "file:line: framework text".
class FailureText {
 public:
  void Add(std::string_view file, int line, std::string_view message);
  void AddPlain(std::string_view text);   // a skip's or other message without a location
  bool empty() const { return findings_.empty() && details_.empty(); }
  std::string Text() const;

 private:
  std::vector<std::string> findings_;
  std::vector<std::string> details_;
};

// Every occurrence of the source root's absolute path (SourceRoot() and DataRoot())
// followed by '/' removed: "/build/host/repo/suites/gmm.cc" -> "suites/gmm.cc". A message
// names files relative to the repository, never the build machine's layout.
std::string WithoutSourceRoot(std::string text);

}  // namespace harness
