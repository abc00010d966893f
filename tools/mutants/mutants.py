#!/usr/bin/env python3
"""Mutation testing of the harness's verdict logic (tools/mutants/README.md).

Each mutant in mutants.json is a plausible one-line bug: a file, an original text that
occurs exactly once in it, its replacement, and the test binaries (each with an optional
GoogleTest filter) that should catch it. The script copies the source tree (uncommitted
edits included) into a scratch folder, and for each mutant writes the replacement there,
builds only the named test targets in one scratch build folder reused across mutants,
runs them and restores the file: KILLED when a test fails, SURVIVED when every test
passes. The source tree itself is never written.

  mutants.py --check        every mutant still applies (cheap; ctest runs it)
  mutants.py --list         id, file and description of every mutant
  mutants.py [--only ID]... run them (all by default) and print the ratio killed
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_LIST = os.path.join(HERE, "mutants.json")
FORMAT_VERSION = 1
REQUIRED = ("id", "file", "original", "replacement", "tests", "description")
OPTIONAL = ("equivalent",)
ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class Mutant:
    def __init__(self, raw):
        self.id = raw["id"]
        self.file = raw["file"]
        self.original = raw["original"]
        self.replacement = raw["replacement"]
        self.tests = [t if isinstance(t, dict) else {"target": t} for t in raw["tests"]]
        self.description = raw["description"]
        self.equivalent = raw.get("equivalent", "")

    def targets(self):
        return sorted({t["target"] for t in self.tests})


def id_lines(text):
    """The line numbers of the "id" keys in the data file text, per id in file order."""
    lines = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.search(r'"id"\s*:\s*"([^"]*)"', line)
        if m:
            lines.setdefault(m.group(1), []).append(n)
    return lines


def declared_test_targets(root):
    """Test binaries the build declares: harness_test(NAME ...) in any CMakeLists.txt."""
    names = set()
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        if "CMakeLists.txt" in files:
            with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
                names.update(re.findall(r"harness_test\(\s*(\w+)", f.read()))
    return names


def load(list_path, root):
    """The mutants and a list of problems ("file:line: message"), the checks of --check."""
    rel_list = os.path.relpath(list_path, root) if list_path.startswith(root + os.sep) else list_path
    try:
        with open(list_path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return [], [f"{rel_list}: cannot read: {e.strerror}"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return [], [f"{rel_list}:{e.lineno}:{e.colno}: {e.msg}"]
    if not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION:
        return [], [f"{rel_list}:1: expected an object with \"format_version\": {FORMAT_VERSION}"]
    raws = data.get("mutants")
    if not isinstance(raws, list):
        return [], [f"{rel_list}:1: \"mutants\" must be a list"]
    lines = id_lines(text)
    targets = declared_test_targets(root)
    mutants, problems, seen = [], [], set()
    for i, raw in enumerate(raws):
        own_lines = lines.get(raw.get("id") if isinstance(raw, dict) else None, [])
        line = own_lines.pop(0) if own_lines else 1
        where = f"{rel_list}:{line}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: mutants[{i}] is not an object")
            continue
        name = raw.get("id", f"mutants[{i}]")
        missing = [k for k in REQUIRED if k not in raw]
        unknown = [k for k in raw if k not in REQUIRED + OPTIONAL]
        if missing or unknown:
            problems.append(f"{where}: mutant {name}: " + "; ".join(
                ([f"missing {', '.join(missing)}"] if missing else []) +
                ([f"unknown {', '.join(unknown)}"] if unknown else [])))
            continue
        if not all(isinstance(raw[k], str) and raw[k] for k in REQUIRED if k != "tests"):
            problems.append(f"{where}: mutant {name}: id, file, original, replacement and description are non-empty strings")
            continue
        if not ID_RE.match(name):
            problems.append(f"{where}: mutant {name}: an id is lowercase words joined by '-'")
            continue
        if name in seen:
            problems.append(f"{where}: mutant {name}: the id is used twice")
            continue
        seen.add(name)
        tests = raw["tests"]
        ok_tests = isinstance(tests, list) and tests and all(
            isinstance(t, str) or (isinstance(t, dict) and isinstance(t.get("target"), str)
                                   and set(t) <= {"target", "filter"} and isinstance(t.get("filter", ""), str))
            for t in tests)
        if not ok_tests:
            problems.append(f"{where}: mutant {name}: tests is a list of target names or {{\"target\", \"filter\"}}")
            continue
        m = Mutant(raw)
        for t in m.targets():
            if t not in targets:
                problems.append(f"{where}: mutant {name}: no test target '{t}' (harness_test in a CMakeLists.txt)")
        if m.original == m.replacement:
            problems.append(f"{where}: mutant {name}: the replacement equals the original")
        path = os.path.join(root, m.file)
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except OSError:
            problems.append(f"{where}: mutant {name}: no file {m.file}")
            continue
        count = source.count(m.original)
        if count == 0:
            problems.append(f"{where}: mutant {name}: stale: its original text no longer occurs in {m.file}")
        elif count > 1:
            problems.append(f"{where}: mutant {name}: ambiguous: its original text occurs {count} times in {m.file}")
        mutants.append(m)
    return mutants, problems


# --- the scratch copy -------------------------------------------------------------------

def tree_files(root):
    """Tracked and untracked-but-not-ignored files: the tree as it is, edits included."""
    r = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"mutants: {root} is not a git work tree: {r.stderr.decode(errors='replace').strip()}")
    return [p for p in r.stdout.decode().split("\0") if p and os.path.lexists(os.path.join(root, p))]


def same_file(a, b):
    if os.path.islink(a) or os.path.islink(b):
        return os.path.islink(a) and os.path.islink(b) and os.readlink(a) == os.readlink(b)
    if not os.path.isfile(b) or os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def sync_tree(root, scratch):
    """Makes scratch hold the tree's files. Unchanged files keep their times, so the
    scratch build stays incremental across invocations; a file a killed run left mutated
    is restored here. A changed file gets the time of the copy, not the tree's: an edit
    made before the scratch build last ran would otherwise look older than its objects,
    and the build would link stale ones (a header's new virtual method once called
    another's slot)."""
    files = tree_files(root)
    wanted = set(files)
    copied = 0
    for rel in files:
        src, dst = os.path.join(root, rel), os.path.join(scratch, rel)
        if same_file(src, dst):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.lexists(dst):
            os.remove(dst)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy(src, dst)
        copied += 1
    for dirpath, dirnames, names in os.walk(scratch):
        if dirpath == scratch:
            dirnames[:] = [d for d in dirnames if d != "build"]
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), scratch)
            if rel not in wanted:
                os.remove(os.path.join(dirpath, n))
    return copied


