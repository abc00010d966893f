#!/usr/bin/env python3
"""Every example in README.md and docs/*.md calls the CLI as it is (issue 34, item 6).

Reads each ```sh (or bash, shell) block of README.md and docs/*.md and checks each
`build/bin/harness ...` invocation in it against the real binary: its subcommand (and a
nested one, such as `golden accept` or `bisect log`) exists, and every `--flag` it uses is an
option of that subcommand, read from `HARNESS SUBCOMMAND --help`. Lines ending in `\\` are
joined, as the shell joins them, and so are the indented `[--flag ...]` / `--flag` lines of a
usage synopsis. A command after `--` (bisect's per-commit command) that is itself a harness
invocation is checked as one; any other command after `--` is not the harness's. The
invocation may be spelled `build/bin/harness` or with a prefix (`"$PWD"/build/bin/harness`,
what a bisect command run in another folder needs).

This checks names, not behaviour: cheap and honest (a renamed or dropped flag breaks the
docs here, not in a newcomer's terminal). What each example does is tested elsewhere.

Usage: check_examples.py HARNESS_BINARY [ROOT]   (ROOT default: the repository)
Prints one problem a line as FILE:LINE: ...; exit 1 when there is one, 2 for bad usage.
"""
import glob
import os
import re
import shlex
import subprocess
import sys

INVOCATION = "build/bin/harness"
SHELL_INFO = {"sh", "bash", "shell"}
OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>"}
# A word that is a flag (a synopsis may open a bracket before it); a quoted value is one word.
FLAG = re.compile(r"^[\[(]*(--[a-z][a-z0-9-]*)")
OPTION_LINE = re.compile(r"^\s+(?:-\w,)?(--[a-z][a-z0-9-]*)")


def documents(root):
    """README.md and docs/*.md, as paths relative to root, in a stable order."""
    docs = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    return (["README.md"] if os.path.isfile(os.path.join(root, "README.md")) else []) + docs


def shell_blocks(text):
    """(first line number, [lines]) of each fenced shell block."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if current is not None:
                blocks.append((start, current))
                current = None
            elif stripped[3:].strip().split(" ")[0] in SHELL_INFO:
                current, start = [], number + 1
            continue
        if current is not None:
            current.append(line)
    return blocks


def is_synopsis_continuation(line):
    return re.match(r"^\s+[\[(]?--", line) is not None or re.match(r"^\s+\[", line) is not None


def logical_lines(start, lines):
    """(line number, joined text): `\\` continuations and indented synopsis lines joined."""
    out = []
    for offset, line in enumerate(lines):
        number = start + offset
        continues = bool(out) and (out[-1][2] or (INVOCATION in out[-1][1] and is_synopsis_continuation(line)))
        text = line.rstrip()
        backslash = text.endswith("\\")
        if backslash:
            text = text[:-1]
        if continues:
            out[-1] = (out[-1][0], out[-1][1] + " " + text.strip(), backslash)
        else:
            out.append((number, text, backslash))
    return [(n, t) for n, t, _ in out]


def invocations(text):
    """The argument lists of each harness invocation of one logical line."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    found = []
    for i, token in enumerate(tokens):
        if token.endswith(INVOCATION) and (i == 0 or tokens[i - 1] in OPERATORS or tokens[i - 1] == "--"):
            args, depth = [], 0
            for t in tokens[i + 1:]:
                # A `|` inside a synopsis's [...] or (...) is an alternative, not a pipe.
                if depth <= 0 and (t == "--" or t in OPERATORS):
                    break
                depth += t.count("[") + t.count("(") - t.count("]") - t.count(")")
                args.append(t)
            found.append(args)
    return found


class Cli:
    """What the binary's --help says, asked once per command path."""

    def __init__(self, binary):
        self.binary, self.cache = binary, {}

    def help(self, path):
        if path not in self.cache:
            r = subprocess.run([self.binary, *path, "--help"], capture_output=True, text=True)
            self.cache[path] = (r.returncode, r.stdout, r.stderr)
        return self.cache[path]

    @staticmethod
    def options(help_text):
        return {m.group(1) for m in map(OPTION_LINE.match, help_text.split("\n")) if m}

    @staticmethod
    def subcommands(help_text):
        names, inside = set(), False
        for line in help_text.split("\n"):
            if line.startswith("Subcommands:"):
                inside = True
            elif inside and re.match(r"^\s+[a-z][a-z0-9-]*\s", line):
                names.add(line.split()[0])
            elif inside and line.strip() and not line.startswith(" "):
                inside = False
        return names


def check_invocation(cli, args):
    """Problems of one invocation's argument list, as sentences."""
    path = ()
    rest = list(args)
    if rest and not rest[0].startswith("-"):
        path, rest = (rest[0],), rest[1:]
    code, out, err = cli.help(path)
    if code != 0:
        return [f"'harness {' '.join(path)}' is not a command: {err.strip() or out.strip()}"]
    if rest and not rest[0].startswith("-") and rest[0] in cli.subcommands(out):
        path, rest = path + (rest[0],), rest[1:]
        code, out, err = cli.help(path)
        if code != 0:
            return [f"'harness {' '.join(path)}' is not a command: {err.strip() or out.strip()}"]
    known = cli.options(out)
    name = " ".join(("harness",) + path)
    problems = []
    for token in rest:
        m = FLAG.match(token)
        if m and m.group(1) not in known:
            problems.append(f"'{name}' has no flag {m.group(1)}")
    return problems


def check(root, binary):
    """(problems, number of invocations checked) over the tree's documents."""
    cli, problems, checked = Cli(binary), [], 0
    for rel in documents(root):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for start, lines in shell_blocks(text):
            for number, line in logical_lines(start, lines):
                try:
                    calls = invocations(line)
                except ValueError as e:  # an unbalanced quote: the example does not parse
                    if INVOCATION in line:
                        problems.append(f"{rel}:{number}: cannot be read as a shell line ({e})")
                    continue
                for args in calls:
                    checked += 1
                    problems += [f"{rel}:{number}: {p}" for p in check_invocation(cli, args)]
    return problems, checked


def main():
    if len(sys.argv) < 2 or len(sys.argv) > 3:
        print("usage: check_examples.py HARNESS_BINARY [ROOT]", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print(f"check_examples.py: {binary} is not an executable file", file=sys.stderr)
        return 2
    if not os.path.isdir(root):
        print(f"check_examples.py: {root} is not a folder", file=sys.stderr)
        return 2
    problems, checked = check(root, binary)
    for p in problems:
        print(p)
    sys.stdout.flush()
    if problems:
        print(f"check_examples.py: {len(problems)} example problem(s) in {checked} harness invocation(s)",
              file=sys.stderr)
        return 1
    if checked == 0:
        print("check_examples.py: no harness invocation found in README.md or docs/*.md", file=sys.stderr)
        return 1
    print(f"check_examples.py: ok ({checked} harness invocations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
