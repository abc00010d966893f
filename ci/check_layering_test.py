#!/usr/bin/env python3
"""Tests of ci/check_layering.py: the real tree passes, and a tree with one forbidden
include (an edge the rules do not list, or a test helper in a non-test file) fails naming
exactly that file and line."""
import os
import subprocess
import tempfile
import unittest

from tree_check import write
import tree_check

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_layering.py")


def run(root):
    return tree_check.run(SCRIPT, root)


class LayeringTest(unittest.TestCase):
    def test_the_real_tree_passes(self):
        r = run(os.path.dirname(HERE))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_store_including_run_fails_at_that_line(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/store/store.cc", '#include "harness/store/store.h"\n#include "harness/util/error.h"\n')
            write(root, "harness/store/bad.cc", '// why\n#include "harness/run/run.h"\n')
            r = run(root)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout.splitlines()[0].split(" ")[0], "harness/store/bad.cc:2:")
            self.assertIn("harness/run/run.h", r.stdout)
            self.assertEqual(len(r.stdout.splitlines()), 1, r.stdout)

    def test_kernels_may_use_only_util_and_stacks_never_the_store(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "runners/refstack/kernels/gemm.cc", '#include "harness/results/results.h"\n')
            write(root, "runners/exec/exec_stack.cc", '#include "harness/store/store.h"\n')
            write(root, "reports/junit.cc", '#include "suites/x.h"\n')
            r = run(root)
            self.assertEqual(r.returncode, 1)
            lines = sorted(r.stdout.splitlines())
            self.assertEqual([l.split(" ")[0] for l in lines],
                             ["reports/junit.cc:1:", "runners/exec/exec_stack.cc:1:",
                              "runners/refstack/kernels/gemm.cc:1:"])

    def test_only_tests_include_test_helpers(self):
        with tempfile.TemporaryDirectory() as root:
            helper = '#include "harness/testing/test_util.h"\n'
            write(root, "harness/testing/test_util.h", '#include "harness/util/subprocess.h"\n')
            write(root, "harness/store/store_test.cc", helper)
            write(root, "runners/refstack/compiler/compiler_test.cc",
                  '#include "runners/refstack/compiler/compile_test_util.h"\n')
            write(root, "tools/fuzz/fuzz_regressions_test.cc", helper)
            write(root, "harness/store/store.cc", '#include "harness/store/store.h"\n' + helper)
            write(root, "harness/compare/compare_bench.cc", helper)
            write(root, "tools/fuzz/fuzz_targets.cc", helper)
            write(root, "runners/refstack/compiler/compiler.cc", '#include "compile_test_util.h"\n')
            r = run(root)
            self.assertEqual(r.returncode, 1)
            lines = sorted(r.stdout.splitlines())
            self.assertEqual([l.split(" ")[0] for l in lines],
                             ["harness/compare/compare_bench.cc:1:", "harness/store/store.cc:2:",
                              "runners/refstack/compiler/compiler.cc:1:", "tools/fuzz/fuzz_targets.cc:1:"])
            self.assertIn("harness/testing/test_util.h is a test helper", lines[1])

    def test_the_test_helpers_use_util_only(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/testing/test_util.h", '#include "harness/store/store.h"\n')
            r = run(root)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout.split(" ")[0], "harness/testing/test_util.h:1:")

    def test_a_folder_without_a_rule_is_named(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/newthing/x.cc", "int x;\n")
            r = run(root)
            self.assertEqual(r.returncode, 1)
            self.assertIn("has no layering rule", r.stdout)


if __name__ == "__main__":
    unittest.main()
