// What the e2e tests of several culprits in one range (auto_bisect_culprits_e2e_test.cc,
// report_culprits_e2e_test.cc) read alike in the HTML report: its ordered list of culprits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/util/git.h"

namespace harness::testing_util {

// The HTML report's ordered list of culprits, from its opening tag to its closing one; ""
// when the page has none.
inline std::string HtmlCulpritList(const std::string& page) {
  const std::size_t list = page.find(R"(<ol class="culprit culprits">)");
  if (list == std::string::npos) return "";
  return page.substr(list, page.find("</ol>", list) - list);
}

// Both commits are items of the list (their short shas as code), the first before the second.
inline void ExpectListedInOrder(const std::string& list, const std::string& first_sha, const std::string& second_sha) {
  const std::size_t first = list.find("<code>" + ShortSha(first_sha) + "</code>");
  const std::size_t second = list.find("<code>" + ShortSha(second_sha) + "</code>");
  ASSERT_NE(first, std::string::npos) << list;
  ASSERT_NE(second, std::string::npos) << list;
  EXPECT_LT(first, second);
}

}  // namespace harness::testing_util
