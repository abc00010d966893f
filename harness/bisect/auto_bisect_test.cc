#include "harness/bisect/auto_bisect.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness::bisect {
namespace auto_bisect_test {

// RunAutoBisect's checks of its request, at the library (the CLI checks its flags first, so
// this is what any other caller gets): each number just inside its range is taken and just
// outside it refused by the flag's name, before anything runs or is stored. A store with no
// nightly answers a taken request with an error that names no flag.
TEST(AutoBisectRequest, EachNumberIsTakenAtItsEdgesAndRefusedByNameJustOutside) {
  testing_util::TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  const struct {
    const char* flag;
    std::function<void(AutoBisectRequest&)> set;
    bool taken;
  } table[] = {
      {"--max-runs", [](auto& r) { r.max_runs = 0; }, true},
      {"--max-runs", [](auto& r) { r.max_runs = 10000; }, true},
      {"--max-runs", [](auto& r) { r.max_runs = -1; }, false},
      {"--max-runs", [](auto& r) { r.max_runs = 10001; }, false},
      {"--confirm", [](auto& r) { r.confirm = 0; }, true},
      {"--confirm", [](auto& r) { r.confirm = 10; }, true},
      {"--confirm", [](auto& r) { r.confirm = -1; }, false},
      {"--confirm", [](auto& r) { r.confirm = 11; }, false},
      {"--jobs", [](auto& r) { r.jobs = 1; }, true},
      {"--jobs", [](auto& r) { r.jobs = 64; }, true},
      {"--jobs", [](auto& r) { r.jobs = 0; }, false},
      {"--jobs", [](auto& r) { r.jobs = 65; }, false},
      {"--max-culprits", [](auto& r) { r.max_culprits = 1; }, true},
      {"--max-culprits", [](auto& r) { r.max_culprits = 3; }, true},
      {"--max-culprits", [](auto& r) { r.max_culprits = 0; }, false},
      {"--max-culprits", [](auto& r) { r.max_culprits = 4; }, false},
      {"--confidence", [](auto& r) { r.confidence = 0.501; }, true},
      {"--confidence", [](auto& r) { r.confidence = 0.999; }, true},
      {"--confidence", [](auto& r) { r.confidence = 0.5; }, false},
      {"--confidence", [](auto& r) { r.confidence = 1; }, false},
      {"--timeout", [](auto& r) { r.command_timeout_s = 86400; }, true},
      {"--timeout", [](auto& r) { r.command_timeout_s = 0; }, false},
      {"--step-start-timeout", [](auto& r) { r.step_start_timeout_s = 86401; }, false},
      {"--repo", [](auto& r) { r.command = {"make", "-C", "{worktree}"}; }, false},
  };
  for (const auto& row : table) {
    AutoBisectRequest r;
    r.db = dir / "h.db";
    r.command = {"/bin/true", "{sha}"};
    row.set(r);
    auto out = RunAutoBisect(r, **store);
    ASSERT_FALSE(out.ok()) << row.flag << ": an empty store has no nightly to answer";
    const std::string& message = out.error().message;
    if (row.taken) {
      EXPECT_EQ(message.find(row.flag), std::string::npos) << row.flag << " was refused: " << message;
      continue;
    }
    EXPECT_EQ(out.error().code, ExitCode::kUsage) << message;
    EXPECT_NE(message.find(row.flag), std::string::npos) << row.flag << ": " << message;
  }
  AutoBisectRequest no_command;
  no_command.db = dir / "h.db";
  auto out = RunAutoBisect(no_command, **store);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kUsage);
  EXPECT_NE(out.error().message.find("needs the command"), std::string::npos) << out.error().message;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = e.path().filename();
    EXPECT_TRUE(name == "h.db" || name == "h.db-wal" || name == "h.db-shm") << "no lock file: " << name;
  }
}

}  // namespace auto_bisect_test
}  // namespace harness::bisect
