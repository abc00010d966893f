#!/usr/bin/env python3
"""Checks the shipped sharded-nightly configs (ci/gitlab-nightly.yml, ci/github-nightly.yml).

Each must parse; every `build/bin/harness CMD --flag` it runs must name a command and flags
the binary has (`harness CMD --help`); and the path it describes, its shard job once per
shard and then its merge job, executed here with the variables the CI engine would set,
must store the same cases with the same statuses as one unsharded `harness run`.

Usage: ci_configs_test.py HARNESS_BINARY [SOURCE_ROOT]
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import yaml

SHA = "c0ffee0000000000000000000000000000000042"


def harness_lines(script_lines):
    return [l for l in script_lines if "build/bin/harness" in l]


def check_commands(binary, lines, where):
    """Every harness invocation names an existing command and flags it documents."""
    problems = []
    for line in lines:
        for m in re.finditer(r"build/bin/harness\s+([a-z-]+)([^|;&]*)", line):
            cmd, rest = m.group(1), m.group(2)
            help_ = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True)
            if help_.returncode != 0:
                problems.append(f"{where}: 'harness {cmd}' is not a command: {help_.stderr.strip()}")
                continue
            if "not available in this version" in help_.stdout + help_.stderr:
                problems.append(f"{where}: 'harness {cmd}' is still pending")
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
                if flag not in help_.stdout:
                    problems.append(f"{where}: 'harness {cmd}' has no flag {flag}")
    return problems


def run_shell(line, cwd, env):
    r = subprocess.run(["bash", "-eo", "pipefail", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{line!r} exited {r.returncode}: {r.stderr}")


def workdir(binary, root):
    d = tempfile.mkdtemp(prefix="harness-ci-config-")
    os.makedirs(os.path.join(d, "build", "bin"))
    os.symlink(os.path.abspath(binary), os.path.join(d, "build", "bin", "harness"))
    os.makedirs(os.path.join(d, "out"))
    env = dict(os.environ, HARNESS_ROOT=root)
    for k in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "HARNESS_DB"):
        env.pop(k, None)
    return d, env


def cases(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT case_id, status FROM case_results ORDER BY case_id").fetchall()
        runs = con.execute("SELECT shard, nightly FROM runs ORDER BY id").fetchall()
    finally:
        con.close()
    return rows, runs


def is_runnable(line):
    """The lines that run the harness (setup and build are CI's business, not this test's)."""
    return "build/bin/harness" in line


def simulate_gitlab(cfg, binary, root):
    shard_job = next(j for j in cfg.values() if isinstance(j, dict) and "parallel" in j)
    merge_job = next(j for j in cfg.values() if isinstance(j, dict) and "needs" in j)
    n = int(shard_job["parallel"])
    d, env = workdir(binary, root)
    for i in range(n):
        e = dict(env, CI_NODE_INDEX=str(i + 1), CI_NODE_TOTAL=str(n), CI_PIPELINE_ID="9001", CI_COMMIT_SHA=SHA)
        for line in shard_job["script"]:
            if is_runnable(line):
                run_shell(line, d, e)
    for line in merge_job["script"]:
        if is_runnable(line):
            run_shell(line, d, env)
    return d, env, n


def github_expr(text, values):
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: str(values[m.group(1)]), str(text))


def simulate_github(cfg, binary, root):
    jobs = cfg["jobs"]
    shard_job = next(j for j in jobs.values() if "strategy" in j)
    merge_job = next(j for j in jobs.values() if "needs" in j)
    shards = shard_job["strategy"]["matrix"]["shard"]
    d, env = workdir(binary, root)
    for s in shards:
        values = {"matrix.shard": s, "github.run_id": 4242, "github.sha": SHA}
        e = dict(env, **{k: github_expr(v, values) for k, v in shard_job.get("env", {}).items()})
        for step in shard_job["steps"]:
            if is_runnable(step.get("run", "")):
                run_shell(github_expr(step["run"], values), d, e)
    for step in merge_job["steps"]:
        if is_runnable(step.get("run", "")):
            run_shell(github_expr(step["run"], {}), d, env)
    return d, env, len(shards)


def main():
    binary = sys.argv[1]
    root = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = []
    configs = {}
    for name in ("gitlab-nightly.yml", "github-nightly.yml"):
        path = os.path.join(root, "ci", name)
        with open(path) as f:
            configs[name] = yaml.safe_load(f)
    gitlab, github = configs["gitlab-nightly.yml"], configs["github-nightly.yml"]
    lines = [l for j in gitlab.values() if isinstance(j, dict) for l in j.get("script", [])]
    problems += check_commands(binary, harness_lines(lines), "ci/gitlab-nightly.yml")
    gh_lines = [s.get("run", "") for j in github["jobs"].values() for s in j["steps"]]
    problems += check_commands(binary, harness_lines(gh_lines), "ci/github-nightly.yml")
    # PyYAML reads GitHub's `on:` as the boolean true (YAML 1.1); either spelling is the trigger.
    if not (github.get("on") or github.get(True)):
        problems.append("ci/github-nightly.yml: no trigger (on:)")

    # The unsharded reference, as ci/nightly.sh runs it.
    ref_dir, ref_env = workdir(binary, root)
    run_shell(f"build/bin/harness run --db out/full.db --commit {SHA} || test $? -eq 1", ref_dir, ref_env)
    want, _ = cases(os.path.join(ref_dir, "out", "full.db"))
    dirs = [ref_dir]
    for name, simulate, cfg in (("gitlab", simulate_gitlab, gitlab), ("github", simulate_github, github)):
        d, _, n = simulate(cfg, binary, root)
        dirs.append(d)
        got, runs = cases(os.path.join(d, "out", "harness.db"))
        if got != want:
            problems.append(f"{name}: the merged shards hold {got}, the unsharded run {want}")
        if sorted(r[0] for r in runs) != sorted(f"{i}/{n}" for i in range(n)):
            problems.append(f"{name}: runs record shards {runs}, expected 0/{n}..{n - 1}/{n}")
        if len({r[1] for r in runs}) != 1 or not runs[0][1]:
            problems.append(f"{name}: the shards do not share one nightly id: {runs}")
        if not os.path.exists(os.path.join(d, "out", "report.html")):
            problems.append(f"{name}: the merge job wrote no report")
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"ci configs: {'FAIL' if problems else 'ok'} ({len(want)} cases)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
