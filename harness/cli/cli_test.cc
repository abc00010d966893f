// The CLI surface: the command table, --help for every command, exit codes for usage errors.
#include <gtest/gtest.h>

#include "harness/cli/commands.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;

TEST(Cli, TableHasEveryDesignedCommandInOrder) {
  std::vector<std::string> names;
  for (const auto& c : Commands()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"run", "history", "compare", "bisect", "report", "golden", "ingest",
                                             "merge", "prune", "serve-sim", "version"}));
}

TEST(Cli, EveryCommandHasHelp) {
  for (const auto& c : Commands()) {
    auto r = RunHarness({c.name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << c.name;
    EXPECT_NE(r.out.find(c.help), std::string::npos) << c.name << ": " << r.out;
  }
}

TEST(Cli, UnknownCommandOrFlagIsUsageError) {
  auto r = RunHarness({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("harness: error:"), std::string::npos);
  EXPECT_EQ(RunHarness({"run", "--no-such-flag"}).exit_code, 2);
}

TEST(Cli, VersionPrintsFormatVersions) {
  auto r = RunHarness({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("store schema"), std::string::npos);
}

}  // namespace
}  // namespace harness
