"""What the hipstack-smi test files share: the program and captures under test, and how to run it."""
import os
import shlex
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
    if expect is not None and proc.returncode != expect:
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


class TmuxScreen:
    """Runs a command on a tmux screen of its own, COLUMNS x ROWS, and returns the screen's lines
    twice: as shown (a line wider than the screen takes two) and joined (tmux's -J undoes its wraps)."""
    sessions = 0

    def __init__(self, columns=80, rows=24):
        self.columns, self.rows = columns, rows

    def run(self, argv, env_extra=None):
        TmuxScreen.sessions += 1
        server = f"hipstack-test-{os.getpid()}-{TmuxScreen.sessions}"  # a server of its own each time
        tmux = ["tmux", "-L", server, "-f", "/dev/null"]
        command = " ".join(shlex.quote(a) for a in argv)
        script = (f"{command}; echo \"exit=$?\"; tmux -L {server} wait-for -S ended; "
                  f"tmux -L {server} wait-for quit")
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "NO_COLOR", "COLUMNS", "LINES")}
        env["TERM"] = "xterm-256color"
        env.update(env_extra or {})
        subprocess.run([*tmux, "new-session", "-d", "-x", str(self.columns), "-y", str(self.rows), "sh", "-c", script],
                       check=True, env=env, timeout=30)
        try:
            subprocess.run([*tmux, "wait-for", "ended"], check=True, timeout=120)
            capture = [*tmux, "capture-pane", "-p", "-S", "-", "-E", "-"]
            shown = subprocess.run(capture, check=True, capture_output=True, text=True, timeout=30).stdout
            joined = subprocess.run(capture + ["-J"], check=True, capture_output=True, text=True, timeout=30).stdout
        finally:
            subprocess.run([*tmux, "kill-server"], timeout=30)
        return [trim(shown), trim(joined)]


def trim(screen):
    lines = [line.rstrip() for line in screen.rstrip("\n").splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines
