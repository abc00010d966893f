// A run is bound to the rows of its tables only while it runs: the binding is undone on
// every way out (a return, an exception), puts back what each slot held before, and
// RunSuites leaves none behind when it fails after binding its own.
#include "harness/run/run_context.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "harness/run/run.h"
#include "harness/run/run_identity.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

TEST(BoundRun, BindsForItsScopeAndPutsBackWhatEachSlotHeld) {
  const auto a = std::make_shared<RunSlot>(), b = std::make_shared<RunSlot>();
  RunContext outer, inner;
  {
    const BoundRun first(outer, {a});
    EXPECT_EQ(a->run(), &outer);
    EXPECT_EQ(b->run(), nullptr) << "a slot it was not given stays unbound";
    {
      const BoundRun second(inner, {a, b});
      EXPECT_EQ(a->run(), &inner);
      EXPECT_EQ(b->run(), &inner);
    }
    EXPECT_EQ(a->run(), &outer);
    EXPECT_EQ(b->run(), nullptr);
  }
  EXPECT_EQ(a->run(), nullptr) << "a row outside `harness run` finds no run, never a stale one";
}

TEST(BoundRun, AnExceptionLeavesNoRunBound) {
  const auto slot = std::make_shared<RunSlot>();
  RunContext context;
  EXPECT_THROW(
      {
        const BoundRun bound(context, {slot});
        throw std::runtime_error("a case body's error");
      },
      std::runtime_error);
  EXPECT_EQ(slot->run(), nullptr);
}

class NoCompileStack : public Stack {
 public:
  std::string_view name() const override { return "none"; }
  Result<CompileResult> Compile(const CompileRequest&) override { return UsageError("no compiler here"); }
};

// A stack that could not answer (an infrastructure-coded error) makes the running case an
// infrastructure error; one that answers with an error leaves that to the case.
TEST(CompileForCase, OnlyAStackThatCouldNotAnswerMakesTheCaseAnInfrastructureError) {
  class DeadStack : public Stack {
   public:
    std::string_view name() const override { return "dead"; }
    Result<CompileResult> Compile(const CompileRequest&) override { return InfraError("exec: timed out after 30 s"); }
  };
  DeadStack dead;
  RunContext run;
  run.stack = &dead;
  EXPECT_FALSE(CompileForCase(run, CompileRequest{}).ok());
  EXPECT_EQ(run.record.infra_error(), "exec: timed out after 30 s");

  NoCompileStack refusing;
  RunContext other;
  other.stack = &refusing;
  EXPECT_EQ(CompileForCase(other, CompileRequest{}).error().message, "no compiler here");
  EXPECT_FALSE(other.record.infra_error().has_value());
}

// --resume after the interrupted run's parameter row changed: RunSuites returns the
// refusal after its context was bound to the table's rows (the run has its row), and leaves
// none bound.
TEST(BoundRun, RunSuitesLeavesNoRunBoundAfterAnErrorPath) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  RunRequest request;
  request.commit.sha = "0123456789abcdef0123456789abcdef01234567";
  request.resume = true;
  SuiteTable table;
  table.suite = "selftest";
  const auto slot = std::make_shared<RunSlot>();
  table.tests["test_outcome"] = {CaseParam{"selftest", "test_outcome", 0, Json{{"outcome", "fail"}}, "t.json", slot}};
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
  EXPECT_EQ(slot->run(), nullptr);
}

}  // namespace
}  // namespace harness
