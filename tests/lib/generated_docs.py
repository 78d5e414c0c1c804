"""What the docs-table generators share (nvidia_smi_docs.py, foreign_names_docs.py): the catalogue's
JSON, a table cell, a block replaced between its markers, and the --write / --check step."""
import difflib
import json
import subprocess
import sys


def catalogue(smi: str) -> dict:
    """`hipstack-smi catalogue --json`."""
    return json.loads(subprocess.run([smi, "catalogue", "--json"], capture_output=True, text=True, check=True,
                                     timeout=60).stdout)


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def replace_between(text: str, begin: str, end: str, block: str) -> str:
    """`text` with everything from `begin` to `end` (both included) replaced by `block`."""
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[:start] + block + text[stop:]


def write_or_check(path: str, text: str, wanted: str, mode: str, what: str) -> int:
    """--write: `wanted` written to `path`; --check: exit code 1 and a diff when `text` (the file as
    it is) differs from it, naming `what` and the command that mends it."""
    if mode == "--write":
        with open(path, "w", encoding="utf-8") as f:
            f.write(wanted)
        return 0
    if wanted != text:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), wanted.splitlines(True), path, "generated"))
        print(f"{path}: {what}; run {' '.join(sys.argv[:-1])} --write")
        return 1
    return 0
