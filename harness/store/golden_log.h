// The store's door for `harness golden accept`: a reviewed change of a golden expectation
// recorded in three steps, so that a kill at any point leaves something the next accept can
// finish (docs/golden.md). Its reading half, GoldenLogReader (the changes under way), is what
// `golden diff` reads through, and all a read-only store hands out of it (store.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/store_door.h"
#include "harness/util/error.h"

namespace harness {

// One reviewed change of a golden expectation (`harness golden accept`).
struct GoldenChange {
  int64_t id = 0;
  std::string case_id;
  std::string path;                // the expectation file as the command named it
  std::string old_hash, new_hash;  // Fnv1a64Hex of the file's bytes before and after
  std::string reason;
  std::string sha;                 // the commit of the run whose actual table was accepted
  std::string user;
  std::string at;                  // ISO-8601 UTC; filled by the store
  std::optional<int64_t> from_case_result_id;
};

class GoldenLogReader : protected StoreDoor {
 public:
  using StoreDoor::StoreDoor;

  // Intents neither finished nor abandoned (an accept was killed), oldest first; id is the intent's.
  Result<std::vector<GoldenChange>> PendingGoldenChanges();
};

class GoldenLog : public GoldenLogReader {
 public:
  using GoldenLogReader::GoldenLogReader;

  // Begin commits the intent and returns its id, the caller rewrites the file, Finish moves
  // the intent into golden_changes in one transaction. Abandon drops an intent whose file was
  // not rewritten: nothing is recorded.
  Result<int64_t> BeginGoldenChange(const GoldenChange& change);
  Status FinishGoldenChange(int64_t intent_id);
  Status AbandonGoldenChange(int64_t intent_id);
};

}  // namespace harness
