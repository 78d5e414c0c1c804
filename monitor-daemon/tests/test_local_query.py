#!/usr/bin/env python3
"""hipstack-smid's local query protocol (proto/hipstack/monitor/v1/local.proto): hipstack-smi's fast
path on the daemon's unix socket. It answers what the gRPC methods answer, serves read-only methods
only, and bounds every connection: hostile calls get an error naming what was wrong, silent or foreign
connections are closed, and 16 held connections leave gRPC and later clients served.

Usage: test_local_query.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR [unittest arguments]

Uses test_grpc.py's daemon (a unix socket in a temporary folder, stopped by PID).
"""
import os
import select
import shutil
import socket
import struct
import sys
import tempfile
import time
import unittest

import test_grpc as base
from smid_http import http_get

HELLO = b"HSQUERY1"
OK, INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED, UNIMPLEMENTED = 0, 3, 5, 8, 12


def ends_within(sock, seconds):
    """Whether the daemon closes `sock` within `seconds` (reads and drops what it sends first)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            try:
                if sock.recv(65536) == b"":
                    return True
            except ConnectionResetError:
                return True
    return False


# Threads gRPC 1.51 starts (their names as the kernel keeps them, 15 characters).
GRPC_THREADS = {"grpc_global_tim", "nexting_thread", "event_engine", "timer_manager", "default-executo", "resolver-execut",
                "grpcpp_sync_ser"}


def thread_names(pid):
    names = set()
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, task)) as f:
                names.add(f.read().strip())
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return names


class LocalQueryTests(base.GrpcTest):
    def connect(self, hello=HELLO):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(sock.close)
        sock.settimeout(10)
        sock.connect(self.daemon.socket)
        if hello:
            sock.sendall(hello)
        return sock

    def daemon_cpu_s(self):
        """User plus system CPU seconds of the daemon so far (/proc/PID/stat)."""
        with open("/proc/%d/stat" % self.daemon.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def send_frame(self, sock, payload):
        sock.sendall(struct.pack(">I", len(payload)) + payload)

    def reply(self, sock):
        header = self.read_exact(sock, 4)
        self.assertIsNotNone(header, "the daemon closed the connection instead of answering")
        reply = LOCAL.LocalReply()
        reply.ParseFromString(self.read_exact(sock, struct.unpack(">I", header)[0]))
        return reply

    def read_exact(self, sock, size):
        """`size` bytes, or None when the daemon closed the connection first (an end of stream, or a
        reset: closing with our request still unread, as when it refuses a connection, resets it)."""
        data = b""
        while len(data) < size:
            try:
                chunk = sock.recv(size - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data

    def call(self, sock, method, request):
        self.send_frame(sock, LOCAL.LocalCall(method=method, request=request.SerializeToString()).SerializeToString())
        return self.reply(sock)

    def test_answers_what_grpc_answers(self):
        started = time.monotonic()
        stub = self.start()
        sock = self.connect()
        reply = self.call(sock, "ListDevices", base.pb.ListDevicesRequest())
        asked = time.monotonic()
        self.assertEqual(reply.code, OK, reply.message)
        local = base.pb.ListDevicesResponse.FromString(reply.response)
        remote = stub.ListDevices(base.pb.ListDevicesRequest())
        strip = lambda devices: [(d.index, d.uuid, d.bdf, d.name, d.up, d.fault) for d in devices]
        self.assertEqual(strip(local.devices), strip(remote.devices))
        self.assertEqual(len(local.devices), 8)
        # Every GPU was sampled (wait_sampled), and no sample is older than the daemon: a real age,
        # not -1 (never sampled) nor a clock's reading. Bounded by the test's own watch, not by a
        # constant: a sanitizer build on a busy machine takes seconds over its first 8 GPUs.
        ages = [d.sample_age_seconds for d in local.devices]
        self.assertTrue(all(0 <= age <= asked - started for age in ages), (ages, asked - started))
        # The same readings (values move between samples; names, instances and statuses do not).
        request = base.pb.GetMetricsRequest(devices=["1"], include_facts=True)
        reply = self.call(sock, "GetMetrics", request)
        self.assertEqual(reply.code, OK, reply.message)
        shape = lambda snapshot: [(r.metric, r.instance, r.status) for d in snapshot.devices for r in d.readings]
        local = base.pb.MetricsSnapshot.FromString(reply.response)
        self.assertEqual(shape(local), shape(stub.GetMetrics(request)))
        self.assertGreater(len(shape(local)), 50)
        # An error is the gRPC method's code and message.
        reply = self.call(sock, "GetDevice", base.pb.GetDeviceRequest(device="GPU-does-not-exist"))
        with self.assertRaises(base.grpc.RpcError) as raised:
            stub.GetDevice(base.pb.GetDeviceRequest(device="GPU-does-not-exist"))
        self.assertEqual(reply.code, raised.exception.code().value[0])
        self.assertEqual(reply.message, raised.exception.details())
        self.assertEqual(reply.response, b"")

    def test_grpc_starts_at_its_first_grpc_connection(self):
        """Until a gRPC client connects, gRPC has none of its threads in the daemon (issue 44: idle gRPC
        costs nothing): scrapes and the local query protocol are served without it, and the first
        gRPC call starts it (then answers as always)."""
        self.daemon = base.Daemon(self, base.capture(base.SPX))
        sock = self.connect()
        reply = self.call(sock, "ListDevices", base.pb.ListDevicesRequest())
        self.assertEqual(reply.code, OK, reply.message)
        self.assertEqual(len(base.pb.ListDevicesResponse.FromString(reply.response).devices), 8)
        status, _, _ = http_get(self.daemon.http_port, "/metrics")
        self.assertEqual(status, 200)
        before = thread_names(self.daemon.proc.pid)
        self.assertFalse(before & GRPC_THREADS, "gRPC threads before any gRPC call: %s" % sorted(before))
        self.assertIn("smid-sampler", before)
        channel = base.grpc.insecure_channel(self.daemon.target)
        self.addCleanup(channel.close)
        stub = base.rpc.MonitorStub(channel)
        self.assertEqual(len(stub.ListDevices(base.pb.ListDevicesRequest(), timeout=10).devices), 8)
        after = thread_names(self.daemon.proc.pid)
        self.assertTrue(after & GRPC_THREADS, "no gRPC thread serves the call: %s" % sorted(after))

    def test_hostile_calls_get_errors_that_name_them(self):
        self.start()
        sock = self.connect()
        # Mutations are not served here, whoever asks (root included): gRPC checks who may.
        for method in ("SetPowerCap", "ResetDevice", "WatchMetrics", "Bad\x1b[31mName" + "x" * 500):
            reply = self.call(sock, method, base.pb.ListDevicesRequest())
            self.assertEqual(reply.code, UNIMPLEMENTED, method)
            self.assertIn("not a read-only method", reply.message)
            self.assertTrue(reply.message.isprintable(), reply.message)
            self.assertLess(len(reply.message), 200)
        # A call that does not parse, then a request that does not: errors, and the connection goes on.
        self.send_frame(sock, b"\xff\xff\xff")
        reply = self.reply(sock)
        self.assertEqual(reply.code, INVALID_ARGUMENT)
        self.assertIn("does not parse", reply.message)
        self.send_frame(sock, LOCAL.LocalCall(method="GetMetrics", request=b"\xff\xff").SerializeToString())
        reply = self.reply(sock)
        self.assertEqual(reply.code, INVALID_ARGUMENT)
        self.assertIn("GetMetrics", reply.message)
        self.assertEqual(self.call(sock, "ListDevices", base.pb.ListDevicesRequest()).code, OK)
        # A frame announced larger than any request: refused, then the connection ends.
        sock.sendall(struct.pack(">I", 1 << 30))
        reply = self.reply(sock)
        self.assertEqual(reply.code, RESOURCE_EXHAUSTED)
        self.assertIn("larger than", reply.message)
        self.assertTrue(ends_within(sock, 5))

    def test_silent_and_foreign_connections_are_closed(self):
        stub = self.start()
        silent = self.connect(hello=None)
        foreign = self.connect(hello=b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        cpu_before = self.daemon_cpu_s()
        half = self.connect(hello=b"HSQ")  # a prefix of the hello, and no more
        self.assertTrue(ends_within(foreign, 2), "a connection speaking neither protocol stayed open")
        # Meanwhile gRPC and the local protocol are served.
        self.assertEqual(len(stub.ListDevices(base.pb.ListDevicesRequest()).devices), 8)
        self.assertEqual(self.call(self.connect(), "ListDevices", base.pb.ListDevicesRequest()).code, OK)
        started = time.monotonic()
        self.assertTrue(ends_within(silent, 6), "a connection that said nothing stayed open")
        self.assertTrue(ends_within(half, 6), "a connection that sent half a hello stayed open")
        self.assertLess(time.monotonic() - started, 6)
        # Waiting up to 2 s for the rest of a hello did not spin a thread (a 100 ms sampler over
        # 8 GPUs and the calls above take a fraction of that).
        self.assertLess(self.daemon_cpu_s() - cpu_before, 1.0)
        # After its hello, a connection that makes no call ends after the idle limit (5 s).
        idle = self.connect()
        self.assertTrue(ends_within(idle, 9), "an idle local query connection stayed open")

    def test_held_connections_leave_grpc_and_later_clients_served(self):
        stub = self.start()
        held = [self.connect() for _ in range(16)]
        for sock in held:  # each has a slot: it is answered
            self.assertEqual(self.call(sock, "ListDevices", base.pb.ListDevicesRequest()).code, OK)
        extra = self.connect()
        self.assertTrue(ends_within(extra, 2), "a 17th local query connection was kept")
        self.assertEqual(len(stub.ListDevices(base.pb.ListDevicesRequest()).devices), 8)
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 5
        while True:  # the slots free as the daemon sees each connection end
            sock = self.connect()
            self.send_frame(sock, LOCAL.LocalCall(method="ListDevices").SerializeToString())
            header = self.read_exact(sock, 4)
            if header is not None or time.monotonic() > deadline:
                break
        self.assertIsNotNone(header, "no slot came free after the held connections closed")


LOCAL = None


def main():
    global LOCAL
    base.SMID, base.SMI, base.CAPTURES, base.PROTO = (os.path.abspath(a) for a in sys.argv[1:5])
    stubs = tempfile.mkdtemp(prefix="smid-stubs-")
    try:
        base.load_grpc(stubs)
        from hipstack.monitor.v1 import local_pb2
        LOCAL = local_pb2
        unittest.main(argv=[sys.argv[0]] + sys.argv[5:], verbosity=2)
    finally:
        shutil.rmtree(stubs, ignore_errors=True)


if __name__ == "__main__":
    main()
