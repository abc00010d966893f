#!/usr/bin/env python3
"""The layering rules of the source tree (docs/architecture.md), checked on every
#include "..." line: a file in a folder may include only its own folder's headers and
those of the folders listed for it, and only tests include test helpers. Exits 1 naming
file:line and the forbidden edge.

  ci/check_layering.py [ROOT]    (default: the repository this script is in)
"""
import os
import re
import sys

import tree_check

# folder -> folders its files may include (besides their own). The first matching
# (longest) folder prefix decides.
ALLOWED = {
    "harness/util": [],
    "harness/testing": ["harness/util"],
    "harness/results": [],
    "harness/stats": ["harness/results"],
    "harness/store": ["harness/results", "harness/util"],
    "harness/stack": ["harness/results", "harness/util"],
    "harness/golden": ["harness/store", "harness/results", "harness/util"],
    "harness/ingest": ["harness/stack", "harness/store", "harness/results", "harness/util"],
    "runners/openai": ["harness/stack", "harness/results", "harness/util"],
    "harness/eval": ["harness/stats", "harness/results", "harness/util", "harness/stack", "runners/openai"],
    "runners/refstack/kernels": ["harness/util"],
    "runners/refstack/compiler": ["harness/stack", "harness/results", "harness/util"],
    "runners/refstack/sim": ["harness/eval", "harness/stats", "harness/stack", "harness/results", "harness/util",
                             "runners/refstack/kernels", "runners/openai"],
    "runners/refstack": ["runners/refstack/compiler", "harness/stack", "harness/results", "harness/util"],
    "runners/exec": ["harness/stack", "harness/results", "harness/util"],
    "runners": ["runners/refstack", "runners/exec", "runners/openai", "harness/stack", "harness/results",
                "harness/util"],
    "harness/run": ["harness/store", "harness/stack", "harness/stats", "harness/results", "harness/util"],
    "harness/bisect": ["harness/run", "harness/store", "harness/stats", "harness/results", "harness/util"],
    "harness/compare": ["harness/store", "harness/golden", "harness/stats", "harness/results", "harness/util"],
    "reports": ["harness/compare", "harness/golden", "harness/store", "harness/stats", "harness/results",
                "harness/util"],
    "suites": ["harness/run", "harness/golden", "harness/eval", "harness/stats", "harness/stack",
               "harness/store", "harness/results", "harness/util", "runners/refstack/kernels",
               "runners/refstack/compiler", "runners/refstack/sim", "runners/openai"],
    "harness/cli": ["harness/bisect", "harness/compare", "harness/run", "harness/golden", "harness/eval", "harness/ingest",
                    "harness/stats", "harness/stack", "harness/store", "harness/results", "harness/util",
                    "reports", "runners",
                    "runners/refstack/sim", "runners/openai"],  # serve-sim; the served-model lookup and server launch of run
    "harness": ["harness/cli"],  # main.cc
    "tools": None,  # developer tools may use anything
}
# Test helpers: harness/testing/ (the harness_testing library, which only test binaries
# link) and a component's own helpers beside it, named *_test_util.h. Only tests (*_test.cc)
# and other helpers include them, in every folder, tools/ too: a benchmark (*_bench.cc) or
# a fuzz target is built without the test library, so it may not include them either.
TESTING = "harness/testing"
# Tests and benchmarks (*_test.cc, *_bench.cc) of these folders may also use these, to
# drive the code against a real peer (the stand-in endpoint).
TEST_ALLOWED = {
    "harness/eval": ["runners/refstack/sim"],
    "harness/compare": ["reports"],  # compare_bench times the whole answer, rendering included
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_DIRS = ["harness", "runners", "reports", "suites", "tools"]


def folder_of(path, folders):
    best = None
    for f in folders:
        if (path == f or path.startswith(f + "/")) and (best is None or len(f) > len(best)):
            best = f
    if best == "harness" and path != "harness":
        return None  # harness/ itself holds main.cc only; each component folder has its own rule
    return best


def is_test_helper(include):
    return include.startswith(TESTING + "/") or os.path.basename(include).endswith("_test_util.h")


def check(root):
    problems = []
    folders = list(ALLOWED)
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                own = folder_of(os.path.dirname(rel), folders)
                if own is None:
                    problems.append(f"{rel}:1: folder '{os.path.dirname(rel)}' has no layering rule")
                    continue
                allowed = ALLOWED[own]
                if allowed is not None and name.endswith(("_test.cc", "_bench.cc")):
                    allowed = allowed + TEST_ALLOWED.get(own, [])
                test_code = name.endswith(("_test.cc", "_test_util.h")) or own == TESTING
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if is_test_helper(target) and not test_code:
                            problems.append(f"{rel}:{lineno}: {target} is a test helper; only tests "
                                            f"(*_test.cc) may include it")
                            continue
                        if target.startswith(TESTING + "/"):
                            continue  # every test may use the test library
                        if "/" not in target or allowed is None:
                            continue  # a sibling header by bare name; tools/ may use anything
                        to = folder_of(os.path.dirname(target), folders)
                        if to is None or to == own or to in allowed:
                            continue
                        problems.append(f"{rel}:{lineno}: {own}/ may not include {target} ({to}/): "
                                        f"allowed: {', '.join(allowed) or 'nothing of ours'}")
    return problems


if __name__ == "__main__":
    sys.exit(tree_check.main("layering", check, lambda n: f"{n} forbidden include(s); see docs/architecture.md"))
