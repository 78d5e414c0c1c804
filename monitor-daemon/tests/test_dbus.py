#!/usr/bin/env python3
"""hipstack-smid's D-Bus interface (org.hipstack.Monitor1) on a real dbus-daemon --session.

Usage: test_dbus.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR MAKE_CPER_RECORDS [unittest arguments]

The test starts its own bus (dbus-daemon --session on a socket in a temporary folder) and its own
daemon, calls the interface with busctl, watches the HealthChanged signal with dbus-monitor, and
stops everything by PID. Answers are checked against hipstack-smi reading the same capture.
Skipped (77) without dbus-daemon, busctl or dbus-monitor.
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from smid_http import daemon_log, wait_ready

SMID = SMI = CAPTURES = MAKE_CPER_RECORDS = None
NAME, PATH, IFACE = "org.hipstack.Monitor1", "/org/hipstack/Monitor1", "org.hipstack.Monitor1"
LISTENING = re.compile(r"hipstack-smid: listening on \S+ \(port (\d+)\)")


def stop(proc):
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def read_log(log):
    log.seek(0)
    return log.read()


def start_node(node, cleanup):
    """A session dbus-daemon and hipstack-smid on it, reading a private copy of the capture (so a test
    can plant a fault while the daemon runs); returns once every GPU has its first sample. Sets
    node.dir, .sysfs, .address, .bus, .log and .smid; `cleanup` stops and removes them."""
    node.dir = tempfile.mkdtemp(prefix="smid-dbus-")
    cleanup(shutil.rmtree, node.dir, True)
    node.sysfs = os.path.join(node.dir, "sys")
    subprocess.run(["cp", "-a", os.path.join(CAPTURES, "constructed/mi300x-8gpu-spx-nps1/sys"), node.sysfs], check=True)
    node.address = "unix:path=" + os.path.join(node.dir, "bus")
    node.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=" + node.address],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cleanup(stop, node.bus)
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(node.dir, "bus")):
        if time.monotonic() > deadline:
            raise AssertionError("dbus-daemon did not create its socket")
        time.sleep(0.02)
    config = os.path.join(node.dir, "smid.conf")
    with open(config, "w") as f:
        f.write("dbus = session\nfast_interval_ms = 100\nslow_interval_ms = 200\ngrpc_listen = off\n")
    node.log = daemon_log(os.path.join(node.dir, "smid.err"))
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=node.address)
    node.smid = subprocess.Popen([SMID, "--config", config, "--sysfs-root", node.sysfs, "--http-listen", "127.0.0.1:0"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=node.log, env=env)
    cleanup(node.log.close)
    cleanup(stop, node.smid)
    stderr = lambda: read_log(node.log)  # noqa: E731
    deadline = time.monotonic() + 10
    while "D-Bus " + NAME not in stderr() or not LISTENING.search(stderr()):
        if node.smid.poll() is not None or time.monotonic() > deadline:
            raise AssertionError("no D-Bus interface or no HTTP port:\n" + stderr())
        time.sleep(0.05)
    # Ready: every GPU has its first sample (/readyz 200, docs/daemon.md); polled, with a deadline.
    port = int(LISTENING.search(stderr()).group(1))
    wait_ready(port, 20, alive=lambda: node.smid.poll() is None, log=stderr)


class DbusNode(unittest.TestCase):
    """What the tests ask a node with (no tests of its own)."""
    def stderr(self):
        return read_log(self.log)

    def busctl(self, *args, check=True):
        r = subprocess.run(["busctl", "--address=" + self.address, "--json=short"] + list(args),
                           capture_output=True, text=True, timeout=10)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
            return json.loads(r.stdout)
        return r

    def smi(self, *args):
        r = subprocess.run([SMI, "--sysfs-root", self.sysfs, "--json"] + list(args), capture_output=True, text=True, timeout=30)
        return json.loads(r.stdout)

    def start_monitor(self, member):
        """dbus-monitor watching our signal `member`, returned once its match rule is in place."""
        monitor = subprocess.Popen(["dbus-monitor", "--address", self.address,
                                    "type='signal',interface='%s',member='%s'" % (IFACE, member)],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(monitor.stdout.close)
        self.addCleanup(stop, monitor)
        # dbus-monitor is a monitor, its match rule in place, once the bus took its name away (NameLost).
        text = ""
        deadline = time.monotonic() + 10
        while "member=NameLost" not in text:
            self.assertLess(time.monotonic(), deadline, "dbus-monitor did not become a monitor: " + text)
            ready, _, _ = select.select([monitor.stdout], [], [], 0.2)
            if ready:
                text += os.read(monitor.stdout.fileno(), 65536).decode(errors="replace")
        return monitor

class DbusTest(DbusNode):
    """A node of its own for each test: the tests that change the capture under the daemon."""
    def setUp(self):
        start_node(self, self.addCleanup)

    def test_health_changed_signal(self):
        monitor = self.start_monitor("HealthChanged")
        hwmon = os.path.join(self.sysfs, "class/drm/card0/device/hwmon")
        temp = os.path.join(hwmon, os.listdir(hwmon)[0], "temp2_input")
        with open(temp + ".new", "w") as f:
            f.write("99000\n")  # 1 °C below the 100 °C critical limit: thermal fails or warns
        os.replace(temp + ".new", temp)
        deadline = time.monotonic() + 10
        text = ""  # what came before the change is not looked at
        # The signal's five arguments, the summary (naming the thermal check) last: wait for all of it.
        while time.monotonic() < deadline and not re.search(r'string "(WARN|FAIL)"\s+string "[^"]*thermal', text):
            ready, _, _ = select.select([monitor.stdout], [], [], 0.2)
            if ready:
                text += os.read(monitor.stdout.fileno(), 65536).decode(errors="replace")
        self.assertIn("member=HealthChanged", text, self.stderr())
        self.assertRegex(text, r'string "(WARN|FAIL)"')
        self.assertIn("thermal", text)
        verdict = self.busctl("call", NAME, PATH, IFACE, "GetHealth", "as", "1", "0")["data"][0][0][2]
        self.assertIn(verdict, ("WARN", "FAIL"))

    def test_event_signal(self):
        """A change comes out as an Event signal with the library's words (docs/events.md): here GPU 2's
        compute partition mode, read with the slow sample."""
        monitor = self.start_monitor("Event")
        # The daemon's first look at GPU 2 (its baseline) may come after a change planted too early,
        # which then makes no event: the mode is switched between SPX and CPX every 0.6 s until a
        # change comes out (the first look is then known to be done), and the signal must carry it.
        mode = os.path.join(self.sysfs, "class/drm/card16/device/current_compute_partition")
        expected = re.compile(r'member=Event\s+string "partition-mode-changed"\s+uint32 2\s+string "[^"]+"\s+'
                              r'string "0000:47:00.0"\s+string "compute_partition"\s+string "(SPX|CPX)"\s+'
                              r'string "(SPX|CPX)"\s+string "partition mode changed"')
        modes = ("CPX", "SPX")
        switches = 0
        text = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not expected.search(text):
            with open(mode + ".new", "w") as f:
                f.write(modes[switches % 2] + "\n")
            os.replace(mode + ".new", mode)
            switches += 1
            until = time.monotonic() + 0.6
            while time.monotonic() < until and not expected.search(text):
                ready, _, _ = select.select([monitor.stdout], [], [], 0.05)
                if ready:
                    text += os.read(monitor.stdout.fileno(), 65536).decode(errors="replace")
        found = expected.search(text)
        self.assertIsNotNone(found, "no partition-mode-changed Event signal within 30 s (%d switches):\n%s\n%s"
                             % (switches, text, self.stderr()))
        self.assertNotEqual(found.group(1), found.group(2))

    def test_cper_record_event_signal(self):
        """A new record in GPU 0's CPER ring comes out as a `cper` Event signal whose message ends with
        the action the record calls for (docs/errors.md, "Kept and aged")."""
        monitor = self.start_monitor("Event")
        bdf = self.smi("list")["devices"][0]["bdf"]
        folder = os.path.join(self.sysfs, "kernel/debug/dri", bdf)
        os.makedirs(folder)
        subprocess.run([MAKE_CPER_RECORDS, "--ring", os.path.join(folder, "amdgpu_ring_cper"), "fatal@%d" % int(time.time())],
                       check=True)
        expected = re.compile(r'member=Event\s+string "cper"\s+uint32 0\s+string "[^"]+"\s+string "%s"\s+'
                              r'string "cper_records\[fatal\]"\s+string ""\s+string "fatal"\s+string "[^"]*; action: reset_gpu"'
                              % re.escape(bdf))
        text = ""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not expected.search(text):
            ready, _, _ = select.select([monitor.stdout], [], [], 0.2)
            if ready:
                text += os.read(monitor.stdout.fileno(), 65536).decode(errors="replace")
        self.assertRegex(text, expected, self.stderr())

    def test_hostile_text_is_sent_printable(self):
        # sd-bus refuses strings that are not valid UTF-8: a text file with invalid bytes and a
        # terminal escape must still reach D-Bus clients, with the bytes written as \xNN.
        level = os.path.join(self.sysfs, "class/drm/card0/device/power_dpm_force_performance_level")
        with open(level + ".new", "wb") as f:
            f.write(b"\x1b[31mauto\xff\xfe\n")
        os.replace(level + ".new", level)
        deadline = time.monotonic() + 10
        value = None
        while time.monotonic() < deadline:
            answer = self.busctl("call", NAME, PATH, IFACE, "GetMetrics", "asas", "1", "0", "1", "performance_level")
            values = [r[4]["data"] for r in answer["data"][0] if r[3] == "ok"]
            value = values[0] if values else None
            if value and "x1b" in value:
                break
            time.sleep(0.05)
        self.assertEqual(value, "\\x1b[31mauto\\xff\\xfe", self.stderr())
        self.assertEqual(len(self.busctl("get-property", NAME, PATH, IFACE, "Devices")["data"]), 8)


class DbusReadTest(DbusNode):
    """The tests that only ask: one node for all of them (a node costs seconds under the sanitizers:
    docs/testing.md, "Margins")."""
    @classmethod
    def setUpClass(cls):
        start_node(cls, cls.addClassCleanup)

    def setUp(self):
        pass  # the class's node

    def test_devices_property(self):
        listed = self.smi("list")["devices"]
        # Every GPU comes up: polled (a loaded machine may take a while), with a deadline and the answer.
        deadline = time.monotonic() + 20
        while True:
            devices = self.busctl("get-property", NAME, PATH, IFACE, "Devices")["data"]
            if devices and all(d[6] for d in devices):
                break
            self.assertLess(time.monotonic(), deadline, "not every GPU up within 20 s: %s" % devices)
            time.sleep(0.05)
        self.assertEqual([(d[0], d[1], d[4], d[5]) for d in devices],
                         [(d["index"], d["vendor"], d["uuid"], d["bdf"]) for d in listed])

    def test_get_metrics(self):
        answer = self.busctl("call", NAME, PATH, IFACE, "GetMetrics", "asas", "2", "0", "5", "2",
                             "power_current", "temperature_junction")["data"][0]
        cli = self.smi("metric", "-g", "0,5", "-m", "power_current,temperature_junction")["devices"]
        expected = {(d["index"], name): m["value"] for d in cli for name, m in d["metrics"].items() if m["status"] == "ok"}
        got = {(r[0], r[1]): r[4]["data"] for r in answer if r[3] == "ok"}
        self.assertEqual(len(expected), 4)
        self.assertEqual(got, expected)
        self.assertEqual({r[5] for r in answer}, {"W", "C"})

    def test_get_health(self):
        answer = self.busctl("call", NAME, PATH, IFACE, "GetHealth", "as", "0")["data"][0]
        cli = self.smi("health")["devices"]
        self.assertEqual([(h[0], h[1], h[2]) for h in answer], [(d["index"], d["uuid"], d["overall"]) for d in cli])

    def test_bad_arguments(self):
        r = self.busctl("call", NAME, PATH, IFACE, "GetMetrics", "asas", "0", "1", "warp_drive", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("warp_drive", r.stderr)
        r = self.busctl("call", NAME, PATH, IFACE, "GetHealth", "as", "1", "GPU-nope", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("GPU-nope", r.stderr)
        # A selector cut inside a character at the message's length limit, and one with a terminal
        # escape: each gets its error reply at once (valid UTF-8), with the escape shown as text.
        for selector, shown in (("x" + "\u00e9" * 40, "x\u00e9"), ("\x1b[31mred", "\\x1b[31mred")):
            started = time.monotonic()
            r = self.busctl("call", NAME, PATH, IFACE, "GetHealth", "as", "1", selector, check=False)
            self.assertLess(time.monotonic() - started, 5)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(shown, r.stderr)
            self.assertNotIn("\x1b", r.stderr)
        answer = self.busctl("call", NAME, PATH, IFACE, "GetHealth", "as", "3", "0", "0", self.smi("list")["devices"][0]["bdf"])
        self.assertEqual(len(answer["data"][0]), 1)  # one GPU named three times: one entry
        r = self.busctl("call", NAME, PATH, IFACE, "GetMetrics", "s", "wrong signature", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(self.busctl("get-property", NAME, PATH, IFACE, "Devices")["data"]), 8)  # still serving

    def test_introspection_names_the_signal(self):
        r = subprocess.run(["busctl", "--address=" + self.address, "introspect", NAME, PATH, IFACE],
                           capture_output=True, text=True, timeout=10)
        self.assertEqual(r.returncode, 0, r.stderr)
        for member in (".Devices", ".GetMetrics", ".GetHealth", ".HealthChanged", ".Event"):
            self.assertIn(member, r.stdout)


def main():
    global SMID, SMI, CAPTURES, MAKE_CPER_RECORDS
    if not all(shutil.which(t) for t in ("dbus-daemon", "busctl", "dbus-monitor")):
        print("SKIP: dbus-daemon, busctl or dbus-monitor missing")
        sys.exit(77)
    SMID, SMI, CAPTURES, MAKE_CPER_RECORDS = (os.path.abspath(a) for a in sys.argv[1:5])
    unittest.main(argv=[sys.argv[0]] + sys.argv[5:], verbosity=2)


if __name__ == "__main__":
    main()
