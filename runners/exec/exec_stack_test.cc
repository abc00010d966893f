#include "runners/exec/exec_stack.h"

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

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
  EXPECT_NE(r.error().message.find("exit code 4; stderr: broken"), std::string::npos) << r.error().message;
  // The tail of a long stderr is kept: the error is usually at its end.
  auto chatty = MakeExecStack(ExecConfig({"sh", "-c", "i=0; while [ $i -lt 500 ]; do echo noise line $i >&2; "
                                                      "i=$((i+1)); done; echo the real error >&2; exit 1"}));
  auto tail = (*chatty)->Compile({});
  ASSERT_FALSE(tail.ok());
  EXPECT_NE(tail.error().message.find("the real error"), std::string::npos);
  EXPECT_EQ(tail.error().message.find("noise line 0\n"), std::string::npos);
  EXPECT_LT(tail.error().message.size(), 2200u);
  // An answer that is neither the JSON protocol nor a table: stdout's error and stderr.
  auto garbage = MakeExecStack(ExecConfig({"sh", "-c", "echo warming up >&2; echo hello"}));
  auto g = (*garbage)->Compile({});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code, ExitCode::kInfra);
  EXPECT_NE(g.error().message.find("sh (stdout):1: no TensorCast performance table"), std::string::npos)
      << g.error().message;
  EXPECT_NE(g.error().message.find("stderr: warming up"), std::string::npos) << g.error().message;
  StackConfig slow = ExecConfig({"sh", "-c", "echo stuck >&2; sleep 5"});
  slow.raw["exec"]["timeout_s"] = 0.3;
  auto t = (*MakeExecStack(slow))->Compile({});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("no answer within 0.3 s; stderr: stuck"), std::string::npos) << t.error().message;
}

TEST(ExecStack, ArgvTemplateIsFilledFromTheRequestWithCwdAndEnvAndATableAnswer) {
  testing_util::TempDir dir;
  // Prints its argv, cwd and one variable as a TensorCast table's op names.
  testing_util::WriteFile(dir / "stack.sh", R"SH(#!/bin/sh
cat >/dev/null
echo "INFO compiling"
echo "------------------------------------------------------------  --------------  ----------"
echo "                            Name                              analytic total  # of Calls"
echo "------------------------------------------------------------  --------------  ----------"
for a in "$@"; do printf '%-60s  %14s  %10s
' "arg:$a" "1.000us" 1; done
printf '%-60s  %14s  %10s
' "cwd:$(basename "$PWD")" "0.000ns" 2
printf '%-60s  %14s  %10s
' "env:$STACK_MODE" "0.000ns" 3
echo "------------------------------------------------------------  --------------  ----------"
echo "Total time for analytic: 9.000us"
)SH");
  std::filesystem::create_directories(dir / "work");
  StackConfig c = ExecConfig({"sh", "../stack.sh", "--model={model}", "{tp_size}", "{quant}", "{disable_repetition}",
                              "{{literal}}"});
  c.raw["exec"]["cwd"] = (dir / "work").string();
  c.raw["exec"]["env"] = {{"STACK_MODE", "fast mode"}};
  auto stack = MakeExecStack(c);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  CompileRequest req;
  req.model = "Qwen/Qwen3-32B";
  req.tp_size = 2;
  req.quant = "MXFP4";
  req.disable_repetition = true;
  auto r = (*stack)->Compile(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> ops;
  for (const auto& o : r->ops) ops.push_back(o.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"arg:--model=Qwen/Qwen3-32B", "arg:2", "arg:MXFP4", "arg:true",
                                           "arg:{literal}", "cwd:work", "env:fast mode"}));
  EXPECT_EQ(r->Calls("env:fast mode"), 3);
  EXPECT_DOUBLE_EQ(r->total_seconds, 9e-6);
  EXPECT_EQ(r->table_text.find("INFO"), std::string::npos);
  // Declared json: the same table is then an unparsable answer.
  c.raw["exec"]["output"] = "json";
  auto as_json = (*MakeExecStack(c))->Compile(req);
  ASSERT_FALSE(as_json.ok());
  EXPECT_NE(as_json.error().message.find("sh (stdout):1:1: syntax error"), std::string::npos) << as_json.error().message;
}

TEST(ExecStack, UnknownPlaceholdersAndBadTemplatesAreUsageErrors) {
  auto unknown = MakeExecStack(ExecConfig({"stack", "--tp", "{tp_sise}"}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ExitCode::kUsage);
  EXPECT_NE(unknown.error().message.find("exec.command[2]: unknown placeholder {tp_sise} (did you mean 'tp_size'?)"),
            std::string::npos)
      << unknown.error().message;
  EXPECT_NE(MakeExecStack(ExecConfig({"stack", "{model"})).error().message.find("exec.command[1]: '{model': unclosed"),
            std::string::npos);
  EXPECT_NE(MakeExecStack(ExecConfig({"stack", "a}b"})).error().message.find("unmatched '}'"), std::string::npos);
  StackConfig bad_output = ExecConfig({"stack"});
  bad_output.raw["exec"]["output"] = "xml";
  EXPECT_NE(MakeExecStack(bad_output).error().message.find("exec.output: 'xml': expected auto, json or tensorcast-table"),
            std::string::npos);
  StackConfig bad_env = ExecConfig({"stack"});
  bad_env.raw["exec"]["env"] = {{"N", 1}};
  EXPECT_NE(MakeExecStack(bad_env).error().message.find("exec.env.N: expected a string"), std::string::npos);
  EXPECT_EQ(ExecPlaceholderNames(),
            (std::vector<std::string>{"device", "disable_repetition", "enable_sequence_parallel", "model",
                                      "num_layers_override", "num_queries", "quant", "query_len", "tp_size",
                                      "word_embedding_tp"}));
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
