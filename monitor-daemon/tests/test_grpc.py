#!/usr/bin/python3
"""hipstack-smid's gRPC API with a real Python gRPC client (Debian's python3-grpcio).

Usage: test_grpc.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR [unittest arguments]

Stubs are generated at test time from the daemon's own proto (and from the standard health and
reflection protos in tests/proto). Every test starts its own daemon on a unix socket in a temporary
folder and on 127.0.0.1 port 0, and stops it by PID when it ends. The answers are checked against
hipstack-smi reading the same capture.
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from smid_http import daemon_log  # noqa: E402

SMID = SMI = CAPTURES = PROTO = None
pb = rpc = health_pb = health_rpc = refl_pb = refl_rpc = None
grpc = None

SPX = "constructed/mi300x-8gpu-spx-nps1"
CPX = "constructed/mi300x-8gpu-cpx-nps1"


def capture(name):
    return os.path.join(CAPTURES, name, "sys")


def generate_stubs(out):
    """Python modules for our proto and the test's copies of the standard ones."""
    from grpc_tools import protoc
    tests_proto = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proto")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    if not os.path.isdir(include):
        include = "/usr/include"  # Debian: the well-known types live with libprotobuf-dev
    for root, name in ((PROTO, "hipstack/monitor/v1/monitor.proto"), (PROTO, "hipstack/monitor/v1/local.proto"),
                       (tests_proto, "standard/health.proto"),
                       (tests_proto, "standard/reflection.proto")):
        rc = protoc.main(["protoc", "-I" + root, "-I" + include, "--python_out=" + out, "--grpc_python_out=" + out, name])
        if rc != 0:
            raise RuntimeError("protoc failed on " + name)
    sys.path.insert(0, out)


class Daemon:
    """One hipstack-smid with its gRPC API on a unix socket; stopped by PID in the cleanup."""

    def __init__(self, test, sysfs, config_text="", grpc_listen=None, nofile=None, preexec=None):
        self.dir = tempfile.mkdtemp(prefix="smid-grpc-")
        test.addCleanup(shutil.rmtree, self.dir, True)
        self.socket = os.path.join(self.dir, "smid.sock")
        config = os.path.join(self.dir, "smid.conf")
        with open(config, "w") as f:
            f.write("fast_interval_ms = 100\n" + config_text)
        self.log = daemon_log(os.path.join(self.dir, "smid.err"))
        cmd = [SMID, "--config", config, "--sysfs-root", sysfs, "--http-listen", "127.0.0.1:0",
               "--grpc-listen", grpc_listen or "unix:" + self.socket]
        # nofile: the descriptor limit (soft and hard) the daemon starts with, as systemd's LimitNOFILE.
        # preexec: run in the daemon's process before it starts (a mount namespace of its own).
        limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))) if nofile else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
                                     preexec_fn=preexec or limit)
        test.addCleanup(self.stop)
        self.target = "unix://" + self.socket
        # Both listeners say where they are; the lines come in either order, so wait for both.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            text = self.stderr()
            m = re.search(r"gRPC on (\S+?):(\d+) \(", text)
            http = re.search(r"listening on \S+ \(port (\d+)\)", text)
            grpc_up = bool(m) if grpc_listen else os.path.exists(self.socket) and "gRPC on" in text
            if grpc_up and http:
                if grpc_listen:
                    self.target = "%s:%s" % (m.group(1), m.group(2))
                self.http_port = int(http.group(1))
                break
            if self.proc.poll() is not None:
                raise AssertionError("hipstack-smid exited:\n" + text)
            time.sleep(0.05)
        else:
            raise AssertionError("no gRPC or HTTP listener:\n" + self.stderr())

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def smi_json(*args, sysfs):
    out = subprocess.run([SMI, "--sysfs-root", sysfs, "--json"] + list(args), capture_output=True, text=True, timeout=30)
    return json.loads(out.stdout)


def value_of(reading):
    field = reading.WhichOneof("value")
    return getattr(reading, field) if field else None


