// harness golden through the real binary, on a copy of suites/ and golden/: the seed's
// case B (the MXFP4 expectation that went stale when the fusion learned its quant tail)
// fails with the stale hint, `golden diff` shows it, `golden accept` fixes it and logs it.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/util/hash.h"
#include "harness/util/json_file.h"
#include "harness/util/test_util.h"

namespace harness {
namespace {

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

  // golden diff: the table diff and the hint; exit 1 because it differs.
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

  // accept: shows the diff, rewrites the file, logs the change.
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
  {
    auto store = Store::OpenReadOnly(f.db);
    ASSERT_TRUE(store.ok());
    auto changes = (*store)->GoldenChanges(kCase);
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

  // The next run passes against the accepted expectation, and diff agrees.
  auto run2 = f.Run("aaaa000000000000000000000000000000000002");
  EXPECT_EQ(run2.exit_code, 0) << run2.out << run2.err;
  EXPECT_EQ(f.Cases(run2)[kCase].first, "pass");
  EXPECT_EQ(RunHarness({"golden", "diff", kCase, "--db", f.db.string()}, f.env).exit_code, 0);
  // Accepting a case that matches changes nothing and logs nothing.
  const std::string now = ReadFile(f.golden_file);
  EXPECT_EQ(RunHarness({"golden", "accept", kCase, "--db", f.db.string(), "--reason", "again"}, f.env).exit_code, 0);
  EXPECT_EQ(ReadFile(f.golden_file), now);
  EXPECT_EQ((*(*Store::OpenReadOnly(f.db))->GoldenChanges(kCase)).size(), 1u);
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
  EXPECT_TRUE((*(*Store::OpenReadOnly(f.db))->GoldenChanges("")).empty());

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

}  // namespace
}  // namespace harness