# --- build and test ---------------------------------------------------------------------

def build_env():
    env = dict(os.environ)
    if shutil.which("ccache"):
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CCACHE_NOHASHDIR", "1")
    return env


def configure(scratch):
    # Configured every run, not only the first: a scratch build kept from before these flags
    # (a unity build with BFD ld) would otherwise keep its old settings. Unchanged, it costs
    # seconds and rebuilds nothing.
    # Not the unity build: a mutant then recompiles its own file, not the whole chunk holding it.
    # lld, when installed, links the test binaries several times faster than BFD ld.
    # Warnings are not errors: `a && b || c` is valid C++ that -Werror=parentheses would refuse,
    # and a mutant that compiles is viable whatever the compiler thinks of its style.
    # Assertions on (the ci preset's flags without -DNDEBUG), as in ci/test.sh's ASan build: a
    # mutant that breaks a library's precondition (nlohmann's const operator[] on a missing key)
    # then fails as it does there, rather than reading whatever memory follows.
    flags = ["-DHARNESS_BENCHMARKS=OFF", "-DCMAKE_UNITY_BUILD=OFF", "-DHARNESS_WERROR=OFF",
             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1", "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1"]
    if shutil.which("ld.lld"):
        flags.append("-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld")
    r = subprocess.run(["cmake", "--preset", "ci", *flags], cwd=scratch, env=build_env(),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"mutants: cmake --preset ci failed in {scratch}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")


def build(scratch, targets, jobs):
    r = subprocess.run(["cmake", "--build", os.path.join(scratch, "build"), "-j", str(jobs), "--target", *targets],
                       env=build_env(), capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def find_binary(scratch, target, cache={}):
    if target not in cache:
        for dirpath, _, names in os.walk(os.path.join(scratch, "build")):
            if target in names and os.access(os.path.join(dirpath, target), os.X_OK):
                cache[target] = os.path.join(dirpath, target)
                break
        else:
            raise SystemExit(f"mutants: built {target} but cannot find its binary under {scratch}/build")
    return cache[target]


# A mutated test binary's data, capped: a mutant that allocates without end (a loop whose
# bound it broke) ran two of them to 8 and 17 GB on a 24 GB machine. Over the cap malloc
# fails, the binary dies, and that is a kill; the machine keeps its memory. RLIMIT_DATA, not
# RLIMIT_AS: it counts the writable private memory a process uses, not the address space it
# reserves, and headless Chromium (report_browser_tests) reserves far more than 6 GB of
# address space and fails under an address-space cap. The unmutated binaries run under the
# same cap (the baseline), so a test that needs more fails there first. Children (the harness
# binary, Chromium) inherit it, each with a cap of its own.
MEMORY_CAP_BYTES = 6 << 30


def cap_memory():
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))


