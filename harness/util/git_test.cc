#include "harness/util/git.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

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

// History with a merge: the first-parent chain runs through the merge commit and never
// into the merged branch (bisect's candidates, the baseline's ancestors, the ordinals).
TEST(Git, FirstParentChainsStepOverAMergedBranch) {
  testing_util::TempDir dir;
  const auto repo = dir / "repo";
  auto shas = testing_util::MakeGitRepoWithMerge(repo);  // c1, c2, s1, s2, merge, c3
  ASSERT_EQ(shas.size(), 6u);
  auto merge = ReadCommit(repo, shas[4]);
  ASSERT_TRUE(merge.ok()) << merge.error().message;
  ASSERT_EQ(merge->parents, (std::vector<std::string>{shas[1], shas[3]})) << "a real merge";
  EXPECT_EQ(merge->first_parent_ordinal, 3);
  EXPECT_EQ(ReadCommit(repo, shas[5])->first_parent_ordinal, 4);
  auto range = FirstParentRange(repo, shas[0], shas[5]);
  ASSERT_TRUE(range.ok()) << range.error().message;
  std::vector<std::string> range_shas, subjects;
  for (const CommitInfo& c : *range) range_shas.push_back(c.sha), subjects.push_back(c.subject);
  EXPECT_EQ(range_shas, (std::vector<std::string>{shas[1], shas[4], shas[5]}));
  for (int i : {1, 4, 5}) subjects.push_back(ReadCommit(repo, shas[i])->subject);
  ASSERT_EQ(subjects.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(subjects.begin(), subjects.begin() + 3),
            std::vector<std::string>(subjects.begin() + 3, subjects.end()))
      << "each commit's subject, as git log says it";
  EXPECT_FALSE(subjects[0].empty());
  auto ancestors = FirstParentAncestors(repo, shas[5], 10);
  ASSERT_TRUE(ancestors.ok()) << ancestors.error().message;
  EXPECT_EQ(*ancestors, (std::vector<std::string>{shas[4], shas[1], shas[0]}));
  // A commit of the merged branch is an ancestor, but not on the first-parent chain.
  auto off_chain = FirstParentRange(repo, shas[2], shas[5]);
  ASSERT_FALSE(off_chain.ok());
  EXPECT_EQ(off_chain.error().code, ExitCode::kUsage);
  EXPECT_NE(off_chain.error().message.find("not a first-parent ancestor"), std::string::npos)
      << off_chain.error().message;
}

// What a commit changed against its first parent: its own files; a merge's, what the merged
// branch brought (not what the first-parent line did meanwhile); odd names as they are.
TEST(Git, ChangedFilesAreAgainstTheFirstParent) {
  testing_util::TempDir dir;
  const auto repo = dir / "repo";
  auto shas = testing_util::MakeGitRepoWithMerge(repo, [](const std::string& subject) {
    std::map<std::string, std::string> f;
    if (subject == "side 2") f["kernels/gmm/a b\"<x>.cc"] = "1";
    if (subject == "commit 3") f["docs/x.md"] = "2";
    return f;
  });  // c1, c2, s1, s2, merge, c3
  auto merge = ChangedFiles(repo, shas[4]);
  ASSERT_TRUE(merge.ok()) << merge.error().message;
  std::sort(merge->begin(), merge->end());
  EXPECT_EQ(*merge, (std::vector<std::string>{"kernels/gmm/a b\"<x>.cc", "side.txt"}));
  auto last = ChangedFiles(repo, shas[5]);
  ASSERT_TRUE(last.ok());
  std::sort(last->begin(), last->end());
  EXPECT_EQ(*last, (std::vector<std::string>{"docs/x.md", "main.txt"}));
  EXPECT_EQ(ChangedFiles(repo, "--output=x").error().code, ExitCode::kUsage);
  EXPECT_FALSE(ChangedFiles(repo, shas[0]).ok()) << "the root commit has no first parent";
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
