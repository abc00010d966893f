#!/usr/bin/env python3
"""Tests of ci/check_function_length.py: the real tree passes; in small fixture trees a
function of 61 lines is named at its signature's line and one of 60 passes; braces in
comments, literals and preprocessor lines do not move a function's end; lambdas and blocks
count toward their function while namespaces, classes and data tables are no functions;
the allowlist keeps a function only while it is long, named and listed in the document."""
import json
import os
import tempfile
import unittest

from tree_check import write
import tree_check

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_function_length.py")
ALLOWLIST = "ci/function_length_allowlist.json"


def run(root):
    return tree_check.run(SCRIPT, root)


def reported(root):
    """The lines the check prints, sorted."""
    return sorted(run(root).stdout.splitlines())


def long_line(rel, line, name, length):
    return f"{rel}:{line}: {name} is {length} lines (limit 60)"


def body(n):
    """n statement lines, the inside of a function."""
    return "".join(f"  x += {k};\n" for k in range(n))


def function(signature, total):
    """A function of exactly total lines, signature line and closing brace included."""
    return f"{signature} {{\n{body(total - 2 - signature.count(chr(10)))}}}\n"


def keep(root, entries, doc=None):
    """An allowlist of (file, function, reason) and the document that lists them."""
    write(root, ALLOWLIST, json.dumps({"kept": [{"file": f, "function": n, "reason": r} for f, n, r in entries]}))
    listed = "".join(f"- `{f}` {n}: {r}\n" for f, n, r in entries) if doc is None else doc
    write(root, "docs/architecture.md", "# Architecture\n" + listed)


