#include "harness/util/number_range.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace harness {
namespace {

TEST(NumberRange, AcceptsDecimalNumbersInsideTheRange) {
  const NumberRange half_open = NumberIn(0.5, 1, true, true);
  EXPECT_EQ(*ParseNumberIn("0.95", half_open, "--confidence"), 0.95L);
  EXPECT_EQ(*ParseNumberIn("9.5e-1", half_open, "--confidence"), 0.95L);
  EXPECT_EQ(*ParseNumberIn("-3", WholeIn(-5, 5), "--n"), -3);
  EXPECT_EQ(*ParseNumberIn("18446744073709551615", WholeIn(0, 18446744073709551615.0L), "--seed"),
            18446744073709551615.0L);
}

TEST(NumberRange, RefusesEverythingElseNamingTheFlagTheValueAndTheRange) {
  const NumberRange port = WholeIn(0, 65535);
  for (const char* bad : {"", " 80", "80 ", "0x50", "080x", "8e1", "80.0", "+80", "-1", "65536", "nan", "inf",
                          "99999999999999999999999", "1,000"}) {
    const auto r = ParseNumberIn(bad, port, "--port");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
    EXPECT_NE(r.error().message.find("--port: '"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("a whole number in [0, 65535]"), std::string::npos) << r.error().message;
  }
  const NumberRange rate = NumberIn(0, 0.5, false, true);
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e999", "1e-99999", "0.5", "-5", ".", "1e", "1.2.3", "0x0.1p1",
                          "0.1junk"})
    EXPECT_FALSE(ParseNumberIn(bad, rate, "--flake-rate")) << bad;
  EXPECT_TRUE(ParseNumberIn("0", rate, "--flake-rate"));
  EXPECT_TRUE(ParseNumberIn(".25", rate, "--flake-rate"));
}

TEST(NumberRange, QuotesALongValueCut) {
  const std::string huge(1 << 20, '7');
  const auto r = ParseNumberIn(huge, WholeIn(0, 10), "--last");
  ASSERT_FALSE(r);
  EXPECT_LT(r.error().message.size(), 400u);
  EXPECT_NE(r.error().message.find("(1048576 bytes)"), std::string::npos) << r.error().message;
}

TEST(NumberRange, ChecksValuesFromFilesTheSameWay) {
  const NumberRange confidence = NumberIn(0.5, 1, true, true);
  EXPECT_TRUE(CheckNumberIn(0.9, confidence, "confidence"));
  EXPECT_FALSE(CheckNumberIn(std::nan(""), confidence, "confidence"));
  EXPECT_FALSE(CheckNumberIn(std::numeric_limits<double>::infinity(), confidence, "confidence"));
  EXPECT_FALSE(CheckNumberIn(1, confidence, "confidence"));
  EXPECT_FALSE(CheckNumberIn(2.5, WholeIn(0, 10), "n"));
}

}  // namespace
}  // namespace harness
