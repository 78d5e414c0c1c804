#!/usr/bin/env python3
"""hipstack-smid end to end: HTTP endpoints, signals, sd_notify, --once, exit codes (a stuck device:
test_stuck_device.py).

Usage: test_daemon.py HIPSTACK_SMID CAPTURES_DIR [unittest arguments, e.g. -k reload]

Standard library only. Every test starts its own daemon on 127.0.0.1 port 0, reads the port from
stderr ("hipstack-smid: listening on ADDR (port N)") and stops it by PID when it ends, also when it
fails (addCleanup).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from smid_http import http_get, parse_metrics, raw_request, series, wait_ready  # noqa: F401 (shared)

SMID = None
CAPTURES = None
PROMTOOL = shutil.which("promtool")

LISTENING = re.compile(r"hipstack-smid: listening on (\S+) \(port (\d+)\)")


def capture(name):
    return os.path.join(CAPTURES, name, "sys")


def spx():
    return capture("constructed/mi300x-8gpu-spx-nps1")


# ------------------------------------------------------------------------------------------------
# Helpers


class Daemon:
    """One hipstack-smid process; stopped by PID in the test's cleanup."""

    def __init__(self, test, *args, sysfs=None, config=None, env=None, listen="127.0.0.1:0", wrap_pid=False):
        cmd = [SMID]
        if listen is not None:
            cmd += ["--listen", listen]
        if config is not None:
            cmd += ["--config", config]
        cmd += ["--sysfs-root", sysfs or spx()]
        if not any(a.startswith("--grpc-listen") for a in args):
            # The default socket lives in /run/hipstack (made by systemd): each daemon gets its own.
            self.socket_dir = tempfile.mkdtemp(prefix="smid-grpc-")
            test.addCleanup(shutil.rmtree, self.socket_dir, True)
            cmd += ["--grpc-listen", "unix:" + os.path.join(self.socket_dir, "smid.sock")]
        cmd += list(args)
        if wrap_pid:
            # sh exports its own PID as WATCHDOG_PID, then execs the daemon: same PID.
            cmd = ["/bin/sh", "-c", 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$0" "$@"'] + cmd
        self.lines = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        self.pid = self.proc.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        test.addCleanup(self.stop)
        self.port = None

    def _read(self):
        for raw in self.proc.stderr:
            with self.cond:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)  # EOF
            self.cond.notify_all()

    def mark(self):
        with self.cond:
            return len(self.lines)

    def wait_line(self, pattern, timeout=5.0, start=0):
        """First stderr line from index `start` that matches; None on timeout or EOF."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            index = start
            while True:
                while index < len(self.lines):
                    line = self.lines[index]
                    if line is None:
                        return None
                    m = regex.search(line)
                    if m:
                        return m
                    index += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def stderr(self):
        with self.cond:
            return "\n".join(l for l in self.lines if l is not None)

    def wait_port(self, timeout=10.0):
        m = self.wait_line(LISTENING.pattern, timeout)
        if m is None:
            raise AssertionError("no 'listening' line on stderr:\n" + self.stderr())
        self.port = int(m.group(2))
        return self.port

    def signal(self, sig):
        os.kill(self.pid, sig)

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self.reader.join(timeout=2)
        self.proc.stderr.close()


def promtool_check(test, body):
    # The lint is part of the test (docs/testing.md: `promtool check metrics`): no promtool fails it.
    test.assertIsNotNone(PROMTOOL, "promtool is not installed (scripts/deps.sh test installs prometheus)")
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=body.encode(), capture_output=True, timeout=30)
    test.assertEqual(r.returncode, 0, "promtool check metrics:\n" + r.stdout.decode() + r.stderr.decode())


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def bdf_of_card(sysfs, card):
    with open(os.path.join(sysfs, "class/drm", card, "device/uevent")) as f:
        for line in f:
            if line.startswith("PCI_SLOT_NAME="):
                return line.strip().split("=", 1)[1]
    raise AssertionError("no PCI_SLOT_NAME for " + card)


class Notify:
    """An AF_UNIX datagram socket standing in for systemd's NOTIFY_SOCKET."""

    def __init__(self, test):
        self.dir = tempfile.mkdtemp(prefix="smid-notify-")
        self.path = os.path.join(self.dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages = []  # (monotonic time, {key: value}, raw)
        test.addCleanup(self.close)

    def env(self, **extra):
        env = dict(os.environ)
        for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
            env.pop(key, None)
        env["NOTIFY_SOCKET"] = self.path
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def recv(self, timeout):
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(4096).decode()
        except socket.timeout:
            return None
        fields = dict(line.split("=", 1) for line in data.split("\n") if "=" in line)
        self.messages.append((time.monotonic(), fields, data))
        return fields

    def wait_for(self, key, value="1", timeout=5.0):
        """Receives until a message with key=value; returns (time, fields) or None."""
        deadline = time.monotonic() + timeout
        while True:
            fields = self.recv(deadline - time.monotonic())
            if fields is None:
                return None
            if fields.get(key) == value:
                return self.messages[-1][0], fields

    def collect(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.recv(deadline - time.monotonic())

    def close(self):
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class DaemonTest(unittest.TestCase):
    def start(self, *args, **kwargs):
        d = Daemon(self, *args, **kwargs)
        d.wait_port()
        return d

    def tempdir(self):
        path = tempfile.mkdtemp(prefix="smid-test-")
        self.addCleanup(shutil.rmtree, path, True)
        return path

    def config(self, text, name="smid.conf"):
        path = os.path.join(self.tempdir(), name)
        write(path, text)
        return path

    def assert_family(self, body, family, present=True, msg=""):
        """Whether the page has samples of `family`, without dumping the whole page on failure."""
        found = re.search(r"^%s[{ ]" % re.escape(family), body, re.M) is not None
        if found != present:
            self.fail("%s %s on /metrics %s" % (family, "missing" if present else "present", msg))

    def wait_metrics(self, port, predicate, timeout=5.0):
        """Polls /metrics until predicate(body) holds or the timeout passes (the caller asserts)."""
        deadline = time.monotonic() + timeout
        while True:
            body, samples = self.metrics(port)
            if predicate(body) or time.monotonic() > deadline:
                return body, samples
            time.sleep(0.05)

    def metrics(self, port):
        status, headers, body = http_get(port, "/metrics")
        self.assertEqual(status, 200, body)
        return body, parse_metrics(body)

    def assert_exits(self, d, code, within):
        start = time.monotonic()
        try:
            rc = d.proc.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.fail("the daemon did not exit within %.1f s:\n%s" % (within, d.stderr()))
        d.reader.join(timeout=5)  # its last stderr lines
        self.assertEqual(rc, code, d.stderr())
        return time.monotonic() - start

    @staticmethod
    def make_fifo(path):
        tmp = path + ".fifo"
        os.mkfifo(tmp)
        os.replace(tmp, path)  # atomic: a reader sees the old file or the FIFO


# ------------------------------------------------------------------------------------------------
# HTTP


class HttpTests(DaemonTest):
    def test_metrics_page(self):
        d = self.start()
        wait_ready(d.port)
        status, headers, body = http_get(d.port, "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/plain; version=0.0.4"), headers["content-type"])
        self.assertEqual(int(headers["content-length"]), len(body.encode()))
        promtool_check(self, body)
        samples = parse_metrics(body)
        up = series(samples, "hipstack_gpu_up")
        self.assertEqual(sorted(l["gpu"] for l, _ in up), [str(i) for i in range(8)])
        self.assertTrue(all(v == 1 for _, v in up), up)
        self.assertEqual(len({l["bdf"] for l, _ in up}), 8)
        self.assertEqual(len({l["uuid"] for l, _ in up}), 8)
        info = series(samples, "hipstack_smid_build_info")
        self.assertEqual(len(info), 1)
        self.assertRegex(info[0][0]["version"], r"^\d+\.\d+\.\d+")
        self.assertTrue(info[0][0]["host"])
        self.assertEqual(info[0][1], 1)
        self.assertEqual(len(series(samples, "hipstack_gpu_temperature_junction_celsius")), 8)
        # The default profile: one info series per GPU with the identity labels, no sample ages.
        info = {l["uuid"]: l for l, v in series(samples, "hipstack_gpu_info") if v == 1}
        self.assertEqual(sorted(info), sorted(l["uuid"] for l, _ in up))
        self.assertTrue(all(l["gfx_target"] == "gfx942" and l["driver_name"] == "amdgpu" for l in info.values()), info)
        self.assert_family(body, "hipstack_gpu_sample_age_seconds", present=False)
        self.assertEqual(len(series(samples, "hipstack_smid_scrape_duration_seconds")), 1)
        # A query string is ignored; HEAD answers without a body.
        status, _, body2 = http_get(d.port, "/metrics?name[]=x")
        self.assertEqual(status, 200)
        self.assert_family(body2, "hipstack_gpu_up")
        status, _, head_body = http_get(d.port, "/metrics", method="HEAD")
        self.assertEqual((status, head_body), (200, ""))

    def test_self_metrics_are_the_process_as_the_kernel_sees_it(self):
        """process_* (the standard collector's names) against /proc/PID read beside the scrape, and
        each backend's sample-duration histogram growing with the samples (docs/daemon.md, "Self-metrics")."""
        before = time.time()
        d = self.start()
        wait_ready(d.port)
        body, samples = self.metrics(d.port)
        promtool_check(self, body)
        with open("/proc/%d/status" % d.proc.pid) as f:
            status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        value = lambda name: series(samples, name)[0][1]  # noqa: E731
        rss_kb = int(status["VmRSS"].split()[0])
        self.assertLess(abs(value("process_resident_memory_bytes") / 1024 - rss_kb), max(2048, rss_kb * 0.2))
        # Read a moment apart: gRPC may start or end a thread in between.
        self.assertLessEqual(abs(value("hipstack_smid_threads") - int(status["Threads"])), 2)
        self.assertLess(abs(value("process_open_fds") - len(os.listdir("/proc/%d/fd" % d.proc.pid))), 3)
        self.assertGreater(value("process_max_fds"), 1000)
        self.assertTrue(before - 1 <= value("process_start_time_seconds") <= time.time(), value("process_start_time_seconds"))
        cpu = value("process_cpu_seconds_total")
        self.assertGreaterEqual(cpu, 0)
        # The memory the daemon sizes itself, inside what malloc holds, inside RSS: the history rings
        # within their bound (the default history_memory_mb, 16) and holding every GPU's first samples.
        history, limit = value("hipstack_smid_history_bytes"), value("hipstack_smid_history_limit_bytes")
        self.assertEqual(limit, 16 << 20)
        self.assertGreater(history, 8 * 1000, "8 GPUs' first samples")
        self.assertLessEqual(history, limit)
        heap = {l["state"]: v for l, v in series(samples, "hipstack_smid_heap_bytes")}
        with open("/proc/%d/exe" % d.proc.pid, "rb") as f:
            sanitizer_malloc = b"__asan_init" in f.read()  # AddressSanitizer's allocator, linked in
        if sanitizer_malloc:  # not glibc's malloc: its account is not given (no series), never zeros
            self.assertEqual(heap, {})
        else:
            self.assertEqual(sorted(heap), ["free", "in_use"])
            self.assertGreater(heap["in_use"], history)
            self.assertLess(heap["in_use"], rss_kb * 1024)
        self.assertGreaterEqual(value("hipstack_smid_sqlite_bytes"), 0)
        buckets = [(float(l["le"]), v) for l, v in series(samples, "hipstack_smid_sample_duration_seconds_bucket", backend="amdgpu")]
        self.assertEqual(buckets[-1][0], float("inf"))
        self.assertEqual([v for _, v in buckets], sorted(v for _, v in buckets), "cumulative")
        count = value("hipstack_smid_sample_duration_seconds_count")
        self.assertEqual(buckets[-1][1], count)
        self.assertGreaterEqual(count, 8, "every GPU's first sample")
        _, later = self.wait_metrics(d.port, lambda b: float(re.search(r"^hipstack_smid_sample_duration_seconds_count\S* (\S+)$", b, re.M).group(1)) > count)
        self.assertGreater(series(later, "hipstack_smid_sample_duration_seconds_count")[0][1], count)
        self.assertGreaterEqual(series(later, "process_cpu_seconds_total")[0][1], cpu)

    def test_healthz_and_readyz(self):
        d = self.start()
        status, _, body = http_get(d.port, "/healthz")
        self.assertEqual((status, body), (200, "ok\n"))
        wait_ready(d.port)
        status, _, body = http_get(d.port, "/readyz")
        self.assertEqual((status, body), (200, "ready\n"))

    def test_unknown_path_404(self):
        d = self.start()
        for path in ("/", "/nope", "/metricsx", "/metrics/", "/../etc/passwd"):
            status, _, _ = http_get(d.port, path)
            self.assertEqual(status, 404, path)

    def test_other_methods_405(self):
        d = self.start()
        for method in ("POST", "PUT", "DELETE", "OPTIONS"):
            answer = raw_request(d.port, ("%s /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n" % method).encode())
            self.assertTrue(answer.startswith("HTTP/1.1 405 "), "%s: %r" % (method, answer[:80]))

    def test_request_line_without_http_400(self):
        d = self.start()
        for line in (b"GET /metrics\r\n\r\n", b"GARBAGE\r\n\r\n", b"GET /metrics FTP/1.0\r\n\r\n", b"\r\n\r\n"):
            answer = raw_request(d.port, line)
            self.assertTrue(answer.startswith("HTTP/1.1 400 "), "%r: %r" % (line, answer[:80]))
        self.assertEqual(http_get(d.port, "/healthz")[0], 200)

    def test_oversized_header_431(self):
        d = self.start()
        for size in (16 * 1024, 64 * 1024):
            request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n"
            answer = raw_request(d.port, request)
            self.assertTrue(answer.startswith("HTTP/1.1 431 "), "%d: %r" % (size, answer[:80]))
        # A header that never ends is cut at the limit as well.
        answer = raw_request(d.port, b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * 12000)
        self.assertTrue(answer.startswith("HTTP/1.1 431 "), repr(answer[:80]))
        self.assertEqual(http_get(d.port, "/metrics")[0], 200)

    def test_header_just_over_8k_431(self):
        d = self.start()
        head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: "
        request = head + b"a" * (9000 - len(head) - 4) + b"\r\n\r\n"
        self.assertEqual(len(request), 9000)
        answer = raw_request(d.port, request)
        self.assertTrue(answer.startswith("HTTP/1.1 431 "), repr(answer[:80]))

    def test_idle_client_is_cut_off_and_others_are_served(self):
        """What holds today: a silent client gets 408 after 2 s and a waiting /metrics then answers."""
        d = self.start()
        wait_ready(d.port)
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as idle:
            time.sleep(0.05)
            start = time.monotonic()
            status, _, body = http_get(d.port, "/metrics", timeout=5)
            elapsed = time.monotonic() - start
            self.assertEqual(status, 200)
            self.assert_family(body, "hipstack_gpu_up")
            self.assertLess(elapsed, 3.0)
            answer = idle.recv(4096).decode()
            self.assertTrue(answer.startswith("HTTP/1.1 408 "), repr(answer[:80]))

    def test_idle_client_does_not_block_another_client(self):
        d = self.start()
        wait_ready(d.port)
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as idle:
            time.sleep(0.05)  # the daemon has accepted it and waits for its request
            start = time.monotonic()
            try:
                status, _, body = http_get(d.port, "/metrics", timeout=1.0)
            except socket.timeout:
                self.fail("/metrics not answered within 1 s while an idle client is connected")
            self.assertLess(time.monotonic() - start, 1.0)
            self.assertEqual(status, 200)
            # ...and the idle client is still connected, not answered yet.
            idle.setblocking(False)
            with self.assertRaises(BlockingIOError):
                idle.recv(1)


# ------------------------------------------------------------------------------------------------
# Health gauges


class HealthTests(DaemonTest):
    def test_fault_capture_health(self):
        d = self.start(sysfs=capture("constructed/mi300x-8gpu-faults"))
        wait_ready(d.port)
        body, samples = self.metrics(d.port)
        promtool_check(self, body)
        ecc = series(samples, "hipstack_gpu_health", gpu="1", check="memory.uncorrectable_ecc")
        self.assertEqual([v for _, v in ecc], [2])
        self.assertEqual([v for _, v in series(samples, "hipstack_gpu_health", gpu="1", check="overall")], [2])
        self.assertEqual([v for _, v in series(samples, "hipstack_gpu_health", gpu="0", check="overall")], [0])
        # One series per (GPU, check), values -1 (unknown), 0, 1, 2 only; GPU 0's unreadable RAS
        # block is UNKNOWN, and exported as -1.
        keys = [(l["gpu"], l["check"]) for l, _ in series(samples, "hipstack_gpu_health")]
        self.assertEqual(len(keys), len(set(keys)))
        self.assertTrue(all(v in (-1, 0, 1, 2) for _, v in series(samples, "hipstack_gpu_health")))
        self.assertEqual([v for _, v in series(samples, "hipstack_gpu_health", gpu="0", check="ras.unreadable")], [-1])
        self.assertEqual(len({g for g, _ in keys}), 8)


# ------------------------------------------------------------------------------------------------
# Signals and reload


class SignalTests(DaemonTest):
    def test_sighup_reload(self):
        conf = self.config("fast_interval_ms = 100\n")
        d = self.start(config=conf)
        wait_ready(d.port)
        body, _ = self.metrics(d.port)
        self.assert_family(body, "hipstack_gpu_clock_sclk_hertz")

        write(conf, "fast_interval_ms = 100\nmetrics = temperature_junction\n")
        mark = d.mark()
        d.signal(signal.SIGHUP)
        self.assertIsNotNone(d.wait_line("configuration reloaded", 5, mark), d.stderr())
        self.assertIsNone(d.wait_line(LISTENING.pattern, 0, mark), "the socket must stay open across a reload")
        # The new sampler starts from the old samples, restricted to the new metric list.
        body, samples = self.wait_metrics(d.port, lambda b: b.count("hipstack_gpu_temperature_junction_celsius{") == 8)
        self.assert_family(body, "hipstack_gpu_temperature_junction_celsius")
        self.assert_family(body, "hipstack_gpu_clock_sclk_hertz", present=False)
        self.assertEqual(len(series(samples, "hipstack_gpu_temperature_junction_celsius")), 8)
        self.assertEqual(len(series(samples, "hipstack_gpu_up")), 8)

        # A bad file on reload: the running configuration stays, stderr names file:line.
        # health_policy files are read with the configuration: a missing or malformed one is
        # refused by the reload (the daemon used to abort on it in its sampler threads).
        policy = self.config("thermal_margin = 5\ncolour = blue\n", name="policy.conf")
        for bad, line in (("metrics = temperature_junction\nthis is not a key value line\n", 2),
                          ("fast_interval_ms = 100\nfast_interval_ms = 1\n", 2),
                          ("metrics = temperature_junction, no_such_metric\n", 1),
                          ("metrics = temperature_junction\nhealth_policy = /nonexistent/policy.conf\n", 2),
                          ("metrics = temperature_junction\nhealth_policy = %s\n" % policy, 2)):
            write(conf, bad)
            mark = d.mark()
            d.signal(signal.SIGHUP)
            m = d.wait_line("reload failed", 5, mark)
            self.assertIsNotNone(m, d.stderr())
            self.assertIn("%s:%d" % (conf, line), m.string)
            time.sleep(0.3)
            self.assertIsNone(d.proc.poll(), "the daemon exited on a bad reload:\n" + d.stderr())
            body, _ = self.metrics(d.port)
            self.assert_family(body, "hipstack_gpu_temperature_junction_celsius")
            self.assert_family(body, "hipstack_gpu_clock_sclk_hertz", present=False)

        # And a good file after the failures applies again.
        write(conf, "fast_interval_ms = 100\n")
        mark = d.mark()
        d.signal(signal.SIGHUP)
        self.assertIsNotNone(d.wait_line("configuration reloaded", 5, mark), d.stderr())
        body, _ = self.wait_metrics(d.port, lambda b: "hipstack_gpu_clock_sclk_hertz{" in b)
        self.assert_family(body, "hipstack_gpu_clock_sclk_hertz")

    def test_reload_that_cannot_bind_keeps_old_config(self):
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            busy_port = busy.getsockname()[1]
            conf = self.config("listen = 127.0.0.1:0\nfast_interval_ms = 100\n")
            d = self.start(config=conf, listen=None)
            wait_ready(d.port)
            write(conf, "listen = 127.0.0.1:%d\nfast_interval_ms = 100\nmetrics = temperature_junction\n" % busy_port)
            mark = d.mark()
            d.signal(signal.SIGHUP)
            self.assertIsNotNone(d.wait_line("reload failed", 5, mark), d.stderr())
            time.sleep(0.5)
            body, _ = self.metrics(d.port)
            self.assert_family(body, "hipstack_gpu_clock_sclk_hertz", msg="a failed reload applied part of the new file")

    def signalled(self, sig):
        """A daemon that was ready when `sig` was sent to it."""
        d = self.start()
        wait_ready(d.port)
        d.signal(sig)
        return d

    def test_sigterm_exits_0_within_2s(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                d = self.signalled(sig)
                self.assert_exits(d, 0, 2.0)
                self.assertIn("stopping on signal %d" % sig, d.stderr())
                with self.assertRaises(OSError):
                    socket.create_connection(("127.0.0.1", d.port), timeout=1).close()

    def test_a_fatal_signal_is_reported_and_kills_as_before(self):
        # What a crash leaves in the journal: the signal, the thread and the return addresses; then
        # the process dies of that signal (systemd restarts it, a core dump is still taken).
        for sig in (signal.SIGSEGV, signal.SIGABRT):
            with self.subTest(signal=sig.name):
                d = self.signalled(sig)
                self.assert_exits(d, -sig, 5.0)
                err = d.stderr()
                self.assertIn("hipstack-smid: fatal signal %s at address 0x" % sig.name, err)
                # Some line of the report names the program and an offset (under ASan the first is libasan's).
                self.assertRegex(err, r"in thread \S+; return addresses:\n(.*\n)*.*hipstack-smid\(\+0x[0-9a-f]+\)")


# ------------------------------------------------------------------------------------------------
# systemd notification


class NotifyTests(DaemonTest):
    def test_ready_only_once_the_port_accepts(self):
        n = Notify(self)
        d = Daemon(self, env=n.env())
        got = n.wait_for("READY", timeout=10)
        self.assertIsNotNone(got, "no READY=1:\n" + d.stderr())
        self.assertIn("READY", n.messages[0][1], "READY=1 must be the first message: %r" % n.messages)
        self.assertIn("STATUS", got[1])
        # The daemon printed the port before it notified: the port accepts right now.
        port = d.wait_port(timeout=1)
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            pass
        self.assertEqual(http_get(port, "/healthz")[0], 200)

    def test_reloading_then_ready_on_sighup(self):
        n = Notify(self)
        conf = self.config("fast_interval_ms = 100\n")
        d = Daemon(self, config=conf, env=n.env())
        self.assertIsNotNone(n.wait_for("READY", timeout=10))
        port = d.wait_port()
        for text in ("metrics = temperature_junction\n", "this line is bad\n"):  # a good and a failing reload
            write(conf, text)
            start = len(n.messages)
            d.signal(signal.SIGHUP)
            self.assertIsNotNone(n.wait_for("READY", timeout=5), "no READY=1 after SIGHUP: %r" % n.messages)
            keys = [("RELOADING" in f, "READY" in f) for _, f, _ in n.messages[start:]]
            self.assertEqual(keys, [(True, False), (False, True)], n.messages[start:])
            self.assertEqual(http_get(port, "/healthz")[0], 200)

    def test_stopping_on_sigterm(self):
        n = Notify(self)
        d = Daemon(self, env=n.env())
        self.assertIsNotNone(n.wait_for("READY", timeout=10))
        d.signal(signal.SIGTERM)
        self.assertIsNotNone(n.wait_for("STOPPING", timeout=2), "no STOPPING=1: %r" % n.messages)
        self.assert_exits(d, 0, 2.0)

    def test_watchdog_pings(self):
        # sd_watchdog_enabled(): WATCHDOG_USEC set and, when WATCHDOG_PID is set, equal to getpid().
        n = Notify(self)
        conf = self.config("fast_interval_ms = 100\n")
        d = Daemon(self, config=conf, env=n.env(WATCHDOG_USEC=400000), wrap_pid=True)
        ready = n.wait_for("READY", timeout=10)
        self.assertIsNotNone(ready)
        n.collect(2.0)
        pings = [t for t, f, _ in n.messages if f.get("WATCHDOG") == "1"]
        self.assertGreaterEqual(len(pings), 5, n.messages)
        gaps = [b - a for a, b in zip([ready[0]] + pings, pings)]
        self.assertLess(max(gaps), 0.4, "a watchdog gap exceeds WATCHDOG_USEC: %s" % gaps)
        self.assertIsNone(d.proc.poll())

    def test_no_watchdog_pings_when_not_asked(self):
        # Two daemons at once: no WATCHDOG_USEC, and WATCHDOG_USEC meant for another PID.
        conf = self.config("fast_interval_ms = 100\n")
        plain, other = Notify(self), Notify(self)
        Daemon(self, config=conf, env=plain.env())
        Daemon(self, config=conf, env=other.env(WATCHDOG_USEC=400000, WATCHDOG_PID=os.getpid()))
        self.assertIsNotNone(plain.wait_for("READY", timeout=10))
        self.assertIsNotNone(other.wait_for("READY", timeout=10))
        plain.collect(0.3)
        other.collect(0.9)
        for n in (plain, other):
            self.assertFalse([f for _, f, _ in n.messages if "WATCHDOG" in f], n.messages)

    def test_watchdog_pings_with_default_interval(self):
        n = Notify(self)
        Daemon(self, env=n.env(WATCHDOG_USEC=400000))
        ready = n.wait_for("READY", timeout=10)
        self.assertIsNotNone(ready)
        n.collect(2.2)
        pings = [t for t, f, _ in n.messages if f.get("WATCHDOG") == "1"]
        gaps = [b - a for a, b in zip([ready[0]] + pings, pings)]
        self.assertTrue(pings)
        self.assertLess(max(gaps), 0.4, "a watchdog gap exceeds WATCHDOG_USEC: %s" % gaps)


# ------------------------------------------------------------------------------------------------
# --once and exit codes


class CommandLineTests(DaemonTest):
    def test_once(self):
        for name, gpus in (("constructed/mi300x-8gpu-spx-nps1", 8), ("constructed/mi300x-8gpu-faults", 8),
                           ("real/lact/rx6900xt", 1)):
            with self.subTest(capture=name):
                r = subprocess.run([SMID, "--once", "--sysfs-root", capture(name)], capture_output=True, timeout=10)
                self.assertEqual(r.returncode, 0, r.stderr.decode())
                body = r.stdout.decode()
                promtool_check(self, body)
                up = series(parse_metrics(body), "hipstack_gpu_up")
                self.assertEqual(len(up), gpus)
                self.assertTrue(all(v == 1 for _, v in up))
                self.assertNotIn("listening", r.stderr.decode())

    def test_bad_arguments_exit_2(self):
        for args in (["--no-such-option"], ["--config", "/nonexistent/smid.conf"], ["--listen"],
                     ["unexpected-positional"], ["--once=maybe"]):
            with self.subTest(args=args):
                r = subprocess.run([SMID, "--sysfs-root", spx()] + args, capture_output=True, timeout=5)
                self.assertEqual(r.returncode, 2, r.stderr.decode())
                self.assertTrue(r.stderr.strip() or r.stdout.strip())
        r = subprocess.run([SMID, "--help"], capture_output=True, timeout=5)
        self.assertEqual(r.returncode, 0)
        self.assertIn("--sysfs-root", r.stdout.decode())

    def test_bad_config_exit_2_with_file_and_line(self):
        policy = self.config("thermal_margin = 5\nthermal_margin = -3\n", name="policy.conf")
        cases = (
            ("health_policy = /nonexistent/policy.conf\n", 1),
            ("fast_interval_ms = 100\nhealth_policy = %s\n" % policy, 2),
            ("# a comment\nfast_interval_ms = 100\nthis is not a key value line\n", 3),
            ("fast_interval_ms = 5\n", 1),
            ("listen = 127.0.0.1:0\n\nslow_interval_ms = soon\n", 3),
            ("metrics = temperature_edge, no_such_metric\n", 1),
            ("\n\n\ncolour = blue\n", 4),
            ("listen = nocolon\n", 1),
        )
        for text, line in cases:
            with self.subTest(line=text.strip().splitlines()[-1]):
                conf = self.config(text)
                for once in ([], ["--once"]):
                    r = subprocess.run([SMID, "--config", conf, "--listen", "127.0.0.1:0", "--sysfs-root", spx()] + once,
                                       capture_output=True, timeout=5)
                    self.assertEqual(r.returncode, 2, r.stderr.decode())
                    self.assertIn("%s:%d" % (conf, line), r.stderr.decode())
                    self.assertNotIn("listening", r.stderr.decode())

    def test_cannot_listen_exit_1(self):
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            for listen in ("127.0.0.1:%d" % busy.getsockname()[1], "127.0.0.1:http", "256.1.1.1:0"):
                with self.subTest(listen=listen):
                    r = subprocess.run([SMID, "--listen", listen, "--sysfs-root", spx()], capture_output=True, timeout=5)
                    self.assertEqual(r.returncode, 1, r.stderr.decode())
                    self.assertIn(listen, r.stderr.decode())


def main(doc=__doc__):
    """Runs the tests of the script started (this one, or one that imports it as `base`)."""
    global SMID, CAPTURES
    if len(sys.argv) < 3:
        print(doc, file=sys.stderr)
        return 2
    SMID = os.path.abspath(sys.argv[1])
    CAPTURES = os.path.abspath(sys.argv[2])
    program = unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
