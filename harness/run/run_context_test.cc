// The run context is installed only while a run runs: the guard removes it on every way out
// (a return, an exception), puts back the one before, and RunSuites leaves none behind when
// it fails after installing its own.
#include "harness/run/run_context.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/run/run.h"
#include "harness/run/run_identity.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

TEST(ScopedRunContext, InstallsForItsScopeAndPutsBackTheOneBefore) {
  EXPECT_EQ(InstalledRunContext(), nullptr);
  EXPECT_THROW(CurrentRun(), FatalError) << "a suite body outside `harness run` is an error, not a stale run";
  RunContext outer, inner;
  {
    const ScopedRunContext a(outer);
    EXPECT_EQ(&CurrentRun(), &outer);
    {
      const ScopedRunContext b(inner);
      EXPECT_EQ(&CurrentRun(), &inner);
    }
    EXPECT_EQ(&CurrentRun(), &outer);
  }
  EXPECT_EQ(InstalledRunContext(), nullptr);
}

TEST(ScopedRunContext, AnExceptionLeavesNoContextInstalled) {
  RunContext context;
  EXPECT_THROW(
      {
        const ScopedRunContext installed(context);
        throw std::runtime_error("a case body's error");
      },
      std::runtime_error);
  EXPECT_EQ(InstalledRunContext(), nullptr);
}

class NoCompileStack : public Stack {
 public:
  std::string_view name() const override { return "none"; }
  Result<CompileResult> Compile(const CompileRequest&) override { return UsageError("no compiler here"); }
};

// --resume after the interrupted run's parameter row changed: RunSuites returns the
// refusal after its context was installed (the run has its row), and leaves none behind.
TEST(ScopedRunContext, RunSuitesLeavesNoContextAfterAnErrorPath) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  RunRequest request;
  request.commit.sha = "0123456789abcdef0123456789abcdef01234567";
  request.resume = true;
  SuiteTable table;
  table.suite = "selftest";
  table.tests["test_outcome"] = {CaseParam{"selftest", "test_outcome", 0, Json{{"outcome", "fail"}}, "t.json"}};
  request.tables = {table};
  request.case_ids = {"selftest/test_outcome_0"};
  const RunIdentity identity = MakeRunIdentity(request.stack_config, request.endpoint, request.tables).value();
  const int64_t commit = *store->writer().UpsertCommit(request.commit);
  const int64_t interrupted = *store->writer().BeginRun(
      {commit, "refstack", identity.hash, identity.json.dump(), "host", "0", "0/1", "", identity.context.dump()});
  ASSERT_TRUE(
      store->writer().BeginCase(interrupted, "selftest", "selftest/test_outcome_0", R"({"outcome":"pass"})").ok());

  NoCompileStack stack;
  auto result = RunSuites(request, stack, *store);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("--resume: the parameters of selftest/test_outcome_0 changed"),
            std::string::npos)
      << result.error().message;
  EXPECT_EQ(InstalledRunContext(), nullptr);
}

}  // namespace
}  // namespace harness
