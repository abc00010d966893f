#!/usr/bin/env python3
"""Checks the shipped sharded-nightly configs (ci/gitlab-nightly.yml, ci/github-nightly.yml).

Each must parse; every `build/bin/harness CMD --flag` it runs must name a command and flags
the binary has (`harness CMD --help`); and the path it describes, its shard job once per
shard and then its merge job, executed here with the variables the CI engine would set,
each job in a folder of its own holding only the artifacts it declares, must store the same
cases with the same statuses as one unsharded `harness run`, and two nights in a row must
leave one database holding both (the history flows from night to night). A third night loses
one shard job altogether: its merge job must end with exit 1 (a healthy night's with 0), keep
the database with the shards it has, and its reports (text, and the Markdown summary, which
GitHub's job summary receives) must name the missing shard.

Usage: ci_configs_test.py HARNESS_BINARY [SOURCE_ROOT]
"""
import fnmatch
import glob
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import yaml

SHA = "c0ffee0000000000000000000000000000000042"
SHA2 = "c0ffee0000000000000000000000000000000043"
SHA3 = "c0ffee0000000000000000000000000000000044"


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


def run_shell(script, cwd, env, allowed=(0,)):
    """Runs one script line (GitLab) or step (GitHub) as the engine would: bash -e."""
    r = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode not in allowed:
        raise AssertionError(f"{script!r} exited {r.returncode}: {r.stderr}")
    return r.returncode


