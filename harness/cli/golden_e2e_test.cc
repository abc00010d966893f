// harness golden through the real binary, on a copy of suites/ and golden/: the seed's
// case B (the MXFP4 expectation that went stale when the fusion learned its quant tail)
// fails with the stale hint, `golden diff` shows it, `golden accept` fixes it and logs it;
// an accept killed at any write leaves a file and a log the next accept makes agree; a case
// id never leads a write outside the golden folder.
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/store/golden_log_test_util.h"
#include "harness/store/store.h"
#include "harness/testing/kill_at_syscall.h"
#include "harness/testing/test_util.h"
#include "harness/util/hash.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

constexpr const char* kCase = "gmm/test_qwen3_dynamic_quant_3";
constexpr const char* kStale =
    "expectation may be stale: tensor_cast.grouped_matmul_mxfp4_swiglu.default → "
    "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default";

// The expectation before the fix (the seed's test asserted the unquantized-tail op).
constexpr const char* kPreFix = R"({
  "format_version": 2,
  "case": "gmm/test_qwen3_dynamic_quant_3",
  "calls": [
    {"op": "tensor_cast.grouped_matmul_mxfp4_swiglu.default", "calls": 1},
    {"op": "tensor_cast.grouped_matmul_mxfp4.default", "calls": 1}
  ]
}
)";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

struct Fixture {
  TempDir dir;
  std::filesystem::path root = dir / "root";
  std::filesystem::path db = dir / "h.db";
  std::filesystem::path golden_file = root / "golden" / "ops" / "gmm" / "test_qwen3_dynamic_quant_3.json";
  ProcessOptions env;
  Fixture() {
    testing_util::CopyDataRoot(root);
    env.env.emplace_back("HARNESS_ROOT", root.string());
    env.env.emplace_back("USER", "reviewer-1");
  }
  ProcessResult Run(const std::string& commit, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run", "--suite", "gmm", "--db", db.string(), "--commit", commit, "--format",
                                     "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args, env);
  }
  static std::map<std::string, std::pair<std::string, std::string>> Cases(const ProcessResult& r) {
    auto cases = testing_util::RunSummaryCases(r.out);
    EXPECT_FALSE(cases.empty()) << r.out << r.err;
    return cases;
  }
};

// golden diff: the table diff and the hint; exit 1 because it differs.
void ExpectDiffShowsTheStaleHint(const Fixture& f) {
  auto diff = RunHarness({"golden", "diff", kCase, "--db", f.db.string(), "--golden-dir", (f.root / "golden").string()},
                         f.env);
  EXPECT_EQ(diff.exit_code, 1) << diff.err;
  EXPECT_THAT(Lines(diff.out), ::testing::Contains(std::string("  ") + kStale)) << diff.out;
  EXPECT_THAT(Lines(diff.out),
              ::testing::Contains("  tensor_cast.grouped_matmul_mxfp4_swiglu.default: expected 1 call(s), got 0"));
  auto diff_json = RunHarness({"golden", "diff", "--db", f.db.string(), "--format", "json"}, f.env);
  EXPECT_EQ(diff_json.exit_code, 1) << diff_json.err;
  auto dj = ParseJson(diff_json.out, "golden diff --format json");
  ASSERT_TRUE(dj.ok()) << diff_json.out;
  bool found = false;
  for (const auto& c : (*dj)["cases"]) {
    if (c["case"] == kCase) {
      found = true;
      EXPECT_EQ(c["matches"], false);
      ASSERT_EQ(c["stale"].size(), 1u);
      EXPECT_EQ(c["stale"][0]["to"], "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default");
    } else if (c["stored"] == true) {
      EXPECT_EQ(c["matches"], true) << c.dump();
    }
  }
  EXPECT_TRUE(found);
}

