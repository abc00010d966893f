#!/usr/bin/env bash
# The test command: set up, check the layering of includes, that every path a comment or
# document cites exists and that no function runs over 60 lines, build and run every test
# under AddressSanitizer + UBSan (the asan preset, build-asan/), build the CI configuration
# (build/, warnings are errors) beside those tests and run every test through CTest again,
# then a short fuzz run of every parser (ci/fuzz.sh; its build runs beside the second suite).
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
# A step that runs beside the next ones, at the lowest CPU priority, its output in a log
# printed when it is awaited: the test steps spend much of their time waiting (servers,
# child processes, timeouts; the optimized suite used 150 CPU-seconds in 190 s of wall time
# on 2 cores), and a build beside them takes only the CPU they leave idle.
declare -A beside_pid beside_start beside_log
start_beside() {
  local name=$1
  shift
  beside_log[$name]=$(mktemp)
  beside_start[$name]=$SECONDS
  nice -n 19 "$@" >"${beside_log[$name]}" 2>&1 &
  beside_pid[$name]=$!
}
await_beside() {
  local name=$1 status=0
  wait "${beside_pid[$name]}" || status=$?
  if ((status != 0)); then cat "${beside_log[$name]}"; else tail -n 3 "${beside_log[$name]}"; fi
  rm -f "${beside_log[$name]}"
  echo "ci/test.sh: step '$name' (beside the tests) took $((SECONDS - ${beside_start[$name]})) s (total $SECONDS s)"
  return "$status"
}
# A failed step ends the job: nothing started beside it outlives it.
trap 'kill -- $(jobs -p) 2>/dev/null || true' EXIT

step setup ci/setup.sh
step layering python3 ci/check_layering.py
step paths python3 ci/check_paths.py
step "function length" python3 ci/check_function_length.py

# The whole suite under the sanitizers: the e2e tests run the sanitized harness binary too,
# so a heap overflow or undefined behaviour anywhere a test reaches fails here. Benchmarks
# are left out of this build (their numbers mean nothing under ASan).
step "asan build" ci/build.sh asan
# The optimized build (what users run; -O2 brings its own warnings), beside the sanitized
# suite.
start_beside "ci build" ci/build.sh ci
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
step "asan tests" ctest --preset asan -j "$(nproc)" --timeout 900
await_beside "ci build"

# The suite again, optimized; the fuzz targets build beside it (clang, build-fuzz/).
start_beside "fuzz build" ci/fuzz.sh build
step "ci tests" ctest --preset ci -j "$(nproc)" --timeout 600
await_beside "fuzz build"

# A short libFuzzer run per parser (clang, build-fuzz/); long runs are on demand (ci/README.md).
HARNESS_FUZZ_SEED=1 step fuzz ci/fuzz.sh all 15