def cases(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT case_id, status FROM case_results ORDER BY case_id").fetchall()
        runs = con.execute("SELECT shard, nightly FROM runs ORDER BY id").fetchall()
    finally:
        con.close()
    return rows, runs


# What CI's machine does, not this test: packages, the build, git's setup.
SKIPPED = ("ci/setup.sh", "ci/build.sh", "apt-get ", "git config")


def runnable(script):
    lines = [l for l in script.splitlines() if not any(l.strip().startswith(s) for s in SKIPPED)]
    return "\n".join(lines).strip()


class Jobs:
    """Each job in a directory of its own holding only the artifacts it declares it needs
    (and the binary, which the build job's artifact hands on), so a wrong path fails here."""

    def __init__(self, binary, root):
        self.binary, self.root = os.path.abspath(binary), root
        self.dirs = []

    def new_dir(self):
        d = tempfile.mkdtemp(prefix="harness-ci-job-")
        self.dirs.append(d)
        env = dict(os.environ, HARNESS_ROOT=self.root)
        for k in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "HARNESS_DB", "GITHUB_STEP_SUMMARY", "CI_PIPELINE_ID",
                  "GITHUB_RUN_ID", "CI_JOB_URL", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY"):
            env.pop(k, None)
        return d, env

    def give_binary(self, d):
        os.makedirs(os.path.join(d, "build", "bin"), exist_ok=True)
        dst = os.path.join(d, "build", "bin", "harness")
        if not os.path.lexists(dst):
            os.symlink(self.binary, dst)

    @staticmethod
    def copy_paths(src, dst, patterns):
        """Copies what artifact paths (files, folders or globs) name in src to the same place in dst."""
        for pattern in patterns:
            for path in glob.glob(os.path.join(src, pattern.strip())):
                target = os.path.join(dst, os.path.relpath(path, src))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if os.path.isdir(path):
                    shutil.copytree(path, target, dirs_exist_ok=True, symlinks=True)
                elif not os.path.lexists(target):
                    shutil.copy2(path, target, follow_symlinks=False)

    def cleanup(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def allowed_codes(job):
    return tuple([0] + list(job.get("allow_failure", {}).get("exit_codes", [])))


def simulate_gitlab(cfg, jobs, pipeline, sha, previous_db, lost=None):
    """One scheduled pipeline: the parallel shards, then the merge. previous_db: the last
    pipeline's harness-merge artifact out/harness.db (what the merge job's curl downloads);
    lost: a shard job (0-based) whose runner died, leaving nothing. Returns the folder of the
    merge job's artifacts, the shard count and the merge job's exit code."""
    named = {k: v for k, v in cfg.items() if isinstance(v, dict) and not k.startswith(".")}
    shard_name = next(k for k, j in named.items() if "parallel" in j)
    merge_name = next(k for k, j in named.items() if shard_name in j.get("needs", []))
    shard_job, merge_job = named[shard_name], named[merge_name]
    n = int(shard_job["parallel"])
    shard_dirs = []
    for i in range(n):
        if i == lost:
            continue
        d, env = jobs.new_dir()
        jobs.give_binary(d)
        e = dict(env, CI_NODE_INDEX=str(i + 1), CI_NODE_TOTAL=str(n), CI_PIPELINE_ID=pipeline, CI_COMMIT_SHA=sha)
        for line in shard_job["script"]:
            if runnable(line):
                run_shell(runnable(line), d, e, allowed_codes(shard_job))
        shard_dirs.append(d)
    d, env = jobs.new_dir()
    jobs.give_binary(d)
    for s in shard_dirs:
        jobs.copy_paths(s, d, shard_job["artifacts"]["paths"])
    e = dict(env, CI_PIPELINE_ID=pipeline, CI_COMMIT_SHA=sha, CI_JOB_URL=f"https://gitlab.example/p/-/jobs/{pipeline}")
    code = 0
    for line in merge_job["script"]:
        script = runnable(line)
        if script.startswith("curl"):
            if previous_db:
                os.makedirs(os.path.join(d, "out"), exist_ok=True)
                shutil.copy2(previous_db, os.path.join(d, "out", "harness.db"))
        elif script:
            # GitLab's shell stops at the first failing line; that line's code is the job's.
            code = run_shell(script, d, e, allowed_codes(merge_job))
            if code:
                break
    kept, _ = jobs.new_dir()
    jobs.copy_paths(d, kept, merge_job["artifacts"]["paths"])
    return kept, n, code


def github_expr(text, values):
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: str(values[m.group(1)]), str(text))


def simulate_github(cfg, jobs, run_id, sha, cache, lost=None):
    """One workflow run: the shard matrix, then the merge job, with upload/download-artifact
    and the cache emulated (cache: key -> file, kept across runs); lost: a matrix entry whose
    job died, leaving nothing. After a failing step only `!cancelled()`/`always()` steps run,
    as on GitHub. Returns the folder of the `nightly` artifact, the shard count, the merge
    job's exit code and what it wrote to the job summary."""
    all_jobs = cfg["jobs"]
    shard_job = next(j for j in all_jobs.values() if "strategy" in j)
    merge_job = next(j for j in all_jobs.values() if "shard" in j.get("needs", []))
    shards = shard_job["strategy"]["matrix"]["shard"]
    artifacts = {}  # name -> a folder holding what was uploaded, relative to the job's folder
    # The build job's upload: the binary, which this test builds itself.
    binary_dir, _ = jobs.new_dir()
    jobs.give_binary(binary_dir)
    artifacts[next(s["with"]["name"] for s in all_jobs["build"]["steps"]
                   if s.get("uses", "").startswith("actions/upload-artifact"))] = os.path.join(binary_dir, "build", "bin")

    def run_steps(job, d, env, values):
        code = 0
        for step in job["steps"]:
            if code and not re.search(r"cancelled\(\)|always\(\)|failure\(\)", str(step.get("if", ""))):
                continue
            uses = step.get("uses", "")
            w = {k: github_expr(v, values) for k, v in step.get("with", {}).items()}
            if uses.startswith("actions/upload-artifact"):
                paths = [p for p in w["path"].split("\n") if p.strip()]
                store, _ = jobs.new_dir()
                jobs.copy_paths(d, store, paths)
                # The artifact's root is the paths' common folder (out/ for out/x, out/y).
                common = os.path.commonpath([p.strip().rstrip("/") for p in paths]) if len(paths) > 1 else \
                    paths[0].strip().rstrip("/") if os.path.isdir(os.path.join(d, paths[0].strip())) else \
                    os.path.dirname(paths[0].strip())
                artifacts[w["name"]] = os.path.join(store, common)
            elif uses.startswith("actions/download-artifact"):
                target = os.path.join(d, w.get("path", "."))
                for name in [n for n in artifacts if fnmatch.fnmatch(n, w.get("pattern", w.get("name", "")))]:
                    jobs.copy_paths(artifacts[name], target, ["*"])
            elif uses.startswith("actions/cache/restore"):
                prefix = w.get("restore-keys", "")
                hits = [k for k in cache if k == w["key"] or (prefix and k.startswith(prefix))]
                if hits:
                    target = os.path.join(d, w["path"])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    shutil.copy2(cache[sorted(hits)[-1]], target)
            elif uses.startswith("actions/cache/save"):
                saved, _ = jobs.new_dir()
                shutil.copy2(os.path.join(d, w["path"]), os.path.join(saved, "db"))
                cache[w["key"]] = os.path.join(saved, "db")
            elif "run" in step and runnable(github_expr(step["run"], values)):
                code = code or run_shell(runnable(github_expr(step["run"], values)), d, env, allowed=(0, 1))
        return code

    # What the runner sets in every step's environment.
    github_env = {"GITHUB_RUN_ID": run_id, "GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "o/r"}
    for s in shards:
        if s == lost:
            continue
        values = {"matrix.shard": s, "github.run_id": run_id, "github.sha": sha, "strategy.job-total": len(shards),
                  "github.ref_name": "main"}
        d, env = jobs.new_dir()
        e = dict(env, **github_env, **{k: github_expr(v, values) for k, v in shard_job.get("env", {}).items()})
        if run_steps(shard_job, d, e, values):
            raise AssertionError(f"shard {s} failed")
    d, env = jobs.new_dir()
    summary = os.path.join(d, "step-summary.md")
    code = run_steps(merge_job, d, dict(env, **github_env, GITHUB_STEP_SUMMARY=summary),
                     {"github.run_id": run_id, "github.sha": sha, "github.ref_name": "main"})
    with open(summary) if os.path.exists(summary) else open(os.devnull) as f:
        written = f.read()
    return os.path.dirname(artifacts["nightly"]), len(shards), code, written


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
    gh_lines = [l for j in github["jobs"].values() for s in j["steps"] for l in s.get("run", "").splitlines()]
    problems += check_commands(binary, harness_lines(gh_lines), "ci/github-nightly.yml")
    # PyYAML reads GitHub's `on:` as the boolean true (YAML 1.1); either spelling is the trigger.
    if not (github.get("on") or github.get(True)):
        problems.append("ci/github-nightly.yml: no trigger (on:)")

    # The unsharded reference, as ci/nightly.sh runs it.
    jobs = Jobs(binary, root)
    ref_dir, ref_env = jobs.new_dir()
    jobs.give_binary(ref_dir)
    os.makedirs(os.path.join(ref_dir, "out"))
    run_shell(f"build/bin/harness run --db out/full.db --commit {SHA} || test $? -eq 1", ref_dir, ref_env)
    want, _ = cases(os.path.join(ref_dir, "out", "full.db"))
    # Two nights of each config: the second night's database must hold both (it flows on).
    # The third loses shard 2's job (nothing of it reaches the merge).
    LOST = 2
    nights = [(SHA, "9001", None), (SHA2, "9002", None), (SHA3, "9003", LOST)]
    for name in ("gitlab", "github"):
        previous, cache = None, {}
        for night, (sha, pipeline, lost) in enumerate(nights, start=1):
            summary = None
            if name == "gitlab":
                kept, n, code = simulate_gitlab(gitlab, jobs, pipeline, sha, previous, lost)
            else:
                kept, n, code, summary = simulate_github(github, jobs, pipeline, sha, cache, lost)
            db = os.path.join(kept, "out", "harness.db")
            if not os.path.exists(db):
                problems.append(f"{name}: night {night} kept no out/harness.db")
                break
            previous = db
            reports = {}
            for report in ("report.html", "report.txt", "report.md"):
                path = os.path.join(kept, "out", report)
                if not os.path.exists(path):
                    problems.append(f"{name}: night {night} kept no out/{report}")
                    continue
                with open(path, encoding="utf-8") as f:
                    reports[report] = f.read()
            want_code = 1 if lost is not None else 0
            if code != want_code:
                problems.append(f"{name}: night {night}'s merge job ended with {code}, expected {want_code}")
            md = reports.get("report.md", "")
            if not md.startswith("## harness nightly: "):
                problems.append(f"{name}: night {night}: out/report.md is no Markdown summary: {md[:200]!r}")
            if summary is not None and summary != md:
                problems.append(f"{name}: night {night}: the job summary is not out/report.md: {summary[:200]!r}")
            named = f"{LOST}/{n} missing"
            for report, escaped in (("report.txt", named), ("report.md", named.replace("/", "\\/"))):
                if (escaped in reports.get(report, "")) != (lost is not None):
                    problems.append(f"{name}: night {night}: out/{report} {'does not name' if lost is not None else 'names'} "
                                    f"a missing shard ({escaped!r})")
            got, runs = cases(db)
            tonight = [r for r in runs if r[1].endswith(pipeline)]
            expected = [f"{i}/{n}" for i in range(n) if i != lost]
            if sorted({r[0] for r in tonight}) != sorted(expected):
                problems.append(f"{name}: night {night} records shards {tonight}, expected {expected}")
            if len({r[1] for r in runs}) != night:
                problems.append(f"{name}: night {night}: the database holds nightlies {sorted({r[1] for r in runs})}")
            if sorted(set(got)) != want:
                problems.append(f"{name}: the merged shards hold {sorted(set(got))}, the unsharded run {want}")
            if len([r for r in runs if r[0] == "0/" + str(n)]) < night:
                problems.append(f"{name}: night {night} lost an earlier night's runs: {runs}")
    jobs.cleanup()
    for p in problems:
        print(p, file=sys.stderr)
    print(f"ci configs: {'FAIL' if problems else 'ok'} ({len(want)} cases)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
