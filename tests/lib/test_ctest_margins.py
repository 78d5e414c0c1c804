#!/usr/bin/env python3
"""tests/lib/ctest_margins.py can fail and reports what it claims: `check` fails on a registered test
without a TIMEOUT and passes when every test has one; `report` lists the steps with their times and
the tests by share of their timeout, marking a test over 40 % and a test without a timeout.

A small CMake project (configured here, in a temporary folder) gives ctest real registrations and
timeouts; a real ctest run gives the JUnit report.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MARGINS = os.path.join(HERE, "ctest_margins.py")

PROJECT = textwrap.dedent("""\
    cmake_minimum_required(VERSION 3.25)
    project(margins_selftest NONE)
    enable_testing()
    add_test(NAME t.quick COMMAND true)
    set_tests_properties(t.quick PROPERTIES TIMEOUT 100)
    add_test(NAME t.close COMMAND sh -c "exec sleep 1.5")
    set_tests_properties(t.close PROPERTIES TIMEOUT 3)
    if(WITHOUT_TIMEOUT)
      add_test(NAME t.forever COMMAND true)
    endif()
    """)


def run(*args):
    return subprocess.run([sys.executable, MARGINS, *args], capture_output=True, text=True, timeout=60)


class MarginsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ctest-margins-")
        cls.src = os.path.join(cls.tmp, "src")
        os.makedirs(cls.src)
        with open(os.path.join(cls.src, "CMakeLists.txt"), "w") as f:
            f.write(PROJECT)
        cls.timed = os.path.join(cls.tmp, "timed")
        cls.untimed = os.path.join(cls.tmp, "untimed")
        for build, flag in ((cls.timed, "OFF"), (cls.untimed, "ON")):
            subprocess.run(["cmake", "-S", cls.src, "-B", build, f"-DWITHOUT_TIMEOUT={flag}"], check=True,
                           capture_output=True, timeout=120)
        cls.junit = os.path.join(cls.tmp, "run.xml")
        subprocess.run(["ctest", "--test-dir", cls.timed, "--output-junit", cls.junit], check=True,
                       capture_output=True, timeout=120)
        cls.steps = os.path.join(cls.tmp, "steps.tsv")
        with open(cls.steps, "w") as f:
            f.write("deps\t12\tpassed\n1-main-build\t300\tfailed (exit 1)\n")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.tmp], check=False)

    def test_check_passes_when_every_test_has_a_timeout(self):
        r = run("check", "--build-dir", self.timed)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_check_fails_naming_a_test_without_a_timeout(self):
        r = run("check", "--build-dir", self.timed, "--build-dir", self.untimed)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("t.forever has no TIMEOUT", r.stderr)
        self.assertNotIn("t.quick", r.stderr)

    def test_report_lists_steps_and_tests_by_share(self):
        r = run("report", "--steps", self.steps, "--run", f"1-main:{self.timed}:{self.junit}")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("1-main-build", r.stdout)
        self.assertIn("failed (exit 1)", r.stdout)
        self.assertRegex(r.stdout, r"total\s+312")
        tests = [line for line in lines if line.startswith("1-main ")]
        self.assertEqual([line.split()[1] for line in tests], ["t.close", "t.quick"])  # largest share first
        self.assertRegex(tests[0], r"t\.close\s+1\.\d\s+3\s+\d+%\s+<- over 40 %")
        self.assertNotIn("<-", tests[1])

    def test_report_marks_a_test_without_a_timeout(self):
        junit = os.path.join(self.tmp, "untimed.xml")
        subprocess.run(["ctest", "--test-dir", self.untimed, "--output-junit", junit], check=True,
                       capture_output=True, timeout=120)
        r = run("report", "--steps", self.steps, "--run", f"1-main:{self.untimed}:{junit}")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = next(line for line in r.stdout.splitlines() if line.startswith("1-main "))
        self.assertIn("t.forever", first)  # no timeout: listed first
        self.assertIn("<- no timeout", first)

    def test_unreadable_input_is_said_and_bad_arguments_refused(self):
        r = run("report", "--steps", os.path.join(self.tmp, "missing.tsv"),
                "--run", f"1-main:{self.timed}:{os.path.join(self.tmp, 'missing.xml')}")
        self.assertEqual(r.returncode, 0)
        self.assertIn("cannot read the step times", r.stdout)
        self.assertIn("cannot read ctest's JUnit report", r.stdout)
        r = run("report", "--steps", self.steps, "--run", "no-colons")
        self.assertEqual(r.returncode, 2)
        self.assertIn("STEP:BUILD_DIR:JUNIT", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