// accept: shows the diff, rewrites the file, logs the change.
void ExpectAcceptRewritesAndLogs(const Fixture& f) {
  auto accept = RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason",
                            "PR !699 fuses the dynamic MXFP4 quant into the GMM SwiGLU"},
                           f.env);
  EXPECT_EQ(accept.exit_code, 0) << accept.err;
  EXPECT_THAT(Lines(accept.out), ::testing::Contains(std::string("  ") + kStale)) << accept.out;
  auto accepted_json = ParseJson(ReadFile(f.golden_file), f.golden_file.string());
  ASSERT_TRUE(accepted_json.ok()) << accepted_json.error().message;
  const Json& accepted = *accepted_json;
  ASSERT_EQ(accepted["calls"].size(), 3u) << accepted.dump();
  EXPECT_EQ(accepted["calls"][0]["op"], "tensor_cast.grouped_matmul_mxfp4_swiglu.default");
  EXPECT_EQ(accepted["calls"][0]["calls"], 0);
  EXPECT_EQ(accepted["calls"][1]["op"], "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default");
  EXPECT_EQ(accepted["calls"][1]["calls"], 1);
  EXPECT_EQ(accepted["calls"][2]["calls"], 1);
  auto store = Store::OpenReadOnly(f.db);
  ASSERT_TRUE(store.ok());
  auto changes = RecordedGoldenChanges(f.db, kCase);
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  const GoldenChange& c = (*changes)[0];
  EXPECT_EQ(c.old_hash, Fnv1a64Hex(kPreFix));
  EXPECT_EQ(c.new_hash, Fnv1a64Hex(ReadFile(f.golden_file)));
  EXPECT_EQ(c.reason, "PR !699 fuses the dynamic MXFP4 quant into the GMM SwiGLU");
  EXPECT_EQ(c.sha, "aaaa000000000000000000000000000000000001");
  EXPECT_EQ(c.user, "reviewer-1");
  EXPECT_EQ(c.path, f.golden_file.string());
  EXPECT_TRUE(c.from_case_result_id.has_value());
}

TEST(GoldenE2E, StaleMxfp4ExpectationFailsWithTheHintAndAcceptFixesIt) {
  Fixture f;
  WriteFile(f.golden_file, kPreFix);
  auto run1 = f.Run("aaaa000000000000000000000000000000000001");
  EXPECT_EQ(run1.exit_code, 1) << run1.err;
  auto cases = f.Cases(run1);
  ASSERT_EQ(cases.size(), 5u);
  for (const auto& [id, sm] : cases) {
    if (id == kCase) continue;
    EXPECT_EQ(sm.first, "pass") << id << ": " << sm.second << " (W8A8, W4A8, FP8 and BF16 keep passing)";
  }
  EXPECT_EQ(cases[kCase].first, "fail");
  EXPECT_THAT(Lines(cases[kCase].second), ::testing::Contains(kStale)) << cases[kCase].second;

  ASSERT_NO_FATAL_FAILURE(ExpectDiffShowsTheStaleHint(f));
  ASSERT_NO_FATAL_FAILURE(ExpectAcceptRewritesAndLogs(f));

  // The next run passes against the accepted expectation, and diff agrees.
  auto run2 = f.Run("aaaa000000000000000000000000000000000002");
  EXPECT_EQ(run2.exit_code, 0) << run2.out << run2.err;
  EXPECT_EQ(f.Cases(run2)[kCase].first, "pass");
  EXPECT_EQ(RunHarness({"golden", "diff", kCase, "--db", f.db.string()}, f.env).exit_code, 0);
  // Accepting a case that matches changes nothing and logs nothing.
  const std::string now = ReadFile(f.golden_file);
  EXPECT_EQ(RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason", "again"}, f.env).exit_code, 0);
  EXPECT_EQ(ReadFile(f.golden_file), now);
  EXPECT_EQ(RecordedGoldenChanges(f.db, kCase)->size(), 1u);
}

TEST(GoldenE2E, AcceptRefusesAnErroredCaseAndBadRequests) {
  Fixture f;
  WriteFile(f.golden_file, kPreFix);
  // A stack whose command fails: every case is an infrastructure error.
  WriteFile(f.dir / "exec.json", R"({"format_version": 1, "stack": "exec",
    "exec": {"command": ["sh", "-c", "echo compiler crashed >&2; exit 3"]}})");
  auto run = f.Run("bbbb000000000000000000000000000000000001", {"--stack-config", (f.dir / "exec.json").string()});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(f.Cases(run)[kCase].first, "error");
  auto refused = RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason", "r"}, f.env);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, ::testing::HasSubstr("refusing to accept gmm/test_qwen3_dynamic_quant_3"));
  EXPECT_THAT(refused.err, ::testing::HasSubstr("is error"));
  EXPECT_EQ(ReadFile(f.golden_file), kPreFix);
  EXPECT_TRUE(RecordedGoldenChanges(f.db, "")->empty());

  auto no_reason = RunHarness({"golden", "accept", kCase, "--db", f.db.string()}, f.env);
  EXPECT_EQ(no_reason.exit_code, 2);
  EXPECT_THAT(no_reason.err, ::testing::HasSubstr("--reason"));
  auto blank = RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason", "  "}, f.env);
  EXPECT_EQ(blank.exit_code, 2);
  auto unknown = RunHarness({"golden", "diff", "gmm/test_nope_0", "--db", f.db.string()}, f.env);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, ::testing::HasSubstr("no golden expectation for case 'gmm/test_nope_0'"));
  WriteFile(f.golden_file, "{\"format_version\": 2,\n \"case\": \"gmm/test_qwen3_dynamic_quant_3\", \"calls\": 3}\n");
  auto malformed = RunHarness({"golden", "diff", kCase, "--db", f.db.string()}, f.env);
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_THAT(malformed.err, ::testing::HasSubstr("test_qwen3_dynamic_quant_3.json: calls: expected a list of rows"));
  auto no_db = RunHarness({"golden", "accept", kCase, "--db", (f.dir / "none.db").string(), "--reason", "r"}, f.env);
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(f.dir / "none.db"));
}

