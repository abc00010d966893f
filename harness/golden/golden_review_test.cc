#include "harness/golden/golden_review.h"

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;

void WriteExpectation(const std::filesystem::path& root, const std::string& file_case, const std::string& named_case) {
  const auto path = root / "ops" / (file_case + ".json");
  std::filesystem::create_directories(path.parent_path());
  testing_util::WriteFile(path, DumpJson(GoldenOpTableJson(named_case, {})));
}

TEST(GoldenReview, CasesAreTheExpectationFilesSorted) {
  TempDir dir;
  WriteExpectation(dir / "golden", "sp/b_1", "sp/b_1");
  WriteExpectation(dir / "golden", "gmm/a_0", "gmm/a_0");
  testing_util::WriteFile(dir / "golden" / "ops" / "gmm" / "notes.txt", "not an expectation");
  EXPECT_EQ(GoldenCases(dir / "golden"), (std::vector<std::string>{"gmm/a_0", "sp/b_1"}));
  EXPECT_TRUE(GoldenCases(dir / "nowhere").empty());
}

TEST(GoldenReview, AReviewNeedsAnExpectationOfItsOwnCase) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok());
  const auto root = dir / "golden";
  WriteExpectation(root, "gmm/a_0", "gmm/a_0");
  WriteExpectation(root, "gmm/b_0", "gmm/a_0");
  const auto ok = LoadReview((*store)->reader(), root, "gmm/a_0");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_FALSE(ok->latest) << "nothing stored";
  EXPECT_EQ(ReviewLines(*ok), (std::vector<std::string>{"gmm/a_0: no stored result"}));
  EXPECT_FALSE(CheckAcceptable(*ok).ok());
  const auto other = LoadReview((*store)->reader(), root, "gmm/b_0");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("names 'gmm/a_0'"), std::string::npos) << other.error().message;
  const auto missing = LoadReview((*store)->reader(), root, "gmm/c_0");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no golden expectation for case 'gmm/c_0'"), std::string::npos);
}

}  // namespace
}  // namespace harness