def run_test(scratch, test, timeout):
    """('pass' | 'fail' | 'timeout' | 'no-tests', detail)"""
    argv = [find_binary(scratch, test["target"]), "--gtest_brief=1"]
    if test.get("filter"):
        argv.append("--gtest_filter=" + test["filter"])
    env = dict(os.environ, HARNESS_ROOT=scratch)
    try:
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, errors="replace",
                           preexec_fn=cap_memory)
    except subprocess.TimeoutExpired:
        return "timeout", f"{test['target']} ran over {timeout} s"
    failed = re.findall(r"^\[  FAILED  \] (\S+)", r.stdout, re.M)
    ran = re.search(r"^\[==========\] (\d+) tests? from .* ran", r.stdout, re.M)
    if r.returncode == 0 and ran and int(ran.group(1)) == 0:
        return "no-tests", f"{test['target']} --gtest_filter={test.get('filter', '')} matches no test"
    if r.returncode == 0:
        return "pass", ""
    names = sorted(set(failed))
    return "fail", f"{test['target']}: " + (", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
                                           if names else f"exit {r.returncode}")


def describe_test(t):
    return t["target"] + (f" --gtest_filter={t['filter']}" if t.get("filter") else "")


def run_tests(scratch, tests, timeout):
    """The outcome of each test run, up to the first that fails (that kills the mutant)."""
    outcomes = []
    for t in tests:
        outcomes.append(run_test(scratch, t, timeout))
        if outcomes[-1][0] in ("fail", "timeout"):
            break
    return outcomes


# --- commands ---------------------------------------------------------------------------

def cmd_list(mutants):
    for m in mutants:
        flag = "  (equivalent)" if m.equivalent else ""
        print(f"{m.id:40} {m.file:40} {m.description}{flag}")
    print(f"{len(mutants)} mutants")


