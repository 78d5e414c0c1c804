"""What the hipstack-smi test files share: the program and captures under test, and how to run it."""
import os
import subprocess

SMI = None
CAPTURES = None


def configure(smi, captures):
    """The program and the captures folder the tests use; returns them for the caller's globals."""
    global SMI, CAPTURES
    SMI, CAPTURES = smi, captures
    return SMI, CAPTURES


def run(*args, expect=0):
    proc = subprocess.run([SMI, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != expect:
        raise AssertionError(f"{args}: exit {proc.returncode}, expected {expect}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


def sys_root(name):
    return f"{CAPTURES}/{name}/sys"


def assert_fake_nvml(test):
    """The fake NVML is built with the tests (smi-lib/tests/fake_nvml); ctest names it. No skip."""
    path = os.environ.get("FAKE_NVML_FULL")
    test.assertTrue(path and os.path.exists(path), f"fake NVML not found (FAKE_NVML_FULL={path!r}, set by ctest)")


def fake_nvml_env(test, script):
    """The environment that makes hipstack-smi load the fake NVML playing `script` (a file of
    FAKE_NVML_SCRIPTS_DIR, e.g. "h100x2-mig.txt"); fails the test when ctest did not name it."""
    assert_fake_nvml(test)
    return dict(os.environ, HIPSTACK_NVML_LIBRARY=os.environ["FAKE_NVML_FULL"],
                HIPSTACK_FAKE_NVML_SCRIPT=os.path.join(os.environ["FAKE_NVML_SCRIPTS_DIR"], script))
