#!/usr/bin/env python3
"""tests/lib/ctest_required.py can fail: a skipped, disabled, unreported or unregistered required test
fails the check, a stale list fails it, and only an all-passed report of the selection passes.

A small CMake project (configured here, in a temporary folder) gives ctest real registrations and
labels; JUnit reports are crafted per case, and one comes from a real ctest run with an exit 77.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "ctest_required.py")

PROJECT = textwrap.dedent("""\
    cmake_minimum_required(VERSION 3.25)
    project(required_selftest NONE)
    enable_testing()
    add_test(NAME t.pass COMMAND sh -c "echo fine")
    add_test(NAME t.skip COMMAND sh -c "echo 'SKIP: needs root'; exit 77")
    set_tests_properties(t.skip PROPERTIES SKIP_RETURN_CODE 77 LABELS "daemon;x")
    add_test(NAME t.chroot COMMAND true)
    set_tests_properties(t.chroot PROPERTIES LABELS install-chroot)
    add_test(NAME t.gpu COMMAND sh -c "exit 77")
    set_tests_properties(t.gpu PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu)
    """)

REQUIRED = textwrap.dedent("""\
    # comment
    t.pass    -
    t.skip    daemon;x
    t.chroot  install-chroot
    """)


def case(name, status="run", skipped=None, out="ok"):
    inner = f'<skipped message="{skipped}"/>' if skipped else ""
    return f'<testcase name="{name}" classname="{name}" time="0.1" status="{status}">{inner}<system-out>{out}</system-out></testcase>'


def junit(*cases):
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x">' + "".join(cases) + "</testsuite>\n"


class CheckerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.src = os.path.join(cls.tmp.name, "src")
        cls.build = os.path.join(cls.tmp.name, "build")
        os.makedirs(cls.src)
        with open(os.path.join(cls.src, "CMakeLists.txt"), "w") as f:
            f.write(PROJECT)
        subprocess.run(["cmake", "-S", cls.src, "-B", cls.build], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_checker(self, report, required=REQUIRED, selection=()):
        req = os.path.join(self.tmp.name, "required.txt")
        with open(req, "w") as f:
            f.write(required)
        xml = os.path.join(self.tmp.name, "junit.xml")
        if report is not None:
            with open(xml, "w") as f:
                f.write(report)
        p = subprocess.run([sys.executable, CHECKER, "check", "--required", req, "--build-dir", self.build,
                            "--junit", xml, *selection], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    ALL_PASSED = junit(case("t.pass"), case("t.skip"), case("t.chroot"), case("t.gpu", "notrun", "SKIP_RETURN_CODE=77"))

    def test_all_passed_passes(self):
        rc, out = self.run_checker(self.ALL_PASSED)
        self.assertEqual(rc, 0, out)
        self.assertIn("all 3 required tests", out)

    def test_a_skip_fails_naming_test_reason_and_output(self):
        rc, out = self.run_checker(junit(case("t.pass"), case("t.chroot"),
                                         case("t.skip", "notrun", "SKIP_RETURN_CODE=77", "SKIP: needs root")))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.skip: required but skipped (SKIP_RETURN_CODE=77)", out)
        self.assertIn("| SKIP: needs root", out)

    def test_a_real_ctest_skip_fails(self):
        xml = os.path.join(self.tmp.name, "real.xml")
        subprocess.run(["ctest", "--test-dir", self.build, "--output-junit", xml], capture_output=True)
        with open(xml) as f:
            rc, out = self.run_checker(f.read())
        self.assertEqual(rc, 1, out)
        self.assertIn("t.skip: required but skipped", out)
        self.assertNotIn("t.gpu", out)  # label gpu: never required

    def test_cases_skipped_inside_a_passing_program_fail(self):
        gtest = "[==========] 3 tests ran.\n[  PASSED  ] 2 tests.\n[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] Info.OwnedNodes\n"
        rc, out = self.run_checker(junit(case("t.pass", out=gtest), case("t.skip"), case("t.chroot")))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.pass: required but some of its cases were skipped ([  SKIPPED ] 1 test, listed below:)", out)
        unittest_out = "test_a (x.T) ... ok\ntest_b (x.T) ... skipped 'no D-Bus'\n\nOK (skipped=1)\n"
        rc, out = self.run_checker(junit(case("t.pass"), case("t.skip", out=unittest_out), case("t.chroot")))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.skip: required but some of its cases were skipped (OK (skipped=1))", out)
        # A case whose name says "skipped" is no skip.
        rc, out = self.run_checker(junit(case("t.pass", out="test_skipped_pages_are_counted ... ok\n\nOK\n"), case("t.skip"),
                                         case("t.chroot")))
        self.assertEqual(rc, 0, out)

    def test_a_real_skip_inside_a_long_passing_output_fails(self):
        # ctest keeps only the first 1 KiB of a passed test's output unless told otherwise: with
        # the arguments scripts/test.sh takes from the checker, the closing summary is kept.
        src, build = os.path.join(self.tmp.name, "inner-src"), os.path.join(self.tmp.name, "inner-build")
        os.makedirs(src, exist_ok=True)
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write(textwrap.dedent("""\
                cmake_minimum_required(VERSION 3.25)
                project(inner_skip NONE)
                enable_testing()
                add_test(NAME t.gtest COMMAND sh -c "seq 1 20000; echo '[  SKIPPED ] Suite.Case'")
                """))
        subprocess.run(["cmake", "-S", src, "-B", build], check=True, capture_output=True)
        args = subprocess.run([sys.executable, CHECKER, "ctest-args"], check=True, capture_output=True, text=True).stdout.split()
        xml = os.path.join(self.tmp.name, "inner.xml")
        subprocess.run(["ctest", "--test-dir", build, *args, "--output-junit", xml], capture_output=True)
        required = os.path.join(self.tmp.name, "inner-required.txt")
        with open(required, "w") as f:
            f.write("t.gtest -\n")
        p = subprocess.run([sys.executable, CHECKER, "check", "--required", required, "--build-dir", build, "--junit", xml],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("t.gtest: required but some of its cases were skipped ([  SKIPPED ] Suite.Case)", p.stderr)

    def test_disabled_and_failed_fail(self):
        rc, out = self.run_checker(junit(case("t.pass", "disabled"), case("t.skip", "fail"), case("t.chroot")))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.pass: required but disabled", out)
        self.assertIn("t.skip: required but failed", out)

    def test_missing_from_the_report_fails(self):
        rc, out = self.run_checker(junit(case("t.pass"), case("t.chroot")))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.skip: required but absent from ctest's report", out)

    def test_required_but_not_registered_fails(self):
        rc, out = self.run_checker(self.ALL_PASSED, REQUIRED + "t.emulator emulator\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("t.emulator: required but not registered", out)

    def test_registered_but_not_listed_fails(self):
        rc, out = self.run_checker(self.ALL_PASSED, REQUIRED.replace("t.chroot  install-chroot\n", ""))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.chroot: registered (labels install-chroot) but not in", out)

    def test_labels_differing_from_the_list_fail(self):
        rc, out = self.run_checker(self.ALL_PASSED, REQUIRED.replace("daemon;x", "daemon"))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.skip: labels daemon;x in the build but daemon in", out)

    def test_the_selection_decides_what_is_required(self):
        # Step 1 leaves install-chroot out: its absence from the report is no failure there...
        rc, out = self.run_checker(junit(case("t.pass"), case("t.skip")), selection=("-LE", "long|install-chroot"))
        self.assertEqual(rc, 0, out)
        # ...but step 4 selects it, and nothing else.
        rc, out = self.run_checker(junit(case("t.pass")), selection=("-L", "install-chroot"))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.chroot: required but absent", out)
        self.assertNotIn("t.skip", out)
        # An unregistered test counts where its listed labels are selected, and only there.
        extra = REQUIRED + "t.fuzz fuzz\n"
        rc, out = self.run_checker(junit(case("t.pass"), case("t.skip")), extra, ("-LE", "install-chroot|fuzz"))
        self.assertEqual(rc, 0, out)
        rc, out = self.run_checker(junit(), extra, ("-L", "fuzz"))
        self.assertEqual(rc, 1, out)
        self.assertIn("t.fuzz: required but not registered", out)

    def test_unreadable_input_is_an_error(self):
        rc, out = self.run_checker("<testsuite", REQUIRED)
        self.assertEqual(rc, 2, out)
        rc, out = self.run_checker(self.ALL_PASSED, "t.pass\n")
        self.assertEqual(rc, 2, out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
