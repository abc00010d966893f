#!/usr/bin/env python3
"""No function of the C/C++ sources (.cc and .h under harness/, reports/, runners/, suites/
and tools/) is longer than LIMIT lines, counted from the first line of its signature to its
closing brace, unless ci/function_length_allowlist.json keeps it on purpose. Exits 1 with
`FILE:LINE: FUNCTION is N lines (limit 60)` for each function over the limit.

What is a function: a body at namespace or class scope after a signature (a free or member
function, a constructor with its initializer list, a lambda assigned at namespace scope, a
GoogleTest TEST/TEST_F/TEST_P body). Lambdas, local classes and blocks inside a function are
part of it. Namespace, class, struct, union and enum bodies, and initializers of data (a
table `= {...}`, a member's `{0}`, a macro's argument) are not functions. Comments, string,
character and raw string literals and preprocessor lines are ignored when matching braces.

How a function is named: `Class::Method` (enclosing classes, not namespaces, are part of the
name, whether the body is inside the class or not), `operator==`, and a body introduced by an
upper-case macro by the whole call, `TEST(Suite, Name)`.

The allowlist names each kept function by file and name, with the reason it is kept; an
entry whose function is gone or no longer over the limit is an error too, and so is one
docs/architecture.md does not name (that document lists them and why).

  ci/check_function_length.py [ROOT]    (default: the repository this script is in)
"""
import json
import os
import re
import sys

import tree_check

LIMIT = 60
FOLDERS = ("harness", "reports", "runners", "suites", "tools")
ALLOWLIST = os.path.join("ci", "function_length_allowlist.json")
DOC = os.path.join("docs", "architecture.md")

IDENT_START = re.compile(r"[A-Za-z_]")
RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')
LITERAL_PREFIX = re.compile(r"(?:u8|u|U|L)(?=[\"'])")
WORD = re.compile(r"[A-Za-z_0-9]+")
NUMBER = re.compile(r"[0-9](?:[eEpP][+-]|['.A-Za-z_0-9])*")  # a pp-number, digit separators included
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
TEMPLATE = re.compile(r"^\s*template\s*<")
CLASS_HEAD = re.compile(r"^(?:typedef\s+)?(?:class|struct|union|enum)\b")
CLASS_NAME = re.compile(r"^(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(?:alignas\s*\([^)]*\)\s*)?(\w+)")
SCOPE_HEAD = re.compile(r'^(?:inline\s+)?namespace\b|^extern\s*"\s*"$')
LAMBDA_SPECIFIERS = re.compile(r"\s*(?:(?:mutable|constexpr|noexcept)\s*|->\s*[\w:<>*&\s]+)*")
QUALIFIED_NAME = re.compile(r"((?:~?\w+\s*(?:<[^<>]*>)?\s*::\s*)*~?\w+)\s*$")
OPERATOR = re.compile(r"((?:\w+\s*::\s*)*operator\b\s*(?:\(\s*\)|[^\s(]+))\s*\(")
MACRO = re.compile(r"[A-Z][A-Z0-9_]+")
# What may stand between a constructor's parameter list and its initializer list.
CONSTRUCTOR_QUALIFIERS = re.compile(r"\s*(?:noexcept(?:\s*\([^()]*\))?\s*)?")


