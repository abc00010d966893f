// One libFuzzer binary per target: built with -DHARNESS_FUZZ_TARGET=<function> (tools/fuzz/CMakeLists.txt).
#include "tools/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return harness::fuzz::HARNESS_FUZZ_TARGET(data, size);
}
