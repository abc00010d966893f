#include "harness/util/paths.h"

#include <cstdlib>

namespace harness {

std::filesystem::path DataRoot() {
  if (const char* env = std::getenv("HARNESS_ROOT"); env && *env) return env;
  return HARNESS_SOURCE_ROOT;
}
std::filesystem::path SourceRoot() { return HARNESS_SOURCE_ROOT; }
std::filesystem::path SuitesDir() { return DataRoot() / "suites"; }
std::filesystem::path GoldenDir() { return DataRoot() / "golden"; }

}  // namespace harness
