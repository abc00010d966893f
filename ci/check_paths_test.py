#!/usr/bin/env python3
"""Tests of ci/check_paths.py: the real tree passes; in small fixture trees a citation of a
path the tree has passes, one of a path it lacks is named with its file and line, and URLs,
build outputs, placeholders and code (as opposed to comments) are not citations."""
import os
import tempfile
import unittest

from tree_check import write
import tree_check

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_paths.py")


def run(root):
    return tree_check.run(SCRIPT, root)


def cited(root):
    """The FILE:LINE: cites PATH lines, sorted."""
    return sorted(run(root).stdout.splitlines())


def missing(rel, line, path):
    return f"{rel}:{line}: cites {path}, which is not in the repository"


class FixtureTree:
    """A temporary tree with a few real files to cite."""

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory()
        root = self.dir.name
        write(root, "harness/store/store.h", "#pragma once\n")
        write(root, "harness/store/prune.h", "#pragma once\n")
        write(root, "harness/cli/cmd_run.cc", "int r;\n")
        write(root, "docs/store.md", "# Store\n")
        write(root, "ci/nightly.sh", "#!/bin/sh\n")
        write(root, "README.md", "# r\n")
        return root

    def __exit__(self, *exc):
        self.dir.cleanup()


class PathsTest(unittest.TestCase):
    def test_the_real_tree_passes(self):
        r = run(os.path.dirname(HERE))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "paths: ok\n")

    def test_a_good_citation_passes_and_a_bad_one_is_named_at_its_line(self):
        with FixtureTree() as root:
            write(root, "harness/store/store.cc",
                  "// The schema: docs/store.md; the API: harness/store/store.h, store/prune.h.\n"
                  "int x;\n"
                  "/* Why: see docs/design.md\n"
                  "   and GONE.md. */\n"
                  "int y;  // the handler in cli/main.cc\n")
            r = run(root)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(sorted(r.stdout.splitlines()),
                             [missing("harness/store/store.cc", 3, "docs/design.md"),
                              missing("harness/store/store.cc", 4, "GONE.md"),
                              missing("harness/store/store.cc", 5, "cli/main.cc")])
            self.assertIn("paths: 3 citation(s)", r.stderr)

    def test_urls_outputs_placeholders_and_absolute_paths_are_not_citations(self):
        with FixtureTree() as root:
            write(root, "docs/guide.md",
                  "See https://github.com/example/repo/blob/main/docs/missing.md and\n"
                  "<http://example.com/harness/x.h>; writes `out/report.md`, `build/bin/harness`,\n"
                  "`build-asan/harness/x.h`; add `suites/<name>.json` and `harness/cli/cmd_{name}.cc`;\n"
                  "the corpus is `ci/corpus/TARGET/`; cwd `/src/msmodeling/run.py`; a report at [x](URL).\n")
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stdout)

    def test_code_and_string_literals_are_not_comments(self):
        with FixtureTree() as root:
            write(root, "harness/store/store_test.cc",
                  '#include "harness/store/missing.h"\n'
                  'const char* a = "docs/missing.md";  // but docs/gone.md is a comment\n'
                  'const char* b = R"(\n// docs/raw.md in a raw string\n)";\n'
                  "char c = '\"'; // docs/after_char.md\n")
            write(root, "ci/x.py",
                  '"""Docstring: docs/doc.md."""\n'
                  'PATH = "docs/code.md"  # comment: docs/comment.md\n')
            write(root, "ci/x.sh", '#!/bin/sh\necho "# docs/quoted.md"  # docs/shell.md\n')
            write(root, "harness/store/CMakeLists.txt", '# docs/cmake.md\nset(X "docs/cmake_string.md")\n')
            self.assertEqual(cited(root),
                             [missing("ci/x.py", 1, "docs/doc.md"), missing("ci/x.py", 2, "docs/comment.md"),
                              missing("ci/x.sh", 2, "docs/shell.md"),
                              missing("harness/store/CMakeLists.txt", 1, "docs/cmake.md"),
                              missing("harness/store/store_test.cc", 2, "docs/gone.md"),
                              missing("harness/store/store_test.cc", 6, "docs/after_char.md")])

    def test_markdown_links_are_relative_to_their_file(self):
        with FixtureTree() as root:
            write(root, "docs/guide.md",
                  "[store](store.md), [readme](../README.md), [anchor](store.md#schema),\n"
                  "[root-relative by mistake](docs/store.md), [gone](../GONE.md)\n")
            self.assertEqual(cited(root), [missing("docs/guide.md", 2, "../GONE.md"),
                                           missing("docs/guide.md", 2, "docs/store.md")])

    def test_globs_braces_and_folders_must_match_something(self):
        with FixtureTree() as root:
            write(root, "docs/guide.md",
                  "`harness/store/*.h`, `harness/store/store.{h,cc}`, `harness/store/`, `harness/gone/`,\n"
                  "`harness/gsm8k_*`, `notes/old/*.md`\n")
            # store.{h,cc} is two citations; the fixture has store.h only.
            self.assertEqual(cited(root), [missing("docs/guide.md", 1, "harness/gone/"),
                                           missing("docs/guide.md", 1, "harness/store/store.cc"),
                                           missing("docs/guide.md", 2, "harness/gsm8k_*"),
                                           missing("docs/guide.md", 2, "notes/old/*.md")])

    def test_json_prose_and_absolute_documents(self):
        with FixtureTree() as root:
            write(root, "suites/s.json",
                  '{"description": "see docs/store.md and GONE.md",\n "path": "docs/data.md"}\n')
            write(root, "docs/guide.md", "(/srv/notes/gsm8k.md §5)\n")
            self.assertEqual(cited(root), [missing("docs/guide.md", 1, "/srv/notes/gsm8k.md"),
                                           missing("suites/s.json", 1, "GONE.md")])

    def test_build_outputs_are_not_read(self):
        with FixtureTree() as root:
            write(root, "build/harness/x.cc", "// docs/gone.md\n")
            write(root, "out/notes.md", "docs/gone.md\n")
            self.assertEqual(run(root).returncode, 0)


if __name__ == "__main__":
    unittest.main()
