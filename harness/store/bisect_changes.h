// Every culprit a bisect session named (docs/bisect.md, "Several culprits"): the `changes`
// of its stored result (bisect_sessions.result_json) and of bisect's JSON output. The writer
// and its one reader live together here, in the store, because the report reads them too
// and may not use harness/bisect/ (which uses run/).
#pragma once

#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"

namespace harness {

// One culprit of several in the range (harness/bisect/culprit_chain.h).
struct BisectChange {
  std::string sha, subject;
  double confidence = 0;
  double size = 0;                        // level after minus level before, in the metric's units
};

// [{commit, subject, confidence, size, size_pp (size x 100)}], in first-parent order.
Json ChangesJson(const std::vector<BisectChange>& changes);

// The `changes` of a session's result. None (an empty list) when the result has no
// `changes`: a session stored before sessions named several. A `changes` that is not a
// list, an entry that is not an object, or a missing or mistyped commit, subject,
// confidence or size is an error naming origin and the field ("changes[1].size"): the
// caller decides what a malformed list costs (the report and bisect --auto's stored
// answer warn and show the first culprit only).
Result<std::vector<BisectChange>> ChangesFromJson(const Json& result, const std::string& origin);

}  // namespace harness
