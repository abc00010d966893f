#!/usr/bin/env bash
# After a nightly: `harness bisect --auto` on DB, when the stack to bisect is configured.
#   HARNESS_STACK_REPO       the stack's git repository (the commits the nightlies stored)
#   HARNESS_BISECT_COMMAND   the command that tests one commit, e.g.
#                            "build/bin/harness run --db {db} --repo /src/stack --commit {sha} --stack-config {worktree}/stack.json"
#                            split on whitespace into argv (no shell, no quoting); {sha}, {worktree}, {db} filled per commit
#   HARNESS_BISECT_MAX_RUNS  commands for the whole night (default 60)
#   HARNESS_BISECT_CONFIRM   reruns of the bad commit before bisecting (default 1)
#   HARNESS_BISECT_MAX_CULPRITS  culprits each bisection looks for, each with its own drop (1-3, default 1)
# Usage: ci/auto-bisect.sh DB [JUNIT [TEXT]]: writes JUNIT (the nightly's JUnit with culprit
# lines) and TEXT (what bisect said; default out/bisect.txt in the checkout). DB, JUNIT, TEXT
# and HARNESS_STACK_REPO are relative to the caller's folder. Exits 0 when not configured,
# else with bisect's code (0 answered, 2 bad input, 3 the command failed).
set -uo pipefail
if [[ $# -lt 1 || -z "$1" ]]; then
  echo "usage: ci/auto-bisect.sh DB [JUNIT [TEXT]]" >&2
  exit 2
fi
# Paths the caller gives are the caller's: made absolute before the cd into the checkout
# (a relative database would otherwise be a new, empty one there).
absolute() { if [[ -z "$1" || "$1" == /* ]]; then printf '%s' "$1"; else printf '%s/%s' "$PWD" "$1"; fi; }
db=$(absolute "$1")
junit=$(absolute "${2:-}")
text=$(absolute "${3:-}")
if [[ -n "${HARNESS_STACK_REPO:-}" ]]; then HARNESS_STACK_REPO=$(absolute "$HARNESS_STACK_REPO"); fi
cd "$(dirname "$0")/.."
text=${text:-out/bisect.txt}  # the default is the checkout's
if [[ -z "${HARNESS_STACK_REPO:-}" || -z "${HARNESS_BISECT_COMMAND:-}" ]]; then
  echo "auto-bisect: set HARNESS_STACK_REPO and HARNESS_BISECT_COMMAND to bisect the nightly's regressions"
  exit 0
fi
read -ra command <<< "$HARNESS_BISECT_COMMAND"
# The command runs in each commit's worktree: a relative program path is made absolute here.
if [[ "${command[0]}" == */* && "${command[0]}" != /* ]]; then command[0]="$PWD/${command[0]}"; fi
args=(--db "$db" --repo "$HARNESS_STACK_REPO" --max-runs "${HARNESS_BISECT_MAX_RUNS:-60}"
      --confirm "${HARNESS_BISECT_CONFIRM:-1}" --max-culprits "${HARNESS_BISECT_MAX_CULPRITS:-1}")
if [[ -n "$junit" ]]; then args+=(--junit "$junit"); fi
mkdir -p "$(dirname "$text")"
build/bin/harness bisect --auto "${args[@]}" -- "${command[@]}" | tee "$text"
exit "${PIPESTATUS[0]}"
