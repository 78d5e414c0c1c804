#!/usr/bin/env python3
"""The size limits of the source tree (issue 42, item 4; ARCHITECTURE.md): no source file over 800
lines and no function over 80 lines in the component folders (smi-lib, wire, cli-docs, smi-cli,
monitor-daemon, validation; tests and GPU kernels included), but those an allow-list names, each with the reason it stays. C, C++ and HIP
functions are measured by Universal Ctags (its `end` field: the closing brace's line), Python
functions by Python's own parser. An allow-list entry whose file or function is now within the limit
is an error too, so the list only shrinks.

  size_limits.py ROOT ALLOWLIST   exit 0: within the limits; 1: what is over, one line each; 2: usage
Allow-list lines: `PATH # reason` (a file) or `PATH FUNCTION # reason` (a function, by its name as
ctags or Python gives it; every function of that name in that file), `#` comments and blank lines."""
import ast
import shutil
import subprocess
import sys

FOLDERS = ("smi-lib", "wire", "cli-docs", "smi-cli", "monitor-daemon", "validation")
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
NATIVE = (".c", ".cc", ".cpp", ".h", ".hpp", ".hip", ".cu")
SOURCES = NATIVE + (".py",)


def tracked_sources(root):
    listed = subprocess.run(["git", "-C", root, "ls-files", "--", *FOLDERS], capture_output=True, text=True, check=True)
    return [path for path in listed.stdout.splitlines() if path.endswith(SOURCES)]


def native_functions(root, paths):
    """(path, line, lines, name) of every C/C++/HIP function definition, from ctags."""
    if not paths:
        return []
    # Debian's universal-ctags installs ctags-universal (`ctags` is an alternative another package may own).
    ctags = shutil.which("ctags-universal") or "ctags"
    done = subprocess.run([ctags, "--languages=C,C++", "--langmap=C++:+.hip.cu", "--kinds-C=f", "--kinds-C++=f",
                           "--fields=+ne", "-x", "--_xformat=%{input}\t%{line}\t%{end}\t%N", "-L", "-"],
                          cwd=root, input="\n".join(paths), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"size_limits: ctags failed ({done.returncode}): {done.stderr.strip()}")
    out = []
    for row in done.stdout.splitlines():
        path, line, end, name = row.split("\t", 3)
        if end.isdigit():  # a declaration has no end: only definitions are measured
            out.append((path, int(line), int(end) - int(line) + 1, name))
    return out


def python_functions(root, paths):
    out = []
    for path in paths:
        with open(f"{root}/{path}", encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((path, node.lineno, node.end_lineno - node.lineno + 1, node.name))
    return out


def read_allowlist(path):
    """{(path, function or None): line number}; a malformed line or one without a reason is an error."""
    allowed, problems = {}, []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            text, hash_mark, reason = raw.partition("#")
            words = text.split()
            if not words:
                continue
            if not hash_mark or not reason.strip() or len(words) > 2:
                problems.append(f"{path}:{number}: an entry is `PATH [FUNCTION] # reason`: {raw.rstrip()}")
                continue
            allowed[(words[0], words[1] if len(words) == 2 else None)] = number
    return allowed, problems


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, allowlist = argv[1], argv[2]
    allowed, problems = read_allowlist(allowlist)
    used = set()
    paths = tracked_sources(root)
    for path in paths:
        with open(f"{root}/{path}", "rb") as f:
            lines = f.read().count(b"\n")
        if lines > MAX_FILE_LINES:
            if (path, None) in allowed:
                used.add((path, None))
            else:
                problems.append(f"{path}: {lines} lines (at most {MAX_FILE_LINES})")
    functions = native_functions(root, [p for p in paths if p.endswith(NATIVE)])
    functions += python_functions(root, [p for p in paths if p.endswith(".py")])
    for path, line, lines, name in functions:
        if lines > MAX_FUNCTION_LINES:
            if (path, name) in allowed:
                used.add((path, name))
            else:
                problems.append(f"{path}:{line}: {name} is {lines} lines (at most {MAX_FUNCTION_LINES})")
    for entry, number in allowed.items():
        if entry not in used:
            what = entry[0] if entry[1] is None else f"{entry[0]} {entry[1]}"
            problems.append(f"{allowlist}:{number}: {what} is within the limits now (or gone): take it off the list")
    for problem in problems:
        print(problem)
    if not problems:
        print(f"size_limits: {len(paths)} files, {len(functions)} functions within the limits "
              f"({len(allowed)} allowed over them)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
