#!/usr/bin/env python3
"""Every repository path a comment or a document cites exists in the repository, so whoever
clones it can follow each one. Read: the comments of C/C++, CMake, shell, Python and YAML
files (never code or string literals), the whole text of Markdown files and the prose of
JSON files ("description", "summary" and "note" strings; not the fuzz inputs kept as found
in tools/fuzz/regressions/). Exits 1 naming FILE:LINE and the missing path.

What counts as a cited path, and where it must be:
- a path starting with a top-level folder of the repository (`harness/store/store.h`,
  `docs/store.md`, `ci/`): from the repository root or the citing file's folder;
- a path with a known extension starting with another folder name of the repository
  (`store/prune.h`): the tail of some path in the repository, or from the citing folder;
- a Markdown file in any folder (`notes/<topic>.md`): from the root or the citing folder;
- a bare upper-case Markdown name (`README.md`): a file of that name somewhere;
- a Markdown link's target (`[x](gsm8k.md)`): from the citing file's folder;
- an absolute path to a Markdown file: never in a clone, always refused.
Not citations: URLs, other absolute paths, build outputs (`build*/`, `out/`), placeholders
(`suites/<name>.json`, `{model}`, an upper-case folder such as `corpus/TARGET/`). `*`
matches like a shell glob (across folders too) and `{h,cc}` expands.

  ci/check_paths.py [ROOT]    (default: the repository this script is in)
"""
import fnmatch
import os
import re
import sys

import tree_check
import tokenize

# Where a file's comments are, by how it is named.
C_LIKE = (".cc", ".h", ".cpp", ".c")
HASH_COMMENTS = (".sh", ".cmake", ".yml", ".yaml")
EXTENSIONS = ("h", "cc", "cpp", "c", "py", "sh", "md", "json", "jsonl", "txt", "cmake", "yml", "yaml", "xml",
              "csv", "html", "js", "css", "toml", "ini", "diff", "patch")
PATH = re.compile(r"(?<![\w/.\-~$])/?(?:\.{1,2}/)*[\w\-*<>{},]+(?:[./][\w\-*<>{},]+)*/?")
URL = re.compile(r"\b[a-zA-Z][\w+.\-]*://\S+|\bwww\.\S+|\S+@\S+")
JSON_PROSE = re.compile(r'"(?:description|summary|note)"\s*:\s*"((?:[^"\\]|\\.)*)"')
MD_LINK = re.compile(r"\]\(([^()\s]+)\)")
BARE_DOC = re.compile(r"[A-Z][A-Z0-9_\-]*\.md")
OUTPUTS = re.compile(r"(build[\w\-]*|out)(/|$)")
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]+")  # TARGET in tools/fuzz/corpus/TARGET/, URL in [report](URL)


def repository(root):
    """(files, folders) of the tree, as paths relative to root; build outputs and .git left out."""
    files, folders = set(), set()
    for dirpath, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirs[:] = sorted(d for d in dirs if d != ".git" and not (rel_dir == "." and OUTPUTS.match(d + "/")))
        for d in dirs:
            folders.add(os.path.normpath(os.path.join(rel_dir, d)))
        for name in names:
            files.add(os.path.normpath(os.path.join(rel_dir, name)))
    return files, folders


def c_comments(text):
    """(line, comment text) of // and /* */ comments, skipping string, char and raw string literals."""
    out = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 2:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i + 2:end].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, end)
            i = end + 2
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end + len(delim) + 2
            line += text.count("\n", i, end)
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def hash_comments(text):
    """(line, comment text) of # comments in shell, CMake and YAML, outside quotes on their line."""
    out = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if lineno == 1 and line.startswith("#!"):
            continue
        quote = None
        for k, c in enumerate(line):
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (k == 0 or line[k - 1] in " \t"):
                out.append((lineno, line[k + 1:]))
                break
    return out


def python_comments(path):
    """(line, text) of # comments and docstrings (a string that is a statement of its own)."""
    out = []
    with open(path, "rb") as f:
        try:
            tokens = list(tokenize.tokenize(f.readline))
        except (tokenize.TokenError, SyntaxError):
            return out
    previous = tokenize.NEWLINE
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string[1:]))
        elif tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                                          tokenize.ENCODING):
            for k, part in enumerate(tok.string.split("\n")):
                out.append((tok.start[0] + k, part))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            previous = tok.type
    return out