class FunctionLengthTest(unittest.TestCase):
    def test_the_real_tree_passes(self):
        r = run(os.path.dirname(HERE))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "function length: ok\n")

    def test_sixty_lines_pass_and_sixty_one_are_named_at_the_signature(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/store/store.cc",
                  "#include <string>\n\n// Why it is.\n" + function("int Sixty(int x)", 60) + "\n" +
                  "template <typename T>\nint\nSixtyOne(T x)\n" + function("", 58))
            r = run(root)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout.splitlines(), [long_line("harness/store/store.cc", 65, "SixtyOne", 61)])
            self.assertIn("function length: 1 problem(s)", r.stderr)

    def test_every_source_folder_is_scanned_and_others_are_not(self):
        with tempfile.TemporaryDirectory() as root:
            for folder in ("harness/run", "reports", "runners/exec", "suites", "tools/fuzz"):
                write(root, f"{folder}/x.h", function("void F()", 61))
            write(root, "docs/x.cc", function("void F()", 61))
            write(root, "harness/run/x.py", function("void F()", 61))
            self.assertEqual(reported(root), [long_line(f"{f}/x.h", 1, "F", 61) for f in
                                              ("harness/run", "reports", "runners/exec", "suites", "tools/fuzz")])

    def test_braces_in_comments_literals_and_preprocessor_lines_are_not_code(self):
        with tempfile.TemporaryDirectory() as root:
            tricky = ("void Tricky() {\n"
                      "  // } a closing brace in a comment\n"
                      "  /* } and in a block comment,\n"
                      "     } over lines */\n"
                      '  const char* s = "}\\"}";\n'
                      "  char c = '}';\n"
                      "  char q = '\\'';\n"
                      '  const char* raw = R"x(}\n'
                      ')" } )x";\n'
                      "  int big = 1'000'000;\n"
                      "#define CLOSE }\n"
                      "#define OPEN { \\\n"
                      "  {\n"
                      "}\n")
            write(root, "harness/util/tricky.cc", tricky + function("void After()", 61))
            self.assertEqual(reported(root), [long_line("harness/util/tricky.cc", 15, "After", 61)])

    def test_lambdas_and_blocks_count_toward_their_function(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/run/run.cc",
                  "int Outer(int x) {\n"
                  "  auto step = [&](int y) {\n" + body(27) + "    return y;\n  };\n"
                  "  for (int k = 0; k < 3; ++k) {\n" + body(27) + "  }\n"
                  "  struct Local { int F() { return 1; } };\n"
                  "  return step(x);\n"
                  "}\n")
            self.assertEqual(reported(root), [long_line("harness/run/run.cc", 1, "Outer", 63)])

    def test_namespaces_classes_and_data_are_no_functions(self):
        with tempfile.TemporaryDirectory() as root:
            methods = "".join(f"  int M{k}() const {{ return {k}; }}\n" for k in range(70))
            rows = "".join(f'  {{"row{k}", {k}, Make({k})}},\n' for k in range(70))
            write(root, "harness/store/big.h",
                  "namespace harness {\nnamespace {\n"
                  f"class Big : public Base {{\n public:\n{methods}  std::vector<int> v_{{1, 2}};\n}};\n"
                  f"struct Row {{ const char* name; int n; Value v; }};\n"
                  f"const std::vector<Row> kRows = {{\n{rows}}};\n"
                  f"enum class Kind {{\n" + "".join(f"  k{k},\n" for k in range(70)) + "};\n"
                  "INSTANTIATE_TEST_SUITE_P(All, Fixture, ::testing::Values(Row{\n" + body(70) + "}));\n"
                  "}  // namespace\n}  // namespace harness\n")
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stdout)

    def test_methods_constructors_operators_and_tests_are_named(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/bisect/search.cc",
                  "class Search {\n public:\n"
                  "  Search(int a, int b)\n      : a_{a},\n        b_(b) {\n" + body(60) + "  }\n"
                  " private:\n" + function("  int Decide() const", 61) +
                  "  int a_{0};\n  int b_ = 0;\n};\n" +
                  function("bool operator==(const Search& a, const Search& b)", 61) +
                  function("double Search::Evidence() const", 61) +
                  function("TEST(SearchTest,\n     FindsIt)", 62) +
                  function("TEST_F(Fixture, Works)", 61) +
                  "const auto kStep = [](int x) -> int {\n" + body(60) + "};\n")
            self.assertEqual(reported(root), sorted([
                long_line("harness/bisect/search.cc", 3, "Search::Search", 64),
                long_line("harness/bisect/search.cc", 68, "Search::Decide", 61),
                long_line("harness/bisect/search.cc", 132, "operator==", 61),
                long_line("harness/bisect/search.cc", 193, "Search::Evidence", 61),
                long_line("harness/bisect/search.cc", 254, "TEST(SearchTest, FindsIt)", 62),
                long_line("harness/bisect/search.cc", 316, "TEST_F(Fixture, Works)", 61),
                long_line("harness/bisect/search.cc", 377, "kStep", 62)]))

    def test_a_kept_function_passes_while_it_is_long_and_listed(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "runners/refstack/compiler/infer.cc", function("Meta InferMeta(const Node& n)", 90))
            write(root, "harness/util/other.cc", function("void InferMeta()", 61))
            keep(root, [("runners/refstack/compiler/infer.cc", "InferMeta", "an op-dispatch switch")])
            # Kept by file and name: the same name in another file is not kept.
            self.assertEqual(reported(root), [long_line("harness/util/other.cc", 1, "InferMeta", 61)])
            write(root, "harness/util/other.cc", "")
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stdout)

    def test_a_stale_or_unlisted_entry_is_an_error(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "harness/run/run.cc", function("void Short()", 60) + function("void Long()", 61))
            keep(root, [("harness/run/run.cc", "Short", "was long"), ("harness/run/run.cc", "Gone", "was long"),
                        ("harness/run/run.cc", "Long", "a scenario")], doc="# nothing listed\n")
            self.assertEqual(reported(root), sorted([
                f"{ALLOWLIST}: harness/run/run.cc Short is kept but is gone or not over 60 lines; remove its entry",
                f"{ALLOWLIST}: harness/run/run.cc Gone is kept but is gone or not over 60 lines; remove its entry",
                f"{ALLOWLIST}: harness/run/run.cc Long is kept but docs/architecture.md does not name it"]))

    def test_a_malformed_allowlist_is_an_error(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, ALLOWLIST, '{"kept": [\n  {"file": "a.cc", "function": "F"},\n')
            self.assertEqual(reported(root), [f"{ALLOWLIST}:3:1: Expecting value"])
            write(root, ALLOWLIST, '{"kept": [{"file": "a.cc", "function": "F", "reason": " "}]}')
            self.assertEqual(reported(root), [f'{ALLOWLIST}: entry 1 wants exactly "file", "function" and '
                                              f'"reason", each a non-empty string'])


if __name__ == "__main__":
    unittest.main()
