#!/usr/bin/env bash
# The nightly job: set up, build, run every nightly suite against the embedded reference
# stack (AT-RISK cases rerun up to $HARNESS_RERUN_AT_RISK times, default 2, so the report
# has their rerun spread), and write out/harness.db, out/junit.xml, and the triage report
# over the database's history (the last $HARNESS_REPORT_LAST commits, default 30):
# out/report.html, out/report.txt and the short Markdown summary out/report.md (for a CI job
# page; $HARNESS_REPORT_URL, where report.html will be served, is linked from it). Keep
# out/harness.db between nightlies (a CI cache or artifact) for the history. Exits with `harness run`'s code (0 pass, 1 failures, 2 usage,
# 3 infra). Extra arguments go to `harness run` (e.g. --fault NAME, --stack-config FILE).
# $HARNESS_COMMIT_URL (e.g. https://host/repo/commit/{sha}) links commits in the report.
# $HARNESS_STACK_REPO names the stack's git repository (the nightly's commit is its HEAD);
# with $HARNESS_BISECT_COMMAND too, a nightly with failing cases bisects its own regressions
# (ci/auto-bisect.sh: out/bisect.txt, culprit lines in out/junit.xml and the report).
set -uo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh || exit 3
ci/build.sh ci harness || exit 3  # the one binary it runs, not the tests
mkdir -p out
commit_args=()
if [[ -n "${HARNESS_STACK_REPO:-}" ]]; then commit_args=(--repo "$HARNESS_STACK_REPO")
elif ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then commit_args=(--commit 0000000000000000000000000000000000000000); fi
build/bin/harness run --db out/harness.db --junit out/junit.xml --rerun-at-risk "${HARNESS_RERUN_AT_RISK:-2}" \
  "${commit_args[@]}" "$@"
code=$?
if [[ $code -eq 1 ]]; then
  ci/auto-bisect.sh out/harness.db out/junit.xml || echo "nightly: bisect --auto failed; the nightly's verdicts stand" >&2
fi
report_args=(--db out/harness.db --last "${HARNESS_REPORT_LAST:-30}")
if [[ -n "${HARNESS_COMMIT_URL:-}" ]]; then report_args+=(--commit-url "$HARNESS_COMMIT_URL"); fi
if [[ -n "${HARNESS_REPORT_URL:-}" ]]; then report_args+=(--html-url "$HARNESS_REPORT_URL"); fi
# One model, three files: the history is read once.
build/bin/harness report "${report_args[@]}" --out out/report.html --also text=out/report.txt \
  --also markdown=out/report.md || { [[ $code -eq 0 ]] && code=3; }
# What to open and what to keep: the reports, and the database the next nightly adds to.
echo "nightly: reports: out/report.html (open in a browser), out/report.md, out/report.txt, out/junit.xml" >&2
echo "nightly: keep out/harness.db for the next nightly (a CI cache or artifact): history, flaky ranking and bisect read it" >&2
exit $code
