#!/usr/bin/env python3
"""lint.folder-rules: which folder's code may include which (docs/architecture.md, "Folders").

Every #include of the component folders' sources is resolved the way the compiler finds it (the
including file's own folder first, then the folders' include roots; <hipstack/...> is smi-lib's public
API, hipstack/monitor/v1/*.pb.h the code generated from wire/proto) and checked against RULES. Within a
folder, the rooms (a header and its source: sampler.hpp and sampler.cpp are the room "sampler") must not
include each other in a cycle. Every source file of the folders, tests included, opens with a comment
saying what it holds. Exit 1 naming every include that breaks a rule, every cycle and every file
without its comment.

The daemon's rooms stand on the floors docs/architecture.md ("The daemon's floors") lists: every
room of monitor-daemon/src is on one, and none includes a room of a floor above its own.

Usage: folder_rules.py REPOSITORY_ROOT [--graph]   (--graph prints each room's uses)
"""
import os
import re
import subprocess
import sys

# Each folder and the folders its code may include. Read upwards: smi-lib is the ground, wire/ and
# cli-docs/ stand on it (cli-docs on nothing), the programs stand beside each other on top.
RULES = {
    "smi-lib": set(),
    "wire": {"smi-lib"},
    "cli-docs": set(),
    "smi-cli": {"smi-lib", "wire", "cli-docs"},
    "monitor-daemon": {"smi-lib", "wire", "cli-docs"},
    "validation": {"smi-lib", "cli-docs"},
}
# Where the compiler looks for a quoted include after the including file's own folder (the targets'
# include directories, CMakeLists.txt).
INCLUDE_ROOTS = {
    "smi-lib": ["smi-lib/src", "smi-lib/include"],
    "wire": ["wire/convert"],
    "cli-docs": ["cli-docs/src"],
    "smi-cli": ["smi-cli/src"],
    "monitor-daemon": ["monitor-daemon/src"],
    "validation": ["validation/hip/include", "validation/kernels", "validation/validate/src"],
}
SOURCE = re.compile(r"\.(c|cc|cpp|cxx|h|hh|hpp|cu|hip)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
EXEMPT_PARTS = ("/tests/", "/fuzz/")  # tests may reach into what they test


def folder_of(path):
    top = path.split("/", 1)[0]
    return top if top in RULES else None


def sources(root, with_tests=False):
    listed = subprocess.run(["git", "-C", root, "ls-files", "--", *RULES], capture_output=True, text=True, check=True)
    return [p for p in listed.stdout.split("\n")
            if SOURCE.search(p) and (with_tests or not any(x in "/" + p for x in EXEMPT_PARTS))]


def opens_with_comment(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                return line.lstrip().startswith(("//", "/*"))
    return False


def resolve(root, includer, kind, name, tracked):
    """The tracked file an include names, or None for a system or generated header outside the tree."""
    if kind == "<":
        if name.startswith("hipstack/monitor/v1/"):
            return "wire/proto/" + name.replace(".grpc.pb.h", ".proto").replace(".pb.h", ".proto")
        candidate = "smi-lib/include/" + name
        return candidate if candidate in tracked else None
    if name.startswith("hipstack/monitor/v1/"):
        return "wire/proto/" + name.replace(".grpc.pb.h", ".proto").replace(".pb.h", ".proto")
    own = os.path.normpath(os.path.join(os.path.dirname(includer), name))
    if own in tracked:
        return own
    hits = []
    for roots in INCLUDE_ROOTS.values():
        for r in roots:
            candidate = os.path.normpath(os.path.join(r, name))
            if candidate in tracked:
                hits.append(candidate)
    mine = [h for h in hits if folder_of(h) == folder_of(includer)]
    return (mine or hits or [None])[0]


def room(path):
    return os.path.splitext(path)[0]


def cycles(edges):
    """Every strongly connected group of more than one room (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def daemon_floors(root):
    """room -> floor number, from the table under "## The daemon's floors" in docs/architecture.md."""
    text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    if "## The daemon's floors" not in text:
        return {}  # every room is then reported as on no floor
    section = text.split("## The daemon's floors", 1)[1].split("\n## ", 1)[0]
    floors = {}
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| floor")]
    for number, line in enumerate(rows):
        rooms_cell = line.split("|")[2]
        for name in re.findall(r"`([a-z_]+)(?:\.hpp|\.cpp)?`", rooms_cell):
            floors[name] = number
    return floors


def check_daemon_floors(root, broken):
    floors = daemon_floors(root)
    folder = "monitor-daemon/src"
    for name in sorted(os.listdir(os.path.join(root, folder))):
        room_name, ext = os.path.splitext(name)
        if ext not in (".cpp", ".hpp"):
            continue
        if room_name not in floors:
            broken.append(f"{folder}/{name}: its room is on no floor of docs/architecture.md's daemon table")
            continue
        with open(os.path.join(root, folder, name), encoding="utf-8", errors="replace") as f:
            for included in re.findall(r'^#include "([a-z_]+)\.hpp"', f.read(), re.M):
                if floors.get(included, -1) > floors[room_name]:
                    broken.append(f"{folder}/{name}: includes {included}.hpp, a floor above its own "
                                  "(docs/architecture.md, \"The daemon's floors\")")


def main(argv):
    root = argv[1]
    files = sources(root)
    tracked = set(subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                                 check=True).stdout.split("\n"))
    tracked |= {p for p in tracked if p.endswith(".proto")}
    broken, rooms, uses = [], {}, {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in INCLUDE.finditer(text):
            kind, name = match.groups()
            target = resolve(root, path, kind, name, tracked)
            if target is None:
                continue
            line = text.count("\n", 0, match.start()) + 1
            source_folder, target_folder = folder_of(path), folder_of(target)
            if target_folder is None:
                broken.append(f"{path}:{line}: includes {name} ({target}), outside the component folders")
                continue
            if target_folder != source_folder:
                uses.setdefault(source_folder, set()).add(target_folder)
                if target_folder not in RULES[source_folder]:
                    broken.append(f"{path}:{line}: {source_folder} includes {name} from {target_folder}; "
                                  f"{source_folder} may use {sorted(RULES[source_folder]) or 'nothing else'}")
            elif room(target) != room(path):
                rooms.setdefault(room(path), set()).add(room(target))
    # The rules themselves must read upwards: no cycle between folders.
    folder_cycles = cycles({f: set(u) for f, u in RULES.items()})
    for group in folder_cycles:
        broken.append(f"RULES: the folders {', '.join(group)} may include each other")
    for group in cycles(rooms):
        broken.append("rooms that include each other: " + ", ".join(group))
    check_daemon_floors(root, broken)
    for path in sources(root, with_tests=True):
        if not opens_with_comment(os.path.join(root, path)):
            broken.append(f"{path}:1: no comment saying what the file holds")
    if "--graph" in argv:
        for folder in RULES:
            print(f"{folder}: uses {sorted(uses.get(folder, ()))}")
    for problem in broken:
        print(problem)
    print(f"{len(files)} files in {len(RULES)} folders; {len(broken)} broken rules")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
