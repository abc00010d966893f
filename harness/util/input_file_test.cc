#include "harness/util/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;
using testing_util::WriteFile;

TEST(InputFile, ReadsARegularFileAndOneThroughASymlink) {
  TempDir dir;
  WriteFile(dir / "a.txt", std::string("bytes\0and more", 14));
  auto a = ReadInputFile(dir / "a.txt", 14, "test files");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(*a, std::string("bytes\0and more", 14));
  std::filesystem::create_symlink(dir / "a.txt", dir / "link.txt");
  auto link = ReadInputFile(dir / "link.txt", 14, "test files");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_EQ(link->size(), 14u);
}

TEST(InputFile, RefusesWhatIsNotARegularFileWithoutReadingIt) {
  TempDir dir;
  auto directory = ReadInputFile(dir.path(), 1 << 20, "test files");
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, ExitCode::kUsage);
  EXPECT_EQ(directory.error().message, dir.path().string() + ": not a regular file (a directory)");
  // Endless: reading it would never stop on its own.
  auto zero = ReadInputFile("/dev/zero", 1 << 20, "test files");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "/dev/zero: not a regular file (a character device)");
  // A FIFO with no writer: opening it must not wait for one.
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  auto fifo = ReadInputFile(dir / "fifo", 1 << 20, "test files");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().message, (dir / "fifo").string() + ": not a regular file (a FIFO)");
  auto missing = ReadInputFile(dir / "nope", 1 << 20, "test files");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, (dir / "nope").string() + ": cannot open file (No such file or directory)");
}

TEST(InputFile, RefusesAFileOverTheBoundBeforeReadingIt) {
  TempDir dir;
  WriteFile(dir / "exact.txt", std::string(1024, 'x'));
  EXPECT_TRUE(ReadInputFile(dir / "exact.txt", 1024, "test files").ok()) << "the bound itself is allowed";
  // A sparse file: 1 GiB by its size, no bytes on disk; refused by its size alone.
  WriteFile(dir / "big.txt", "");
  ASSERT_EQ(truncate((dir / "big.txt").c_str(), off_t{1} << 30), 0);
  auto big = ReadInputFile(dir / "big.txt", 1 << 20, "test files");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ExitCode::kUsage);
  EXPECT_EQ(big.error().message,
            (dir / "big.txt").string() + ": 1073741824 bytes, over the 1 MiB limit for test files");
  // A file whose size says nothing (proc files say 0) is still cut off at the bound.
  auto proc = ReadInputFile("/proc/self/status", 16, "test files");
  ASSERT_FALSE(proc.ok());
  EXPECT_EQ(proc.error().message, "/proc/self/status: grew past the 16 bytes limit for test files while being read");
}

TEST(InputFile, ByteSizesReadAsTheDocsStateThem) {
  EXPECT_EQ(ByteSize(64u << 20), "64 MiB");
  EXPECT_EQ(ByteSize(4096), "4 KiB");
  EXPECT_EQ(ByteSize(1000), "1000 bytes");
}

}  // namespace
}  // namespace harness
