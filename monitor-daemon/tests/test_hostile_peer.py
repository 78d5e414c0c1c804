#!/usr/bin/env python3
"""hipstack-smi --host against a hostile daemon: every string it answers carries terminal controls.

Usage: test_hostile_peer.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR [unittest arguments]

A real hipstack-smid reads the faults capture (job accounting on, one job started); in front of it a
proxy (Python's gRPC server, the project's own proto) forwards every call of hipstack.monitor.v1 and
appends to every string field of every answer an OSC title change, a screen clear, a colour, CR, BS,
DEL, a C1 CSI and a bidirectional override (metric names aside: a reading under an unknown name is
dropped, not shown); WatchEvents answers one such event. Every command that talks to a daemon, in
every format, must print none of those bytes raw (issue 40: one compromised node in a fleet view
could rewrite other rows); tables and CSV show them as the library's printable text (\\xNN), JSON
escapes them. The daemon and the proxy are started here and stopped by PID; waits are bounded.
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
from concurrent import futures

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smid_http import monitor_stubs, start_smid  # noqa: E402

SMID = SMI = CAPTURES = PROTO = None
pb = rpc = None
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mPASS\r\b\x7f\u009b1m\u202eLIAF"
# What must never reach the output raw: C0 controls but newline and tab, DEL, C1, the bidi overrides.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")
KEEP = {"metric"}  # catalogue names: a reading under an unknown name is dropped, so nothing to see


def spoil(message):
    """Appends HOSTILE to every string field of `message`, recursively (maps and lists included)."""
    for field, value in message.ListFields():
        if field.type == field.TYPE_STRING and field.name not in KEEP:
            if field.label == field.LABEL_REPEATED:
                spoiled = [v + HOSTILE for v in value]
                del value[:]
                value.extend(spoiled)
            else:
                setattr(message, field.name, value + HOSTILE)
        elif field.type == field.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry:
                for key in list(value.keys()):
                    item = value[key]
                    if hasattr(item, "ListFields"):
                        spoil(item)
                    elif isinstance(item, str):
                        value[key] = item + HOSTILE
            elif field.label == field.LABEL_REPEATED:
                for item in value:
                    spoil(item)
            else:
                spoil(value)


class HostileProxy(grpc.GenericRpcHandler):
    """Forwards each Monitor call to the real daemon and spoils its answer."""

    def __init__(self, upstream, delay_s=0.0, hostile=True):
        self.channel = grpc.insecure_channel(upstream)
        self.service_descriptor = pb.DESCRIPTOR.services_by_name["Monitor"]
        self.calls = []
        self.delay_s = delay_s  # each unary answer this late (a slow host)
        self.hostile = hostile

    def service(self, details):
        name = details.method.rsplit("/", 1)[-1]
        method = self.service_descriptor.methods_by_name.get(name)
        if method is None:
            return None
        request_type = getattr(pb, method.input_type.name)
        response_type = getattr(pb, method.output_type.name)
        self.calls.append(name)
        if name == "WatchEvents":
            def events(request, context):
                event = pb.Event(sequence=1, time_unix_ms=int(time.time() * 1000), kind="memory-errors", device_index=0,
                                 bdf="0000:05:00.0", uuid="GPU-x", metric="ecc_corrected_volatile", before="1", after="2",
                                 message="2 corrected errors")
                batch = pb.EventBatch(events=[event])
                spoil(batch)
                yield batch
                while context.is_active():
                    time.sleep(0.05)
            return grpc.unary_stream_rpc_method_handler(events, request_type.FromString, response_type.SerializeToString)
        if method.server_streaming:
            forward_stream = self.channel.unary_stream(details.method, request_type.SerializeToString, response_type.FromString)

            def streamed(request, context):
                for answer in forward_stream(request, timeout=30):
                    spoil(answer)
                    yield answer
            return grpc.unary_stream_rpc_method_handler(streamed, request_type.FromString, response_type.SerializeToString)
        forward = self.channel.unary_unary(details.method, request_type.SerializeToString, response_type.FromString)

        def unary(request, context):
            time.sleep(self.delay_s)
            try:
                answer = forward(request, timeout=30)
            except grpc.RpcError as e:
                context.abort(e.code(), e.details() + (HOSTILE if self.hostile else ""))
            if self.hostile:
                spoil(answer)
            return answer
        return grpc.unary_unary_rpc_method_handler(unary, request_type.FromString, response_type.SerializeToString)


class ClassScope:
    """What start_smid needs of a test (addCleanup, the assertions), for a daemon the whole class shares."""

    def __init__(self, cls):
        self.cls = cls
        self.checks = unittest.TestCase()

    def addCleanup(self, function, *args):  # noqa: N802 (unittest's name)
        self.cls.addClassCleanup(function, *args)

    def __getattr__(self, name):
        return getattr(self.checks, name)


class HostilePeerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="smi-hostile-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        capture = os.path.join(CAPTURES, "constructed", "mi300x-8gpu-faults", "sys")
        upstream = start_smid(ClassScope(cls), SMID, capture, cls.dir, config="job_db = %s\n" % os.path.join(cls.dir, "jobs.db"))
        channel = grpc.insecure_channel(upstream)
        cls.addClassCleanup(channel.close)
        rpc.MonitorStub(channel).StartJob(pb.StartJobRequest(id="4711", user="alice", devices=["0"]), timeout=30)
        cls.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[HostileProxy(upstream)])
        cls.socket = os.path.join(cls.dir, "hostile.sock")
        cls.server.add_insecure_port("unix://" + cls.socket)
        cls.server.start()
        cls.addClassCleanup(cls.server.stop, None)
        cls.host = "unix://" + cls.socket
        cls.upstream = upstream
        # A slow host: each call answered in 1.5 s (honestly).
        cls.slow_server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[HostileProxy(upstream, 1.5, False)])
        cls.slow_host = "unix://" + os.path.join(cls.dir, "slow.sock")
        cls.slow_server.add_insecure_port(cls.slow_host)
        cls.slow_server.start()
        cls.addClassCleanup(cls.slow_server.stop, None)

    def smi(self, *args):
        return subprocess.run([SMI, "--host", self.host] + list(args), capture_output=True, timeout=60)

    def assert_printable(self, what, out):
        text = out.decode("utf-8")  # valid UTF-8, or this raises
        raw = sorted({"U+%04X" % ord(c) for c in RAW.findall(text)})
        self.assertEqual(raw, [], "%s printed raw controls:\n%s" % (what, text[:3000]))

    def test_every_command_prints_no_raw_control(self):
        commands = (["list"], [], ["static"], ["metric"], ["health"], ["partition"], ["ras"], ["process"],
                    ["job", "show", "4711"], ["job", "list"])
        shown = 0
        for command in commands:
            for fmt in ([], ["--csv"], ["--json"]):
                if command == [] and fmt:
                    continue  # the default view has no machine form
                with self.subTest(command=" ".join(command + fmt)):
                    r = self.smi(*fmt, *command)
                    self.assert_printable(" ".join(command + fmt) + " stdout", r.stdout)
                    self.assert_printable(" ".join(command + fmt) + " stderr", r.stderr)
                    out = r.stdout.decode()
                    if fmt == ["--json"] and r.stdout:
                        json.loads(out)
                    # The hostile text is there, shown as text: in tables and CSV as \xNN.
                    if fmt != ["--json"] and "\\x1b]0;owned\\x07" in out:
                        shown += 1
        self.assertGreaterEqual(shown, 10, "the proxy's text never reached the output: the test proves nothing")
        # A job stopped through the proxy: its answer is printed too.
        r = self.smi("job", "stop", "--id", "4711")
        self.assert_printable("job stop", r.stdout + r.stderr)
        self.assertIn("\\x1b[2J", r.stdout.decode(), r.stderr.decode())

    def test_a_slow_host_costs_its_budget_once(self):
        """Issue 40: a host answering each call in 4.5 s (timeout 5 s) made `partition` take 36 s for
        4 GPUs, a call per GPU each within its own timeout. --host-timeout-ms is now the host's budget
        for the whole command: the slow host is named once it is spent, the other host is shown in
        full, and the command ends within 3 x --host-timeout-ms."""
        for command in (["partition"], ["--json", "static"], ["query", "--partitions", "-m", "compute_partition"]):
            with self.subTest(command=command):
                started = time.monotonic()
                r = subprocess.run([SMI, "--host", "%s,%s" % (self.slow_host, self.upstream), "--host-timeout-ms", "2000"]
                                   + command, capture_output=True, text=True, timeout=120)
                took = time.monotonic() - started
                print("%s over a host answering in 1.5 s per call, --host-timeout-ms 2000: %.1f s" % (" ".join(command), took))
                self.assertEqual(r.returncode, 9, r.stderr)
                said = r.stderr if "--json" in command else r.stdout
                self.assertRegex(said, r"host %s: NO ANSWER: .*(are used up|Deadline Exceeded)" % re.escape(self.slow_host))
                self.assertNotIn("host %s: NO ANSWER" % self.upstream, said)
                self.assertLess(took, 3 * 2.0 + 3, "the slow host held the command up past its deadline")

    def test_events_print_no_raw_control(self):
        for fmt in ([], ["--csv"], ["--json"]):
            with self.subTest(format=fmt):
                proc = subprocess.Popen([SMI, "--host", self.host, *fmt, "event"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                out = b""
                try:
                    deadline = time.monotonic() + 20
                    while b"ecc_corrected_volatile" not in out and time.monotonic() < deadline:
                        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
                        if not ready:
                            break
                        chunk = os.read(proc.stdout.fileno(), 65536)
                        if not chunk:
                            break
                        out += chunk
                finally:
                    os.kill(proc.pid, signal.SIGTERM)
                    _, err = proc.communicate(timeout=10)
                self.assertIn(b"ecc_corrected_volatile", out, err)
                self.assert_printable("event %s stdout" % fmt, out)
                self.assert_printable("event %s stderr" % fmt, err)


def main():
    global SMID, SMI, CAPTURES, PROTO, pb, rpc
    SMID, SMI, CAPTURES, PROTO = sys.argv[1:5]
    stubs = tempfile.mkdtemp(prefix="smi-hostile-stubs-")
    try:
        pb, rpc = monitor_stubs(PROTO, stubs)
        unittest.main(argv=[sys.argv[0]] + sys.argv[5:], verbosity=2)
    finally:
        shutil.rmtree(stubs, True)


if __name__ == "__main__":
    main()
