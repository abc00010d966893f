// Which parts of a run's identity say what was measured, and which only say where and how
// it ran. The measured part pairs baselines, forms history series, trends and flaky ranks and
// is what --resume must match; the rest is stored beside the run (runs.context_json) and
// shown, but never splits a series: a nightly whose server got another port, host or
// checkout, or whose reference stack had a fault switched on (a stand-in for a code change,
// which is exactly what a baseline exists to catch), still pairs with the night before.
//
// One rule for new runs (run/run_identity.cc, cli/cmd_ingest.cc) and for runs stored
// before it (migration 9 re-keys them), so both spellings hash equally. docs/store.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/util/json_file.h"

namespace harness {

struct SplitIdentity {
  Json measured;      // canonical: equal measured identities dump to equal text
  Json context;       // the leaves moved out of it, at the same JSON paths
  std::string hash;   // hex digest of measured.dump(): runs.config_hash
};

// The JSON paths (pointers) that say where and how a run ran.
const std::vector<std::string>& ContextPaths();

// Splits a whole identity (any format_version; the result carries the current one).
SplitIdentity SplitRunIdentity(const Json& whole);

// What migration 9 does to one stored runs.config_json of format 1: the measured part's
// text, the context's text and the new hash. Text that is no identity of format 1 is kept
// as it is (with an empty context and an empty hash: the caller keeps the stored one).
struct RekeyedIdentity {
  std::string measured_json, context_json, hash;
};
RekeyedIdentity RekeyStoredIdentity(std::string_view config_json);

}  // namespace harness
