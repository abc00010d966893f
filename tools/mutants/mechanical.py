#!/usr/bin/env python3
"""Mechanical mutants: one-line bugs enumerated by rule, not chosen (tools/mutants/README.md).

The hand-written list (mutants.json) holds the bugs someone thought of. This tool makes the
others: it reads the decision code (DECISION_FILES), enumerates every mutant its rules
allow, draws a random sample and runs, per mutant, every test binary that links the mutated
file according to the build graph (ninja -t inputs of each harness_test target), so nobody
chooses which tests may catch it. It reuses mutants.py's scratch copy, build and test runs.

  mechanical.py --list                      counts of mutants per file and rule
  mechanical.py --show [--group G]          every mutant, one line each
  mechanical.py --sample 30 [--seed S]      draw 30, run them, print the ratio with the seed
  mechanical.py --check                     equivalent.json still names mutants that exist

Rules (token level; comments, preprocessor lines and static_asserts are skipped, strings
too except by the sql and sibling-string rules):
  relational   < <= > >= == != each replaced by the other five
  logical      && and || swapped
  condition    an if/while condition forced to true, and to false
  negation     a ! dropped
  constant     an integer literal +1 and -1
  index        a subscript [i] made [i + 1] and [i - 1]
  end          .front() and .back() swapped
  minmax       min and max swapped (min_element, max_element too)
  jump         a break, continue or return statement removed
  enum         Enum::kValue replaced by a sibling enumerator of that enum
  string       a word-like string literal replaced by a sibling word used in the same file
  sql          a comparison in SQL text changed (not an assignment of a SET clause),
               AND/OR swapped (not BETWEEN's), IS NULL/IS NOT NULL swapped
"""
import argparse
import collections
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import mutants  # noqa: E402  (the scratch copy, build and test machinery)

DEFAULT_ROOT = os.path.dirname(os.path.dirname(HERE))
EQUIVALENT_FORMAT = 1

# The decision code, by group: the code that decides what a user is told (a verdict, which
# runs are compared, which commit is blamed, which rows are kept). The rest is left out on
# purpose: harness/util and the store's SQLite helpers, schema and writers are plumbing with
# their own crash and hostile-input tests, where a mutant mostly crashes; HTML/JSON/text
# renderers print what the report model decided; the CLI only parses flags; runners/refstack
# is the simulated stack the tests use as their subject, not code under test.
DECISION_FILES = {
    "verdict": ["harness/stats/verdict.cc", "harness/compare/compare.cc", "harness/results/metric_set.cc",
                "harness/results/night_verdict.cc"],
    "pairing-identity": ["harness/bisect/regressions.cc", "harness/run/run_identity.cc",
                         "harness/store/identity_rule.cc"],
    "baseline": ["harness/store/baseline.cc"],
    # step_exit.cc and slurm_step.cc decide whether a step's end is evidence at all;
    # step_pool.cc which steps run side by side (--jobs); culprit_chain.cc how many commits are
    # blamed; session_lock.cc whether a session's rows may be ended or resumed; the store's
    # bisect_words.cc which stored word is which verdict, and the bisect's which verdict a step
    # and a session get; worktree_command.cc where a step runs, with what, and which step
    # commands and timeouts are refused before any step.
    "bisect": ["harness/bisect/bisect_search.cc", "harness/bisect/bisector.cc",
               "harness/bisect/question_choice.cc", "harness/bisect/step_exit.cc",
               "harness/bisect/slurm_step.cc", "harness/bisect/step_pool.cc",
               "harness/bisect/culprit_chain.cc", "harness/bisect/session_lock.cc",
               "harness/store/bisect_words.cc", "harness/bisect/bisect_words.cc",
               "harness/bisect/worktree_command.cc"],
    "auto-bisect": ["harness/bisect/auto_bisect.cc"],
    "prune": ["harness/store/prune.cc", "harness/store/store_prune.cc"],
    "merge": ["harness/store/store_merge.cc"],
    "shard": ["harness/run/shard.cc", "harness/store/nightly_shards.cc"],
    "ingest-mapping": ["harness/ingest/junit_xml.cc", "harness/ingest/gtest_json.cc", "harness/ingest/lm_eval.cc",
                       "harness/ingest/tensorcast_ingest.cc", "harness/ingest/sglang_gsm8k.cc",
                       "harness/stack/tensorcast_table.cc"],
    # The report's loaders (each section's reports/sections/<section>.cc) and the chart's
    # scales; its HTML, text and JSON renderers (<section>_render.cc) only print.
    "report-model": ["reports/report_model.cc", "reports/trend_chart.cc", "reports/sections/bisect.cc",
                     "reports/sections/changes.cc", "reports/sections/failures.cc", "reports/sections/flaky.cc",
                     "reports/sections/flips.cc", "reports/sections/regressions.cc", "reports/sections/summary.cc",
                     "reports/sections/trends.cc"],
    "markdown": ["reports/report_markdown.cc", "reports/markdown_section.cc", "reports/sections/bisect_markdown.cc",
                 "reports/sections/changes_markdown.cc", "reports/sections/failures_markdown.cc",
                 "reports/sections/flaky_markdown.cc", "reports/sections/summary_markdown.cc"],
    # openai_config.cc decides which endpoint and launch a run talks to.
    "server-launch": ["runners/openai/server_launch.cc", "runners/openai/openai_config.cc"],
    "resolve-commit": ["harness/store/resolve_commit.cc"],
}
RULES = ("relational", "logical", "condition", "negation", "constant", "index", "end", "minmax", "jump", "enum",
         "string", "sql")

