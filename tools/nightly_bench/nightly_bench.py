#!/usr/bin/env python3
"""The nightly loop measured through the real binary: simulated nightly histories on the
noisy GSM8K stand-in (rerun noise as calibrated, docs/gsm8k.md), each a stack repository of
COMMITS commits whose stack.json turns a catalogued fault on at a random commit (or never:
a no-drop night), a nightly at the first and at the last commit (each with its own noise
seed), then `harness bisect --auto`. Prints, per fault and for no-drop nights: the share of
nights with the correct culprit, the share with a false culprit (any culprit but the commit
that turned the fault on; on a no-drop night, any culprit), the mean commands per night and
the mean seconds per night. Deterministic for a given --seed.

  tools/nightly_bench/nightly_bench.py --harness build/bin/harness [--nights 5] [--commits 16] [--seed 1]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

FAULTS = ["sp-counts-bookkeeping-users", "gmm-no-mxfp4-quant-fusion", "graph-topo-disorder", "fp8-scale-unrepaired"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@harness.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@harness.invalid"}


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def make_suites(root, folder):
    os.makedirs(folder)
    for name in os.listdir(os.path.join(root, "suites")):
        if name.endswith(".json"):
            shutil.copy(os.path.join(root, "suites", name), folder)
    path = os.path.join(folder, "gsm8k.json")
    table = json.load(open(path))
    table["defaults"]["sim_profile"] = "sim/noisy.json"
    json.dump(table, open(path, "w"), indent=2)


def night(harness, suites, fault, land, commits, seed):
    """One simulated night; returns (correct, false_culprit, commands, seconds)."""
    with tempfile.TemporaryDirectory(prefix="nightly-bench-") as tmp:
        repo, db = os.path.join(tmp, "stack"), os.path.join(tmp, "h.db")
        env = dict(os.environ, **GIT_ENV)
        run(["git", "init", "-q", "-b", "main", repo], env=env, check=True)
        shas = []
        for i in range(1, commits + 1):
            faults = [fault] if fault and i >= land else []
            with open(os.path.join(repo, "stack.json"), "w") as f:
                json.dump({"format_version": 1, "faults": faults}, f)
            with open(os.path.join(repo, "CHANGES"), "w") as f:
                f.write(f"change {i}\n")
            run(["git", "-C", repo, "add", "-A"], env=env, check=True)
            run(["git", "-C", repo, "commit", "-q", "-m", f"change {i}"], env=env, check=True)
            shas.append(run(["git", "-C", repo, "rev-parse", "HEAD"], check=True).stdout.strip())
        start = time.monotonic()
        for i, s in ((1, seed), (commits, seed + 1)):
            config = os.path.join(tmp, f"stack-{i}.json")
            with open(config, "w") as f:
                f.write(run(["git", "-C", repo, "show", f"{shas[i - 1]}:stack.json"], check=True).stdout)
            r = run([harness, "run", "--db", db, "--repo", repo, "--commit", shas[i - 1], "--stack-config", config,
                     "--suites-dir", suites, "--seed", str(s)])
            if r.returncode not in (0, 1):
                sys.exit(f"nightly failed ({r.returncode}): {r.stderr}")
        r = run([harness, "bisect", "--auto", "--db", db, "--repo", repo, "--suites-dir", suites, "--format", "json",
                 "--", harness, "run", "--db", "{db}", "--repo", repo, "--commit", "{sha}", "--stack-config",
                 "{worktree}/stack.json", "--suites-dir", suites])
        seconds = time.monotonic() - start
        if r.returncode != 0:
            sys.exit(f"bisect --auto failed ({r.returncode}): {r.stderr}")
        out = json.loads(r.stdout)
        culprits = [g["culprit"] for g in out["regressions"] if g["culprit"]]
        truth = shas[land - 1] if fault else None
        correct = (truth in culprits) if fault else not culprits
        false_culprit = any(c != truth for c in culprits)
        return correct, false_culprit, out["runs_total"], seconds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--harness", required=True)
    p.add_argument("--nights", type=int, default=5, help="nights per fault; twice as many no-drop nights")
    p.add_argument("--commits", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    harness = os.path.abspath(a.harness)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory(prefix="nightly-bench-suites-") as tmp:
        suites = os.path.join(tmp, "suites")
        make_suites(root, suites)
        print(f"{'night':<30} {'nights':>6} {'correct':>8} {'false culprit':>14} {'commands':>9} {'s/night':>8}")
        totals = [0, 0, 0, 0.0, 0.0]
        for fault in FAULTS + [None]:
            n = a.nights if fault else 2 * a.nights
            rows = [night(harness, suites, fault, rng.randint(2, a.commits), a.commits, rng.randint(1, 10**6))
                    for _ in range(n)]
            correct = sum(r[0] for r in rows)
            false = sum(r[1] for r in rows)
            commands = sum(r[2] for r in rows) / n
            seconds = sum(r[3] for r in rows) / n
            for i, v in enumerate((n, correct, false, commands * n, seconds * n)):
                totals[i] += v
            print(f"{fault or 'no drop (noise only)':<30} {n:>6} {correct / n:>8.0%} {false / n:>14.0%} "
                  f"{commands:>9.1f} {seconds:>8.1f}")
        n = totals[0]
        print(f"{'all':<30} {n:>6} {totals[1] / n:>8.0%} {totals[2] / n:>14.0%} {totals[3] / n:>9.1f} "
              f"{totals[4] / n:>8.1f}")


if __name__ == "__main__":
    main()
