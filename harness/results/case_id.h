// What a case id may be, and its parts. A case id ("suite/test_N") names files
// (golden/ops/<id>.json) and reaches the store from suite tables, imported files and merged
// databases, so every entry checks it here: one rule, whatever the source.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace harness {

// Longer ids are refused: a golden file's name must stay within a file system's limits.
inline constexpr std::size_t kMaxCaseIdBytes = 512;

// Why id is not a usable case id, or nothing when it is: refused are the empty id, one
// longer than kMaxCaseIdBytes, a leading '/', a ".." segment between slashes, and NUL or
// any other control character (bytes below 0x20, and 0x7f).
std::optional<std::string> CaseIdProblem(std::string_view id);

// id with control characters spelled \xNN, for messages that quote a refused id.
std::string PrintableCaseId(std::string_view id);

// A case id parsed once into the parts its readers need. SUITE is the part before the first
// '/' (docs/ingest.md), NAME all that follows, '/'s included (GoogleTest's
// "Inst/Param.Test/0"). A native suite's NAME is TEST_N: the test's name and its row in the
// suite table, the _0/_1 that tell sequence_parallel's region replay on from off; an
// imported NAME need not end so. Any string parses; whether it may be stored is
// CaseIdProblem's question.
class CaseId {
 public:
  explicit CaseId(std::string id);
  // SUITE/TEST_N.
  static CaseId Native(std::string_view suite, std::string_view test, std::size_t index);

  const std::string& str() const { return id_; }
  // The whole id when it has no '/'.
  std::string suite() const;
  // Empty when the id has no '/'.
  std::string name() const;

  // A native NAME split at its last '_': TEST (possibly empty) and N.
  struct Row {
    std::string test;
    std::size_t index = 0;
  };
  // The row of a NAME that ends in '_' and decimal digits (within std::size_t); nothing
  // for any other NAME.
  std::optional<Row> row() const;

 private:
  std::string id_;
  std::size_t slash_;   // of the first '/', npos when none
};

}  // namespace harness
