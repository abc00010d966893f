// Where this build's source tree and harness binary are, for tests. Defined in a file that
// harness_test() generates per test binary (cmake/Settings.cmake), not passed as compile
// definitions: an absolute path in a definition makes every test object differ between two
// checkouts, so ccache could never share them between worktrees or the mutation runner's
// scratch copy; here only the one generated file does.
#pragma once

namespace harness::testing_util {

extern const char* const kSourceRoot;    // the source tree (HARNESS_ROOT for the binary)
extern const char* const kHarnessBinary;  // bin/harness of this build

}  // namespace harness::testing_util
