// The regression catalogue proves the harness catches what it exists to catch: with no
// fault every nightly case passes; with each catalogued fault exactly its cases fail,
// with its message, and every other case still passes. Runs the real binary.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness/stack/catalogue.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

using testing_util::RunHarness;

struct RunSummary {
  int exit_code = -1;
  std::map<std::string, std::string> failed;  // case id -> message
  int passed = 0;
  std::string err;
};

RunSummary RunNightly(const std::filesystem::path& db, const std::vector<std::string>& faults) {
  std::vector<std::string> args = {"run", "--db", db.string(), "--commit", "ca7a1090", "--format", "json"};
  for (const auto& f : faults) {
    args.push_back("--fault");
    args.push_back(f);
  }
  auto r = RunHarness(args);
  RunSummary s;
  s.exit_code = r.exit_code;
  s.err = r.err;
  auto j = ParseJson(r.out, "harness run stdout");
  if (!j.ok()) return s;
  for (const auto& c : (*j)["cases"]) {
    std::string status = c["status"];
    if (status == "pass") {
      s.passed++;
    } else {
      s.failed[c["id"]] = c["message"].get<std::string>() + " [" + status + "]";
    }
  }
  return s;
}

std::vector<Regression> Catalogue() {
  auto c = LoadCatalogue(std::filesystem::path(testing_util::kSourceRoot) / "golden" / "regressions.json");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? *c : std::vector<Regression>{};
}

TEST(Catalogue, EveryNightlyCasePassesWithNoFault) {
  testing_util::TempDir dir;
  auto s = RunNightly(dir / "h.db", {});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(s.failed.empty()) << s.failed.begin()->first << ": " << s.failed.begin()->second;
  EXPECT_GT(s.passed, 0);
}

TEST(Catalogue, EachFaultFailsExactlyItsCasesWithItsMessage) {
  for (const auto& r : Catalogue()) {
    SCOPED_TRACE("fault " + r.fault);
    ASSERT_FALSE(r.cases.empty()) << "the catalogue must name the cases that catch " << r.fault;
    testing_util::TempDir dir;
    auto s = RunNightly(dir / "h.db", {r.fault});
    EXPECT_EQ(s.exit_code, 1) << s.err;
    std::set<std::string> failed, expected(r.cases.begin(), r.cases.end());
    for (const auto& [id, message] : s.failed) {
      failed.insert(id);
      if (expected.count(id)) {
        EXPECT_NE(message.find(r.message), std::string::npos) << id << ": " << message;
      }
    }
    EXPECT_EQ(failed, expected);
    EXPECT_GT(s.passed, 0);
  }
}

TEST(Catalogue, UnknownFaultListsTheKnownOnes) {
  std::vector<Regression> catalogue = {{"a-fault", "", {"s/t_0"}, "m"}, {"b-fault", "", {"s/t_1"}, "m"}};
  EXPECT_TRUE(ValidateFaults({"b-fault"}, catalogue).ok());
  auto s = ValidateFaults({"c-fault"}, catalogue);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "unknown fault 'c-fault' (did you mean 'a-fault'?)");
}

}  // namespace
}  // namespace harness
