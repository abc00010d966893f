#!/usr/bin/env bash
# The test command: set up, check the layering of includes, that every path a comment or
# document cites exists and that no function runs over 60 lines, build and run every test under AddressSanitizer + UBSan (the asan
# preset, build-asan/), then build the CI configuration (build/, warnings are errors) and
# run every test through CTest again, then a short fuzz run of every parser (ci/fuzz.sh).
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step prints its wall time, so a CI log shows where the minutes go.
step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "ci/test.sh: step '$name' took $((SECONDS - start)) s (total $SECONDS s)"
}
step setup ci/setup.sh
step layering python3 ci/check_layering.py
step paths python3 ci/check_paths.py
step "function length" python3 ci/check_function_length.py

# The whole suite under the sanitizers: the e2e tests run the sanitized harness binary too,
# so a heap overflow or undefined behaviour anywhere a test reaches fails here. Benchmarks
# are left out of this build (their numbers mean nothing under ASan).
step "asan build" ci/build.sh asan
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
step "asan tests" ctest --preset asan -j "$(nproc)" --timeout 900

# The optimized build (what users run; -O2 brings its own warnings) and the suite again.
step "ci build" ci/build.sh ci
step "ci tests" ctest --preset ci -j "$(nproc)" --timeout 600

# A short libFuzzer run per parser (clang, build-fuzz/); long runs are on demand (ci/README.md).
HARNESS_FUZZ_SEED=1 step fuzz ci/fuzz.sh all 15
