#include "harness/store/resolve_commit.h"
#include "harness/store/store.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;

class ResolveCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(Store::Open(dir_ / "h.db")).value();
    int64_t ordinal = 0;
    for (const std::string& sha : {std::string("abcd0001"), std::string("abcd0002"), std::string("d00d5eed"), kSha1,
                                   kSha1 + std::string(64 - 40, '0')})
      ASSERT_TRUE(store_->writer().UpsertCommit({sha, {}, ++ordinal, 0, fmt::format("subject {}", ordinal)}).ok());
  }

  std::string Message(std::string_view spec, std::string_view flag = "") {
    auto c = ResolveCommit(store_->reader(), spec, flag);
    EXPECT_FALSE(c.ok()) << spec << " resolved to " << c->sha;
    if (c.ok()) return "";
    EXPECT_EQ(c.error().code, ExitCode::kUsage) << c.error().message;
    return c.error().message;
  }

  // A SHA-1 that begins a stored SHA-256.
  const std::string kSha1 = "beef" + std::string(40 - 4, '0');
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(ResolveCommitTest, AFullShaNamesItsCommitWithItsOrderAndSubject) {
  auto c = ResolveCommit(store_->reader(), "abcd0002");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->sha, "abcd0002");
  EXPECT_EQ(c->first_parent_ordinal, 2);
  EXPECT_EQ(c->subject, "subject 2");
}

TEST_F(ResolveCommitTest, AUniquePrefixOfFourOrMoreDigitsInEitherCaseNamesItsCommit) {
  for (const char* spec : {"d00d", "d00d5", "D00D5EED", "d00D5eE"}) {
    auto c = ResolveCommit(store_->reader(), spec);
    ASSERT_TRUE(c.ok()) << spec << ": " << c.error().message;
    EXPECT_EQ(c->sha, "d00d5eed") << spec;
  }
  auto upper = ResolveCommit(store_->reader(), "ABCD0001");
  ASSERT_TRUE(upper.ok()) << upper.error().message;
  EXPECT_EQ(upper->sha, "abcd0001");
}

TEST_F(ResolveCommitTest, AnAmbiguousPrefixNamesTheCandidates) {
  EXPECT_EQ(Message("abcd"), "'abcd' is ambiguous: it matches abcd0001, abcd0002");
  EXPECT_EQ(Message("ABCD", "--since"), "--since ABCD is ambiguous: it matches abcd0001, abcd0002");
}

TEST_F(ResolveCommitTest, AnAmbiguousPrefixNamesAtMostTenCandidates) {
  for (int i = 0; i < 12; ++i)
    ASSERT_TRUE(store_->writer().UpsertCommit({fmt::format("cafe{:04}", i), {}, 10 + i, 0, ""}).ok());
  const std::string m = Message("cafe");
  EXPECT_NE(m.find("cafe0000, cafe0001"), std::string::npos) << m;
  EXPECT_NE(m.find("cafe0009, ..."), std::string::npos) << m;
  EXPECT_EQ(m.find("cafe0010"), std::string::npos) << m;
}

// A SHA-1 stored whole that also begins a longer sha (a SHA-256) names itself.
TEST_F(ResolveCommitTest, AShaStoredWholeWinsOverTheLongerOnesItBegins) {
  auto c = ResolveCommit(store_->reader(), kSha1);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->sha, kSha1);
  EXPECT_EQ(c->first_parent_ordinal, 4);
  EXPECT_NE(Message("beef").find("is ambiguous"), std::string::npos);
  EXPECT_NE(Message(kSha1.substr(0, 39)).find("is ambiguous"), std::string::npos);
}

TEST_F(ResolveCommitTest, AnUnknownCommitIsNamed) {
  EXPECT_EQ(Message("fedcba98"), "no stored commit matches 'fedcba98'");
  EXPECT_EQ(Message("fedcba98", "--good"), "no stored commit matches --good fedcba98");
}

TEST_F(ResolveCommitTest, TooShortTooLongAndNonHexAreRefusedBeforeAnyLookup) {
  const std::string expected = ": expected a commit sha or a prefix of one (4 to 64 hex digits)";
  EXPECT_EQ(Message("abc"), "'abc'" + expected) << "three digits match too much to mean one commit";
  EXPECT_EQ(Message(""), "''" + expected);
  EXPECT_EQ(Message(std::string(65, 'a')), "'" + std::string(65, 'a') + "'" + expected);
  EXPECT_EQ(Message("abcd000g", "--bad"), "--bad abcd000g" + expected);
  EXPECT_EQ(Message("HEAD"), "'HEAD'" + expected) << "a revision is git's, not the store's";
  EXPECT_EQ(Message("abc*"), "'abc*'" + expected) << "never a GLOB pattern";
  EXPECT_EQ(Message("ab\x1b[2J"), "'ab\\x1b[2J'" + expected) << "control characters are shown escaped";
}

// The spelling a new run is stored under: the one commit a stored sha and the given one share
// by prefix, either way; several are an error that names them and the given text, cut.
TEST_F(ResolveCommitTest, StoredSpellingKeepsTheFirstSpellingOfACommit) {
  EXPECT_EQ(StoredSpelling(store_->reader(), "abcd0001").value(), "abcd0001") << "stored whole";
  EXPECT_EQ(StoredSpelling(store_->reader(), "D00D").value(), "d00d5eed") << "a short sha after its full one";
  EXPECT_EQ(StoredSpelling(store_->reader(), "d00d5eed1234").value(), "d00d5eed") << "a full sha after its short one";
  EXPECT_EQ(StoredSpelling(store_->reader(), "ABCDEF12").value(), "abcdef12") << "a new commit, lowercased";
  auto shared = StoredSpelling(store_->reader(), "abcd");
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.error().message.find("it matches the stored commits abcd0001, abcd0002; give more"), std::string::npos)
      << shared.error().message;
  // Begun by two stored commits (a SHA-1 and the SHA-256 it starts), and far longer than any
  // sha: the message quotes its first 128 characters only.
  const std::string given = kSha1 + std::string(24, '0') + std::string(300, '7');
  auto begun = StoredSpelling(store_->reader(), given);
  ASSERT_FALSE(begun.ok());
  EXPECT_NE(begun.error().message.find("commit " + given.substr(0, 128) + " is ambiguous"), std::string::npos)
      << begun.error().message;
  EXPECT_EQ(begun.error().message.find(given.substr(0, 129)), std::string::npos) << "cut at 2 x 64 characters";
}

}  // namespace
}  // namespace harness
