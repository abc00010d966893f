#!/bin/bash
# How `harness bisect --metric gsm8k` with {questions} does on the stand-in itself, over
# several draws (docs/bisect.md, "On the stand-in"): the scenario of
# harness/cli/bisect_questions_e2e_test.cc (64 commits, fp8-scale-unrepaired from commit K,
# HISTORY nightlies before the range, one at each end), for K in 20 37 50 and three seeds
# of the nightlies' noise; then no fault anywhere (K 0: the bad end's run is as noisy as any,
# and the right answer is no-culprit), three seeds. One line per draw: verdict, whether it
# is right, runs, questions evaluated, full-eval equivalents, the commit it named ("refused"
# when bisect printed nothing: counted wrong); then the share right and the mean cost.
#
#   tools/bisect_sweep.sh [PROFILE [HISTORY]]     PROFILE under golden/ (default sim/noisy.json),
#                                                 HISTORY nightlies before the range (default 4)
# Uses build/bin/harness; about 10 s a draw on one core.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
harness="$root/build/bin/harness"
profile=${1:-sim/noisy.json}
history=${2:-4}
export HARNESS_ROOT="$root"
work=$(mktemp -d /tmp/harness-bisect-sweep-XXXXXX)
trap 'rm -rf "$work"' EXIT

# stack_json COMMIT K: the commit's stack config (K 0: no commit has the fault).
stack_json() { if [ "$2" -gt 0 ] && [ "$1" -ge "$2" ]; then echo '{"format_version": 1, "faults": ["fp8-scale-unrepaired"]}'; else echo '{"format_version": 1}'; fi; }

# draw K SEEDBASE: prints "verdict right runs questions evals"
draw() {
  local k=$1 base=$2 d
  d=$(mktemp -d "$work/draw-XXXXXX")
  mkdir -p "$d/repo" "$d/suites"
  git -C "$d/repo" init -q -b main
  for i in $(seq 64); do
    local s m="commit $i"
    s=$(stack_json "$i" "$k")
    printf 'commit refs/heads/main\nauthor t <t@example.invalid> 1767225600 +0000\n'
    printf 'committer t <t@example.invalid> 1767225600 +0000\ndata %d\n%s\n' "${#m}" "$m"
    printf 'M 100644 inline stack.json\ndata %d\n%s\n' "${#s}" "$s"
  done | git -C "$d/repo" fast-import --quiet
  git -C "$d/repo" reset -q --hard main
  mapfile -t shas < <(git -C "$d/repo" rev-list --reverse main)
  python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t["defaults"]["sim_profile"] = sys.argv[2]; json.dump(t, open(sys.argv[3], "w"))' \
    "$root/suites/gsm8k.json" "$profile" "$d/suites/gsm8k.json"
  for i in $(seq 1 $((history + 1))) 64; do
    mkdir -p "$d/n$i"
    stack_json "$i" "$k" > "$d/n$i/stack.json"
    (cd "$d/n$i" && "$harness" run --db "$d/h.db" --repo "$d/repo" --commit "${shas[$((i - 1))]}" --suite gsm8k \
      --suites-dir "$d/suites" --filter 'gsm8k/*_1' --stack-config stack.json --seed $((base + i)) > /dev/null 2>&1 || true)
  done
  "$harness" bisect --good "${shas[$history]}" --bad "${shas[63]}" --metric gsm8k --repo "$d/repo" --db "$d/h.db" \
    --suites-dir "$d/suites" --format json -- "$harness" run --db '{db}' --commit '{sha}' --repo '{worktree}' \
    --suites-dir "$d/suites" --suite gsm8k --filter 'gsm8k/*_1' --stack-config '{worktree}/stack.json' \
    --questions '{questions}' 2> /dev/null |
    python3 -c 'import json, sys; text = sys.stdin.read(); j = json.loads(text) if text.strip() else {"verdict": "refused", "culprit": "", "runs": 0, "questions_evaluated": 0, "full_eval_equivalents": 0}; k = int(sys.argv[1]); shas = sys.argv[2:]; named = shas.index(j["culprit"]) + 1 if j["culprit"] in shas else "-"; right = j["verdict"] == "no-culprit" if k == 0 else j["culprit"] == shas[k - 1]; print(j["verdict"], int(right), j["runs"] or 0, j["questions_evaluated"] or 0, "%.2f" % (j["full_eval_equivalents"] or 0), "named", named)' \
      "$k" "${shas[@]}" || true
  rm -rf "$d"
}

echo "profile $profile, $history nightlies before the range"
results=()
for k in 20 37 50 0; do
  for base in 0 100 200; do
    line=$(draw "$k" "$base")
    if [ "$k" -gt 0 ]; then echo "culprit at commit $k, nightly seeds $base+: $line"; else echo "no culprit, nightly seeds $base+: $line"; fi
    results+=("$line")
  done
done
printf '%s\n' "${results[@]}" | awk '{right += $2; runs += $3; evals += $5} END {printf "right %d of %d, mean %.1f runs, %.2f full evals\n", right, NR, runs / NR, evals / NR}'
