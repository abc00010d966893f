#!/usr/bin/env bash
# The whole story on a fresh machine, no GPU, a few minutes: a scripted stack repository
# (a stack.json per commit) gets four commits a night; a fault from golden/regressions.json
# is switched on at a commit only this script knows. Each night runs the nightly suites on
# the noisy GSM8K stand-in (rerun noise as a real server's), and a night with failing cases
# bisects its own regressions (ci/auto-bisect.sh). Writes out/demo/report.html, report.txt,
# report.md (when this harness has the markdown report) and, per night, bisect-N.txt.
#   HARNESS_DEMO_FAULT   the fault (default fp8-scale-unrepaired)
#   HARNESS_DEMO_SEED    makes the landing commit reproducible (default: random)
#   HARNESS_DEMO_NIGHTS  nights (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ci/setup.sh >/dev/null
ci/build.sh ci harness >/dev/null
harness=$root/build/bin/harness
demo=$root/out/demo
rm -rf "$demo"
mkdir -p "$demo/suites"
fault=${HARNESS_DEMO_FAULT:-fp8-scale-unrepaired}
nights=${HARNESS_DEMO_NIGHTS:-5}
per_night=4
RANDOM=${HARNESS_DEMO_SEED:-$$}
land=$(( per_night + 1 + RANDOM % ((nights - 1) * per_night) ))  # a commit after the first night

# The suites, with GSM8K on the noisy stand-in.
cp suites/*.json "$demo/suites/"
python3 - "$demo/suites/gsm8k.json" <<'PY'
import json, sys
path = sys.argv[1]
table = json.load(open(path))
table["defaults"]["sim_profile"] = "sim/noisy.json"
json.dump(table, open(path, "w"), indent=2)
PY

stack=$demo/stack
git init -q -b main "$stack"
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@harness.invalid GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@harness.invalid
db=$demo/harness.db
export HARNESS_STACK_REPO=$stack
export HARNESS_BISECT_COMMAND="$harness run --db {db} --repo $stack --commit {sha} --stack-config {worktree}/stack.json --suites-dir $demo/suites"
commit=0
start=$(date +%s)
for night in $(seq 1 "$nights"); do
  for _ in $(seq 1 "$per_night"); do
    commit=$((commit + 1))
    if (( commit >= land )); then printf '{"format_version": 1, "faults": ["%s"]}\n' "$fault" > "$stack/stack.json"
    else printf '{"format_version": 1}\n' > "$stack/stack.json"; fi
    printf 'change %d\n' "$commit" > "$stack/CHANGES"
    git -C "$stack" add -A
    git -C "$stack" commit -q -m "stack change $commit"
  done
  set +e
  "$harness" run --db "$db" --repo "$stack" --stack-config "$stack/stack.json" --suites-dir "$demo/suites" \
    --nightly "night-$night" --rerun-at-risk 2 --junit "$demo/junit-$night.xml" > "$demo/run-$night.txt" 2>&1
  code=$?
  set -e
  echo "night $night: $(git -C "$stack" log -1 --format='%h %s'), harness run exit $code"
  if (( code == 1 )); then
    ci/auto-bisect.sh "$db" "$demo/junit-$night.xml" "$demo/bisect-$night.txt" | sed 's/^/  /'
  elif (( code != 0 )); then
    cat "$demo/run-$night.txt" >&2
    exit "$code"
  fi
done
"$harness" report --db "$db" --last 40 --out "$demo/report.html"
"$harness" report --db "$db" --last 40 --format text --out "$demo/report.txt"
if "$harness" report --help | grep -q markdown; then
  "$harness" report --db "$db" --last 40 --format markdown --out "$demo/report.md"
fi
landed=$(git -C "$stack" log --format='%H %s' --grep="^stack change $land\$")
echo
echo "the script switched $fault on at: $landed"
echo "demo took $(( $(date +%s) - start )) s after the build; open $demo/report.html"
