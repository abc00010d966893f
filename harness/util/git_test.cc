#include "harness/util/git.h"

#include <gtest/gtest.h>

#include "harness/util/test_util.h"

namespace harness {
namespace {

TEST(Git, ReadsCommitMetadataAndFirstParentOrdinal) {
  testing_util::TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 3);
  auto c = ReadCommit(dir / "repo", "HEAD");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->sha, shas[2]);
  EXPECT_EQ(c->parents, std::vector<std::string>{shas[1]});
  EXPECT_EQ(c->subject, "commit 3");
  EXPECT_EQ(c->first_parent_ordinal, 3);
  EXPECT_EQ(c->author_time, 1767225600);
  auto first = ReadCommit(dir / "repo", shas[0]);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->parents.empty());
  EXPECT_EQ(first->first_parent_ordinal, 1);
}

TEST(Git, AncestorsAreNewestFirstWithoutTheCommitItself) {
  testing_util::TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4);
  auto a = FirstParentAncestors(dir / "repo", shas[3], 2);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(*a, (std::vector<std::string>{shas[2], shas[1]}));
  EXPECT_TRUE(FirstParentAncestors(dir / "repo", shas[0], 10)->empty());
}

TEST(Git, RejectsOptionLookingRevisionsAndUnknownCommits) {
  testing_util::TempDir dir;
  testing_util::MakeGitRepo(dir / "repo", 1);
  EXPECT_FALSE(ReadCommit(dir / "repo", "--output=/tmp/x").ok());
  auto r = ReadCommit(dir / "repo", "deadbeef");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace harness
