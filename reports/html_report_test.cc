#include "reports/html_report.h"

#include <gtest/gtest.h>

#include "harness/util/test_util.h"

namespace harness::reports {
namespace {

TEST(HtmlReport, EscapesEveryStoredStringAndForbidsNetworkAccess) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  int64_t c = *store->UpsertCommit({"abc", {}, 1, {}, "<script>alert(1)</script>"});
  int64_t run = *store->BeginRun({c, "refstack", "h", R"({"note": "<img src=x onerror=alert(2)>"})", "host", "v"});
  int64_t cr = *store->BeginCase(run, "s", "s/<b>_0", "{}");
  ASSERT_TRUE(store->FinishCase(cr, {"s/<b>_0", CaseStatus::kFail, 0.1, "model said </pre><script>x</script>",
                                        {{"acc<", 0.5, 10, 0.4, 0.6}}, {}}).ok());
  auto html = HtmlReport(*store, 0);
  ASSERT_TRUE(html.ok()) << html.error().message;
  EXPECT_EQ(html->find("<script"), std::string::npos) << "no raw markup from stored strings";
  EXPECT_EQ(html->find("<img"), std::string::npos);
  EXPECT_NE(html->find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html->find("s/&lt;b&gt;_0"), std::string::npos);
  EXPECT_NE(html->find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(html->find("http://"), std::string::npos);
  EXPECT_EQ(html->find("https://"), std::string::npos);
}

TEST(HtmlReport, UnknownRunIsAUsageError) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  auto html = HtmlReport(*store, 42);
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace harness::reports
