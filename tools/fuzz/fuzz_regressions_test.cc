// Every kept fuzz input (seeds under tools/fuzz/corpus/TARGET/, and inputs that once found
// a bug under tools/fuzz/regressions/TARGET/) replayed through its target in the normal
// build, so a fixed finding stays fixed without a fuzzer.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "harness/testing/test_paths.h"
#include "tools/fuzz/fuzz_targets.h"

namespace harness::fuzz {
namespace {

const std::filesystem::path kRoot = std::filesystem::path(testing_util::kSourceRoot) / "tools" / "fuzz";

TEST(FuzzRegressions, EveryTargetHasSeedsAndEveryKeptInputRuns) {
  std::set<std::string> names;
  for (const auto& t : FuzzTargets()) {
    names.insert(t.name);
    int seeds = 0;
    for (const char* kind : {"corpus", "regressions"}) {
      const auto dir = kRoot / kind / t.name;
      if (!std::filesystem::is_directory(dir)) continue;
      for (const auto& e : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(e.path(), std::ios::binary);
        const std::string bytes(std::istreambuf_iterator<char>(in), {});
        SCOPED_TRACE(e.path().string());
        EXPECT_EQ(t.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
        seeds += std::string(kind) == "corpus";
      }
    }
    EXPECT_GT(seeds, 0) << t.name << ": no seed corpus";
  }
  // ci/fuzz.sh and the fuzz build know every target (else CI would not fuzz it).
  for (const char* file : {"ci/fuzz.sh", "tools/fuzz/CMakeLists.txt"}) {
    std::ifstream in(std::filesystem::path(testing_util::kSourceRoot) / file);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    ASSERT_FALSE(text.empty()) << file;
    for (const auto& name : names)
      EXPECT_TRUE(std::regex_search(text, std::regex("[ (]" + name + "[:) \n]"))) << file << " does not name " << name;
  }
  // Every folder of kept inputs belongs to a target (a renamed target would orphan them).
  for (const char* kind : {"corpus", "regressions"}) {
    if (!std::filesystem::is_directory(kRoot / kind)) continue;
    for (const auto& e : std::filesystem::directory_iterator(kRoot / kind)) {
      EXPECT_TRUE(names.count(e.path().filename().string())) << e.path();
    }
  }
}

}  // namespace
}  // namespace harness::fuzz
