#!/usr/bin/env bash
# The test command: set up, configure, build, run the kernel and core tests under
# AddressSanitizer + UBSan (the asan preset, build-asan/), then every test through CTest.
# Exits non-zero on any failure; CTest's summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh

# Out-of-bounds reads in the kernels and the parsers are what ASan is for; the rest of
# the suite does not need a second, slower build.
cmake --preset asan >/dev/null
cmake --build --preset asan --target kernels_tests harness_core_tests -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
build-asan/runners/refstack/kernels/kernels_tests --gtest_brief=1
build-asan/harness_lib/harness_core_tests --gtest_brief=1

ci/build.sh ci
ctest --preset ci -j "$(nproc)" --timeout 600
