#include "harness/results/case_id.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(CaseId, OrdinaryIdsPass) {
  for (std::string_view id : {"gmm/test_qwen3_dynamic_quant_3", "junit/tests.test_x[a/b]", "gtest/Suite.Case",
                              "lm-eval/gsm8k_cot", "s/test_x[1..3]", "s/..hidden", "s/a../b"})
    EXPECT_EQ(CaseIdProblem(id), std::nullopt) << id;
}

TEST(CaseId, PathEscapesAndControlCharactersAreRefused) {
  EXPECT_NE(CaseIdProblem(""), std::nullopt);
  EXPECT_NE(CaseIdProblem("/abs/target"), std::nullopt);
  EXPECT_NE(CaseIdProblem(".."), std::nullopt);
  EXPECT_NE(CaseIdProblem("../../../outside"), std::nullopt);
  EXPECT_NE(CaseIdProblem("gmm/../../outside"), std::nullopt);
  EXPECT_NE(CaseIdProblem("gmm/.."), std::nullopt);
  EXPECT_NE(CaseIdProblem(std::string_view("gmm/t\0x", 7)), std::nullopt);
  EXPECT_NE(CaseIdProblem("gmm/t\nx"), std::nullopt);
  EXPECT_NE(CaseIdProblem("gmm/t\x7fx"), std::nullopt);
  EXPECT_NE(CaseIdProblem("gmm/" + std::string(kMaxCaseIdBytes, 'a')), std::nullopt);
  EXPECT_EQ(CaseIdProblem(std::string(kMaxCaseIdBytes, 'a')), std::nullopt);
  EXPECT_EQ(*CaseIdProblem("a/../b"), "has a '..' segment (a case id is SUITE/NAME, never a path)");
}

TEST(CaseId, PrintableSpellsControlCharacters) {
  EXPECT_EQ(PrintableCaseId(std::string_view("a\0b\n\\", 5)), "a\\x00b\\x0a\\x5c");
  EXPECT_EQ(PrintableCaseId("gmm/t_0"), "gmm/t_0");
}

}  // namespace
}  // namespace harness