class GrpcTest(unittest.TestCase):
    sysfs = None

    def start(self, config_text="", sysfs=None, grpc_listen=None, nofile=None, preexec=None):
        self.daemon = Daemon(self, sysfs or self.sysfs or capture(SPX), config_text, grpc_listen, nofile, preexec)
        channel = grpc.insecure_channel(self.daemon.target)
        self.addCleanup(channel.close)
        grpc.channel_ready_future(channel).result(timeout=10)
        self.stub = rpc.MonitorStub(channel)
        self.channel = channel
        self.wait_sampled()
        return self.stub

    def wait_sampled(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            devices = self.stub.ListDevices(pb.ListDevicesRequest()).devices
            if devices and all(d.up for d in devices):
                return devices
            time.sleep(0.05)
        self.fail("devices not all up:\n" + self.daemon.stderr())

    def assert_code(self, code, call, *args, contains=None):
        with self.assertRaises(grpc.RpcError) as caught:
            result = call(*args)
            if hasattr(result, "__next__"):
                list(result)
        self.assertEqual(caught.exception.code(), code, caught.exception.details())
        if contains is not None:
            self.assertIn(contains, caught.exception.details())
        return caught.exception.details()


class ReadTests(GrpcTest):
    def test_devices_match_hipstack_smi(self):
        stub = self.start()
        devices = stub.ListDevices(pb.ListDevicesRequest()).devices
        listed = smi_json("list", sysfs=capture(SPX))["devices"]
        self.assertEqual(len(devices), 8)
        self.assertEqual([(d.index, d.uuid, d.bdf, d.name, d.vendor) for d in devices],
                         [(d["index"], d["uuid"], d["bdf"], d["name"], d["vendor"]) for d in listed])
        for selector in (devices[3].uuid, devices[3].bdf, "3"):
            detail = stub.GetDevice(pb.GetDeviceRequest(device=selector))
            self.assertEqual(detail.device.uuid, devices[3].uuid)
        facts = {r.metric: value_of(r) for r in stub.GetDevice(pb.GetDeviceRequest(device="3")).facts
                 if r.status == pb.READING_STATUS_OK and not r.instance}
        static = smi_json("static", "-g", "3", sysfs=capture(SPX))["devices"][0]["metrics"]
        expected = {name: m["value"] for name, m in static.items() if m.get("status") == "ok"}
        self.assertGreater(len(expected), 10)
        for name in ("vram_total", "pcie_width_max", "power_cap"):
            self.assertEqual(facts.get(name), expected.get(name), name)

    def test_metrics_match_hipstack_smi(self):
        stub = self.start()
        names = ["temperature_junction", "power_current", "vram_used", "gpu_busy", "clock_sclk"]
        snapshot = stub.GetMetrics(pb.GetMetricsRequest(metrics=names))
        cli = smi_json("metric", "-m", ",".join(names), sysfs=capture(SPX))["devices"]
        self.assertEqual(len(snapshot.devices), 8)
        compared = 0
        for ours, theirs in zip(snapshot.devices, cli):
            self.assertEqual(ours.device.uuid, theirs["uuid"])
            got = {(r.metric, r.instance): value_of(r) for r in ours.readings if r.status == pb.READING_STATUS_OK}
            self.assertTrue(set(m for m, _ in got) <= set(names), got)
            for name, metric in theirs["metrics"].items():
                for instance, entry in (metric.get("instances") or {"": metric}).items():
                    if entry.get("status") == "ok":
                        self.assertAlmostEqual(got[(name, instance)], entry["value"])
                        compared += 1
            self.assertGreater(ours.sampled_at_unix_ms, time.time() * 1000 - 60000)
        self.assertGreaterEqual(compared, 8 * 4)
        for reading in snapshot.devices[0].readings:
            self.assertTrue(reading.unit, reading)
            self.assertGreater(reading.metric_id, 0)

    def test_catalogue(self):
        stub = self.start()
        metrics = stub.ListMetrics(pb.ListMetricsRequest()).metrics
        catalogue = subprocess.run([SMI, "catalogue", "--json"], capture_output=True, text=True, check=True).stdout
        names = [m["name"] for m in json.loads(catalogue)["metrics"]]
        self.assertEqual([m.name for m in metrics], names)
        self.assertEqual(len({m.id for m in metrics}), len(metrics))

    def test_history_ring(self):
        stub = self.start("history_length = 5\n")
        request = pb.GetHistoryRequest(devices=["0", "7"], metrics=["power_current"])
        first = [d.samples[0].sampled_at_unix_ms for d in stub.GetHistory(request).devices]
        # Polled until each ring has dropped a sample (its oldest is newer than the oldest seen first):
        # more than five were taken, at whatever pace this machine allows; never more than five kept.
        deadline = time.monotonic() + 20
        while True:
            history = stub.GetHistory(request)
            self.assertEqual(len(history.devices), 2)
            self.assertTrue(all(len(d.samples) <= 5 for d in history.devices), history)
            if all(d.samples[0].sampled_at_unix_ms > f for d, f in zip(history.devices, first)):
                break
            self.assertLess(time.monotonic(), deadline, "the rings did not move on within 20 s:\n%s" % history)
            time.sleep(0.05)
        for device in history.devices:
            self.assertEqual(len(device.samples), 5)
            stamps = [s.sampled_at_unix_ms for s in device.samples]
            self.assertEqual(stamps, sorted(stamps))
            self.assertTrue(all(len(s.readings) == 1 and s.readings[0].metric == "power_current" for s in device.samples))
        newest = stub.GetHistory(pb.GetHistoryRequest(devices=["0"], max_samples=2)).devices[0].samples
        self.assertEqual(len(newest), 2)

    def test_history_pages(self):
        """GetHistory answers in pages of at most 256 KiB; following next_page_token gives every kept
        sample once, in order, even while the rings move on."""
        stub = self.start("fast_interval_ms = 20\nhistory_length = 3600\n")
        deadline = time.monotonic() + 30
        while len(stub.GetHistory(pb.GetHistoryRequest(devices=["7"], metrics=["power_current"])).devices[0].samples) < 150:
            self.assertLess(time.monotonic(), deadline, "150 samples not kept within 30 s")
            time.sleep(0.1)
        seen = {}
        pages = 0
        token = ""
        while True:
            page = stub.GetHistory(pb.GetHistoryRequest(page_token=token))
            pages += 1
            self.assertLessEqual(page.ByteSize(), 256 * 1024 + 4096)  # a page, plus the device headers
            for d in page.devices:
                stamps = seen.setdefault(d.device.bdf, [])
                stamps += [s.sampled_at_unix_ms for s in d.samples]
                self.assertTrue(all(len(s.readings) > 20 for s in d.samples))  # every metric: big samples
            token = page.next_page_token
            if not token:
                break
            self.assertLess(pages, 1000)
        self.assertGreater(pages, 1)
        self.assertEqual(len(seen), 8)
        for bdf, stamps in seen.items():
            self.assertEqual(stamps, sorted(set(stamps)), bdf)  # once each, oldest first
            self.assertGreaterEqual(len(stamps), 150, bdf)
        # max_samples still means the newest N per device, taken on each page: samples that arrive while
        # the client pages are added at the end, none is repeated.
        token, newest = "", []
        while True:
            page = stub.GetHistory(pb.GetHistoryRequest(devices=["0"], max_samples=120, page_token=token))
            newest += [s.sampled_at_unix_ms for d in page.devices for s in d.samples]
            token = page.next_page_token
            if not token:
                break
        self.assertGreaterEqual(len(newest), 120)
        self.assertEqual(newest, sorted(set(newest)))
        self.assertEqual(len(stub.GetHistory(pb.GetHistoryRequest(devices=["0"], metrics=["power_current"], max_samples=120))
                             .devices[0].samples), 120)  # one small page: exactly the newest 120
        for bad in ("x", "9:0", "0:", ":5", "0:5:6", "-1:0", "0:99999999999999999999999"):
            self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, stub.GetHistory,
                             pb.GetHistoryRequest(devices=["0"], page_token=bad), contains="page_token")

    def test_watch_metrics(self):
        stub = self.start()
        start = time.monotonic()
        messages = list(stub.WatchMetrics(pb.WatchMetricsRequest(devices=["1"], metrics=["gpu_busy"], interval_ms=200,
                                                                  max_messages=3)))
        self.assertEqual([m.sequence for m in messages], [1, 2, 3])
        self.assertGreaterEqual(time.monotonic() - start, 0.35)
        for m in messages:
            self.assertEqual(len(m.devices), 1)
            self.assertEqual([r.metric for r in m.devices[0].readings], ["gpu_busy"])

    def test_health(self):
        stub = self.start(sysfs=capture("constructed/mi300x-8gpu-faults"))
        got = stub.GetHealth(pb.GetHealthRequest())
        cli = smi_json("health", sysfs=capture("constructed/mi300x-8gpu-faults"))
        verdict_names = {pb.VERDICT_PASS: "PASS", pb.VERDICT_WARN: "WARN", pb.VERDICT_FAIL: "FAIL", pb.VERDICT_UNKNOWN: "UNKNOWN"}
        self.assertEqual([verdict_names[d.verdict] for d in got.devices], [d["overall"] for d in cli["devices"]])
        self.assertIn(pb.VERDICT_FAIL, [d.verdict for d in got.devices])
        checks = {f.check for d in got.devices for f in d.findings if f.verdict == pb.VERDICT_FAIL}
        self.assertTrue(checks)
        stream = stub.WatchHealth(pb.WatchHealthRequest(devices=["0", "1"]))
        first = next(stream)
        self.assertEqual([d.verdict for d in first.devices], [d.verdict for d in got.devices[:2]])
        stream.cancel()

    def test_partitions(self):
        for name, per_gpu in ((SPX, 1), (CPX, 8)):
            with self.subTest(capture=name):
                stub = self.start(sysfs=capture(name))
                answer = stub.GetPartitions(pb.GetPartitionsRequest())
                self.assertEqual(len(answer.devices), 8)
                for device in answer.devices:
                    self.assertEqual(len(device.partitions), per_gpu)
                    self.assertEqual(device.device.partition_count, per_gpu)
                    self.assertEqual([p.index for p in device.partitions], list(range(per_gpu)))

    def test_health_service_and_reflection(self):
        self.start()
        health = health_rpc.HealthStub(self.channel)
        for service in ("", "hipstack.monitor.v1.Monitor"):
            self.assertEqual(health.Check(health_pb.HealthCheckRequest(service=service)).status,
                             health_pb.HealthCheckResponse.SERVING)
        reflection = refl_rpc.ServerReflectionStub(self.channel)
        requests = [refl_pb.ServerReflectionRequest(list_services=""),
                    refl_pb.ServerReflectionRequest(file_containing_symbol="hipstack.monitor.v1.Monitor")]
        answers = list(reflection.ServerReflectionInfo(iter(requests)))
        services = {s.name for s in answers[0].list_services_response.service}
        self.assertLessEqual({"hipstack.monitor.v1.Monitor", "grpc.health.v1.Health"}, services)
        from google.protobuf import descriptor_pb2
        files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in answers[1].file_descriptor_response.file_descriptor_proto]
        monitor = [s for f in files for s in f.service if s.name == "Monitor"]
        self.assertEqual(len(monitor), 1)
        self.assertIn("WatchMetrics", [m.name for m in monitor[0].method])

    def test_tcp_listener(self):
        stub = self.start(grpc_listen="127.0.0.1:0")
        self.assertEqual(len(stub.ListDevices(pb.ListDevicesRequest()).devices), 8)
        # A busy but well-behaved client is not taken for a flood by the guard (docs/security.md):
        # 300 calls at once, then 100 a second for 3 s, on one connection.
        for _ in range(300):
            stub.ListDevices(pb.ListDevicesRequest())
        until = time.monotonic() + 3
        while time.monotonic() < until:
            start = time.monotonic()
            self.assertEqual(len(stub.ListDevices(pb.ListDevicesRequest()).devices), 8)
            time.sleep(max(0.0, 0.01 - (time.monotonic() - start)))
        self.assertNotIn("closed a gRPC connection", self.daemon.stderr())
        # An address the daemon cannot listen on stops it at once, naming the address and why.
        for listen, says in (("127.0.0.1:65536", "the port must be a number from 0 to 65535"),
                             ("127.0.0.1:http", "the port must be a number"),
                             ("no-such-host.invalid:0", "gRPC cannot listen on no-such-host.invalid:0")):
            done = subprocess.run([SMID, "--sysfs-root", capture(SPX), "--http-listen", "127.0.0.1:0", "--grpc-listen", listen],
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
            self.assertNotEqual(done.returncode, 0, listen)
            self.assertIn(says, done.stderr)


    def test_flood_guard_settings(self):
        # A tight guard closes a client that makes calls back to back, and refuses its address for
        # grpc_flood_refuse_s; once that has passed, the address may connect again.
        stub = self.start("grpc_flood_burst_bytes = 4096\ngrpc_flood_bytes_per_second = 1024\ngrpc_flood_refuse_s = 2\n",
                          grpc_listen="127.0.0.1:0")
        with self.assertRaises(grpc.RpcError) as closed:
            for _ in range(2000):
                stub.ListDevices(pb.ListDevicesRequest(), timeout=5)
        self.assertEqual(closed.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertIn("closed a gRPC connection from 127.0.0.1: it sent", self.daemon.stderr())
        self.assertIn("refused for 2 s", self.daemon.stderr())
        # wait_for_ready: the call waits through the channel's reconnection attempts (a fail-fast call
        # would not drive gRPC Python's polling, and the client then notices the end of the refusal
        # seconds late). It cannot succeed before the refusal ends, and must soon after.
        # A call may still be put on the closed connection before the channel has seen it close: it
        # fails UNAVAILABLE ("Socket closed"; seen once in a ctest -j2 run), and is asked again, within
        # the same 20 s.
        refused_at = time.monotonic()
        while True:
            try:
                devices = stub.ListDevices(pb.ListDevicesRequest(), timeout=max(0.1, refused_at + 20 - time.monotonic()),
                                           wait_for_ready=True).devices
                break
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > refused_at + 20:
                    raise
        self.assertEqual(len(devices), 8)
        self.assertGreater(time.monotonic() - refused_at, 1.5, "the address was not refused for grpc_flood_refuse_s")
        # grpc_flood_bytes_per_second = 0: no guard, the same calls go through.
        stub = self.start("grpc_flood_burst_bytes = 4096\ngrpc_flood_bytes_per_second = 0\n", grpc_listen="127.0.0.1:0")
        for _ in range(2000):
            stub.ListDevices(pb.ListDevicesRequest(), timeout=5)
        self.assertNotIn("closed a gRPC connection", self.daemon.stderr())
        # Out of range: the configuration is refused, naming the line.
        config = os.path.join(self.daemon.dir, "bad.conf")
        with open(config, "w") as f:
            f.write("grpc_flood_burst_bytes = 100\n")
        done = subprocess.run([SMID, "--config", config, "--sysfs-root", capture(SPX), "--http-listen", "127.0.0.1:0", "--once"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("bad.conf:1", done.stderr)


class BadInputTests(GrpcTest):
    def test_unknown_device_and_metric(self):
        stub = self.start()
        self.assert_code(grpc.StatusCode.NOT_FOUND, stub.GetDevice, pb.GetDeviceRequest(device="42"), contains='"42"')
        self.assert_code(grpc.StatusCode.NOT_FOUND, stub.GetMetrics, pb.GetMetricsRequest(devices=["0", "GPU-nope"]),
                         contains="GPU-nope")
        self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, stub.GetMetrics, pb.GetMetricsRequest(metrics=["warp_drive"]),
                         contains="warp_drive")
        self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, stub.GetDevice, pb.GetDeviceRequest(device=""))
        details = self.assert_code(grpc.StatusCode.NOT_FOUND, stub.GetDevice, pb.GetDeviceRequest(device="0\x1b[2J"))
        self.assertNotIn("\x1b", details)
        self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, stub.GetDevice, pb.GetDeviceRequest(device="x" * 500),
                         contains="longer than")
        self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, stub.WatchMetrics, pb.WatchMetricsRequest(interval_ms=5),
                         contains="interval_ms")
        self.assert_code(grpc.StatusCode.INVALID_ARGUMENT, stub.GetMetrics, pb.GetMetricsRequest(devices=["0"] * 2000))

    def test_huge_request_refused(self):
        stub = self.start()
        self.assert_code(grpc.StatusCode.RESOURCE_EXHAUSTED, stub.GetMetrics,
                         pb.GetMetricsRequest(metrics=["gpu_busy" + "x" * (1 << 20)]))
        self.assertEqual(len(stub.ListDevices(pb.ListDevicesRequest()).devices), 8)  # still serving

    def test_garbage_bytes(self):
        self.start()
        # Refused, and the daemon goes on: every method is a callback method, for which gRPC 1.51
        # answers a request it cannot parse with UNIMPLEMENTED (unary and streaming alike).
        garbage = b"\xff\xff\xff\xff\x0f garbage"
        for method in ("GetHistory", "GetMetrics", "SetPowerCap"):
            self.assert_code(grpc.StatusCode.UNIMPLEMENTED, self.channel.unary_unary("/hipstack.monitor.v1.Monitor/" + method), garbage)
        self.assert_code(grpc.StatusCode.UNIMPLEMENTED, self.channel.unary_stream("/hipstack.monitor.v1.Monitor/WatchMetrics"), garbage)
        unknown = self.channel.unary_unary("/hipstack.monitor.v1.Monitor/Format")
        self.assert_code(grpc.StatusCode.UNIMPLEMENTED, unknown, b"")
        self.assertEqual(len(self.stub.ListDevices(pb.ListDevicesRequest()).devices), 8)

    def test_stream_limit(self):
        stub = self.start("max_streams = 2\n")
        open_streams = [stub.WatchMetrics(pb.WatchMetricsRequest(metrics=["gpu_busy"], interval_ms=100)) for _ in range(2)]
        for stream in open_streams:
            next(stream)
        self.assert_code(grpc.StatusCode.RESOURCE_EXHAUSTED,
                         lambda: next(stub.WatchMetrics(pb.WatchMetricsRequest(interval_ms=100))), contains="max_streams")
        open_streams[0].cancel()
        # The handler notices the cancel (within 50 ms when the machine is idle): a third stream is
        # refused until then, and accepted after; polled with a deadline.
        deadline = time.monotonic() + 10
        while True:
            third = stub.WatchMetrics(pb.WatchMetricsRequest(metrics=["gpu_busy"], interval_ms=100, max_messages=1))
            try:
                self.assertEqual(len(list(third)), 1)
                break
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
        open_streams[1].cancel()

    def test_stalled_stream_is_dropped(self):
        """A raw HTTP/2 client (python3-h2) that opens WatchMetrics with a 1 KiB flow-control window and
        never reads: the daemon's write waits, and past slow_consumer_limit_ms the stream is reset."""
        import socket
        import h2.config
        import h2.connection
        import h2.events
        import h2.settings
        self.start("slow_consumer_limit_ms = 500\n", grpc_listen="127.0.0.1:0")
        host, port = self.daemon.target.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=10)
        self.addCleanup(sock.close)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1024})
        request = pb.WatchMetricsRequest(interval_ms=100).SerializeToString()
        conn.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":path", "/hipstack.monitor.v1.Monitor/WatchMetrics"),
                              (":authority", self.daemon.target), ("content-type", "application/grpc"), ("te", "trailers")])
        conn.send_data(1, b"\0" + len(request).to_bytes(4, "big") + request, end_stream=True)
        sock.sendall(conn.data_to_send())
        start = time.monotonic()
        ended = None
        while ended is None and time.monotonic() - start < 10:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):  # never acknowledged: the window stays shut
                if isinstance(event, (h2.events.StreamReset, h2.events.StreamEnded)):
                    ended = event
            sock.sendall(conn.data_to_send())  # settings and pings only; no WINDOW_UPDATE for the stream
        self.assertIsInstance(ended, (h2.events.StreamReset, h2.events.StreamEnded), "the stalled stream was never ended")
        self.assertLess(time.monotonic() - start, 5)
        self.assertIn("dropping a stream", self.daemon.stderr())
        self.assertEqual(len(self.stub.ListDevices(pb.ListDevicesRequest()).devices), 8)  # others carry on

    def test_stuck_device_does_not_delay_answers(self):
        root = os.path.join(tempfile.mkdtemp(prefix="smid-stuck-"), "sys")
        self.addCleanup(shutil.rmtree, os.path.dirname(root), True)
        subprocess.run(["cp", "-a", capture(SPX), root], check=True)
        hwmon = os.path.join(root, "class/drm/card8/device/hwmon")
        path = os.path.join(hwmon, os.listdir(hwmon)[0], "temp2_input")
        self.start("read_deadline_ms = 300\n", sysfs=root)
        os.replace(path, path + ".orig")
        os.mkfifo(path)  # the next read of this GPU blocks in open()
        self.addCleanup(self.unblock, path)
        # The stuck GPU is down once its read outlived read_deadline_ms: polled, with a deadline.
        deadline = time.monotonic() + 20
        while [d.device.up for d in self.stub.GetMetrics(pb.GetMetricsRequest(metrics=["temperature_junction"])).devices].count(False) != 1:
            self.assertLess(time.monotonic(), deadline, "the GPU stuck on a FIFO was not down within 20 s")
            time.sleep(0.05)
        for _ in range(3):
            start = time.monotonic()
            snapshot = self.stub.GetMetrics(pb.GetMetricsRequest(metrics=["temperature_junction"]))
            self.assertLess(time.monotonic() - start, 0.3)
            up = [d.device.up for d in snapshot.devices]
            self.assertEqual(up.count(False), 1, up)
            self.assertEqual([len(d.readings) for d in snapshot.devices if not d.device.up], [0])
            self.assertEqual(sum(1 for d in snapshot.devices if d.device.up and d.readings), 7)

    @staticmethod
    def unblock(path):
        # Opening the FIFO's write end releases the blocked reader; then the file comes back.
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK) if os.path.exists(path) else None
        if fd is not None:
            os.close(fd)
        os.replace(path + ".orig", path)


