#!/usr/bin/env python3
"""No program or library of the build tree loads libraries from a folder it did not name.

    check_runpath.py BUILD_DIR PROGRAM...

1. Every ELF file CMake linked under BUILD_DIR (external projects' trees, `ep/`, left out: their
   build systems are theirs) has a RUNPATH/RPATH of absolute or $ORIGIN-relative entries only. An
   empty entry (CMake's room for an install-time rewrite, "$ORIGIN/../smi-lib:") or a relative one
   is a folder relative to the current one, which the dynamic loader searches before the system's.
2. Each PROGRAM (the installed ones, as built) starts from a folder holding a planted, broken
   libfmt.so.9 and libhipstack-smi.so.0: it must not load them (`--help` exits 0).
"""
import os
import stat
import subprocess
import sys
import tempfile

ELF_MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3


def linked_elf(path):
    """True for an executable or shared object (not an object file)."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return len(head) == 18 and head[:4] == ELF_MAGIC and int.from_bytes(head[16:18], "little") in (ET_EXEC, ET_DYN)


def search_paths(path):
    """The RUNPATH and RPATH entries of an ELF file, as readelf shows them."""
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    entries = []
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            value = line[line.index("[") + 1:line.rindex("]")]
            entries.append((line.split("(")[1].split(")")[0], value.split(":")))
    return entries


def bad_entries(entries):
    return [(kind, e) for kind, values in entries for e in values if not (e.startswith("/") or e.startswith("$ORIGIN"))]


def main():
    build, programs = sys.argv[1], [os.path.abspath(p) for p in sys.argv[2:]]
    problems, checked = [], 0
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if d not in ("ep", "CMakeFiles")]
        for name in files:
            path = os.path.join(root, name)
            if not stat.S_ISREG(os.lstat(path).st_mode) or not linked_elf(path):
                continue
            checked += 1
            for kind, entry in bad_entries(search_paths(path)):
                problems.append(f"{os.path.relpath(path, build)}: {kind} entry {entry!r} is relative to the current folder")
    for program in programs:
        if not os.path.isfile(program):
            problems.append(f"{program}: not built")
    print(f"{checked} linked ELF files under {build}")
    with tempfile.TemporaryDirectory(prefix="hipstack-runpath-") as planted:
        for library in ("libfmt.so.9", "libhipstack-smi.so.0"):
            with open(os.path.join(planted, library), "w") as f:
                f.write("planted: not a library\n")
        for program in programs:
            run = subprocess.run([program, "--help"], cwd=planted, capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                problems.append(f"{program} --help from a folder with planted libraries: exit {run.returncode}: "
                                f"{run.stderr.strip()[:300]}")
            else:
                print(f"{os.path.basename(program)}: ignores the planted libraries")
    for p in problems:
        print("FAIL:", p)
    if checked < len(programs):
        print(f"FAIL: found {checked} linked ELF files, fewer than the {len(programs)} programs named")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
