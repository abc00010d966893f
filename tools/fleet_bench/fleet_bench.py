#!/usr/bin/env python3
"""The fleet-scale goals of issue 22, measured through the real binary: a store with the
365 GSM8K nightlies and 90 nightlies of 10,000 ingested pytest cases
(harness/store/fleet_db.h), one 10,000-case JUnit file and 30 shard databases of one
10,000-case nightly, written by tools/fleet_bench/fleet_inputs.cc (only when missing).
Each command runs --repeat times; the table shows the best wall time and the largest
peak RSS of the command (GNU time's %M), against the goal.

  tools/fleet_bench/fleet_bench.py --harness build/bin/harness --inputs build/tools/fleet_inputs \\
      [--dir DIR] [--repeat 3] [--chromium /usr/bin/chromium]

DIR keeps the inputs between runs (default: $HARNESS_FLEET_DIR, else a temporary folder
removed at exit); the database is DIR/fleet.db unless HARNESS_FLEET_DB names it.
Exit 1 when a goal is missed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def timed(argv):
    """(seconds, peak RSS in MB, stdout, stderr, exit code) of one command. The peak RSS is
    GNU time's (%M): os.wait4 of a child forked from this script would count the script's
    own pages, which Linux carries into the child's maximum across exec."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        start = time.monotonic()
        code = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + argv, stdout=out, stderr=err).returncode
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        kb = rss.read().split()[-1]
        return seconds, int(kb) / 1024, out.read().decode(errors="replace"), err.read().decode(errors="replace"), code


def best(argv, repeat, ok=(0,), before=None):
    """Best wall seconds and largest peak RSS over `repeat` runs; `before` runs before each."""
    runs = []
    for _ in range(repeat):
        if before:
            before()
        r = timed(argv)
        if r[4] not in ok:
            sys.exit(f"{' '.join(argv)}: exit {r[4]}\n{r[3]}")
        runs.append(r)
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1]


def row(rows, goal, measured, passed):
    rows.append((goal, measured, "PASS" if passed else "MISS"))


def inputs(a, folder):
    db = os.environ.get("HARNESS_FLEET_DB") or os.path.join(folder, "fleet.db")
    junit, shards = os.path.join(folder, "fleet-junit.xml"), os.path.join(folder, "shards")
    r = subprocess.run([a.inputs, "--db", db, "--junit", junit, "--shards", shards], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"fleet_inputs: exit {r.returncode}\n{r.stderr}")
    print(r.stdout, end="")
    facts = dict(re.findall(r"^(\w+) = (\S+)$", r.stdout, re.M))
    return db, junit, shards, facts


def chromium_goal(a, rows, html):
    def load(url):
        with tempfile.TemporaryDirectory(prefix="fleet-chromium-") as profile:
            return best([a.chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                         "--dump-dom", url], a.repeat)
    blank_s, _, _ = load("about:blank")
    load_s, rss, (_, _, dom, _, _) = load("file://" + html)
    ready = 'data-filters="ready"' in dom
    _, _, (_, _, filtered, _, _) = load("file://" + html + "#status=fail&suite=pytest")
    # The filter hides every passing item and every other suite's item, and says so.
    shown = len(re.findall(r'<article class="item[^"]*" data-suite="pytest" data-status="fail"(?! hidden)>', filtered))
    hidden = len(re.findall(r'data-status="(?!fail)[a-z-]+" hidden', filtered)) + \
        len(re.findall(r'data-suite="(?!pytest)[^"]+" data-status="[a-z-]+" hidden', filtered))
    works = ready and shown > 0 and hidden > 0 and "showing " in filtered
    row(rows, "report opens in headless Chromium, filters work",
        f"load {load_s:.2f} s (blank page {blank_s:.2f} s), script ran: {ready}, "
        f"#status=fail&suite=pytest: {shown} shown, {hidden} hidden", works)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--harness", required=True)
    p.add_argument("--inputs", required=True, help="the fleet_inputs program")
    p.add_argument("--dir", default=os.environ.get("HARNESS_FLEET_DIR"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    a = p.parse_args()
    a.harness, a.inputs = os.path.abspath(a.harness), os.path.abspath(a.inputs)
    folder = a.dir or tempfile.mkdtemp(prefix="harness-fleet-")
    os.makedirs(folder, exist_ok=True)
    try:
        measure(a, folder)
    finally:
        if not a.dir:
            shutil.rmtree(folder)


def measure(a, folder):
    db, junit, shards, facts = inputs(a, folder)
    h = a.harness
    rows = []
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        out = os.path.join(tmp, "out.db")

        def fresh():
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(out + suffix):
                    os.remove(out + suffix)

        s, rss, _ = best([h, "ingest", "--format", "junit", junit, "--commit", facts["new_sha"], "--db", out],
                         a.repeat, ok=(0,), before=fresh)
        row(rows, "ingest of one 10,000-case JUnit file: < 1 s, peak RSS < 200 MB", f"{s:.3f} s, {rss:.0f} MB",
            s < 1 and rss < 200)

        s, _, (_, _, text, _, _) = best([h, "history", "--db", db, "--case", facts["history_case"], "--metric",
                                          "compile_seconds"], a.repeat)
        row(rows, "history --case: < 50 ms", f"{s * 1000:.0f} ms ({text.count(chr(10))} lines)", s < 0.05)

        s, _, (_, _, text, _, _) = best([h, "history", "--db", db, "--suite", "pytest", "--metric", "compile_seconds",
                                          "--format", "json", "--last", "20"], a.repeat)
        row(rows, "history --suite pytest --format json --last 20: < 1 s", f"{s:.3f} s ({len(text) >> 20} MB JSON)",
            s < 1)

        s, _, (_, _, text, _, _) = best([h, "compare", "--db", db, facts["old_sha"][:12], facts["new_sha"][:12]],
                                        a.repeat, ok=(0, 1))
        row(rows, "compare of two 10,000-case nightlies: < 300 ms", f"{s * 1000:.0f} ms", s < 0.3)

        html = os.path.join(tmp, "report.html")
        s, rss, _ = best([h, "report", "--db", db, "--out", html], a.repeat, ok=(0, 1))
        size = os.path.getsize(html) / 2**20
        row(rows, "report over the window (--last 30): < 3 s, HTML < 20 MB",
            f"{s:.3f} s, {size:.1f} MB, peak RSS {rss:.0f} MB", s < 3 and size < 20)
        if a.chromium:
            chromium_goal(a, rows, html)
        else:
            row(rows, "report opens in headless Chromium, filters work", "chromium not installed", False)

        inputs_ = sorted(os.path.join(shards, f) for f in os.listdir(shards) if f.endswith(".db"))
        s, rss, _ = best([h, "merge", out] + inputs_, a.repeat, before=fresh)
        row(rows, f"merge of {len(inputs_)} shard databases of one 10,000-case nightly: < 5 s",
            f"{s:.3f} s, peak RSS {rss:.0f} MB", s < 5)

    width = max(len(r[0]) for r in rows)
    mwidth = max(len(r[1]) for r in rows)
    print(f"\n| {'goal':<{width}} | {'measured (best of ' + str(a.repeat) + ')':<{mwidth}} | result |")
    print(f"| {'-' * width} | {'-' * mwidth} | ------ |")
    for goal, measured, verdict in rows:
        print(f"| {goal:<{width}} | {measured:<{mwidth}} | {verdict:<6} |")
    if any(r[2] == "MISS" for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
