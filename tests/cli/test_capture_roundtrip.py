#!/usr/bin/env python3
"""A capture holds what a later read needs (docs/captures.md): every bundled capture is captured again
with `hipstack-smi capture` (with its proc/ and --processes where it has one), and every read-only
view of the copy must equal the original's, byte for byte as JSON: list, static, metric, partition,
topology, health, ras, bad-pages, process, and hipstack-info's agents and checks.

The library records every file it reads through its root view while it captures; the device folders
alone (what the capture copied before) lose what lies elsewhere (proc, other sysfs folders): without
the recorded reads, nine of these views differed on the three MI300X captures.

Usage: test_capture_roundtrip.py HIPSTACK_SMI HIPSTACK_INFO CAPTURES_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SMI = INFO = CAPTURES = None
VIEWS = (["list"], ["static"], ["metric"], ["partition"], ["topology"], ["health"], ["ras"], ["bad-pages"])


def captures():
    found = []
    for folder, dirs, _ in os.walk(CAPTURES):
        if "sys" in dirs:
            found.append(folder)
            dirs.clear()  # a capture's own folders hold no further captures
    return sorted(found)


def view(program, args, root, proc):
    command = [program, *args, "--json", "--sysfs-root", os.path.join(root, "sys")]
    if program == SMI:
        command.append("--direct")
    if proc:
        command += ["--procfs-root", os.path.join(root, "proc")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    # A message may name the file it is about: the root differs, the rest must not.
    return result.returncode, result.stdout.replace(os.path.abspath(root), "ROOT"), result.stderr.replace(os.path.abspath(root), "ROOT")


class Roundtrip(unittest.TestCase):
    maxDiff = None  # a difference is shown whole: exit status, output and messages (a sanitizer's report)

    def test_every_capture_reads_back_the_same(self):
        found = captures()
        self.assertGreaterEqual(len(found), 30, "the bundled captures were not found")
        for capture in found:
            with self.subTest(capture=os.path.relpath(capture, CAPTURES)):
                work = tempfile.mkdtemp(prefix="hipstack-roundtrip-")
                self.addCleanup(shutil.rmtree, work, True)
                out = os.path.join(work, "out")
                proc = os.path.isdir(os.path.join(capture, "proc"))
                args = ["capture", out, "--sysfs-root", os.path.join(capture, "sys")]
                if proc:
                    args += ["--procfs-root", os.path.join(capture, "proc"), "--processes"]
                result = subprocess.run([SMI, *args], capture_output=True, text=True, timeout=120)
                self.assertEqual(result.returncode, 0, result.stderr)
                views = [(SMI, v) for v in VIEWS] + ([(SMI, ["process"])] if proc else []) + [(INFO, [])]
                for program, args in views:
                    original = view(program, args, capture, proc)
                    copy = view(program, args, out, proc)
                    self.assertEqual(original, copy, f"{os.path.basename(program)} {' '.join(args)}")


def main():
    global SMI, INFO, CAPTURES
    SMI, INFO, CAPTURES = (os.path.abspath(a) for a in sys.argv[1:4])
    program = unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