def code_only(text):
    """text with comments, the insides of string, character and raw string literals, and
    preprocessor lines blanked (spaces; newlines kept, so offsets and lines stay)."""
    out = list(text)
    n = len(text)

    def blank(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    i, line_start = 0, True
    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if line_start and c == "#":
            end = i
            while True:
                end = text.find("\n", end)
                if end < 0:
                    end = n
                    break
                if text[i:end].rstrip("\r").endswith("\\"):  # continued on the next line
                    end += 1
                    continue
                break
            blank(i, end)
            i = end
            continue
        line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif IDENT_START.match(c):
            raw = RAW_STRING.match(text, i)
            prefix = LITERAL_PREFIX.match(text, i)
            if raw:
                close = ")" + raw.group(1) + '"'
                end = text.find(close, raw.end())
                end = n if end < 0 else end + len(close)
                blank(raw.end() - 1, end - 1)
                i = end
            elif prefix:
                i = prefix.end()
            else:
                i = WORD.match(text, i).end()
        elif c.isdigit():
            i = NUMBER.match(text, i).end()
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def top_level_paren(head):
    """The offset of the first "(" of head outside parentheses and template brackets, or -1."""
    angle = 0
    for k, c in enumerate(head):
        if c == "<":
            angle += 1
        elif c == ">" and angle > 0 and head[k - 1] != "-":
            angle -= 1
        elif c == "(" and angle == 0:
            return k
    return -1


def matching_paren(text, open_at):
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def without_template_prefix(head):
    """head without a leading `template <...>` (nested brackets included)."""
    m = TEMPLATE.match(head)
    if not m:
        return head
    depth = 0
    for k in range(m.end() - 1, len(head)):
        if head[k] == "<":
            depth += 1
        elif head[k] == ">":
            depth -= 1
            if depth == 0:
                return without_template_prefix(head[k + 1:])
    return head


def lambda_introducer(code, brace):
    """Whether the "{" at offset brace opens a lambda's body: `] {` or `](params) {`, with
    any of mutable, constexpr, noexcept and a trailing return type between."""
    k = brace - 1
    while k >= 0 and code[k] not in ")]};{(=,":
        k -= 1
    if k < 0 or not LAMBDA_SPECIFIERS.fullmatch(code[k + 1:brace]):
        return False
    if code[k] == ")":
        depth = 0
        while k >= 0:
            depth += {")": 1, "(": -1}.get(code[k], 0)
            if depth == 0:
                break
            k -= 1
        k -= 1
        while k >= 0 and code[k].isspace():
            k -= 1
    if k < 0 or code[k] != "]":
        return False
    opening = code.rfind("[", 0, k)
    return not re.search(r"\boperator\s*$", code[:opening])  # operator[](...) is no lambda


def declarator(head):
    """(name, offset after the parameter list) of the function head declares, or None."""
    op = OPERATOR.search(head)
    if op:
        close = matching_paren(head, op.end() - 1)
        return re.sub(r"\s+", "", op.group(1)), close + 1
    paren = top_level_paren(head)
    if paren < 0:
        return None
    close = matching_paren(head, paren)
    m = QUALIFIED_NAME.search(head[:paren])
    if close < 0 or not m:
        return None
    name = re.sub(r"\s+", "", m.group(1))
    if MACRO.fullmatch(name):
        args = [" ".join(a.split()) for a in head[paren + 1:close].split(",")]
        name = f"{name}({', '.join(args)})"
    return name, close + 1


def classify(head, code, brace):
    """What the "{" at offset brace opens at namespace or class scope, after head:
    ("function", name), ("class", name or None), ("scope", None), ("data", None) or
    ("member-init", None) (a brace of a constructor's initializer list)."""
    h = " ".join(without_template_prefix(ACCESS.sub("", head)).split())
    if lambda_introducer(code, brace):
        m = re.search(r"(\w+)\s*=\s*\[", h)
        return "function", (m.group(1) if m else "lambda")
    if h.count("(") != h.count(")") or h.endswith("="):
        return "data", None  # inside a macro's or an initializer's arguments, or a table
    if SCOPE_HEAD.match(h):
        return "scope", None
    if CLASS_HEAD.match(h):
        m = CLASS_NAME.match(h)
        return "class", (m.group(1) if m else None)
    found = declarator(h)
    if not found:
        return "data", None  # `Type name{...}`, a member's default `x_{0}`
    name, after = found
    rest = h[after:]
    rest = rest[CONSTRUCTOR_QUALIFIERS.match(rest).end():]
    if rest.startswith(":") and not rest.startswith("::") and re.search(r"[\w>]$", h):
        return "member-init", None  # `Foo() : a_{1}`: the body comes after
    return "function", name


class Body:
    def __init__(self, kind, name, start):
        self.kind, self.name, self.start = kind, name, start


def functions(text):
    """(name, first line, line count) of each function of a C/C++ source text."""
    code = code_only(text)
    line_of = []
    line = 1
    for c in code:
        line_of.append(line)
        if c == "\n":
            line += 1
    stack = []  # open bodies, outermost first
    head_start = 0
    found = []
    for i, c in enumerate(code):
        if c not in "{};":
            continue
        inside = stack[-1].kind if stack else "scope"
        if c == ";":
            if inside in ("scope", "class"):
                head_start = i + 1
        elif c == "{":
            if inside in ("function", "block"):
                stack.append(Body("block", None, i))
            elif inside in ("data", "member-init"):
                if lambda_introducer(code, i):
                    stack.append(Body("function", "lambda", i))  # a lambda in a table
                else:
                    stack.append(Body(inside, None, i))
            else:
                head = code[head_start:i]
                kind, name = classify(head, code, i)
                if kind == "function":
                    classes = [b.name for b in stack if b.kind == "class" and b.name]
                    name = "::".join(classes + [name])
                    lead = len(head) - len(ACCESS.sub("", head).lstrip())
                    stack.append(Body(kind, name, head_start + lead))
                else:
                    stack.append(Body(kind, name, i))
                if kind != "member-init":
                    head_start = i + 1
        elif stack:
            body = stack.pop()
            if body.kind == "function" and not any(b.kind in ("function", "block") for b in stack):
                first = line_of[body.start]
                found.append((body.name, first, line_of[i] - first + 1))
            if body.kind != "member-init" and (not stack or stack[-1].kind in ("scope", "class")):
                head_start = i + 1
    return found


def sources(root):
    """The C/C++ sources the limit applies to, relative to root, sorted."""
    out = []
    for folder in FOLDERS:
        for dirpath, dirs, names in os.walk(os.path.join(root, folder)):
            dirs.sort()
            out += [os.path.relpath(os.path.join(dirpath, n), root) for n in sorted(names) if n.endswith((".cc", ".h"))]
    return out


def load_allowlist(root):
    """({(file, function): reason}, problems) of the allowlist of root (none: empty)."""
    path = os.path.join(root, ALLOWLIST)
    if not os.path.exists(path):
        return {}, []
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        return {}, [f"{ALLOWLIST}:{e.lineno}:{e.colno}: {e.msg}"]
    entries = data.get("kept") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return {}, [f'{ALLOWLIST}: wants an object with a "kept" list']
    kept, problems = {}, []
    for k, e in enumerate(entries, 1):
        fields = e if isinstance(e, dict) else {}
        if sorted(fields) != ["file", "function", "reason"] or not all(isinstance(v, str) and v.strip()
                                                                       for v in fields.values()):
            problems.append(f'{ALLOWLIST}: entry {k} wants exactly "file", "function" and "reason", each a '
                            f"non-empty string")
            continue
        key = (fields["file"], fields["function"])
        if key in kept:
            problems.append(f"{ALLOWLIST}: entry {k} repeats {key[0]} {key[1]}")
        kept[key] = fields["reason"]
    return kept, problems


def check(root):
    kept, problems = load_allowlist(root)
    over = set()
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, line, length in functions(text):
            if length <= LIMIT:
                continue
            over.add((rel, name))
            if (rel, name) not in kept:
                problems.append(f"{rel}:{line}: {name} is {length} lines (limit {LIMIT})")
    doc_path = os.path.join(root, DOC)
    doc = open(doc_path, encoding="utf-8").read() if os.path.exists(doc_path) else ""
    for rel, name in sorted(kept):
        if (rel, name) not in over:
            problems.append(f"{ALLOWLIST}: {rel} {name} is kept but is gone or not over {LIMIT} lines; "
                            f"remove its entry")
        elif name not in doc:
            problems.append(f"{ALLOWLIST}: {rel} {name} is kept but {DOC} does not name it")
    return problems


if __name__ == "__main__":
    sys.exit(tree_check.main("function length", check,
                             lambda n: f"{n} problem(s); split the function into named steps, or keep it in "
                                       f"{ALLOWLIST} with its reason and list it in {DOC}"))
