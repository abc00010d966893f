#include "harness/results/shard.h"

#include <gtest/gtest.h>

namespace harness::shard_test {

TEST(ShardWord, ParsesIOverNAndRoundTrips) {
  for (const char* word : {"0/1", "2/5", "11/12", "999998/999999"}) {
    auto s = ParseShardWord(word);
    ASSERT_TRUE(s) << word;
    EXPECT_EQ(s->Word(), word);
  }
  EXPECT_EQ(ParseShardWord("10/12")->index, 10);
  EXPECT_EQ(ParseShardWord("10/12")->count, 12);
}

TEST(ShardWord, RefusesEverythingElse) {
  for (const char* bad : {"", "/", "1", "1/", "/3", "3/3", "5/3", "0/0", "-1/3", "+1/3", " 1/3", "1/3 ", "1/3/4",
                          "a/3", "0/1000000", "0000000/3", "1\x1b/3"})
    EXPECT_FALSE(ParseShardWord(bad)) << bad;
}

}  // namespace harness::shard_test