std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void Sql(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// `golden accept` on a fixture whose case failed against the pre-fix expectation, killed
// at a chosen step, and the state to go back to before each kill.
struct KilledAccepts {
  Fixture f;
  fs::path saved = f.dir / "saved";
  fs::path folder = f.golden_file.parent_path();
  std::vector<std::string> files_before;

  KilledAccepts() { WriteFile(f.golden_file, kPreFix); }
  // Keeps the database and the golden folder's listing for Reset, once the failing run stored its case.
  void Save() {
    fs::create_directory(saved);
    for (const char* suffix : {"", "-wal"})
      if (fs::exists(f.db.string() + suffix)) fs::copy_file(f.db.string() + suffix, saved / (std::string("h.db") + suffix));
    files_before = Listing(folder);
  }
  // The database, the golden folder and the file as they were before the first accept.
  void Reset() {
    for (const char* suffix : {"", "-wal", "-shm", ".golden.lock"}) fs::remove(f.db.string() + suffix);
    for (const auto& e : fs::directory_iterator(saved)) fs::copy_file(e.path(), f.dir / e.path().filename());
    for (const auto& name : Listing(folder))
      if (std::find(files_before.begin(), files_before.end(), name) == files_before.end()) fs::remove(folder / name);
    WriteFile(f.golden_file, kPreFix);
  }
  // golden accept with this reason, killed at its kill_at-th step (0: never).
  testing_util::TracedRun Accept(const std::string& reason, int kill_at) {
    return testing_util::RunKilledAtSyscall(
        {testing_util::kHarnessBinary, "golden", "accept", kCase, "--db", f.db.string(), "--reason", reason}, f.env.env, kill_at,
        f.dir / "out", f.dir / "err");
  }
  bool KilledAt(const std::string& reason, int k) {
    const auto run = Accept(reason, k);
    EXPECT_EQ(run.error, "");
    EXPECT_TRUE(run.killed) << "it ran only " << run.calls.size() << " steps this time";
    return run.killed;
  }
  // The accept after the kills: the file is the accepted one, logged once with this reason.
  void Settled(const std::string& accepted, const std::string& reason) {
    const auto last = Accept("last one", 0);
    ASSERT_EQ(last.exit_code, 0) << ReadFile(f.dir / "out") << ReadFile(f.dir / "err");
    EXPECT_EQ(ReadFile(f.golden_file), accepted);
    auto store = Store::OpenReadOnly(f.db);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto changes = RecordedGoldenChanges(f.db, kCase);
    ASSERT_TRUE(changes.ok());
    ASSERT_EQ(changes->size(), 1u) << ReadFile(f.dir / "out");
    EXPECT_EQ((*changes)[0].old_hash, Fnv1a64Hex(kPreFix));
    EXPECT_EQ((*changes)[0].new_hash, Fnv1a64Hex(accepted));
    EXPECT_EQ((*changes)[0].reason, reason) << ReadFile(f.dir / "out");
    EXPECT_TRUE((*store)->golden_reader().PendingGoldenChanges()->empty());
    EXPECT_EQ(Listing(folder), files_before) << "a temporary file was left in the golden folder";
  }
};

// kill -9 at every write, sync, rename and unlink `golden accept` makes (the issue's was
// the file's sync): the expectation is always the old bytes or the new ones, never half,
// and the next accept leaves exactly one logged change that matches the file. When the
// killed accept had renamed the new file into place, that change is the killed one's, with
// its reason: the audit trail survives. The accept that settles it may be killed at any of
// its steps too.
TEST(GoldenE2E, AcceptKilledAtAnyStepIsFinishedOrDroppedByTheNext) {
  KilledAccepts t;
  ASSERT_EQ(t.f.Run("cccc000000000000000000000000000000000001").exit_code, 1);
  t.Save();

  // The whole accept, never killed: its steps and the file it writes.
  const auto whole = t.Accept("killed one", 0);
  ASSERT_EQ(whole.error, "");
  ASSERT_EQ(whole.exit_code, 0) << ReadFile(t.f.dir / "err");
  const std::string accepted = ReadFile(t.f.golden_file);
  ASSERT_NE(accepted, kPreFix);
  const std::string steps = ::testing::PrintToString(whole.calls);
  ASSERT_THAT(whole.calls, ::testing::Contains("rename")) << steps;
  ASSERT_GE(std::count(whole.calls.begin(), whole.calls.end(), "fsync"), 2) << "the file and its folder: " << steps;

  int first_after_rename = 0;  // the first kill that leaves the new file and a pending intent
  for (int k = 1; k <= static_cast<int>(whole.calls.size()); ++k) {
    SCOPED_TRACE(::testing::Message() << "killed at step " << k << " (" << whole.calls[k - 1] << ") of " << steps);
    t.Reset();
    ASSERT_TRUE(t.KilledAt("killed one", k));
    const std::string after_kill = ReadFile(t.f.golden_file);
    ASSERT_TRUE(after_kill == kPreFix || after_kill == accepted) << "half a file:\n" << after_kill;
    const bool rewritten = after_kill == accepted;
    if (rewritten && first_after_rename == 0) first_after_rename = k;
    t.Settled(accepted, rewritten ? "killed one" : "last one");
    if (HasFatalFailure()) return;
  }
  ASSERT_GT(first_after_rename, 0) << "no kill fell between the rename and the record";

  // The accept that settles that intent, killed at each of its own steps: the next one
  // still records the first accept's change, once.
  t.Reset();
  ASSERT_TRUE(t.KilledAt("killed one", first_after_rename));
  const auto settling = t.Accept("settling one", 0);
  ASSERT_EQ(settling.exit_code, 0) << ReadFile(t.f.dir / "err");
  const std::string settle_steps = ::testing::PrintToString(settling.calls);
  for (int k = 1; k <= static_cast<int>(settling.calls.size()); ++k) {
    SCOPED_TRACE(::testing::Message() << "the settling accept killed at step " << k << " of " << settle_steps);
    t.Reset();
    ASSERT_TRUE(t.KilledAt("killed one", first_after_rename));
    ASSERT_TRUE(t.KilledAt("settling one", k));
    t.Settled(accepted, "killed one");
    if (HasFatalFailure()) return;
  }
}

// A case id that would lead outside the golden folder, from the command line, an imported
// file or a merged database, is refused (exit 2, naming where it came from and the id)
// before anything is written; the file it aims at is never touched.
TEST(GoldenE2E, CaseIdsThatLeaveTheGoldenFolderAreRefusedAtEveryEntry) {
  Fixture f;
  // Where '../../../outside' leads from <root>/golden/ops: the fixture's folder.
  const fs::path outside = f.dir / "outside.json";
  const std::string bait = "{\"format_version\": 2, \"case\": \"../../../outside\", \"calls\": [{\"op\": \"x\", \"calls\": 1}]}\n";
  WriteFile(outside, bait);
  const std::string rule = "-----------------------------------------  --------------  ------------  ----------\n";
  WriteFile(f.dir / "step.txt", rule + "                   Name                    analytic total  analytic avg  # of Calls\n" +
                                    rule + "tensor_cast.all_gather.default                   10.000ms       5.000ms           2\n" + rule);
  auto stored_cases = [&](const fs::path& db) {
    if (!fs::exists(db)) return std::vector<std::string>{};
    return *(*Store::OpenReadOnly(db))->reader().KnownCases();
  };
  const std::string commit = "dddd000000000000000000000000000000000001";
  auto ingest = [&](const std::vector<std::string>& extra, const fs::path& db) {
    std::vector<std::string> args = {"ingest", "--format", "tensorcast-table", (f.dir / "step.txt").string(),
                                     "--commit", commit, "--db", db.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args, f.env);
  };

  // ingest --case, and an absolute --suite that becomes the case id's start.
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--case", "../../../outside"}, {"--case", "gmm/../../../outside"}, {"--suite", "/abs"}}) {
    SCOPED_TRACE(flag + " " + value);
    auto refused = ingest({flag, value}, f.db);
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_THAT(refused.err, ::testing::HasSubstr(value)) << "names the id";
    EXPECT_THAT(refused.err, ::testing::HasSubstr(flag == "--case" ? "--case" : "step.txt")) << "names the place";
    EXPECT_TRUE(stored_cases(f.db).empty()) << "nothing was stored";
  }
  EXPECT_THAT(ingest({"--suite", "/abs"}, f.db).err, ::testing::HasSubstr("starts with '/'"));

  // A crafted database: a good one whose case id is then rewritten.
  const fs::path crafted = f.dir / "crafted.db";
  ASSERT_EQ(ingest({"--case", "sequence_parallel/step"}, crafted).exit_code, 0);
  Sql(crafted, "UPDATE case_results SET case_id = '../../../outside'");
  const fs::path merged = f.dir / "merged.db";
  auto merge = RunHarness({"merge", merged.string(), crafted.string()}, f.env);
  EXPECT_EQ(merge.exit_code, 2) << merge.err;
  EXPECT_THAT(merge.err, ::testing::HasSubstr(crafted.string() + ": case_results: case id '../../../outside'"));
  EXPECT_FALSE(fs::exists(merged)) << "nothing merged, not even an empty output";
  Sql(crafted, "UPDATE case_results SET case_id = 'ok/t' || char(0) || 'x'");
  auto nul = RunHarness({"merge", merged.string(), crafted.string()}, f.env);
  EXPECT_EQ(nul.exit_code, 2) << nul.err;
  EXPECT_THAT(nul.err, ::testing::HasSubstr("case id 'ok/t\\x00x' holds a NUL byte"));
  Sql(crafted, "UPDATE case_results SET case_id = '../../../outside'");

  // golden accept of that id, straight from the crafted database: refused, the bait untouched.
  for (const std::string id : {"../../../outside", "/abs/target"}) {
    auto accept = RunHarness({"golden", "accept", id, "--db", crafted.string(), "--reason", "r"}, f.env);
    EXPECT_EQ(accept.exit_code, 2) << accept.out << accept.err;
    EXPECT_THAT(accept.err, ::testing::HasSubstr("case id '" + id + "'"));
    auto diff = RunHarness({"golden", "diff", id, "--db", crafted.string()}, f.env);
    EXPECT_EQ(diff.exit_code, 2) << diff.err;
  }
  EXPECT_EQ(ReadFile(outside), bait);
  EXPECT_TRUE(RecordedGoldenChanges(crafted, "")->empty());
}

