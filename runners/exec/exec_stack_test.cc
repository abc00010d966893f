#include "runners/exec/exec_stack.h"

#include <gtest/gtest.h>

#include "harness/util/test_util.h"

namespace harness {
namespace {

StackConfig ExecConfig(const std::vector<std::string>& command) {
  StackConfig c;
  c.stack = "exec";
  c.raw = Json{{"exec", {{"command", command}, {"timeout_s", 10}}}};
  return c;
}

TEST(ExecStack, SendsTheRequestOnStdinAndParsesTheAnswer) {
  testing_util::TempDir dir;
  // The "stack" echoes the request's tp_size back as calls, proving the request arrived.
  testing_util::WriteFile(dir / "stack.sh", R"(#!/bin/sh
req=$(cat)
tp=$(printf '%s' "$req" | sed -n 's/.*"tp_size":\([0-9]*\).*/\1/p')
printf '{"format_version": 1, "ops": [{"op": "tensor_cast.all_gather.default", "input_shapes": "[1, 64, 5120]", "calls": %s, "est_seconds": 0.5}], "total_seconds": 0.5}' "$tp"
)");
  auto stack = MakeExecStack(ExecConfig({"sh", (dir / "stack.sh").string()}));
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  CompileRequest req;
  req.model = "Qwen/Qwen3-32B";
  req.tp_size = 4;
  auto r = (*stack)->Compile(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->ops.size(), 1u);
  EXPECT_EQ(r->ops[0].calls, 4);
  EXPECT_EQ(r->Calls("tensor_cast.all_gather.default"), 4);
  EXPECT_DOUBLE_EQ(r->total_seconds, 0.5);
}

TEST(ExecStack, FailuresAreInfraErrorsNamingTheCommand) {
  auto failing = MakeExecStack(ExecConfig({"sh", "-c", "echo broken >&2; exit 4"}));
  ASSERT_TRUE(failing.ok());
  auto r = (*failing)->Compile({});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kInfra);
  EXPECT_NE(r.error().message.find("exit code 4: broken"), std::string::npos) << r.error().message;
}

TEST(ExecStack, ABadConfigIsAUsageErrorBeforeAnyCompile) {
  auto empty = MakeExecStack(ExecConfig({}));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ExitCode::kUsage);
  EXPECT_NE(empty.error().message.find("exec.command: must name a program"), std::string::npos) << empty.error().message;
  StackConfig none;
  none.stack = "exec";
  EXPECT_NE(MakeExecStack(none).error().message.find("needs \"exec\""), std::string::npos);
  StackConfig text = none;
  text.raw = Json{{"exec", {{"command", "python3 stack.py"}}}};  // a string, not an argv array
  auto r = MakeExecStack(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("exec.command: expected an argv array"), std::string::npos) << r.error().message;
  StackConfig typo = none;
  typo.raw = Json{{"exec", {{"command", {"x"}}, {"timout_s", 1}}}};
  EXPECT_NE(MakeExecStack(typo).error().message.find("unknown field (did you mean 'timeout_s'?)"), std::string::npos)
      << MakeExecStack(typo).error().message;
}

TEST(ExecStack, MalformedAnswerNamesTheField) {
  auto r = ParseExecAnswer(R"({"format_version": 1, "ops": [{"op": "x", "calls": "many"}]})", "cmd (stdout)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cmd (stdout): ops[0].calls: expected an integer");
  auto bad_json = ParseExecAnswer("{\"format_version\": 1,\n oops}", "cmd (stdout)");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_NE(bad_json.error().message.find("cmd (stdout):2:"), std::string::npos) << bad_json.error().message;
  EXPECT_FALSE(ParseExecAnswer(R"({"format_version": 2, "ops": []})", "c").ok());
}

}  // namespace
}  // namespace harness
