#!/usr/bin/env bash
# Fuzzes the parsers with libFuzzer (Debian's clang, ASan + UBSan; the fuzz preset builds
# into build-fuzz/, the main build is unaffected).
#   ci/fuzz.sh TARGET SECONDS   one target (answer_extract, suite_table, stack_config,
#                               golden_ops, openai_response, exec_answer, tensorcast_table,
#                               ingest_junit, ingest_gtest_json, ingest_lm_eval,
#                               ingest_sglang_gsm8k, ingest_tensorcast)
#   ci/fuzz.sh all SECONDS      every target, SECONDS each (CI: a short run per target)
#   ci/fuzz.sh build            only build every target (ci/test.sh, beside the tests)
# HARNESS_FUZZ_SEED fixes libFuzzer's random seed (ci/test.sh sets 1, so a CI run from the
# repository's seeds explores the same inputs each time and turns red only on a change, and
# a finding there reproduces); unset, every run explores anew, as long runs should.
# The seeds in tools/fuzz/corpus/TARGET/ are copied to build-fuzz/corpus/TARGET/, which
# grows as the fuzzer finds new paths and is kept between runs. A finding (crash, leak,
# sanitizer report, timeout) is written to build-fuzz/findings/TARGET/ and fails the
# script: fix it and keep the input under tools/fuzz/regressions/TARGET/, which the
# normal build replays (fuzz_regressions_test).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -eq 1 && $1 == build ]]; then
  set -- all build
elif [[ $# -ne 2 ]]; then
  echo "usage: ci/fuzz.sh TARGET|all SECONDS, or ci/fuzz.sh build" >&2
  exit 2
fi
target=$1
seconds=$2
all_targets=(answer_extract suite_table stack_config golden_ops openai_response exec_answer tensorcast_table
             ingest_junit ingest_gtest_json ingest_lm_eval ingest_sglang_gsm8k ingest_tensorcast)
if [[ $target == all ]]; then targets=("${all_targets[@]}"); else targets=("$target"); fi
for t in "${targets[@]}"; do
  if [[ ! -d tools/fuzz/corpus/$t ]]; then
    echo "ci/fuzz.sh: unknown target '$t' (known: ${all_targets[*]})" >&2
    exit 2
  fi
done

ci/setup.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]/#/fuzz_}" -j "$(nproc)"
if [[ $seconds == build ]]; then exit 0; fi

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# One target's run; its output goes to build-fuzz/logs/TARGET.log.
fuzz_one() {
  local t=$1
  local corpus=build-fuzz/corpus/$t findings=build-fuzz/findings/$t
  mkdir -p "$corpus" "$findings"
  for seed in tools/fuzz/corpus/"$t"/*; do [[ -e $corpus/${seed##*/} ]] || cp "$seed" "$corpus"/; done
  local regressions=()
  if [[ -d tools/fuzz/regressions/$t ]]; then regressions=(tools/fuzz/regressions/"$t"); fi
  set +e
  build-fuzz/tools/fuzz/fuzz_"$t" -seed="${HARNESS_FUZZ_SEED:-0}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$findings"/ -print_final_stats=1 "$corpus" "${regressions[@]}" >build-fuzz/logs/"$t".log 2>&1
  echo $? >build-fuzz/logs/"$t".rc
}
# A fuzzer is one process on one core, so the targets run side by side, one per core: the
# same seconds of fuzzing each in a fraction of the wall time. Each target's last lines are
# printed in the order of the list, whatever order they finish in.
mkdir -p build-fuzz/logs
jobs_max=$(nproc)
rm -f build-fuzz/logs/*.rc
failed=()
for t in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n || true; done
  echo "ci/fuzz.sh: $t for ${seconds}s"
  fuzz_one "$t" &
done
wait
for t in "${targets[@]}"; do
  echo "ci/fuzz.sh: $t:"
  tail -n 25 build-fuzz/logs/"$t".log
  if [[ $(cat build-fuzz/logs/"$t".rc 2>/dev/null) != 0 ]]; then failed+=("$t"); fi
done
if (( ${#failed[@]} > 0 )); then
  echo "ci/fuzz.sh: findings in: ${failed[*]} (build-fuzz/findings/, logs in build-fuzz/logs/)" >&2
  exit 1
fi
