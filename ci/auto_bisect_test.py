#!/usr/bin/env python3
"""ci/auto-bisect.sh takes the caller's relative paths as the caller's.

The script changes into its checkout before it runs build/bin/harness; DB, JUNIT, TEXT and
HARNESS_STACK_REPO given relative to the caller's folder must still name the caller's files
(a relative database used to become a new, empty one in the checkout). Runs the script from
a copy of the checkout whose build/bin/harness is the binary under test, in a folder holding
a database with one nightly, and checks that bisect --auto read that database, wrote the
JUnit and text where the caller named them, and left no file in the checkout.

Usage: auto_bisect_test.py HARNESS_BINARY [SOURCE_ROOT]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(argv, cwd, env=None, allowed=(0,)):
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode not in allowed:
        raise AssertionError(f"{argv} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def files_under(root):
    out = set()
    for folder, _, names in os.walk(root):
        out.update(os.path.relpath(os.path.join(folder, n), root) for n in names)
    return out


def main():
    binary = os.path.abspath(sys.argv[1])
    source = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), ".."))
    with tempfile.TemporaryDirectory() as tmp:
        checkout = os.path.join(tmp, "checkout")
        os.makedirs(os.path.join(checkout, "ci"))
        os.makedirs(os.path.join(checkout, "build", "bin"))
        shutil.copy(os.path.join(source, "ci", "auto-bisect.sh"), os.path.join(checkout, "ci"))
        os.symlink(binary, os.path.join(checkout, "build", "bin", "harness"))
        before = files_under(checkout)

        caller = os.path.join(tmp, "caller")
        stack = os.path.join(caller, "stack")
        os.makedirs(os.path.join(caller, "suites"))
        run(["git", "init", "-q", "-b", "main", stack], caller)
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@example.invalid", HARNESS_ROOT=source)
        run(["git", "commit", "-q", "--allow-empty", "-m", "one"], stack, env)
        with open(os.path.join(caller, "suites", "selftest.json"), "w") as f:
            json.dump({"format_version": 2, "suite": "selftest", "nightly": True,
                       "params": {"outcome": {"type": "string"}},
                       "tests": {"test_outcome": [{"outcome": "pass"}, {"outcome": "pass"}]}}, f)
        run([binary, "run", "--suites-dir", "suites", "--db", "night.db", "--repo", "stack", "--nightly", "n1"],
            caller, env)

        env["HARNESS_STACK_REPO"] = "stack"
        env["HARNESS_BISECT_COMMAND"] = "/bin/false"
        r = run(["bash", os.path.join(checkout, "ci", "auto-bisect.sh"), "night.db", "out/junit.xml", "out/bisect.txt"],
                caller, env)
        problems = []
        created = files_under(checkout) - before
        if created:
            problems.append(f"the script wrote into the checkout: {sorted(created)}")
        for name in ("out/junit.xml", "out/bisect.txt"):
            if not os.path.exists(os.path.join(caller, name)):
                problems.append(f"{name} is not in the caller's folder")
        junit = os.path.join(caller, "out", "junit.xml")
        if os.path.exists(junit) and 'name="test_outcome_1"' not in open(junit).read():
            problems.append("the JUnit does not hold the caller's nightly: " + open(junit).read()[:500])
        # No argument at all is a usage error, not a database named "".
        usage = run(["bash", os.path.join(checkout, "ci", "auto-bisect.sh")], caller, env, allowed=(2,))
        if "usage:" not in usage.stderr:
            problems.append("no usage line: " + usage.stderr)
        if problems:
            print("\n".join(problems) + "\n--- stdout:\n" + r.stdout + "\n--- stderr:\n" + r.stderr)
            return 1
    print("auto_bisect_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