# --- lexing -----------------------------------------------------------------------------

Token = collections.namedtuple("Token", "kind text start end")  # kind: id num str chr punct
PUNCT = sorted(["<=>", "<<=", ">>=", "->*", "...", "::", "->", "<=", ">=", "==", "!=", "&&", "||", "<<", ">>", "++",
                "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*"], key=len, reverse=True)
RAW_RE = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')
STR_RE = re.compile(r'(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*"')
CHR_RE = re.compile(r"(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*'")
NUM_RE = re.compile(r"\.?\d(?:[eEpP][+-]|'(?=[0-9a-fA-F])|[0-9a-zA-Z_.])*")
ID_RE = re.compile(r"[A-Za-z_]\w*")


def lex(text):
    """The tokens of C++ source, without comments and preprocessor lines."""
    tokens, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\n":
            i += 1
            line_start = True
            continue
        if c == "#" and line_start:
            while i < n and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            continue
        line_start = False
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        m = RAW_RE.match(text, i)
        if m:
            close = text.find(")" + m.group(1) + '"', m.end())
            end = n if close < 0 else close + len(m.group(1)) + 2
            tokens.append(Token("str", text[i:end], i, end))
            i = end
            continue
        for kind, rx in (("str", STR_RE), ("chr", CHR_RE), ("num", NUM_RE), ("id", ID_RE)):
            m = rx.match(text, i)
            if m:
                tokens.append(Token(kind, m.group(0), i, m.end()))
                i = m.end()
                break
        else:
            p = next((p for p in PUNCT if text.startswith(p, i)), c)
            tokens.append(Token("punct", p, i, i + len(p)))
            i += len(p)
    return tokens


def strip_static_asserts(tokens):
    out, i = [], 0
    while i < len(tokens):
        if tokens[i].text == "static_assert":
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[i].text, 0)
                i += 1
                if depth == 0:
                    break
            continue
        out.append(tokens[i])
        i += 1
    return out