class FaultTests(GrpcTest):
    """Faults on one GPU of a copied capture while the daemon runs: the others are served as before."""

    def copy_capture(self):
        root = os.path.join(tempfile.mkdtemp(prefix="smid-fault-"), "sys")
        self.addCleanup(shutil.rmtree, os.path.dirname(root), True)
        subprocess.run(["cp", "-a", capture(SPX), root], check=True)
        return root

    def ok_counts(self):
        snapshot = self.stub.GetMetrics(pb.GetMetricsRequest())
        return {d.device.bdf: sum(1 for r in d.readings if r.status == pb.READING_STATUS_OK) for d in snapshot.devices}

    def wait_for(self, predicate, what, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.ok_counts()
            if predicate(counts):
                return counts
            time.sleep(0.1)
        self.fail("%s: %s" % (what, self.ok_counts()))

    def test_device_vanishes_and_returns(self):
        root = self.copy_capture()
        self.start(sysfs=root)
        healthy = self.ok_counts()
        card = os.path.join(root, "class/drm/card8")
        bdf = [d.bdf for d in self.stub.ListDevices(pb.ListDevicesRequest()).devices][1]
        os.rename(card, card + ".gone")
        gone = self.wait_for(lambda c: c[bdf] == 0, "the vanished GPU still has readings")
        # It is down, and says why, while the others stay up.
        devices = {d.bdf: d for d in self.stub.ListDevices(pb.ListDevicesRequest()).devices}
        self.assertFalse(devices[bdf].up)
        self.assertIn("the device is gone", devices[bdf].fault)
        self.assertEqual([b for b, d in devices.items() if not d.up], [bdf])
        self.assertEqual({b: n for b, n in gone.items() if b != bdf}, {b: n for b, n in healthy.items() if b != bdf})
        errors = [r for d in self.stub.GetMetrics(pb.GetMetricsRequest(devices=[bdf])).devices for r in d.readings
                  if r.status in (pb.READING_STATUS_ERROR, pb.READING_STATUS_UNAVAILABLE)]
        self.assertTrue(errors)
        self.assertTrue(any("card8" in r.detail for r in errors), errors[0])
        os.rename(card + ".gone", card)
        self.wait_for(lambda c: c == healthy, "the GPU did not come back")
        self.assertEqual(self.wait_sampled()[1].fault, "")

    def test_hostile_text_decodes(self):
        # Invalid UTF-8 and terminal escapes in the text files: the strings arrive as valid UTF-8
        # (protobuf refuses anything else), with the bytes shown as \xNN.
        root = self.copy_capture()
        for name in ("product_name", "vbios_version", "serial_number"):
            with open(os.path.join(root, "class/drm/card0/device", name), "wb") as f:
                f.write(b"\x1b[31mEvil\xff\xfe\x07 GPU\n")
        self.start(sysfs=root)
        bdf = self.stub.ListDevices(pb.ListDevicesRequest()).devices[0].bdf
        snapshot = self.stub.GetMetrics(pb.GetMetricsRequest(devices=[bdf], include_facts=True))
        texts = {r.metric: r.text for d in snapshot.devices for r in d.readings if r.WhichOneof("value") == "text"}
        self.assertEqual(texts.get("product_name"), "\\x1b[31mEvil\\xff\\xfe\\x07 GPU", texts)
        detail = self.stub.GetDevice(pb.GetDeviceRequest(device=bdf))
        self.assertTrue(detail.ByteSize() > 0)

    def test_malformed_gpu_metrics(self):
        root = self.copy_capture()
        self.start(sysfs=root)
        healthy = self.ok_counts()
        path = os.path.join(root, "class/drm/card8/device/gpu_metrics")
        bdf = [d.bdf for d in self.stub.ListDevices(pb.ListDevicesRequest()).devices][1]
        with open(path + ".bad", "wb") as f:
            f.write(b"\x10\x00\x01\x03" + b"\xff" * 12)  # header says v1.3 of 16 bytes: truncated
        os.replace(path + ".bad", path)
        broken = self.wait_for(lambda c: c[bdf] < healthy[bdf], "the malformed table went unnoticed")
        self.assertGreater(broken[bdf], 0)  # hwmon and sysfs readings carry on
        self.assertEqual({b: n for b, n in broken.items() if b != bdf}, {b: n for b, n in healthy.items() if b != bdf})
        detail = [r.detail for d in self.stub.GetMetrics(pb.GetMetricsRequest(devices=[bdf])).devices for r in d.readings
                  if r.status == pb.READING_STATUS_ERROR]
        self.assertTrue(any("gpu_metrics" in text for text in detail), detail)


class LoadTests(GrpcTest):
    def test_concurrent_streams_and_calls(self):
        stub = self.start("max_streams = 64\n")
        errors = []
        counts = []

        def watch():
            try:
                counts.append(len(list(stub.WatchMetrics(pb.WatchMetricsRequest(interval_ms=100, max_messages=15)))))
            except grpc.RpcError as e:
                errors.append(e)

        def poll():
            try:
                for _ in range(40):
                    stub.GetMetrics(pb.GetMetricsRequest())
                    stub.GetHealth(pb.GetHealthRequest())
            except grpc.RpcError as e:
                errors.append(e)

        def round_of_load():
            threads = [threading.Thread(target=watch) for _ in range(24)] + [threading.Thread(target=poll) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)

        if os.environ.get("HIPSTACK_SANITIZED"):
            # AddressSanitizer holds freed memory in quarantine: RSS says nothing there, so the eight
            # rounds that measure it would only repeat what two rounds show the sanitizers.
            for _ in range(2):
                round_of_load()
            self.assertEqual(errors, [])
            self.assertEqual(counts, [15] * 24 * 2)
            return
        for _ in range(4):
            round_of_load()  # warm-up: thread stacks, arenas and gRPC's buffers reach their working size
        first = self.daemon.rss_kb()
        for _ in range(4):
            round_of_load()
        second = self.daemon.rss_kb()
        self.assertEqual(errors, [])
        self.assertEqual(counts, [15] * 24 * 8)
        # Four more equal rounds (1440 stream messages of every metric of 8 GPUs, 320 calls) must not
        # keep growing the daemon: a leak of a message or a snapshot per stream would add tens of MB.
        self.assertLess(second - first, 8192,
                        "RSS grew from %d to %d KiB over four more equal rounds" % (first, second))
        print("load: RSS %d KiB after four rounds, %d KiB after eight" % (first, second), file=sys.stderr)


def load_grpc(stubs):
    """Imports grpc and the stubs generated into `stubs` as this module's globals (PROTO set)."""
    global grpc, pb, rpc, health_pb, health_rpc, refl_pb, refl_rpc
    import grpc as grpc_module
    grpc = grpc_module
    generate_stubs(stubs)
    from hipstack.monitor.v1 import monitor_pb2, monitor_pb2_grpc
    from standard import health_pb2, health_pb2_grpc
    from standard import reflection_pb2, reflection_pb2_grpc
    pb, rpc = monitor_pb2, monitor_pb2_grpc
    health_pb, health_rpc = health_pb2, health_pb2_grpc
    refl_pb, refl_rpc = reflection_pb2, reflection_pb2_grpc


def run_as_root(setup, own_args=0):
    """main() of the suites that run a client as nobody (test_grpc_mutations.py, test_jobs.py):
    exits 77 unless root; argv is this module's four paths, then `own_args` of the suite's own,
    then unittest's. The stubs go to a folder nobody may read; setup(stubs, own) runs before the
    tests. A skip inside a passing run is reported to ctest as one (77), never as a pass."""
    global SMID, SMI, CAPTURES, PROTO
    if os.geteuid() != 0:
        print("SKIP: needs root (runs a client as nobody)")
        sys.exit(77)
    SMID, SMI, CAPTURES, PROTO = (os.path.abspath(a) for a in sys.argv[1:5])
    own = sys.argv[5:5 + own_args]
    stubs = tempfile.mkdtemp(prefix="smid-stubs-")
    os.chmod(stubs, 0o755)  # the client run as nobody imports them
    try:
        load_grpc(stubs)
        setup(stubs, own)
        result = unittest.main(argv=[sys.argv[0]] + sys.argv[5 + own_args:], verbosity=2, exit=False).result
        if not result.wasSuccessful():
            sys.exit(1)
        if result.skipped:
            print("SKIP: " + "; ".join(f"{test.id()}: {why}" for test, why in result.skipped))
            sys.exit(77)
    finally:
        shutil.rmtree(stubs, ignore_errors=True)


# ctest runs this file as two tests, `--part reads` and `--part faults` (each within a margin of its
# timeout: docs/testing.md, "Margins"); every test class belongs to exactly one part.
PARTS = {"reads": ("ReadTests",), "faults": ("BadInputTests", "FaultTests", "LoadTests")}


def part_arguments(argv, parts, namespace, base_class):
    """unittest's arguments for `--part NAME ...` (the part's classes), or argv as it is. `parts` names
    the classes of each part; every subclass of `base_class` in `namespace` (a module's globals) must
    be in exactly one part, so a new class is never left out."""
    if argv[:1] != ["--part"]:
        return argv
    if len(argv) < 2 or argv[1] not in parts:
        sys.exit("--part takes one of: " + ", ".join(parts))
    classes = {name for name, value in namespace.items()
               if isinstance(value, type) and issubclass(value, base_class) and value is not base_class}
    placed = [name for names in parts.values() for name in names]
    if sorted(placed) != sorted(classes):
        sys.exit("the parts must name every test class once: classes %s, parts %s" % (sorted(classes), sorted(placed)))
    return list(parts[argv[1]]) + argv[2:]


def main():
    global SMID, SMI, CAPTURES, PROTO
    SMID, SMI, CAPTURES, PROTO = (os.path.abspath(a) for a in sys.argv[1:5])
    stubs = tempfile.mkdtemp(prefix="smid-stubs-")
    try:
        load_grpc(stubs)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        unittest.main(argv=[sys.argv[0]] + part_arguments(sys.argv[5:], PARTS, globals(), GrpcTest), verbosity=2)
    finally:
        shutil.rmtree(stubs, ignore_errors=True)


if __name__ == "__main__":
    main()
