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

TEST(CaseId, ANativeIdSplitsIntoSuiteTestAndRow) {
  const CaseId id("sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1");
  EXPECT_EQ(id.str(), "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1");
  EXPECT_EQ(id.suite(), "sequence_parallel");
  EXPECT_EQ(id.name(), "test_sp_reduces_rms_norm_seq_dim_1");
  ASSERT_TRUE(id.row().has_value());
  EXPECT_EQ(id.row()->test, "test_sp_reduces_rms_norm_seq_dim");
  EXPECT_EQ(id.row()->index, 1u);
}

TEST(CaseId, NativeBuildsWhatItParses) {
  const CaseId id = CaseId::Native("gmm", "test_qwen3_dynamic_quant", 3);
  EXPECT_EQ(id.str(), "gmm/test_qwen3_dynamic_quant_3");
  EXPECT_EQ(id.suite(), "gmm");
  ASSERT_TRUE(id.row().has_value());
  EXPECT_EQ(id.row()->test, "test_qwen3_dynamic_quant");
  EXPECT_EQ(id.row()->index, 3u);
}

// An imported NAME keeps its slashes and dots; the suite is what precedes the first '/'.
TEST(CaseId, AnImportedNameIsEverythingAfterTheFirstSlash) {
  const CaseId gtest("gtest/Numbers/Parity.IsEven/1");
  EXPECT_EQ(gtest.suite(), "gtest");
  EXPECT_EQ(gtest.name(), "Numbers/Parity.IsEven/1");
  EXPECT_FALSE(gtest.row().has_value()) << "a name that does not end in _N is no table row";
  const CaseId pytest("pytest/tests.test_ops.test_mm[fp8-64]");
  EXPECT_EQ(pytest.suite(), "pytest");
  EXPECT_EQ(pytest.name(), "tests.test_ops.test_mm[fp8-64]");
  EXPECT_FALSE(pytest.row().has_value());
  // A name that happens to end in _digits reads as one, as the suite tables' ids do.
  const CaseId lm("lm-eval/gsm8k_5");
  ASSERT_TRUE(lm.row().has_value());
  EXPECT_EQ(lm.row()->test, "gsm8k");
}

TEST(CaseId, PartsOfIdsWithoutASlashOrARow) {
  const CaseId bare("selftest");
  EXPECT_EQ(bare.suite(), "selftest");
  EXPECT_EQ(bare.name(), "");
  EXPECT_FALSE(bare.row().has_value());
  EXPECT_EQ(CaseId("s/").name(), "");
  const auto empty_test = CaseId("s/_7").row();
  ASSERT_TRUE(empty_test.has_value()) << "an empty test before the row is still a row";
  EXPECT_EQ(empty_test->test, "");
  for (const char* id : {"a_1/b", "s/t_", "s/t_1x", "s/t_-1", "s/t_+1", "s/t_ 1", "s/t_99999999999999999999999"})
    EXPECT_FALSE(CaseId(id).row().has_value()) << id;
}

}  // namespace
}  // namespace harness