def matching(tokens, i, open_, close):
    """Index of the token closing tokens[i] (which is open_), or None."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == open_:
            depth += 1
        elif tokens[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    return None


TEMPLATE_INNER = {"::", ",", "*", "&", "(", ")", "[", "]", "...", "<", ">", ">>"}


def template_closers(tokens):
    """Indexes of < and > (or >>) tokens that are template brackets, by a forward scan from
    each `<` that follows a name: a template argument list holds names, numbers and type
    punctuation only, and closes before any other token."""
    brackets = set()
    for i, t in enumerate(tokens):
        if t.text != "<" or i == 0 or tokens[i - 1].kind != "id" or tokens[i - 1].text == "operator":
            continue
        depth, parens, inside = 1, 0, [i]
        for j in range(i + 1, min(len(tokens), i + 80)):
            u = tokens[j]
            if u.kind not in ("id", "num") and u.text not in TEMPLATE_INNER:
                break
            if u.text == "(":
                parens += 1
            elif u.text == ")":
                parens -= 1
                if parens < 0:
                    break
            elif parens == 0 and u.text == "<" and tokens[j - 1].kind == "id":
                depth += 1
                inside.append(j)
            elif parens == 0 and u.text in (">", ">>"):
                depth -= 1 if u.text == ">" else 2
                inside.append(j)
                if depth <= 0:
                    brackets.update(inside)
                    break
    return brackets


# --- mutants ----------------------------------------------------------------------------

class Mechanical:
    """One mutant: replace text[start:end] (== original) with replacement."""

    def __init__(self, file, group, rule, start, end, original, replacement, line, line_text):
        self.file, self.group, self.rule = file, group, rule
        self.start, self.end, self.original, self.replacement = start, end, original, replacement
        self.line, self.line_text = line, line_text
        self.id = ""

    def describe(self):
        return f"{self.file}:{self.line} {self.rule}: {short(self.original)!r} -> {short(self.replacement)!r}"


def short(s, limit=60):
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit - 3] + "..."


RELATIONAL = ("<", "<=", ">", ">=", "==", "!=")
KEYWORDS_BEFORE_BRACKET = {"return", "delete", "new", "auto", "operator", "case", "co_return", "throw"}
BUILTIN_TYPES = {"int", "char", "bool", "double", "float", "long", "short", "unsigned", "signed", "void", "string",
                 "string_view", "vector", "path", "size_t", "int64_t", "uint64_t", "int32_t", "uint32_t", "Json"}


def is_rvalue_ref(tokens, i, closers):
    prev = tokens[i - 1]
    if prev.text in ("auto", "const") or (i - 1) in closers:
        return True
    if i + 2 >= len(tokens) or tokens[i + 1].kind != "id":
        return False
    after = tokens[i + 2].text
    typeish = prev.kind == "id" and (prev.text[0].isupper() or prev.text in BUILTIN_TYPES or
                                     (i >= 2 and tokens[i - 2].text == "::"))
    return typeish and after in ("=", ")", ",", ";", ":", "{")


def block_kinds(tokens):
    """For each token index, the kind of the innermost brace block it is in: 'control' (the
    body of if/else/for/while/do/switch/try), 'other' (a function, lambda, class, init list)."""
    kinds, stack = [], []
    for i, t in enumerate(tokens):
        if t.text == "{":
            prev = tokens[i - 1].text if i else ""
            if prev == ")":
                kind = "control" if last_paren_owner(tokens, i - 1) in ("if", "for", "while", "switch", "catch") else "other"
            else:
                kind = "control" if prev in ("else", "do", "try") else "other"
            stack.append(kind)
        elif t.text == "}" and stack:
            stack.pop()
        kinds.append(stack[-1] if stack else "other")
    return kinds


def last_paren_owner(tokens, close_index):
    depth = 0
    for j in range(close_index, -1, -1):
        depth += {")": 1, "(": -1}.get(tokens[j].text, 0)
        if depth == 0:
            return tokens[j - 1].text if j else ""
    return ""


def statement_end(tokens, i):
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                return None
        elif t == ";" and depth == 0:
            return j
    return None


def collect_enums(root):
    """Enumerators of every `enum class` in the sources: {name: [enumerator, ...]}."""
    enums = {}
    rx = re.compile(r"enum\s+(?:class|struct)\s+(\w+)(?:\s*:\s*[\w:]+)?\s*\{([^}]*)\}")
    for top in ("harness", "reports", "runners"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".h", ".cc")):
                    with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", f.read(), flags=re.S)
                    for m in rx.finditer(text):
                        values = [v.split("=")[0].strip() for v in m.group(2).split(",")]
                        values = [v for v in values if re.fullmatch(r"\w+", v)]
                        if len(values) >= 2:
                            enums.setdefault(m.group(1), values)
    return enums


WORD_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,23}$")
SQL_RE = re.compile(r"\b(SELECT|UPDATE|DELETE|INSERT)\b")
SQL_CMP_RE = re.compile(r"<>|<=|>=|!=|==|=|<|>")
SQL_SET_END_RE = re.compile(r"\b(WHERE|FROM|RETURNING)\b")
SQL_CMP = ("=", "!=", "<", "<=", ">", ">=")


def string_body(tok):
    """(offset of the literal's contents in the token, the contents)."""
    m = RAW_RE.match(tok.text)
    if m:
        return m.end(), tok.text[m.end():len(tok.text) - len(m.group(1)) - 2]
    q = tok.text.index('"')
    return q + 1, tok.text[q + 1:-1]


def siblings(value, table, count=2):
    """The next `count` words after value in the sorted table (cyclic), value excluded."""
    words = sorted(set(table))
    if value not in words or len(words) < 2:
        return []
    k = words.index(value)
    return [words[(k + d) % len(words)] for d in range(1, min(count, len(words) - 1) + 1)]


def enumerate_file(text, file, group, enums):
    """Every mutant of one source text, in source order."""
    tokens = strip_static_asserts(lex(text))
    closers = template_closers(tokens)
    kinds = block_kinds(tokens)
    out = []

    def add(rule, start, end, replacement):
        out.append((rule, start, end, replacement))

    words = collections.defaultdict(list)  # shape -> words: the file's table of sibling words
    for t in tokens:
        if t.kind == "str" and not SQL_RE.search(t.text):
            body = string_body(t)[1]
            if WORD_RE.match(body):
                words[body.isupper()].append(body)

    for i, t in enumerate(tokens):
        prev = tokens[i - 1] if i else Token("punct", "", 0, 0)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else Token("punct", "", len(text), len(text))
        if t.kind == "punct":
            if t.text in RELATIONAL and i not in closers and prev.text != "operator":
                for r in RELATIONAL:
                    if r != t.text:
                        add("relational", t.start, t.end, r)
            elif t.text == "||" or (t.text == "&&" and i and not is_rvalue_ref(tokens, i, closers)):
                add("logical", t.start, t.end, "&&" if t.text == "||" else "||")
            elif t.text == "!":
                add("negation", t.start, t.end, "")
            elif t.text == "[" and nxt.text != "[" and prev.text != "[" and (
                    (prev.kind == "id" and prev.text not in KEYWORDS_BEFORE_BRACKET) or prev.text in (")", "]")):
                close = matching(tokens, i, "[", "]")
                if close and close > i + 1 and not (close == i + 2 and tokens[i + 1].kind == "num"):
                    inner = text[tokens[i + 1].start:tokens[close - 1].end]
                    base = inner if tokens[i + 1].kind == "id" and close == i + 2 else f"({inner})"
                    for d in ("+", "-"):
                        add("index", tokens[i + 1].start, tokens[close - 1].end, f"{base} {d} 1")
        elif t.kind == "num":
            m = re.fullmatch(r"(\d+)([uUlL]*)", t.text.replace("'", ""))
            if m and not (t.text.startswith("0") and len(t.text) > 1):
                v = int(m.group(1))
                for d in (1, -1):
                    add("constant", t.start, t.end, f"{v + d}{m.group(2)}" if v + d >= 0 else f"({v + d})")
        elif t.kind == "id":
            if t.text in ("if", "while") and nxt.text == "(" and prev.text != "#":
                add_condition(tokens, i + 1, text, add)
            elif t.text in ("front", "back") and prev.text in (".", "->") and nxt.text == "(":
                add("end", t.start, t.end, "back" if t.text == "front" else "front")
            elif t.text in ("min", "max", "min_element", "max_element") and nxt.text in ("(", "<") and \
                    prev.text in ("::", ".", "->"):
                add("minmax", t.start, t.end, t.text.replace("min", "\0").replace("max", "min").replace("\0", "max"))
            elif t.text in ("break", "continue") and nxt.text == ";":
                add("jump", t.start, nxt.end, "{}")
            elif t.text == "return":
                end = statement_end(tokens, i)
                last_in_block = end is not None and end + 1 < len(tokens) and tokens[end + 1].text == "}"
                if end is not None and (kinds[i] == "control" or not last_in_block):
                    add("jump", t.start, tokens[end].end, "{}")
            elif t.text in enums and nxt.text == "::" and i + 2 < len(tokens) and prev.text != "case":
                value = tokens[i + 2]
                if value.text in enums[t.text]:
                    for s in siblings(value.text, enums[t.text]):
                        add("enum", value.start, value.end, s)
        elif t.kind == "str":
            offset, body = string_body(t)
            if SQL_RE.search(body):
                for rule, s, e, r in sql_mutants(body):
                    add(rule, t.start + offset + s, t.start + offset + e, r)
            elif WORD_RE.match(body) and prev.text != "extern":
                for s in siblings(body, words[body.isupper()]):
                    add("string", t.start + offset, t.start + offset + len(body), s)
    mutants = []
    for rule, start, end, replacement in out:
        line = text.count("\n", 0, start) + 1
        ls = text.rfind("\n", 0, start) + 1
        le = text.find("\n", start)
        mutants.append(Mechanical(file, group, rule, start, end, text[start:end], replacement, line,
                                  text[ls:le if le >= 0 else len(text)]))
    return mutants


def add_condition(tokens, open_index, text, add):
    close = matching(tokens, open_index, "(", ")")
    if close is None or close == open_index + 1:
        return
    first, declares = open_index + 1, False
    depth = 0
    for j in range(open_index + 1, close):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1, "{": 1, "}": -1}.get(tokens[j].text, 0)
        if depth == 0 and tokens[j].text == ";":
            first, declares = j + 1, False
        if depth == 0 and tokens[j].text == "=":
            declares = True
    if declares:  # the condition declares its variable: forcing it would not compile
        return
    if first >= close or text[tokens[first].start:tokens[close - 1].end] in ("true", "false"):
        return
    if tokens[open_index - 2].text == "constexpr" if open_index >= 2 else False:
        return
    for value in ("true", "false"):
        add("condition", tokens[first].start, tokens[close - 1].end, value)


