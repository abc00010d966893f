#include "harness/util/bounded_log.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::ReadFile;
using testing_util::TempDir;

void WriteAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = write(fd, text.data() + done, text.size() - done);
    ASSERT_GT(w, 0);
    done += static_cast<std::size_t>(w);
  }
}

TEST(BoundedLog, WithinTheBoundTheFileIsWhatWasWrittenAfterWhatWasThere) {
  TempDir dir;
  testing_util::WriteFile(dir / "log", "before\n");
  auto log = BoundedLog::Open(dir / "log", 8, 8);
  ASSERT_TRUE(log) << log.error().message;
  WriteAll((*log)->write_fd(), "0123456789ab");
  EXPECT_EQ((*log)->Finish(5), 0u);
  EXPECT_EQ(ReadFile(dir / "log"), "before\n0123456789ab");
}

TEST(BoundedLog, PastTheBoundItKeepsHeadAndTailAndSaysWhatWasDroppedWhere) {
  TempDir dir;
  auto log = BoundedLog::Open(dir / "log", 1000, 2000);
  ASSERT_TRUE(log);
  std::string all;
  for (int i = 0; i < 100000; ++i) all += std::to_string(i) + "\n";
  WriteAll((*log)->write_fd(), all);
  const uint64_t dropped = (*log)->Finish(5);
  EXPECT_EQ(dropped, all.size() - 3000);
  EXPECT_EQ(ReadFile(dir / "log"), all.substr(0, 1000) + DroppedMarker(dropped) + all.substr(all.size() - 2000));
}

}  // namespace
}  // namespace harness