// An expectation that is a symlink (say, into a shared checkout) is rewritten where it
// points, atomically; the link stays a link.
TEST(GoldenE2E, AcceptWritesThroughASymlinkedExpectation) {
  Fixture f;
  const fs::path shared = f.dir / "shared" / "quant_3.json";
  WriteFile(shared, kPreFix);
  fs::remove(f.golden_file);
  fs::create_symlink(fs::relative(shared, f.golden_file.parent_path()), f.golden_file);
  ASSERT_EQ(f.Run("eeee000000000000000000000000000000000001").exit_code, 1);
  auto accept = RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason", "fused"}, f.env);
  ASSERT_EQ(accept.exit_code, 0) << accept.err;
  EXPECT_TRUE(fs::is_symlink(f.golden_file));
  EXPECT_NE(ReadFile(shared), kPreFix);
  EXPECT_EQ(Listing(shared.parent_path()), std::vector<std::string>{"quant_3.json"});
  EXPECT_EQ(RunHarness({"golden", "diff", kCase, "--db", f.db.string()}, f.env).exit_code, 0);
  // A fifo where an expectation should be is no expectation: refused, not read or replaced.
  fs::remove(f.golden_file);
  ASSERT_EQ(mkfifo(f.golden_file.c_str(), 0644), 0);
  auto fifo = RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason", "r"}, f.env);
  EXPECT_EQ(fifo.exit_code, 2) << fifo.err;
  EXPECT_THAT(fifo.err, ::testing::HasSubstr("not a regular file"));
  EXPECT_TRUE(fs::is_fifo(f.golden_file));
}

}  // namespace
}  // namespace harness