def sql_mutants(body):
    """(rule, start, end, replacement) in SQL text: comparisons in predicates, AND/OR, IS NULL."""
    out = []
    masked = re.sub(r"'[^']*'", lambda m: " " * len(m.group(0)), body)
    set_regions = []  # a SET clause: from SET to its WHERE, FROM or RETURNING, or the end
    for m in re.finditer(r"\bSET\b", masked):
        end = SQL_SET_END_RE.search(masked, m.end())
        set_regions.append((m.end(), end.start() if end else len(masked)))
    for m in SQL_CMP_RE.finditer(masked):
        if m.group(0) == "=" and any(a <= m.start() < b for a, b in set_regions):
            continue  # an assignment (or, conservatively, an = inside one), not a comparison
        own = {"<>": "!=", "==": "="}.get(m.group(0), m.group(0))
        for r in SQL_CMP:
            if r != own:
                out.append(("sql", m.start(), m.end(), r))
    for m in re.finditer(r"\b(AND|OR)\b", masked):
        if "BETWEEN" not in masked[max(0, m.start() - 40):m.start()]:
            out.append(("sql", m.start(), m.end(), "OR" if m.group(1) == "AND" else "AND"))
    for m in re.finditer(r"\bIS\s+(NOT\s+)?NULL\b", masked):
        out.append(("sql", m.start(), m.end(), "IS NULL" if m.group(1) else "IS NOT NULL"))
    return sorted(out, key=lambda x: x[1])


