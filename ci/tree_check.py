"""What the repository's tree checks (check_layering.py, check_paths.py,
check_function_length.py) and their tests share: the command line (an optional ROOT,
default the repository), the report (one problem a line, a summary on stderr, exit 1), and
the fixture trees the tests write."""
import os
import subprocess
import sys


def main(name, check, summary):
    """Runs check(root) and reports its problems; summary(n) words the failure."""
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(root):
        print(f"{name}: {root} is not a folder", file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(p)
    sys.stdout.flush()
    if problems:
        print(f"{name}: {summary(len(problems))}", file=sys.stderr)
        return 1
    print(f"{name}: ok")
    return 0


def write(root, rel, text):
    """A file of a fixture tree, its folders made as needed."""
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(script, root):
    """The check script on a tree, as CI runs it."""
    return subprocess.run([sys.executable, script, root], capture_output=True, text=True)
