#!/usr/bin/env bash
# Fuzzes the parsers with libFuzzer (Debian's clang, ASan + UBSan; the fuzz preset builds
# into build-fuzz/, the main build is unaffected).
#   ci/fuzz.sh TARGET SECONDS   one target (answer_extract, suite_table, stack_config,
#                               golden_ops, openai_response, exec_answer, tensorcast_table,
#                               ingest_junit, ingest_gtest_json, ingest_lm_eval,
#                               ingest_sglang_gsm8k, ingest_tensorcast)
#   ci/fuzz.sh all SECONDS      every target, SECONDS each (CI: a short run per target)
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
if [[ $# -ne 2 ]]; then
  echo "usage: ci/fuzz.sh TARGET|all SECONDS" >&2
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

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  findings=build-fuzz/findings/$t
  mkdir -p "$corpus" "$findings"
  for seed in tools/fuzz/corpus/"$t"/*; do [[ -e $corpus/${seed##*/} ]] || cp "$seed" "$corpus"/; done
  regressions=()
  if [[ -d tools/fuzz/regressions/$t ]]; then regressions=(tools/fuzz/regressions/"$t"); fi
  echo "ci/fuzz.sh: $t for ${seconds}s"
  build-fuzz/tools/fuzz/fuzz_"$t" -seed="${HARNESS_FUZZ_SEED:-0}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$findings"/ -print_final_stats=1 "$corpus" "${regressions[@]}" 2>&1 | tail -n 25
done
