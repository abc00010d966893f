// `harness golden` past its flags (docs/golden.md): a case's expectation beside its latest
// stored result (a review), and accepting that result's op table as the new expectation,
// logged in three steps (intent committed, file rewritten, change recorded) so that a kill
// at any point leaves something the next accept settles by what the file holds.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/golden/golden_ops.h"
#include "harness/store/golden_log.h"
#include "harness/store/result_reads.h"
#include "harness/util/error.h"
#include "harness/util/json_file.h"

namespace harness {

struct GoldenReview {
  std::string case_id;
  std::filesystem::path path;       // the expectation file
  GoldenOpTable expected;
  std::optional<CaseRef> latest;    // the latest stored result, if any
  std::vector<OpRow> actual;        // its op table
  GoldenCheck check;                // expected against actual (when there is a result)
};

// Every expectation file under <root>/ops, as case ids, sorted.
std::vector<std::string> GoldenCases(const std::filesystem::path& root);

// The review of case_id. Usage errors: no expectation file, one that is not a regular file
// (a symlink is followed), one that names another case.
Result<GoldenReview> LoadReview(GoldenReads& store, const std::filesystem::path& root, const std::string& case_id);

// What a person reads: "matches", "no stored result", or "differs" with the differences.
std::vector<std::string> ReviewLines(const GoldenReview& review);
Json ReviewJson(const GoldenReview& review);

// A note per change a killed accept left pending (for stderr).
Result<std::vector<std::string>> PendingNotes(GoldenLogReader& store);

struct SettleMessages {
  std::vector<std::string> lines;   // what was recorded or dropped (stdout)
  std::vector<std::string> notes;   // pending changes of another golden folder, left alone (stderr)
};
// Settles what killed accepts left pending: a change whose file holds its new content is
// recorded, any other dropped. Only changes of this folder (the path rebuilt from the case
// id matches) are touched, so a crafted or foreign database never makes accept read or
// clean up a file elsewhere.
Result<SettleMessages> SettleInterrupted(GoldenLog& store, const std::filesystem::path& root);

// Why a review's result cannot become the expectation: none stored, an error or skip, no op
// table. A usage error naming the case.
Status CheckAcceptable(const GoldenReview& review);

// Rewrites the expectation from the review's actual table and records the change (intent,
// file, record). Returns the line to print.
Result<std::string> AcceptReview(GoldenLog& store, const GoldenReview& review, const std::string& reason,
                                 const std::string& user);

}  // namespace harness
