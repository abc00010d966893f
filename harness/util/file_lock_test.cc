#include "harness/util/file_lock.h"

#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

TEST(FileLock, ATakenLockIsRefusedOrWaitedFor) {
  testing_util::TempDir dir;
  const auto path = dir / "x.lock";
  auto first = FileLock::Acquire(path, FileLock::Wait::kNo);
  ASSERT_TRUE(first.ok() && *first) << (first.ok() ? "" : first.error().message);
  auto refused = FileLock::Acquire(path, FileLock::Wait::kNo);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(*refused, nullptr) << "a held lock is not taken twice";

  // A waiter gets the lock once the holder lets go, on the file that is then at the path
  // (the holder removed its own): a third process can no longer take it beside the waiter.
  auto waiter = std::async(std::launch::async, [&] { return FileLock::Acquire(path, FileLock::Wait::kYes); });
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout) << "it waits";
  first->reset();
  auto second = waiter.get();
  ASSERT_TRUE(second.ok() && *second);
  EXPECT_TRUE(std::filesystem::exists(path));
  auto third = FileLock::Acquire(path, FileLock::Wait::kNo);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third, nullptr);
  second->reset();
  EXPECT_FALSE(std::filesystem::exists(path)) << "the last holder removes the file";
}

}  // namespace
}  // namespace harness