def assign_ids(mutants):
    """A stable id per mutant: a hash of its file, the text of its line, its rule, original
    and replacement, and its ordinal among equal ones on that line; line numbers may move."""
    seen = collections.Counter()
    for m in mutants:
        key = (m.file, m.line_text.strip(), m.rule, m.original, m.replacement)
        ordinal = seen[key]
        seen[key] += 1
        digest = hashlib.sha1(repr(key + (ordinal,)).encode()).hexdigest()[:10]
        m.id = f"{m.rule}-{digest}"
    return mutants


def enumerate_tree(root, groups=None, files=None):
    enums = collect_enums(root)
    out = []
    for group, paths in DECISION_FILES.items():
        if groups and group not in groups:
            continue
        for rel in paths:
            if files and rel not in files:
                continue
            path = os.path.join(root, rel)
            if not os.path.exists(path):
                continue  # a tree without this file: its mutants do not exist there
            with open(path, encoding="utf-8") as f:
                out.extend(enumerate_file(f.read(), rel, group, enums))
    return assign_ids(out)


# --- the reviewed equivalents -----------------------------------------------------------

def load_equivalents(path):
    """{id: entry} and problems. Each entry: id, file, line (the source line's text), reason."""
    if not os.path.exists(path):
        return {}, []
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            return {}, [f"{path}:{e.lineno}: {e.msg}"]
    if not isinstance(data, dict) or data.get("format_version") != EQUIVALENT_FORMAT:
        return {}, [f"{path}: expected an object with \"format_version\": {EQUIVALENT_FORMAT}"]
    entries, problems = {}, []
    for i, e in enumerate(data.get("equivalent", [])):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) and e.get(k) for k in ("id", "file", "reason")):
            problems.append(f"{path}: equivalent[{i}] needs non-empty id, file and reason")
            continue
        entries[e["id"]] = e
    return entries, problems


def check_equivalents(root, entries):
    """An entry naming a mutant that no longer exists is stale: the code changed under it."""
    ids = {m.id for m in enumerate_tree(root)}
    return [f"equivalent.json: {e['id']} ({e['file']}): stale: no such mutant in the tree any more"
            for e in entries.values() if e["id"] not in ids]


# --- which tests link a file ------------------------------------------------------------

