#include "harness/bisect/bisector.h"

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"

namespace harness::bisect {
namespace {

// RunBisect is the library entry of `harness bisect` and of `bisect --auto`: it checks its
// numbers itself, whatever parsed them, so a caller that skips the CLI cannot run a search
// with a confidence of 1.5 or no slots. Each out-of-range number is a usage error naming its
// flag, given before anything is stored.
TEST(RunBisect, EachNumberOutOfItsRangeIsAUsageErrorNamingItsFlag) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  struct Case {
    const char* flag;
    void (*spoil)(BisectRequest&);
  };
  const Case cases[] = {
      {"--confidence", [](BisectRequest& r) { r.confidence = 1.5; }},
      {"--confidence", [](BisectRequest& r) { r.confidence = 0.5; }},
      {"--flake-rate", [](BisectRequest& r) { r.flake_rate = 0.5; }},
      {"--max-runs", [](BisectRequest& r) { r.max_runs = -1; }},
      {"--jobs", [](BisectRequest& r) { r.jobs = 0; }},
      {"--noise-sigma", [](BisectRequest& r) { r.noise_sigma = 0.0; }},
  };
  for (const Case& c : cases) {
    BisectRequest r;
    r.good = "a";
    r.bad = "b";
    r.db = dir / "h.db";
    c.spoil(r);
    auto outcome = RunBisect(r, *store);
    ASSERT_FALSE(outcome.ok()) << c.flag;
    EXPECT_EQ(outcome.error().code, ExitCode::kUsage) << c.flag;
    EXPECT_EQ(outcome.error().message.rfind(std::string(c.flag) + ": ", 0), 0u) << outcome.error().message;
  }
  EXPECT_EQ(testing_util::CountOf(dir / "h.db", "SELECT COUNT(*) FROM bisect_sessions"), 0) << "nothing stored";
}

}  // namespace
}  // namespace harness::bisect
