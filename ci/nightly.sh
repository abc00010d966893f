#!/usr/bin/env bash
# The nightly job: set up, build, run every nightly suite against the embedded reference
# stack, and write out/harness.db, out/junit.xml and out/report.html. A summary table
# goes to stdout. Exits with `harness run`'s code (0 pass, 1 failures, 2 usage, 3 infra).
# Extra arguments go to `harness run` (e.g. --fault NAME, --stack-config FILE).
set -uo pipefail
cd "$(dirname "$0")/.."
ci/setup.sh || exit 3
ci/build.sh ci || exit 3
mkdir -p out
commit_args=()
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then commit_args=(--commit 0000000000000000000000000000000000000000); fi
build/bin/harness run --db out/harness.db --junit out/junit.xml "${commit_args[@]}" "$@"
code=$?
build/bin/harness report --db out/harness.db --out out/report.html || { [[ $code -eq 0 ]] && code=3; }
exit $code
