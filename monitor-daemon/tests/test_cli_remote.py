#!/usr/bin/env python3
"""hipstack-smi --host: the CLI as a client of hipstack-smid gives the same output as locally.

Usage: test_cli_remote.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR [unittest arguments]

A daemon reads a capture; hipstack-smi --host (unix socket, and TCP) and hipstack-smi
--sysfs-root on the same capture must print byte-identical tables, JSON and CSV, with the same exit
codes. The daemon is started and stopped (by PID) by each test.
"""
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from smid_http import start_smid

SMID = SMI = CAPTURES = None
COMMANDS = (["list"], ["static"], ["metric"], ["metric", "-m", "power_current,temperature_junction", "-g", "1,3"],
            ["health"], ["partition"], ["ras"], ["static", "-g", "GPU-does-not-exist"])
ALL_FORMATS = ([], ["--json"], ["--csv"])
LOCAL_READS = {}  # (capture, format, command) -> the local read's result (RemoteCliTest.local)


class RemoteCliTest(unittest.TestCase):
    def start(self, capture, grpc_listen=None):
        self.dir = tempfile.mkdtemp(prefix="smi-remote-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.started_at = time.monotonic()  # no sample the daemon reports can be older
        return start_smid(self, SMID, capture, self.dir, grpc_listen)

    def smi(self, *args):
        return subprocess.run([SMI] + list(args), capture_output=True, text=True, timeout=30)

    def assert_same(self, answered, local, command, fmt):
        """The daemon's answer is what a local read prints; `metric --json` adds each GPU's sample age."""
        self.assertEqual(answered.returncode, local.returncode, answered.stderr)
        if fmt == ["--json"] and command[0] == "metric" and answered.returncode == 0:
            doc = json.loads(answered.stdout)
            for device in doc["devices"]:
                age = device.pop("sample_age_s")
                # A real age (never -1: the daemon is ready), bounded by the test's own watch rather
                # than a constant: a sanitizer build on a busy machine is seconds late.
                self.assertTrue(0 <= age <= time.monotonic() - self.started_at, age)
            self.assertEqual(doc, json.loads(local.stdout))
            self.assertNotIn("sample_age_s", local.stdout)  # a fresh read has no age
        else:
            self.assertEqual(answered.stdout, local.stdout)

    def local(self, capture, fmt, command):
        """What a local read of `capture` prints; read once per test file (the capture never changes),
        since several tests compare against the same reads."""
        key = (capture, tuple(fmt), tuple(command))
        if key not in LOCAL_READS:
            LOCAL_READS[key] = self.smi("--sysfs-root", capture, *fmt, *command)
        return LOCAL_READS[key]

    def check_same(self, capture_name, host_of, formats=ALL_FORMATS, commands=COMMANDS):
        capture = os.path.join(CAPTURES, capture_name, "sys")
        host = host_of(capture)
        for command in commands:
            for fmt in formats:
                with self.subTest(capture=capture_name, command=" ".join(command + fmt)):
                    remote = self.smi("--host", host, *fmt, *command)
                    self.assert_same(remote, self.local(capture, fmt, command), command, fmt)

    def smi_here(self, socket, *args):
        """hipstack-smi with no root given: the node's daemon is the one at `socket`."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIPSTACK_")}
        env["HIPSTACK_SMID_SOCKET"] = socket
        return subprocess.run([SMI] + list(args), capture_output=True, text=True, timeout=30, env=env)

    def test_nvidia_smi_mode_answers_from_the_local_daemon(self):
        """hipstack-smi --nvidia-smi asks the node's daemon as `metric` does and prints what a local
        read of the same GPUs prints (the capture does not change between the two); a request
        that reads processes, and --direct, read the GPUs instead (here: the machine's own, none)."""
        capture = os.path.join(CAPTURES, "constructed/mi300x-8gpu-faults/sys")
        socket = self.start(capture)[len("unix://"):]
        fields = ("--query-gpu=index,name,uuid,pci.bus_id,pci.device_id,memory.total,memory.used,power.draw,"
                  "temperature.gpu,clocks.sm,utilization.gpu,ecc.errors.corrected.volatile.total,clocks_event_reasons.active")
        for args in ([fields, "--format=csv"], [fields, "--format=csv,noheader,nounits", "-i", "1,00000000:C7:00.0"],
                     ["-L"], ["-q", "-d", "MEMORY,TEMPERATURE,POWER,CLOCK,ECC"], ["dmon", "-s", "pucvme", "-c", "1"]):
            with self.subTest(args=args):
                answered = self.smi_here(socket, "--nvidia-smi", *args)
                local = self.smi("--nvidia-smi", *args, "--sysfs-root", capture)
                self.assertEqual(answered.returncode, local.returncode, answered.stderr)
                strip = lambda text: re.sub(r"Timestamp +: .*", "", text)  # noqa: E731  (-q's time)
                self.assertEqual(strip(answered.stdout), strip(local.stdout))
                # The capture's GPUs, which only the daemon reads here (the machine has none).
                self.assertIn({"-q": "GPU 00000000:E5:00.0", "dmon": "\n    7 "}.get(args[0], "MI300X"), answered.stdout)
        for args in (["--direct", fields], ["--query-compute-apps=pid,gpu_name"], ["-q"]):
            with self.subTest(args=args):
                own = self.smi_here(socket, "--nvidia-smi", *args).stdout
                self.assertNotIn("MI300X", own)
                self.assertNotIn("00000000:E5:00.0", own)

    def test_read_only_commands_answer_from_the_local_daemon(self):
        """Without --host, a read-only command asks the node's daemon (its socket named by
        HIPSTACK_SMID_SOCKET here) and prints what a local read of the same GPUs prints; --direct,
        a chosen root, a health policy, metric -v and the default view (its processes) read the GPUs
        instead (here: the machine's own; the default view asks the daemon for its rows only when
        this process finds the daemon's GPUs, test_default_view_rows_from_the_local_daemon)."""
        capture = os.path.join(CAPTURES, "constructed/mi300x-8gpu-faults/sys")
        socket = self.start(capture)[len("unix://"):]
        for command in COMMANDS:
            for fmt in ([], ["--json"], ["--csv"]):
                with self.subTest(command=" ".join(command + fmt)):
                    self.assert_same(self.smi_here(socket, *fmt, *command), self.local(capture, fmt, command),
                                     command, fmt)
        said = self.smi_here(socket, "-v", "list")
        self.assertIn("answered by hipstack-smid at unix:" + socket, said.stderr)
        # Each of these reads for itself: what it prints is what it prints with no daemon at all.
        nowhere = os.path.join(self.dir, "no-daemon.sock")
        for args in (["--direct", "list"], ["--direct", "--json", "metric"], ["health", "--config", "/dev/null"],
                     ["-v", "metric", "-m", "power_current"], []):
            with self.subTest(args=args):
                own = self.smi_here(socket, *args)
                alone = self.smi_here(nowhere, *args)
                self.assertEqual(own.returncode, alone.returncode, own.stderr)
                if args:  # the default view's heading carries the time
                    self.assertEqual(own.stdout, alone.stdout)
                self.assertNotIn("MI300X", own.stdout)
        with_root = self.smi_here(socket, "--sysfs-root", os.path.join(CAPTURES, "real/lact/rx6900xt/sys"), "list")
        self.assertEqual(with_root.returncode, 0, with_root.stderr)
        self.assertNotIn("MI300X", with_root.stdout)

    def test_a_socket_that_does_not_answer_is_read_around(self):
        """A socket where nothing speaks the protocol (a daemon of an older release, a hung one, a
        stranger): hipstack-smi reads the GPUs itself within a second and says why with -v."""
        import socket as sockets
        import threading
        self.dir = tempfile.mkdtemp(prefix="smi-remote-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        for behaviour in ("hang", "close"):
            with self.subTest(behaviour=behaviour):
                path = os.path.join(self.dir, behaviour + ".sock")
                server = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
                self.addCleanup(server.close)
                server.bind(path)
                server.listen(8)
                held = []

                def serve():
                    while True:
                        try:
                            conn, _ = server.accept()
                        except OSError:
                            return
                        if behaviour == "close":
                            conn.close()
                        else:
                            held.append(conn)  # accepted, never answered
                threading.Thread(target=serve, daemon=True).start()
                started = time.monotonic()
                r = self.smi_here(path, "-v", "list")
                took = time.monotonic() - started
                alone = self.smi_here(os.path.join(self.dir, "none.sock"), "list")
                self.assertEqual((r.returncode, r.stdout), (alone.returncode, alone.stdout), r.stderr)
                self.assertIn("reading the GPUs itself: hipstack-smid at unix:" + path, r.stderr)
                self.assertLess(took, 5)
                server.close()
                for conn in held:
                    conn.close()

    # Every command in every format on the faults capture; on the others, every command's JSON (all
    # that reaches a renderer: equal JSON is equal data, and the renderers are the local ones, proved
    # on the faults capture) and the CPX node's partitions in every format. Under a sanitizer each
    # hipstack-smi run costs a fifth of a second, and the margin (docs/testing.md) is the budget.
    def test_same_output_over_the_unix_socket(self):
        self.check_same("constructed/mi300x-8gpu-faults", lambda capture: self.start(capture))
        cpx = "constructed/mi300x-8gpu-cpx-nps1"
        cpx_host = self.start(os.path.join(CAPTURES, cpx, "sys"))
        self.check_same(cpx, lambda _: cpx_host, formats=(["--json"],))
        self.check_same(cpx, lambda _: cpx_host, formats=([], ["--csv"]), commands=(["partition"],))

    def test_same_output_over_tcp(self):
        self.check_same("constructed/mi300x-8gpu-spx-nps1", lambda capture: self.start(capture, "127.0.0.1:0"),
                        formats=(["--json"],))

    def test_default_view_over_the_daemon(self):
        """hipstack-smi --host alone: the same GPU rows as locally; processes are not served remotely."""
        capture = os.path.join(CAPTURES, "constructed/mi300x-8gpu-faults/sys")
        host = self.start(capture)

        def rows(text):
            lines = text.splitlines()
            start = next(i for i, line in enumerate(lines) if line.startswith("GPU NAME"))
            return lines[start:lines.index("", start)]
        local = self.smi("--sysfs-root", capture)
        remote = self.smi("--host", host)
        self.assertEqual(remote.returncode, local.returncode, remote.stderr)
        self.assertEqual(rows(remote.stdout), rows(local.stdout))
        self.assertEqual(len(rows(remote.stdout)), 9)
        self.assertIn("hipstack-smid at " + host, remote.stdout)
        self.assertIn("Processes: not available with --host", remote.stdout)

    def test_default_view_rows_from_the_local_daemon(self):
        """The default view on a node whose daemon runs: the GPU rows are the daemon's (its samples and
        health checks), the process list is read by hipstack-smi itself. Here hipstack-smi runs in a
        mount namespace of its own with the capture over /sys, so it finds the daemon's GPUs itself
        (as on a real node); the JSON's devices and processes are what a local read of the capture
        gives, and the origin names the daemon. Where the GPUs are not the daemon's (the machine's
        own, here none), the view reads them itself."""
        capture = os.path.join(CAPTURES, "constructed/mi300x-8gpu-faults/sys")
        socket = self.start(capture)[len("unix://"):]
        libc = ctypes.CDLL(None, use_errno=True)
        clone_newns, ms_bind, ms_rec, ms_private = 0x00020000, 0x1000, 0x4000, 0x40000

        def capture_as_sys():  # in hipstack-smi's process, before it starts
            if libc.unshare(clone_newns) != 0 or libc.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0 or \
                    libc.mount(capture.encode(), b"/sys", None, ms_bind | ms_rec, None) != 0:
                raise OSError(ctypes.get_errno(), "the capture over /sys")
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIPSTACK_")}
        env["HIPSTACK_SMID_SOCKET"] = socket
        answered = subprocess.run([SMI, "-v", "--json"], capture_output=True, text=True, timeout=30, env=env,
                                  preexec_fn=capture_as_sys)
        no_proc = os.path.join(self.dir, "no-proc")  # the machine's /proc has none of the capture's processes
        os.mkdir(no_proc)
        local = self.smi("--sysfs-root", capture, "--procfs-root", no_proc, "--json")
        self.assertEqual(answered.returncode, local.returncode, answered.stderr)
        self.assertIn("answered by hipstack-smid at unix:" + socket, answered.stderr)
        ours, theirs = json.loads(answered.stdout), json.loads(local.stdout)
        self.assertEqual(ours["origin"], "hipstack-smid at unix:" + socket)
        self.assertEqual(len(ours["devices"]), 8)
        self.assertEqual(ours["devices"], theirs["devices"])
        # The processes as KFD lists them under the capture's sysfs (their names and DRM handles are in
        # the capture's proc, which hipstack-smi does not read here: it reads this machine's /proc).
        listed = lambda doc: [(p["device"], p["pid"]) for p in doc["processes"]]  # noqa: E731
        self.assertEqual(listed(ours), listed(theirs))
        self.assertTrue(listed(ours))
        # The machine's own GPUs (none) are not the daemon's: the view reads them itself.
        own = self.smi_here(socket)
        self.assertNotIn("MI300X", own.stdout)
        self.assertNotIn("hipstack-smid", own.stdout)

    def test_what_does_not_work_remotely_says_so(self):
        host = self.start(os.path.join(CAPTURES, "constructed/mi300x-8gpu-spx-nps1/sys"))
        for args, words in ((["process"], "not available with --host"),
                            (["partition", "-g", "0", "--compute-mode", "CPX"], "with a change"),
                            (["--sysfs-root", "/tmp", "list"], "do not apply"),
                            (["--tls-cert", SMI, "list"], "go together"),
                            (["event", "-w", "2"], "-w and -i do not apply"),
                            (["event", "-g", "no-such-gpu"], "no-such-gpu")):
            r = self.smi("--host", host, *args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(words, r.stderr)
        r = self.smi("--host", "unix:///nonexistent/smid.sock", "list")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no socket at /nonexistent/smid.sock", r.stderr)
        r = self.smi("--host", "127.0.0.1:1", "list")  # nothing listens on port 1
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot reach hipstack-smid at 127.0.0.1:1", r.stderr)


def main():
    global SMID, SMI, CAPTURES
    SMID, SMI, CAPTURES = (os.path.abspath(a) for a in sys.argv[1:4])
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2)


if __name__ == "__main__":
    main()