def ninja(build_dir, *args):
    r = subprocess.run(["ninja", "-C", build_dir, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"mechanical: ninja {' '.join(args)} failed: {r.stderr.strip()[-500:]}")
    return r.stdout


def unity_owners(build_dir):
    """{source path: [unity .cxx files that #include it]} (CMAKE_UNITY_BUILD)."""
    owners = collections.defaultdict(list)
    for dirpath, _, names in os.walk(build_dir):
        if os.path.basename(dirpath) == "Unity":
            for n in names:
                if n.endswith((".cxx", ".c")):
                    p = os.path.join(dirpath, n)
                    with open(p, encoding="utf-8") as f:
                        for inc in re.findall(r'#include\s+"([^"]+)"', f.read()):
                            owners[os.path.realpath(inc)].append(os.path.realpath(p))
    return owners


def test_homes(root):
    """{test target: the folder (from root) of the CMakeLists.txt that declares it}."""
    homes = {}
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
        if "CMakeLists.txt" in files:
            with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
                for name in re.findall(r"harness_test\(\s*(\w+)", f.read()):
                    homes[name] = os.path.relpath(dirpath, root).replace(os.sep, "/").lstrip(".")
    return homes


class TestGraph:
    """The test binaries (harness_test targets) whose build inputs, transitively and order-only
    dependencies included (an end-to-end test binary depends on bin/harness), hold a file."""

    def __init__(self, scratch):
        self.build_dir = os.path.join(scratch, "build")
        self.scratch = scratch
        self.owners = unity_owners(self.build_dir)
        self.inputs = {}
        known = {line.split(":")[0] for line in ninja(self.build_dir, "-t", "targets", "all").splitlines()}
        # A declared test the configuration leaves out (a sanitized or benchmark-less build) is no binary.
        self.home = test_homes(scratch)
        self.targets = sorted(t for t in self.home if t in known)
        for t in self.targets:
            lines = ninja(self.build_dir, "-t", "inputs", t).splitlines()
            self.inputs[t] = {os.path.realpath(os.path.join(self.build_dir, p)) for p in lines}

    def tests_of(self, rel):
        src = os.path.realpath(os.path.join(self.scratch, rel))
        names = {src, *self.owners.get(src, [])}
        hits = [t for t in self.targets if self.inputs[t] & names]
        # The most specific first: the tests beside the file, then by fewest build inputs.
        folder = os.path.dirname(rel)
        return sorted(hits, key=lambda t: (self.home[t] != folder, len(self.inputs[t]), t))


# --- running ----------------------------------------------------------------------------

def apply_and_run(scratch, m, targets, timeouts, jobs):
    """('killed' | 'survived' | 'timeout' | 'build-failure', detail). Builds and runs one
    test binary at a time, stopping at the first that fails; the file is restored always."""
    path = os.path.join(scratch, m.file)
    with open(path, encoding="utf-8") as f:
        original = f.read()
    flaky = []
    if original[m.start:m.end] != m.original:
        return "build-failure", "the scratch copy differs from the tree (stale)"
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(original[:m.start] + m.replacement + original[m.end:])
        for t in targets:
            ok, log = mutants.build(scratch, [t], jobs)
            if not ok:
                errors = [line for line in log.splitlines() if "error:" in line]
                return "build-failure", (errors[0] if errors else log[-300:]).strip()
            status, failed, detail = run_binary(scratch, t, timeouts.get(t, 900))
            if status == "fail":
                again = confirm_failure(scratch, t, failed, timeouts.get(t, 900)) if failed else detail
                if again is None:
                    flaky.append(f"{detail} (passed when run again)")
                    continue
                return "killed", again
            if status == "timeout":
                return "timeout", detail
        return "survived", f"{len(targets)} test binaries pass: {', '.join(targets)}" + (
            f"; flaky, not counted as a kill: {'; '.join(flaky)}" if flaky else "")
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(original)


def run_binary(scratch, target, timeout, only=()):
    """('pass' | 'fail' | 'timeout', the failed tests' names, detail): one test binary, whole
    or only the named tests."""
    argv = [mutants.find_binary(scratch, target), "--gtest_brief=1"]
    if only:
        argv.append("--gtest_filter=" + ":".join(only))
    try:
        r = subprocess.run(argv, env=dict(os.environ, HARNESS_ROOT=scratch), capture_output=True, text=True,
                           errors="replace", timeout=timeout, preexec_fn=mutants.cap_memory)
    except subprocess.TimeoutExpired:
        return "timeout", [], f"{target} ran over {timeout} s"
    if r.returncode == 0:
        return "pass", [], ""
    failed = sorted(set(re.findall(r"^\[  FAILED  \] (\S+)", r.stdout, re.M)))
    shown = ", ".join(failed[:3]) + (" ..." if len(failed) > 3 else "") if failed else f"exit {r.returncode}"
    return "fail", failed, f"{target}: {shown}"


def confirm_failure(scratch, target, failed, timeout):
    """A failure counts as a kill only when it happens again: the failed tests run once more
    (on a loaded machine a timing test fails now and then). The detail, or None when they
    all pass the second time."""
    status, _, detail = run_binary(scratch, target, timeout, failed)
    return None if status == "pass" else detail + (" (failed twice)" if status == "fail" else "")


def baseline(scratch, targets, jobs, limit):
    """Seconds each test binary takes unmutated; exits when one fails (it would kill every
    mutant)."""
    ok, log = mutants.build(scratch, targets, jobs)
    if not ok:
        print(log[-5000:])
        raise SystemExit("mechanical: the unmutated tree does not build")
    times = {}
    for t in targets:
        t0 = time.monotonic()
        status, failed, detail = run_binary(scratch, t, limit)
        times[t] = time.monotonic() - t0
        # As for a mutant, a failure counts when it happens twice: a timing test on a loaded
        # machine fails now and then.
        if status == "fail" and failed and confirm_failure(scratch, t, failed, limit) is None:
            print(f"baseline: {t}: {detail} failed once and passed when run again", flush=True)
            status = "pass"
        if status != "pass":
            raise SystemExit(f"mechanical: unmutated, {t}: {status} {detail}; fix that first")
        print(f"baseline: {t} passes ({times[t]:.0f} s)", flush=True)
    return times


def ratio(results):
    """killed (timeouts included) / viable non-equivalent mutants."""
    counted = [s for s in results if s in ("killed", "timeout", "survived")]
    killed = sum(1 for s in counted if s != "survived")
    return killed, len(counted)


def percent(k, n):
    return f"{100 * k / n:.1f} %" if n else "n/a"


def summarize(seed, sample, statuses, elapsed, equivalents):
    lines = []
    k, n = ratio(statuses.values())
    lines.append(f"seed {seed}: {len(sample)} mutants run: killed {k} of {n} viable ({percent(k, n)}); "
                 f"{sum(1 for s in statuses.values() if s == 'timeout')} of them by timeout; "
                 f"{sum(1 for s in statuses.values() if s == 'equivalent')} equivalent (equivalent.json); "
                 f"{sum(1 for s in statuses.values() if s == 'build-failure')} not viable (build failure); "
                 f"{elapsed / 60:.1f} min")
    for group in DECISION_FILES:
        gs = [statuses[m.id] for m in sample if m.group == group]
        if gs:
            gk, gn = ratio(gs)
            lines.append(f"  {group:18} {gk}/{gn} ({percent(gk, gn)})")
    for m in sample:
        if statuses[m.id] == "survived":
            lines.append(f"  survived: {m.id} {m.describe()}")
    return lines


def markdown(lines):
    """The summary for a CI job page: the lines in a fence no source text can close."""
    body = "\n".join(line.replace("`", "'") for line in lines)
    return f"## Mechanical mutants\n\n```text\n{body}\n```\n"


def cmd_sample(args, root, pool, equivalents):
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    sample = rng.sample(pool, min(args.sample, len(pool)))
    print(f"seed {seed}: {len(sample)} of {len(pool)} mutants", flush=True)
    if args.dry_run:
        for m in sample:
            print(f"{m.id} {m.describe()}")
        return 0
    started = time.monotonic()
    scratch = os.path.abspath(args.scratch or os.path.join(root, "build-mutants"))
    os.makedirs(scratch, exist_ok=True)
    print(f"scratch copy {scratch} ({mutants.sync_tree(root, scratch)} files updated)", flush=True)
    mutants.configure(scratch)
    graph = TestGraph(scratch)
    tests = {m.id: graph.tests_of(m.file) for m in sample}
    needed = sorted({t for ts in tests.values() for t in ts})
    timeouts = {t: args.timeout for t in needed}
    if not args.no_baseline:
        times = baseline(scratch, needed, args.jobs, args.timeout)
        timeouts = {t: max(args.min_timeout, int(args.timeout_factor * s)) for t, s in times.items()}
    statuses, rows = {}, []
    for n, m in enumerate(sample, 1):
        if args.budget_minutes and time.monotonic() - started > 60 * args.budget_minutes:
            print(f"budget of {args.budget_minutes} min spent: {n - 1} of the {len(sample)} drawn mutants run", flush=True)
            sample = sample[:n - 1]
            break
        t0 = time.monotonic()
        if not tests[m.id]:
            status, detail = "build-failure", "no test binary links this file"
        else:
            status, detail = apply_and_run(scratch, m, tests[m.id], timeouts, args.jobs)
        if status == "survived" and m.id in equivalents:
            status, detail = "equivalent", equivalents[m.id]["reason"]
        statuses[m.id] = status
        rows.append({"id": m.id, "file": m.file, "line": m.line, "group": m.group, "rule": m.rule,
                     "original": m.original, "replacement": m.replacement, "status": status, "detail": detail,
                     "seconds": round(time.monotonic() - t0, 1)})
        print(f"[{n}/{len(sample)}] {status.upper():13} {m.id} {m.describe()} ({time.monotonic() - t0:.0f} s): "
              f"{short(detail, 160)}", flush=True)
    lines = summarize(seed, sample, statuses, time.monotonic() - started, equivalents)
    print()
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown(lines))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            k, n = ratio(statuses.values())
            json.dump({"seed": seed, "killed": k, "viable": n, "summary": lines, "mutants": rows}, f, indent=1)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=DEFAULT_ROOT, help="the source tree (default: this checkout)")
    p.add_argument("--list", action="store_true", help="count the mutants per file and rule")
    p.add_argument("--show", action="store_true", help="print every mutant (of --group/--file)")
    p.add_argument("--check", action="store_true", help="check equivalent.json against the tree")
    p.add_argument("--group", action="append", default=[], choices=sorted(DECISION_FILES),
                   help="draw from this group of files only (repeatable)")
    p.add_argument("--file", action="append", default=[], help="draw from this file only (repeatable)")
    p.add_argument("--sample", type=int, default=30, help="mutants to draw and run (default 30)")
    p.add_argument("--seed", type=int, default=None, help="the sample's seed (default: a new one each run)")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run this mutant (repeatable)")
    p.add_argument("--scratch", default=None, help="the scratch copy (default: ROOT/build-mutants)")
    p.add_argument("--jobs", type=int, default=2, help="build parallelism (default 2)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per test binary without a baseline")
    p.add_argument("--timeout-factor", type=float, default=5.0,
                   help="a test binary times out after this many times its unmutated run (default 5)")
    p.add_argument("--min-timeout", type=int, default=60, help="... but never sooner than this (default 60 s)")
    p.add_argument("--budget-minutes", type=float, default=0,
                   help="start no mutant after this many minutes; the summary covers those run (default: no limit)")
    p.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of the test binaries")
    p.add_argument("--dry-run", action="store_true", help="print the sample drawn and run nothing")
    p.add_argument("--json", default=None, help="write the result here (seed, ratio, each mutant)")
    p.add_argument("--markdown", default=None, help="write the summary here as Markdown (a CI job summary)")
    args = p.parse_args(argv)
    root = os.path.abspath(args.root)
    unknown = [f for f in args.file if f not in {x for fs in DECISION_FILES.values() for x in fs}]
    if unknown or args.sample < 1:
        print(f"mechanical: {'no decision file ' + ', '.join(unknown) if unknown else '--sample must be >= 1'}",
              file=sys.stderr)
        return 2
    equivalents, problems = load_equivalents(os.path.join(HERE, "equivalent.json"))
    if args.check:
        problems += check_equivalents(root, equivalents)
        print("\n".join(problems) if problems else f"{len(equivalents)} equivalent mutants still exist")
        return 1 if problems else 0
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    pool = enumerate_tree(root, set(args.group), set(args.file))
    if args.list:
        counts = collections.Counter((m.file, m.rule) for m in pool)
        for f in sorted({m.file for m in pool}):
            print(f"{f:42} " + " ".join(f"{r}={counts[(f, r)]}" for r in RULES if counts[(f, r)]))
        print(f"{len(pool)} mutants in {len({m.file for m in pool})} files")
        return 0
    if args.show:
        for m in pool:
            print(f"{m.id} {m.describe()}")
        return 0
    if args.only:
        chosen = [m for m in pool if m.id in args.only]
        if len(chosen) != len(set(args.only)):
            print("mechanical: no mutant " + ", ".join(set(args.only) - {m.id for m in chosen}), file=sys.stderr)
            return 2
        pool, args.sample = chosen, len(chosen)
    scratch = os.path.abspath(args.scratch or os.path.join(root, "build-mutants"))
    if os.path.commonpath([scratch, root]) == root and not os.path.relpath(scratch, root).startswith("build"):
        print("mechanical: --scratch inside the source tree must be a build* folder (ignored by git)", file=sys.stderr)
        return 2
    return cmd_sample(args, root, pool, equivalents)


if __name__ == "__main__":
    sys.exit(main())
