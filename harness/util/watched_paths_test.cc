#include "harness/util/watched_paths.h"

#include <gtest/gtest.h>

namespace harness {
namespace watched_paths_test {

TEST(WatchedPaths, APrefixWatchesItselfAndWhatIsBelowItOnly) {
  const std::vector<std::string> watch = {"kernels/gmm", "quant/"};
  EXPECT_TRUE(IsWatched("kernels/gmm", watch));
  EXPECT_TRUE(IsWatched("kernels/gmm/a.cc", watch));
  EXPECT_TRUE(IsWatched("quant/fp8/scale.cc", watch));
  EXPECT_FALSE(IsWatched("kernels/gmm2.cc", watch)) << "a component boundary, not a string prefix";
  EXPECT_FALSE(IsWatched("kernels/other.cc", watch));
  EXPECT_FALSE(IsWatched("quant", std::vector<std::string>{"quant/fp8"}));
  EXPECT_FALSE(IsWatched("x", {}));
  EXPECT_TRUE(TouchesWatched({"README.md", "kernels/gmm/b.h"}, watch));
  EXPECT_FALSE(TouchesWatched({"README.md", "docs/gmm.md"}, watch));
  EXPECT_FALSE(TouchesWatched({}, watch));
}

TEST(WatchedPaths, EntriesOutsideTheRepositoryOrMalformedAreRefused) {
  EXPECT_EQ(WatchPathProblem("kernels/gmm"), std::nullopt);
  EXPECT_EQ(WatchPathProblem("kernels/"), std::nullopt);
  EXPECT_EQ(WatchPathProblem("a b/\"quoted\"<b>"), std::nullopt) << "odd but legal file names";
  for (const char* bad : {"", "/etc", "..", "../x", "a/../b", "a/..", "./a", "a//b", "a/./b", "/", "a\nb", "a\tb"})
    EXPECT_NE(WatchPathProblem(bad), std::nullopt) << bad;
  EXPECT_NE(WatchPathProblem("a/../b")->find(".."), std::string::npos);
  EXPECT_NE(WatchPathProblem("/etc")->find("absolute"), std::string::npos);
}

}  // namespace watched_paths_test
}  // namespace harness
