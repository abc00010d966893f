#include "harness/run/shard.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <gtest/gtest.h>

namespace harness {
namespace {

SuiteTable Table(const std::string& suite, double cost) {
  SuiteTable t;
  t.suite = suite;
  t.shard_cost = cost;
  return t;
}

TEST(Shard, ParsesIOverNAndRefusesWhatIsNot) {
  auto s = ParseShard("2/5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 5);
  EXPECT_EQ(s->Word(), "2/5");
  for (const char* bad : {"5/5", "1", "-1/3", "a/b", "0/0", "1/", "/3", "1/3/4", " 1/3", "0x1/3"}) {
    auto r = ParseShard(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

TEST(Shard, ReadsGoogleTestsEnvironmentVariables) {
  unsetenv("GTEST_TOTAL_SHARDS");
  unsetenv("GTEST_SHARD_INDEX");
  auto none = ShardFromEnvironment();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  setenv("GTEST_TOTAL_SHARDS", "4", 1);
  setenv("GTEST_SHARD_INDEX", "3", 1);
  auto s = ShardFromEnvironment();
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->has_value());
  EXPECT_EQ((*s)->Word(), "3/4");
  setenv("GTEST_SHARD_INDEX", "4", 1);
  EXPECT_FALSE(ShardFromEnvironment().ok()) << "index out of range";
  unsetenv("GTEST_SHARD_INDEX");
  auto half = ShardFromEnvironment();
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().message.find("GTEST_SHARD_INDEX"), std::string::npos);
  unsetenv("GTEST_TOTAL_SHARDS");
}

TEST(Shard, NightlyDefaultsToTheCiEnginesPipelineId) {
  unsetenv("CI_PIPELINE_ID");
  unsetenv("GITHUB_RUN_ID");
  EXPECT_EQ(NightlyFromEnvironment(), "");
  setenv("GITHUB_RUN_ID", "5678", 1);
  setenv("GITHUB_RUN_ATTEMPT", "2", 1);
  EXPECT_EQ(NightlyFromEnvironment(), "github-5678") << "an attempt of a run is the same nightly";
  setenv("CI_PIPELINE_ID", "1234", 1);
  EXPECT_EQ(NightlyFromEnvironment(), "gitlab-1234");
  setenv("CI_PIPELINE_ID", "", 1);
  EXPECT_EQ(NightlyFromEnvironment(), "github-5678") << "an empty variable is unset";
  unsetenv("CI_PIPELINE_ID");
  unsetenv("GITHUB_RUN_ID");
  unsetenv("GITHUB_RUN_ATTEMPT");
}

TEST(Shard, EveryCaseInExactlyOneShardAndEvenByCost) {
  std::vector<SuiteTable> tables = {Table("cheap", 1), Table("eval", 50)};
  std::vector<std::string> cases;
  for (int i = 0; i < 11; ++i) cases.push_back("cheap/test_" + std::to_string(i));
  cases.push_back("eval/test_a_0");
  cases.push_back("eval/test_a_1");
  for (int n = 1; n <= 6; ++n) {
    std::map<std::string, int> seen;
    std::vector<double> load;
    for (int i = 0; i < n; ++i) {
      auto mine = CasesOfShard(cases, tables, Shard{i, n});
      EXPECT_EQ(mine, CasesOfShard(cases, tables, Shard{i, n})) << "deterministic";
      double cost = 0;
      for (const auto& c : mine) {
        ++seen[c];
        cost += c.rfind("eval/", 0) == 0 ? 50 : 1;
      }
      load.push_back(cost);
    }
    EXPECT_EQ(seen.size(), cases.size()) << n << " shards";
    for (const auto& [c, k] : seen) EXPECT_EQ(k, 1) << c;
    if (n == 2) {
      // The two expensive cases go to different shards; a count-based split would not care.
      EXPECT_EQ(load[0], 50 + 6);
      EXPECT_EQ(load[1], 50 + 5);
    }
    if (n == 3) {
      EXPECT_EQ(load[2], 11) << "the shard without an eval case takes every cheap case";
    }
  }
  // Shards keep the selection order, so a shard runs its cases as an unsharded run would.
  auto first = CasesOfShard(cases, tables, Shard{0, 3});
  EXPECT_TRUE(std::is_sorted(first.begin(), first.end(), [&](const std::string& a, const std::string& b) {
    return std::find(cases.begin(), cases.end(), a) < std::find(cases.begin(), cases.end(), b);
  }));
}

TEST(Shard, MoreShardsThanCasesLeavesSomeEmpty) {
  std::vector<SuiteTable> tables = {Table("s", 1)};
  std::vector<std::string> cases = {"s/t_0", "s/t_1"};
  EXPECT_EQ(CasesOfShard(cases, tables, Shard{0, 4}).size(), 1u);
  EXPECT_EQ(CasesOfShard(cases, tables, Shard{1, 4}).size(), 1u);
  EXPECT_TRUE(CasesOfShard(cases, tables, Shard{3, 4}).empty());
}

}  // namespace
}  // namespace harness
