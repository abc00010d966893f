#!/usr/bin/env python3
"""Tests of ci/check_examples.py against the real harness binary: the repository's README.md
and docs/ pass; in small fixture trees, examples that call the CLI as it is pass, and an
unknown subcommand, an unknown or misspelt flag, another subcommand's flag, a bad flag on a
continuation line, in a synopsis or in the command after `--` are each named with the
document and the line the example starts on. What is not a harness example (prose, other
code blocks, comments, other programs after `--`) is not read.

Usage: check_examples_test.py HARNESS_BINARY
"""
import os
import subprocess
import sys
import tempfile
import unittest

from tree_check import write

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_examples.py")
REPO = os.path.dirname(HERE)
BINARY = None


def run(root, binary=None):
    return subprocess.run([sys.executable, SCRIPT, binary or BINARY, root], capture_output=True, text=True)


def sh(*lines):
    return "```sh\n" + "\n".join(lines) + "\n```\n"


class Fixture:
    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory()
        return self.dir.name

    def __exit__(self, *exc):
        self.dir.cleanup()


class CheckExamplesTest(unittest.TestCase):
    def test_the_repository_docs_pass(self):
        r = run(REPO)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("check_examples.py: ok", r.stdout)

    def test_examples_as_the_cli_is_pass(self):
        with Fixture() as root:
            write(root, "README.md", "Prose: `build/bin/harness run --nosuch` is not an example.\n\n" + sh(
                "build/bin/harness run --suite gsm8k --db h.db   # a comment --bogus is not read",
                "build/bin/harness run --suite gsm8k \\",
                "    --fault fp8-scale-unrepaired --rerun-at-risk=2",
                "build/bin/harness golden accept gmm/x_3 --reason \"PR !699 --fuses\"",
                "build/bin/harness bisect log 3 --db h.db",
            ) + "```\nbuild/bin/harness run --not-sh-so-not-read\n```\n")
            write(root, "docs/a.md", sh(
                "build/bin/harness report [--db DB] [--last N | --since SHA] [--suite S]",
                "                  [--format html|text|json|markdown] [--out FILE]",
                "build/bin/harness bisect --good G --bad B --metric gsm8k -- \\",
                "  \"$PWD\"/build/bin/harness run --suite gsm8k --questions {questions}",
                "build/bin/harness bisect --good G --bad B --case c/d -- make -C {worktree} --keep-going",
                "cat out.txt | grep --count PASS",
            ))
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("ok (8 harness invocations)", r.stdout)

    def test_each_wrong_name_is_named_with_its_line(self):
        with Fixture() as root:
            write(root, "README.md", "# r\n\n" + sh(
                "build/bin/harness histroy --case gsm8k/x",          # line 4
                "build/bin/harness history --suit gsm8k",            # line 5: near miss of --suite
                "build/bin/harness run --reason why",                # line 6: golden accept's flag
                "build/bin/harness golden diff --reason why",        # line 7: accept's, not diff's
                "build/bin/harness run --suite gsm8k \\",            # line 8
                "    --questionz q.txt",
            ))
            write(root, "docs/b.md", sh(
                "build/bin/harness report [--db DB] [--last N | --sinse SHA]",  # line 2
                "build/bin/harness bisect --good G --bad B --metric gsm8k -- \\",  # line 3
                "  \"$PWD\"/build/bin/harness run --suite gsm8k --questionz {questions}",
                "build/bin/harness bisect --auto [--run ID]",           # line 5
                "               [--confirmm K]",
            ))
            r = run(root)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            lines = r.stdout.splitlines()
            self.assertEqual(len(lines), 8, r.stdout)
            self.assertTrue(lines[0].startswith("README.md:4: 'harness histroy' is not a command"), lines[0])
            self.assertEqual(lines[1:], [
                "README.md:5: 'harness history' has no flag --suit",
                "README.md:6: 'harness run' has no flag --reason",
                "README.md:7: 'harness golden diff' has no flag --reason",
                "README.md:8: 'harness run' has no flag --questionz",
                "docs/b.md:2: 'harness report' has no flag --sinse",
                "docs/b.md:3: 'harness run' has no flag --questionz",
                "docs/b.md:5: 'harness bisect' has no flag --confirmm",
            ])
            self.assertIn("8 example problem(s)", r.stderr)

    def test_no_example_at_all_fails(self):
        with Fixture() as root:
            write(root, "README.md", "# r\n\n" + sh("ci/nightly.sh"))
            r = run(root)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("no harness invocation", r.stderr)

    def test_a_missing_binary_is_bad_usage(self):
        with Fixture() as root:
            write(root, "README.md", sh("build/bin/harness run --suite gsm8k"))
            r = run(root, binary=os.path.join(root, "no-such-harness"))
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("is not an executable file", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: check_examples_test.py HARNESS_BINARY", file=sys.stderr)
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