def expand_braces(token):
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    return [x for alt in m.group(1).split(",") for x in expand_braces(token[:m.start()] + alt + token[m.end():])]


def citations(text, tops, folder_names):
    """(path, how) for each path text cites. how: "rooted" (from the root or the citing
    folder), "suffix" (the tail of a repository path, or from the citing folder), "name"
    (a file of that name somewhere), "absolute" (never in a clone)."""
    for m in PATH.finditer(URL.sub(" ", text)):
        token = m.group(0).rstrip(".,")
        if "<" in token or ">" in token or re.search(r"\{[^{},]*\}", token) or ("{" in token) != ("}" in token):
            continue  # a placeholder, or braces this scan cannot pair
        for path in expand_braces(re.sub(r"^(\./)+", "", token)):
            how = classify(path, tops, folder_names)
            if how:
                yield path, how


def classify(path, tops, folder_names):
    """How path must be found (see citations), or None when it is no citation."""
    parts = path.rstrip("/").split("/")
    if OUTPUTS.match(path) or any(PLACEHOLDER.fullmatch(part) for part in parts):
        return None  # a build output, or a placeholder such as tools/fuzz/corpus/TARGET/
    name = parts[-1]
    ext = name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else ""
    if path.startswith("/"):
        return "absolute" if ext == "md" else None  # a document on someone's machine, never in a clone
    if len(parts) == 1:
        return "name" if BARE_DOC.fullmatch(path) else None
    if parts[0] == "..":
        return "rooted" if ext in EXTENSIONS else None
    if parts[0] in tops:
        cited = path.endswith("/") or ext in EXTENSIONS or "*" in name or name == "CMakeLists.txt"
        return "rooted" if cited else None
    if parts[0] in folder_names and ext in EXTENSIONS:
        return "suffix"  # a path within a component, as its own files say it
    if ext == "md" and "." not in parts[0]:
        return "rooted"  # a document in a folder the repository does not have
    return None


def found(path, how, base, files, folders):
    """Whether the repository has path, cited from the folder base (relative to root)."""
    def has(p):
        p = os.path.normpath(p)
        if "*" in p:
            return any(fnmatch.fnmatchcase(f, p) for f in files)
        return p in files or p in folders
    if how == "absolute":
        return False
    if how == "name":
        return any(os.path.basename(f) == path for f in files)
    if has(os.path.join(base, path)) or (how == "rooted" and has(path)):
        return True
    if how == "suffix":
        tail = "*/" + path.rstrip("/")
        return any(fnmatch.fnmatchcase(f, tail) for f in files | folders)
    return False


def comment_lines(root, rel):
    """(line, text) of what rel says in words: a Markdown file's whole text, a source file's comments."""
    path = os.path.join(root, rel)
    name = os.path.basename(rel)
    if name.endswith(".py"):
        return python_comments(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if name.endswith(".md"):
        return list(enumerate(text.split("\n"), 1))
    if name.endswith(".json") and not rel.startswith(os.path.join("tools", "fuzz", "regressions") + os.sep):
        return [(lineno, m.group(1)) for lineno, line in enumerate(text.split("\n"), 1)
                for m in JSON_PROSE.finditer(line)]
    if name.endswith(C_LIKE):
        return c_comments(text)
    if name.endswith(HASH_COMMENTS) or name == "CMakeLists.txt" or rel == os.path.join(".ci", "run"):
        return hash_comments(text)
    return []


def check(root):
    root = os.path.abspath(root)
    files, folders = repository(root)
    tops = {f for f in folders if "/" not in f}
    folder_names = {os.path.basename(f) for f in folders}
    problems = []
    for rel in sorted(files):
        base = os.path.dirname(rel)
        markdown = rel.endswith(".md")
        for lineno, text in comment_lines(root, rel):
            cited = []
            if markdown:
                for target in MD_LINK.findall(text):
                    target = target.split("#", 1)[0]
                    if target and not URL.match(target) and not target.startswith("/") \
                            and not PLACEHOLDER.fullmatch(target):
                        cited.append((target, "linked"))
                text = MD_LINK.sub(" ", text)
            cited += citations(text, tops, folder_names)
            for path, how in cited:
                if not found(path, how, base, files, folders):
                    problems.append(f"{rel}:{lineno}: cites {path}, which is not in the repository")
    return problems


if __name__ == "__main__":
    sys.exit(tree_check.main("paths", check, lambda n: f"{n} citation(s) of paths the repository does not have"))
