#!/usr/bin/env python3
"""Tests of tools/mutants/mechanical.py that build nothing (ctest: mutants_mechanical; pytest
runs them too): each rule enumerates what it should on a small C++ snippet and nothing in
comments, preprocessor lines, static_asserts or plain strings; ids are stable when lines
move; the seed reproduces the sample; the test binaries of a file come from a real ninja
build graph; equivalent.json entries must name mutants that exist."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "mechanical.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import mechanical  # noqa: E402

ENUMS = {"Verdict": ["kPass", "kAtRisk", "kFail"]}


def mutants_of(src, rule=None):
    ms = mechanical.assign_ids(mechanical.enumerate_file(textwrap.dedent(src), "a.cc", "g", ENUMS))
    return [m for m in ms if rule is None or m.rule == rule]


def pairs(src, rule):
    return [(m.original, m.replacement) for m in mutants_of(src, rule)]


class RulesTest(unittest.TestCase):
    def test_relational_each_operator_becomes_the_other_five(self):
        got = pairs("bool f(int a, int b) { return a <= b; }", "relational")
        self.assertEqual(sorted(r for _, r in got), sorted(["<", ">", ">=", "==", "!="]))
        self.assertEqual({o for o, _ in got}, {"<="})

    def test_template_brackets_shifts_and_arrows_are_not_relational(self):
        src = """
            std::vector<std::pair<int, std::string>> v;
            auto n = static_cast<int64_t>(x) << 2;
            int g() { return p->size() >> 1; }
            bool h(int a, int b) { return a < b && b > 0; }
        """
        got = pairs(src, "relational")
        self.assertEqual(sorted({o for o, _ in got}), ["<", ">"])
        self.assertEqual(len(got), 10)  # a < b and b > 0 only

    def test_logical_swaps_and_or_but_not_rvalue_references(self):
        got = pairs("void f(Json&& j, auto&& k) { if (a && b || c) g(std::move(j)); }", "logical")
        self.assertEqual(got, [("&&", "||"), ("||", "&&")])

    def test_condition_forced_both_ways_after_an_init_statement_not_a_declaration(self):
        src = """
            void f() {
              if (x < 1) g();
              while (!done) step();
              if (auto r = h(); !r) return;
              if (auto r = h()) use(r);
              while (true) {}
            }
        """
        got = pairs(src, "condition")
        self.assertEqual(got, [("x < 1", "true"), ("x < 1", "false"), ("!done", "true"), ("!done", "false"),
                               ("!r", "true"), ("!r", "false")])

    def test_negation_dropped_but_not_inequality(self):
        self.assertEqual(pairs("bool f() { return !a && b != c; }", "negation"), [("!", "")])

    def test_constants_plus_and_minus_one_decimal_integers_only(self):
        got = pairs("int f() { return g(0, 7u, 1.5, 0x10, 1'000); }", "constant")
        self.assertEqual(got, [("0", "1"), ("0", "(-1)"), ("7u", "8u"), ("7u", "6u"), ("1'000", "1001"),
                               ("1'000", "999")])

    def test_index_moved_by_one_but_not_lambdas_attributes_or_bindings(self):
        src = """
            [[nodiscard]] int f(const std::vector<int>& v, int i) {
              auto [a, b] = pair();
              auto g = [&](int k) { return k; };
              return v[i] + v[n - 1] + w[2];
            }
        """
        got = pairs(src, "index")
        self.assertEqual(got, [("i", "i + 1"), ("i", "i - 1"), ("n - 1", "(n - 1) + 1"), ("n - 1", "(n - 1) - 1")])

    def test_front_back_and_min_max(self):
        src = "int f() { return std::min(v.front(), p->back()) + std::max_element(a, b) - min; }"
        self.assertEqual(pairs(src, "end"), [("front", "back"), ("back", "front")])
        self.assertEqual(pairs(src, "minmax"), [("min", "max"), ("max_element", "min_element")])

    def test_jumps_removed_but_not_a_function_s_last_return(self):
        src = """
            int f(int n) {
              for (int i = 0; i < n; ++i) {
                if (i == 2) continue;
                if (i == 3) break;
                if (i == 4) { return i; }
              }
              if (n < 0) return -1;
              return n;
            }
        """
        got = pairs(src, "jump")
        self.assertEqual(got, [("continue;", "{}"), ("break;", "{}"), ("return i;", "{}"), ("return -1;", "{}")])

    def test_enum_values_become_their_siblings_but_not_case_labels(self):
        src = """
            Verdict f(int x) {
              switch (x) { case Verdict::kPass: break; }
              return x ? Verdict::kFail : Other::kPass;
            }
        """
        self.assertEqual(pairs(src, "enum"), [("kFail", "kPass"), ("kFail", "kAtRisk")])

    def test_strings_become_sibling_words_of_the_same_file(self):
        src = """
            std::string k(bool a) { return a ? "gate" : "paired"; }
            std::string m() { return "status"; }
            std::string t() { return "a message, not a word"; }
            std::string u() { return "PASS"; }
        """
        got = pairs(src, "string")
        self.assertEqual(got, [("gate", "paired"), ("gate", "status"), ("paired", "status"), ("paired", "gate"),
                               ("status", "gate"), ("status", "paired")])

    def test_sql_predicates_change_but_not_assignments_or_quoted_text(self):
        src = '''
            const char* q = R"sql(UPDATE runs SET keep = 1, seen = CASE WHEN a > 0 THEN 1 ELSE 0 END, n = 2
              WHERE id = ? AND note <> 'a=b' AND x IS NULL)sql";
        '''
        got = pairs(src, "sql")
        self.assertIn(("=", "!="), got)
        self.assertIn(("<>", "="), got)
        self.assertIn(("AND", "OR"), got)
        self.assertIn(("IS NULL", "IS NOT NULL"), got)
        self.assertEqual(sum(1 for o, _ in got if o == "="), 5)  # `id = ?` only: not the SET clause's, not 'a=b'
        self.assertEqual(sum(1 for o, _ in got if o == "<>"), 5)
        self.assertEqual(sum(1 for o, _ in got if o == ">"), 5)  # a comparison inside the SET clause
        for m in mutants_of(src, "sql"):
            self.assertEqual(textwrap.dedent(src)[m.start:m.end], m.original)

    def test_comments_preprocessor_static_asserts_and_strings_make_no_mutants(self):
        src = """
            // if (a < b) return a[i] && !c;
            /* while (x >= 1) break; */
            #define LESS(a, b) ((a) < (b) && !(a))
            static_assert(sizeof(int) >= 4 && !false, "a < b");
            const char* s = "x < y && !z [i] 1";
        """
        self.assertEqual(mutants_of(src), [])

    def test_applying_each_mutant_changes_exactly_its_span(self):
        src = textwrap.dedent("""
            int f(const std::vector<int>& v) {
              if (v.size() > 2 && !v.empty()) return v[1];
              return std::min(v.front(), 3);
            }
        """)
        ms = mutants_of(src)
        self.assertEqual(len(ms), 18)  # 2 condition, 5 relational, 6 constant, 1 each of the rest
        for m in ms:
            mutated = src[:m.start] + m.replacement + src[m.end:]
            self.assertNotEqual(mutated, src, m.describe())
            self.assertEqual(src[m.start:m.end], m.original)

    def test_ids_are_unique_and_survive_a_line_moving(self):
        src = "bool f(int a) { return a < 1 || a > 9; }\n"
        before = [m.id for m in mutants_of(src)]
        after = [m.id for m in mutants_of("// a new first line\n\n" + src)]
        self.assertEqual(before, after)
        self.assertEqual(len(before), len(set(before)))


class SampleTest(unittest.TestCase):
    def test_every_decision_file_exists_and_makes_mutants(self):
        pool = mechanical.enumerate_tree(mechanical.DEFAULT_ROOT)
        files = {m.file for m in pool}
        for group, paths in mechanical.DECISION_FILES.items():
            for rel in paths:
                self.assertIn(rel, files, f"{group}: {rel} makes no mutants (moved? update DECISION_FILES)")

    def test_the_seed_reproduces_the_sample_and_another_seed_draws_another(self):
        def show(seed):
            r = subprocess.run([sys.executable, SCRIPT, "--group", "prune", "--sample", "5", "--seed", str(seed),
                                "--dry-run"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout
        a, b, c = show(11), show(11), show(12)
        self.assertIn("seed 11: 5 of", a)
        self.assertEqual(a, b)
        self.assertNotEqual(a.splitlines()[1:], c.splitlines()[1:])

    def test_without_a_seed_each_run_draws_and_prints_its_own(self):
        def seed():
            r = subprocess.run([sys.executable, SCRIPT, "--sample", "3", "--dry-run"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout.split(":")[0]
        self.assertNotEqual(seed(), seed())

    def test_equivalents_are_checked_against_the_tree(self):
        r = subprocess.run([sys.executable, SCRIPT, "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        entries = {"m": {"id": "relational-0000000000", "file": "harness/store/prune.cc", "reason": "r"}}
        problems = mechanical.check_equivalents(mechanical.DEFAULT_ROOT, entries)
        self.assertEqual(len(problems), 1)
        self.assertIn("stale", problems[0])


@unittest.skipUnless(shutil.which("ninja") and shutil.which("cmake"), "needs cmake and ninja")
class TestGraphTest(unittest.TestCase):
    def test_the_binaries_of_a_file_are_those_that_link_it_through_the_build_graph(self):
        with tempfile.TemporaryDirectory() as root:
            def write(rel, text):
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            write("CMakeLists.txt", textwrap.dedent("""
                cmake_minimum_required(VERSION 3.16)
                project(t CXX)
                function(harness_test name)
                  add_executable(${name} ${ARGN})
                endfunction()
                add_library(lo lib/lo.cc lib/other.cc)
                add_library(hi lib/hi.cc)
                target_link_libraries(hi PUBLIC lo)
                harness_test(lo_tests lib/lo_test.cc)
                target_link_libraries(lo_tests lo)
                harness_test(hi_tests lib/hi_test.cc)
                target_link_libraries(hi_tests hi)
                add_executable(tool lib/tool.cc)
                target_link_libraries(tool hi)
                harness_test(e2e_tests lib/e2e_test.cc)
                add_dependencies(e2e_tests tool)
                harness_test(alone_tests lib/alone_test.cc)
            """))
            for f in ("lo", "other", "hi"):
                write(f"lib/{f}.cc", f"int {f}() {{ return 1; }}\n")
            for f in ("lo_test", "hi_test", "tool", "e2e_test", "alone_test"):
                write(f"lib/{f}.cc", "int main() { return 0; }\n")
            for unity in ("OFF", "ON"):
                build = os.path.join(root, "build")
                shutil.rmtree(build, ignore_errors=True)
                r = subprocess.run(["cmake", "-S", root, "-B", build, "-G", "Ninja", f"-DCMAKE_UNITY_BUILD={unity}"],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                graph = mechanical.TestGraph(root)
                self.assertEqual(graph.tests_of("lib/lo.cc"), ["lo_tests", "hi_tests", "e2e_tests"], unity)
                self.assertEqual(graph.tests_of("lib/other.cc"), ["lo_tests", "hi_tests", "e2e_tests"], unity)
                self.assertEqual(graph.tests_of("lib/hi.cc"), ["hi_tests", "e2e_tests"], unity)
                self.assertEqual(graph.tests_of("lib/tool.cc"), ["e2e_tests"], unity)


if __name__ == "__main__":
    unittest.main()
