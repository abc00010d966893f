// The harness version and one named constant per file format and output it reads or
// writes: its reader checks it, its writer writes it and `harness version` prints it.
#pragma once

namespace harness {

inline constexpr const char* kHarnessVersion = "0.2.0";

inline constexpr int kSuiteTableFormat = 2;      // suites/*.json (2: declared params)
inline constexpr int kStackConfigFormat = 1;     // --stack-config
inline constexpr int kCatalogueFormat = 1;       // golden/regressions.json
inline constexpr int kGoldenOpsFormat = 2;       // golden/ops/**.json (2: whole table or calls)
inline constexpr int kDeviceProfileFormat = 1;   // golden/devices/*.json
inline constexpr int kSimProfileFormat = 1;      // golden/sim/*.json
inline constexpr int kExecProtocolFormat = 1;    // the exec stack's stdin/stdout JSON
inline constexpr int kPerfTableFormat = 1;       // the performance table as JSON
inline constexpr int kRunSummaryFormat = 1;      // harness run --format json
inline constexpr int kHistoryFormat = 2;         // harness history --format json (2: runs per commit and case)
inline constexpr int kCompareFormat = 1;         // harness compare --format json
inline constexpr int kRunIdentityFormat = 2;     // runs.config_json and context_json (2: measured and context split)
inline constexpr int kReportFormat = 5;          // harness report: HTML, text and JSON (3: failures beyond the bounds listed by id; 4: incomplete_nightlies, culprits; 5: night, changes; pass counts the at-risk passes)
inline constexpr int kBisectLogFormat = 2;       // harness bisect log (JSON lines); reads 1 too
inline constexpr int kBisectJsonFormat = 1;      // harness bisect --format json
inline constexpr int kGoldenDiffFormat = 1;      // harness golden diff --format json

}  // namespace harness
