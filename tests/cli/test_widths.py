#!/usr/bin/env python3
"""Every human view of hipstack-smi fits 80 columns (docs/cli.md, "Widths"), and uses a wider
screen when it has one:

- in a pipe (80 columns) on every bundled capture: no line of any view over 80;
- on tmux screens of 80x24, on the 8-GPU SPX, CPX and faults captures: no line wraps;
- on a 160-column screen the tables are whole again (no identifier cut, no command under its row);
- --help wraps at word boundaries under its column, names the program (not the path it was started
  by), and a subcommand's help lists the global options it takes.

Usage: test_widths.py HIPSTACK_SMI CAPTURES_DIR
"""
import os
import subprocess
import sys
import unittest

from smi_cli import TmuxScreen, configure, run, sys_root

SMI = CAPTURES = None
NODES = ("constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1", "constructed/mi300x-8gpu-faults")
# The views of issue 39 (item 4) and the ones around them; each with its exit code (None: a verdict,
# 0, 1 or 8, which depends on the capture).
VIEWS = [([], None), (["list"], 0), (["process"], 0), (["process", "--interval-ms", "20"], 0), (["partition"], 0),
         (["health"], None), (["health", "-v"], None), (["ras"], 0), (["ras", "-v"], 0), (["metric"], 0),
         (["static"], 0), (["topology"], 0), (["event", "-i", "2", "-w", "0.01"], 0)]
HELP = [["--help"], ["metric", "--help"], ["monitor", "--help"], ["process", "--help"], ["event", "--help"]]


def captures():
    """Every bundled capture: the folders under captures/ with a sys/ of their own."""
    found = []
    for top, folders, _ in os.walk(CAPTURES):
        if "sys" in folders:
            found.append(os.path.relpath(top, CAPTURES))
            folders.clear()
    return sorted(found)


def over(lines, columns=80):
    return [line for line in lines if len(line) > columns]


def exit_ok(code, expect):
    return code == expect if expect is not None else code in (0, 1, 8)


class InAPipe(unittest.TestCase):
    def test_every_view_of_every_capture(self):
        names = captures()
        self.assertGreaterEqual(len(names), 10, names)
        for name in names:
            # A capture of no GPU the library reads (an APU's card bound elsewhere): every view says so.
            empty = subprocess.run([SMI, "list", "--sysfs-root", sys_root(name)], capture_output=True).returncode == 3
            for args, expect in VIEWS:
                expect = 3 if empty and args[:1] != ["event"] else expect
                with self.subTest(capture=name, view=" ".join(args)):
                    proc = subprocess.run([SMI, *args, "--sysfs-root", sys_root(name)], capture_output=True,
                                          text=True, timeout=60)
                    self.assertTrue(exit_ok(proc.returncode, expect), (proc.returncode, proc.stderr))
                    self.assertEqual(over(proc.stdout.splitlines()), [])
                    self.assertEqual(over(proc.stderr.splitlines()), [])

    def test_help(self):
        for args in HELP:
            with self.subTest(help=" ".join(args)):
                lines = run(*args).stdout.splitlines()
                self.assertEqual(over(lines), [])
                usage = next(line for line in lines if line.startswith("Usage: "))
                self.assertTrue(usage.startswith("Usage: hipstack-smi "), usage)  # not the build path
                text = " ".join(line.strip() for line in lines)
                # Wrapped at spaces: the words of a long description read whole, never cut in two.
                if args == ["--help"]:
                    self.assertIn("Devices by index, BDF or UUID, or all (repeat or comma-separate)", text)
        # A subcommand's help names the global options it takes.
        monitor = run("monitor", "--help").stdout
        global_part = monitor[monitor.index("hipstack-smi's options, which monitor takes too"):]
        for option in ("-g,--gpu", "-m,--metrics", "--json", "--sysfs-root"):
            self.assertIn(option, global_part)


class OnTmux(unittest.TestCase):
    def screen(self, screen, args, expect):
        shown, joined = screen.run([SMI, *args])
        self.assertTrue(shown[-1].startswith("exit=") and exit_ok(int(shown[-1][5:]), expect), shown[-3:])
        return shown[:-1], joined[:-1]

    def test_80_by_24_never_wraps(self):
        screen = TmuxScreen(80, 24)
        for name in NODES:
            for args, expect in VIEWS:
                with self.subTest(capture=name, view=" ".join(args)):
                    shown, joined = self.screen(screen, [*args, "--sysfs-root", sys_root(name)], expect)
                    self.assertEqual(shown, joined, "a line wrapped at 80 columns")
                    self.assertEqual(over(joined), [])
        for args in HELP:
            with self.subTest(help=" ".join(args)):
                shown, joined = self.screen(screen, args, 0)
                self.assertEqual(shown, joined, "a help line wrapped at 80 columns")

    def test_a_wider_screen_gets_whole_tables(self):
        screen = TmuxScreen(160, 24)
        spx = sys_root(NODES[0])
        listed, _ = self.screen(screen, ["list", "--sysfs-root", spx], 0)
        self.assertIn("GPU-100274a1-0000-0000-e3aa-140f9a5f9e31", "\n".join(listed))  # the UUID whole
        processes, _ = self.screen(screen, ["process", "--sysfs-root", spx], 0)
        self.assertTrue(processes[0].endswith("COMMAND"), processes[0])  # the command in its column
        narrow, _ = self.screen(TmuxScreen(80, 24), ["list", "--sysfs-root", spx], 0)
        self.assertNotIn("GPU-100274a1-0000-0000-e3aa-140f9a5f9e31", "\n".join(narrow))
        self.assertIn("…", "\n".join(narrow))


def main():
    global SMI, CAPTURES
    SMI, CAPTURES = configure(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]))
    program = unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