def cmd_run(mutants, root, scratch, jobs, timeout, baseline):
    started = time.monotonic()
    os.makedirs(scratch, exist_ok=True)
    copied = sync_tree(root, scratch)
    print(f"scratch copy {scratch} ({copied} files updated)", flush=True)
    configure(scratch)
    targets = sorted({t for m in mutants for t in m.targets()})
    ok, log = build(scratch, targets, jobs)
    if not ok:
        print(log[-5000:])
        raise SystemExit("mutants: the unmutated tree does not build")
    if baseline:
        tests = []
        for m in mutants:
            for t in m.tests:
                if t not in tests:
                    tests.append(t)
        for t in tests:
            status, detail = run_test(scratch, t, timeout)
            if status != "pass":
                raise SystemExit(f"mutants: on the unmutated tree {describe_test(t)}: {status} {detail}; "
                                 "fix that first (a failing test kills every mutant)")
        print(f"baseline: {len(tests)} test runs pass unmutated ({time.monotonic() - started:.0f} s)", flush=True)

    results = []
    for n, m in enumerate(mutants, 1):
        t0 = time.monotonic()
        path = os.path.join(scratch, m.file)
        with open(path, encoding="utf-8") as f:
            original = f.read()
        if original.count(m.original) != 1:
            status, detail = "stale", f"its original text occurs {original.count(m.original)} times in {m.file}"
        else:
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(original.replace(m.original, m.replacement, 1))
                ok, log = build(scratch, m.targets(), jobs)
                if not ok:
                    errors = [l for l in log.splitlines() if "error:" in l]
                    status, detail = "build-error", (errors[0] if errors else log[-300:]).strip()
                else:
                    outcomes = run_tests(scratch, m.tests, timeout)
                    failing = [d for s, d in outcomes if s in ("fail", "timeout")]
                    empty = [d for s, d in outcomes if s == "no-tests"]
                    if failing:
                        status, detail = "killed", failing[0]
                    elif empty:
                        status, detail = "no-tests", empty[0]
                    else:
                        status, detail = "survived", m.description
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(original)
        if m.equivalent and status == "survived":
            status, detail = "equivalent", m.equivalent
        results.append((m, status))
        print(f"[{n}/{len(mutants)}] {status.upper():11} {m.id} ({time.monotonic() - t0:.0f} s): {detail}", flush=True)

    counted = [s for m, s in results if not m.equivalent]
    killed = counted.count("killed")
    problems = [(m, s) for m, s in results if s in ("stale", "build-error", "no-tests")]
    survivors = [m for m, s in results if s == "survived"]
    wrong_equivalents = [m for m, s in results if m.equivalent and s == "killed"]
    elapsed = time.monotonic() - started
    print()
    print(f"killed {killed} of {len(counted)} non-equivalent mutants "
          f"({100 * killed / len(counted) if counted else 100:.1f} %); "
          f"{len(results) - len(counted)} equivalent; {elapsed / 60:.1f} min")
    for m in survivors:
        print(f"  survived: {m.id}: {m.description} ({m.file})")
    for m, s in problems:
        print(f"  {s}: {m.id} ({m.file})")
    for m in wrong_equivalents:
        print(f"  killed although marked equivalent: {m.id}")
    if problems:
        return 2
    return 1 if survivors or wrong_equivalents else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=DEFAULT_ROOT, help="the source tree (default: this checkout)")
    p.add_argument("--mutants", default=None, help="the data file (default: tools/mutants/mutants.json of --root)")
    p.add_argument("--check", action="store_true", help="only check that every mutant applies; build nothing")
    p.add_argument("--list", action="store_true", help="print the mutants and exit")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run this mutant (repeatable)")
    p.add_argument("--scratch", default=None,
                   help="the scratch copy, kept between invocations (default: ROOT/build-mutants)")
    p.add_argument("--jobs", type=int, default=2, help="build parallelism (default 2)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per test binary run (default 900)")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip running the tests on the unmutated tree first")
    args = p.parse_args(argv)
    root = os.path.abspath(args.root)
    list_path = os.path.abspath(args.mutants or os.path.join(root, "tools", "mutants", "mutants.json"))
    mutants, problems = load(list_path, root)
    for line in problems:
        print(line)
    if args.check:
        if not problems:
            print(f"{len(mutants)} mutants apply")
        return 1 if problems else 0
    if problems:
        return 2
    if args.list:
        cmd_list(mutants)
        return 0
    if args.only:
        unknown = [i for i in args.only if i not in {m.id for m in mutants}]
        if unknown:
            print(f"mutants: no mutant {', '.join(unknown)} (--list shows them)")
            return 2
        mutants = [m for m in mutants if m.id in args.only]
    scratch = os.path.abspath(args.scratch or os.path.join(root, "build-mutants"))
    if os.path.commonpath([scratch, root]) == root and not os.path.relpath(scratch, root).startswith("build"):
        print("mutants: --scratch inside the source tree must be a build* folder (ignored by git)")
        return 2
    return cmd_run(mutants, root, scratch, args.jobs, args.timeout, not args.no_baseline)


if __name__ == "__main__":
    sys.exit(main())
