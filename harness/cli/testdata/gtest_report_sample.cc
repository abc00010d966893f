// A GoogleTest program whose reports (--gtest_output=xml and json) ingest_real_tools_e2e_test
// imports: a pass with RecordProperty (two numbers and a word), one test with two failed
// assertions, a DISABLED_
// test, a GTEST_SKIP, value- and type-parameterized tests. It fails on purpose, so it is
// built but not registered with ctest.
#include <gtest/gtest.h>

TEST(Basic, Passes) {
  RecordProperty("max_abs_err", "0.25");
  RecordProperty("questions", 200);
  RecordProperty("device", "cpu");
}

TEST(Basic, TwoFailures) {
  EXPECT_EQ(1, 2) << "first";
  EXPECT_TRUE(false) << "second";
}

TEST(Basic, DISABLED_Off) {}

TEST(Basic, Skips) { GTEST_SKIP() << "no GPU here"; }

class Parity : public testing::TestWithParam<int> {};
TEST_P(Parity, IsEven) { EXPECT_EQ(GetParam() % 2, 0) << "odd: " << GetParam(); }
INSTANTIATE_TEST_SUITE_P(Numbers, Parity, testing::Values(2, 3));

template <typename T>
class Sized : public testing::Test {};
using SizedTypes = testing::Types<int, char>;
TYPED_TEST_SUITE(Sized, SizedTypes);
TYPED_TEST(Sized, HasSize) { EXPECT_GT(sizeof(TypeParam), 0u); }
