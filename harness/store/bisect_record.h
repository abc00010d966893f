// The store's door for `harness bisect`: its sessions (begun, one row per step as it
// happens, finished with the answer; read back by `bisect log` and replay) and the
// regressions `bisect --auto` found in a nightly. Its reading half, BisectRecordReader, is what
// `bisect log` and the report read through, and all a read-only store hands out of it
// (store.h). docs/bisect.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/store_door.h"
#include "harness/util/error.h"

namespace harness {

struct BisectStepRow {
  int64_t step = 0;
  std::string sha;
  std::string source;              // store | command
  std::optional<int64_t> run_id;
  std::optional<int64_t> exit_code;
  std::string evidence_json;
  std::string decision_json;
};

struct BisectSessionRow {
  int64_t id = 0;
  std::string started_at, finished_at;
  std::string good, bad, target;
  std::string args_json;
  std::string status;              // running | culprit | no-culprit | ambiguous | error
  std::string culprit;
  double confidence = 0;
  int64_t runs = 0;
  std::string result_json;
  std::vector<BisectStepRow> steps;
};

// A regression `harness bisect --auto` found in a nightly against the previous one.
struct RegressionRow {
  int64_t id = 0;
  int64_t run_id = 0;              // the nightly (its first shard's run)
  int64_t baseline_run_id = 0;     // the previous nightly of the same measured identity
  std::string suite;
  std::string kind;                // paired | gate | status
  std::vector<std::string> cases;
  std::string confirmation;        // confirmed | not-confirmed | not-tried
  std::string confirm_json;        // the confirming reruns: [{"exit_code", "reproduced", "runs"}]
  std::optional<int64_t> session_id;  // the bisect session of a confirmed regression
  std::string at;
};

// The reads of the bisect record: sessions with their steps, and regressions.
class BisectRecordReader : protected StoreDoor {
 public:
  using StoreDoor::StoreDoor;

  Result<BisectSessionRow> BisectSession(int64_t session_id);
  // Every stored bisect session's id, oldest first.
  Result<std::vector<int64_t>> BisectSessionIds();
  // The sessions still marked running (live, or left so by a process that died), oldest first.
  Result<std::vector<int64_t>> RunningBisectSessionIds();
  Result<std::vector<RegressionRow>> Regressions();  // oldest first
};

class BisectRecord : public BisectRecordReader {
 public:
  using BisectRecordReader::BisectRecordReader;

  // Bisect sessions: begun, one row per step as it happens, finished with the answer.
  Result<int64_t> BeginBisect(const BisectSessionRow& session);
  Status AddBisectStep(int64_t session_id, const BisectStepRow& step);
  Status FinishBisect(int64_t session_id, const BisectSessionRow& session);

  // Regressions found by `bisect --auto`, linked to their nightly and bisect session.
  Result<int64_t> AddRegression(const RegressionRow& regression);
  Status SetRegressionSession(int64_t regression_id, int64_t session_id);
  // Forgets what bisect --auto answered for the nightly whose first shard is run_id (its
  // regressions; their bisect sessions stay), before `bisect --auto --again` answers anew.
  Status DeleteRegressionsOf(int64_t run_id);
};

}  // namespace harness
