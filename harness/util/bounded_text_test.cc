#include "harness/util/bounded_text.h"

#include <gtest/gtest.h>

#include <string>

namespace harness {
namespace {

TEST(BoundedText, KeepsEverythingWithinTheBound) {
  BoundedText t(4, 4);
  t.Append("abc");
  t.Append("defg");
  EXPECT_EQ(t.Text(), "abcdefg");
  EXPECT_EQ(t.dropped(), 0u);
}

TEST(BoundedText, KeepsHeadAndTailAndSaysHowMuchWasDroppedBetween) {
  BoundedText t(3, 4);
  for (char c = 'a'; c <= 'z'; ++c) t.Append(std::string(1, c));
  EXPECT_EQ(t.Text(), "abc" + DroppedMarker(19) + "wxyz");
  EXPECT_EQ(t.total(), 26u);
  BoundedText big(2, 3);
  big.Append("0123456789");  // one write larger than both
  big.Append("ab");
  EXPECT_EQ(big.Text(), "01" + DroppedMarker(7) + "9ab");
}

TEST(BoundedText, MemoryStaysBoundedOverManyWrites) {
  BoundedText t(1 << 10, 1 << 12);
  const std::string chunk(1000, 'x');
  for (int i = 0; i < 20000; ++i) t.Append(chunk);
  EXPECT_EQ(t.dropped(), 20000u * 1000 - (1 << 10) - (1 << 12));
  EXPECT_LT(t.Text().size(), (1u << 10) + (1u << 12) + 64);
}

}  // namespace
}  // namespace harness
