#!/usr/bin/env python3
"""Tests of tools/mutants/mutants.py that build nothing (ctest: mutants_check): the real
list applies to the real tree; a stale, an ambiguous or a malformed mutant is an error
naming its line in the data file; the scratch copy follows the tree and restores a file a
killed run left mutated."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "mutants.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import mutants  # noqa: E402


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def mutant(id, original, file="lib/a.cc", target="a_tests", **extra):
    return dict({"id": id, "file": file, "original": original, "replacement": "return 2;", "tests": [target],
                 "description": "d"}, **extra)


class CheckTest(unittest.TestCase):
    def test_the_real_list_applies_to_the_real_tree(self):
        r = run("--check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        count = int(r.stdout.split()[0])
        self.assertGreaterEqual(count, 40, r.stdout)

    def test_stale_ambiguous_and_malformed_mutants_name_their_line(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "CMakeLists.txt", "harness_test(a_tests SOURCES a_test.cc LIBS a)\n")
            write(root, "lib/a.cc", "int f() { return 1; }\nint g() { return 1; }\nint h() { return 3; }\n")
            data = {"format_version": 1, "mutants": [
                mutant("fine", "int h() { return 3; }"),
                mutant("stale", "int k() { return 4; }"),
                mutant("ambiguous", "return 1;"),
                mutant("no-target", "int h() { return 3; }", target="b_tests"),
                mutant("no-file", "x", file="lib/missing.cc"),
                mutant("fine", "int f() { return 1; }"),
                {"id": "half", "file": "lib/a.cc"},
            ]}
            write(root, "m.json", json.dumps(data, indent=2))
            r = run("--check", "--root", root, "--mutants", os.path.join(root, "m.json"))
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            lines = r.stdout.splitlines()
            text = json.dumps(data, indent=2).splitlines()
            line_of = {json.loads("{" + l.strip().rstrip(",") + "}")["id"]: n
                       for n, l in enumerate(text, 1) if l.strip().startswith('"id"')}
            expect = {
                "stale": "stale: its original text no longer occurs in lib/a.cc",
                "ambiguous": "ambiguous: its original text occurs 2 times in lib/a.cc",
                "no-target": "no test target 'b_tests'",
                "no-file": "no file lib/missing.cc",
                "half": "missing original, replacement, tests, description",
            }
            for name, message in expect.items():
                hits = [l for l in lines if l.startswith(f"m.json:{line_of[name]}: mutant {name}: ")]
                self.assertEqual(len(hits), 1, (name, r.stdout))
                self.assertIn(message, hits[0])
            self.assertEqual(len([l for l in lines if "the id is used twice" in l]), 1, r.stdout)
            self.assertEqual(len(lines), len(expect) + 1, r.stdout)

    def test_list_and_the_flags_that_refuse_before_building(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "CMakeLists.txt", "harness_test(a_tests SOURCES a_test.cc LIBS a)\n")
            write(root, "lib/a.cc", "int f() { return 1; }\n")
            write(root, "m.json", json.dumps({"format_version": 1, "mutants": [
                mutant("one", "return 1;", equivalent="why no test can tell")]}))
            args = ["--root", root, "--mutants", os.path.join(root, "m.json")]
            listed = run("--list", *args)
            self.assertEqual(listed.returncode, 0, listed.stdout + listed.stderr)
            self.assertIn("one", listed.stdout)
            self.assertIn("(equivalent)", listed.stdout)
            unknown = run("--only", "two", *args)
            self.assertEqual(unknown.returncode, 2)
            self.assertIn("no mutant two", unknown.stdout)
            inside = run("--scratch", os.path.join(root, "lib"), *args)
            self.assertEqual(inside.returncode, 2)
            self.assertIn("must be a build* folder", inside.stdout)
            write(root, "bad.json", "{\n  \"format_version\": 1,\n  \"mutants\": [,]\n}\n")
            bad = run("--check", "--root", root, "--mutants", os.path.join(root, "bad.json"))
            self.assertEqual(bad.returncode, 1)
            self.assertTrue(bad.stdout.startswith("bad.json:3:"), bad.stdout)


class ScratchTest(unittest.TestCase):
    def test_the_scratch_copy_follows_the_tree_and_restores_a_mutated_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            root, scratch = os.path.join(tmp, "repo"), os.path.join(tmp, "scratch")
            write(root, ".gitignore", "/build/\n*.db\n")
            write(root, "lib/a.cc", "int f() { return 1; }\n")
            write(root, "lib/b.cc", "int g() { return 1; }\n")
            write(root, "gone.txt", "soon deleted\n")
            subprocess.run(["git", "init", "-q", root], check=True)
            subprocess.run(["git", "-C", root, "add", "-A"], check=True)
            write(root, "lib/new.cc", "untracked, not ignored\n")
            write(root, "h.db", "ignored\n")
            os.makedirs(scratch)
            mutants.sync_tree(root, scratch)
            for rel in ("lib/a.cc", "lib/b.cc", "gone.txt", "lib/new.cc"):
                self.assertTrue(os.path.isfile(os.path.join(scratch, rel)), rel)
            self.assertFalse(os.path.exists(os.path.join(scratch, "h.db")))
            # A run killed while lib/a.cc was mutated; the tree moved on meanwhile.
            write(scratch, "lib/a.cc", "int f() { return 2; }\n")
            write(scratch, "build/keep.o", "object\n")
            past = time.time() - 3600
            os.utime(os.path.join(scratch, "lib/b.cc"), (past, past))
            # The tree's edit is older than the scratch build's objects.
            os.utime(os.path.join(root, "lib/a.cc"), (past, past))
            os.remove(os.path.join(root, "gone.txt"))
            self.assertEqual(mutants.sync_tree(root, scratch), 1)
            with open(os.path.join(scratch, "lib/a.cc")) as f:
                self.assertEqual(f.read(), "int f() { return 1; }\n")
            self.assertGreaterEqual(os.path.getmtime(os.path.join(scratch, "lib/a.cc")),
                                    os.path.getmtime(os.path.join(scratch, "build/keep.o")),
                                    "a changed file is newer than the objects built before: the build redoes them")
            self.assertAlmostEqual(os.path.getmtime(os.path.join(scratch, "lib/b.cc")), past, delta=1,
                                   msg="an unchanged file keeps its time: the build stays incremental")
            self.assertFalse(os.path.exists(os.path.join(scratch, "gone.txt")))
            self.assertTrue(os.path.exists(os.path.join(scratch, "build/keep.o")), "the build folder is left alone")


if __name__ == "__main__":
    unittest.main()
