#include "harness/util/placeholders.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(Placeholders, NamesAreFoundAndFilledWithLiteralBracesKept) {
  auto names = PlaceholdersOf("--model={model} --port {port} {{literal}}");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"model", "port"}));
  EXPECT_EQ(FillTemplate("--model={model} --port {port} {{literal}}", {{"model", "M"}, {"port", "8000"}}),
            "--model=M --port 8000 {literal}");
  EXPECT_EQ(FillTemplate("{unknown}x", {}), "x");
}

TEST(Placeholders, UnclosedAndUnmatchedBracesAreUsageErrors) {
  auto unclosed = PlaceholdersOf("{model");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(unclosed.error().code, ExitCode::kUsage);
  EXPECT_EQ(unclosed.error().message, "'{model': unclosed '{' (write {{ for a brace)");
  EXPECT_EQ(PlaceholdersOf("a}b").error().message, "'a}b': unmatched '}' (write }} for a brace)");
}

TEST(Placeholders, AnUnknownOneNamesTheNearestKnownOneOrAllOfThem) {
  const std::vector<std::string> known = {"model", "port", "worktree"};
  EXPECT_TRUE(CheckPlaceholders("--port={port} {{prot}}", known).ok());
  auto near = CheckPlaceholders("--port={prot}", known);
  ASSERT_FALSE(near.ok());
  EXPECT_EQ(near.error().message, "unknown placeholder {prot} (did you mean 'port'?) (known: model, port, worktree)");
  // Far from every known name: the known ones, said once.
  EXPECT_EQ(CheckPlaceholders("{tensor_parallel}", known).error().message,
            "unknown placeholder {tensor_parallel} (known: model, port, worktree)");
  EXPECT_EQ(CheckPlaceholders("{model", known).error().message, "'{model': unclosed '{' (write {{ for a brace)");
}

}  // namespace
}  // namespace harness
