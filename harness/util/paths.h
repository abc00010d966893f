// Where the data the binary reads lives: suites/, golden/. HARNESS_ROOT wins; otherwise
// the source tree the binary was built from (so build/bin/harness works from any folder).
#pragma once

#include <filesystem>

namespace harness {

std::filesystem::path DataRoot();
// The source tree the binary was built from (absolute; DataRoot() unless HARNESS_ROOT is set).
std::filesystem::path SourceRoot();
std::filesystem::path SuitesDir();   // DataRoot()/suites
std::filesystem::path GoldenDir();   // DataRoot()/golden

}  // namespace harness
