#!/usr/bin/env bash
# The test command: set up, configure, build, check the layering of includes, run the
# kernel and core tests under AddressSanitizer + UBSan (the asan preset, build-asan/),
# then every test through CTest, then a short fuzz run of every parser (ci/fuzz.sh).
# Exits non-zero on any failure; CTest's summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh
python3 ci/check_layering.py

# Out-of-bounds reads in the kernels and the parsers are what ASan is for; the rest of
# the suite does not need a second, slower build.
cmake --preset asan >/dev/null
asan_tests=(
  runners/refstack/kernels/kernels_tests
  harness/util/util_tests harness/results/results_tests harness/stats/stats_tests
  harness/store/store_tests harness/stack/stack_tests harness/run/run_tests harness/bisect/bisect_tests
)
cmake --build --preset asan --target "${asan_tests[@]##*/}" -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in "${asan_tests[@]}"; do build-asan/"$t" --gtest_brief=1; done

ci/build.sh ci
ctest --preset ci -j "$(nproc)" --timeout 600

# A short libFuzzer run per parser (clang, build-fuzz/); long runs are on demand (ci/README.md).
ci/fuzz.sh all 20
