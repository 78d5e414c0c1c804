#!/usr/bin/env python3
"""hipstack-smid's WatchEvents against hipstack-smi event, on one copied capture changed under both.

Usage: test_events.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR

Both run the library's event rules (hipstack/events.hpp): each planted change (RAS counts rising, a
counter going back, throttled firmware samples, a partition mode change) must come out of the
daemon's stream with the kind, metric and values the CLI prints for it. Then what only a daemon
does: a GPU whose card folder goes away is "unreadable" (the daemon keeps sampling the GPUs it
started with) and "readable" when it is back; a stream opened with since_sequence replays the kept
events; a device filter holds; a bad selector is refused.

No sleep stands for "it has happened": streams and the CLI's output are read as they come, each
change is planted once the previous one's event came out, and every wait is bounded and names what
it awaited.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import test_grpc as base

WAIT_S = 30  # the longest wait for one event (a loaded machine): a bound, not a pace
FAULTS = "constructed/mi300x-8gpu-faults"


class Collected:
    """Items appended by a reader thread, waited on with a condition."""

    def __init__(self):
        self.cond = threading.Condition()
        self.items = []

    def add(self, item):
        with self.cond:
            self.items.append(item)
            self.cond.notify_all()

    def wait_for(self, test, what, timeout=WAIT_S, poke=None):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = [i for i in self.items if test(i)]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no %s within %d s; seen:\n%s" % (what, timeout, "\n".join(map(str, self.items))))
                if poke is not None:
                    self.cond.release()
                    try:
                        poke()
                    finally:
                        self.cond.acquire()
                self.cond.wait(min(left, 0.05) if poke else left)

    def snapshot(self):
        with self.cond:
            return list(self.items)


def replace(path, data):
    with open(path + ".new", "wb") as f:
        f.write(data)
    os.replace(path + ".new", path)


def value_of_metric(stub, device, name):
    """One reading of a device through GetMetrics (facts included)."""
    reply = stub.GetMetrics(base.pb.GetMetricsRequest(devices=[str(device)], metrics=[name], include_facts=True))
    for d in reply.devices:
        for r in d.readings:
            if r.metric == name:
                return base.value_of(r)
    raise AssertionError("no %s for GPU %s: %s" % (name, device, reply))


def key(kind, bdf, metric, before, after):
    return (kind, bdf, metric, before, after)


# The changes test_the_daemon_streams_what_the_cli_prints makes on the faults capture, as events.
PLANTED = [key("memory-errors", "0000:27:00.0", "ras_uncorrectable[umc]", "2", "3"),
           key("memory-errors", "0000:27:00.0", "ras_correctable[umc]", "14", "20"),
           key("counters-restarted", "0000:c7:00.0", "violation_residency[socket_thermal]", "2764938", "0"),
           key("throttling", "0000:c7:00.0", "violation_residency[socket_thermal]", "0", "2764938"),
           key("partition-mode-changed", "0000:47:00.0", "compute_partition", "SPX", "CPX")]


class EventTests(base.GrpcTest):
    def start_cli(self, *args):
        """hipstack-smi ARGS running, its JSON lines read into a Collected as they come."""
        proc = subprocess.Popen([base.SMI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        lines = Collected()

        def read():
            for line in proc.stdout:
                lines.add(json.loads(line))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        return proc, lines, reader

    def start_stream(self, stub, request):
        """WatchEvents read by a thread: a Collected of its events and one of each batch's missed count."""
        events, batches = Collected(), Collected()
        call = stub.WatchEvents(request)
        self.addCleanup(call.cancel)

        def read():
            try:
                for batch in call:
                    batches.add(batch.missed)
                    for e in batch.events:
                        events.add(e)
            except base.grpc.RpcError:
                pass  # cancelled at the end
        threading.Thread(target=read, daemon=True).start()
        return events, batches

    def test_the_daemon_streams_what_the_cli_prints(self):
        work = tempfile.mkdtemp(prefix="smid-events-")
        self.addCleanup(shutil.rmtree, work, True)
        sysfs = os.path.join(work, "sys")
        subprocess.run(["cp", "-a", base.capture(FAULTS), sysfs], check=True)
        card = lambda n, *path: os.path.join(sysfs, "class/drm/card%d/device" % n, *path)
        # Every sample reads everything, the slow facts (partition modes) included.
        stub = self.start("costly_interval_ms = 100\nslow_interval_ms = 100\n", sysfs=sysfs)
        events, _ = self.start_stream(stub, base.pb.WatchEventsRequest())
        gpu1_events, _ = self.start_stream(stub, base.pb.WatchEventsRequest(devices=["0000:27:00.0"]))
        cli, printed, cli_reader = self.start_cli("--sysfs-root", sysfs, "--json", "event", "-w", "0.1")
        # hipstack-smi --host: the daemon's stream printed as the CLI prints its own events.
        remote, printed_remote, remote_reader = self.start_cli("--host", self.daemon.target, "--json", "event")
        self.wait_for_first_looks(stub, card, events, printed, printed_remote)
        self.plant_changes(card, events, printed)
        streamed = self.check_the_outputs_agree(stub, events, printed, printed_remote)
        for proc, reader in ((remote, remote_reader), (cli, cli_reader)):
            proc.terminate()
            proc.wait(timeout=30)
            reader.join(timeout=10)
            self.assertEqual(proc.stderr.read(), "")

        # The device filter: GPU 1's events only, all of them.
        gpu1 = [key(e.kind, e.bdf, e.metric, e.before, e.after) for e in gpu1_events.snapshot()]
        self.assertEqual(gpu1, [k for k in streamed if k[1] == "0000:27:00.0"])
        self.assertTrue(gpu1)
        self.check_a_gpu_leaving_and_a_replay(stub, events, sysfs, work)

    def wait_for_first_looks(self, stub, card, events, printed, printed_remote):
        """Every GPU answering first: a GPU stale at its first look has no readings to compare a change
        planted on it with (docs/events.md), so its next fresh look must come before the changes. Both
        have taken their first look once a count raised every 50 ms comes out of both."""
        deadline = time.monotonic() + WAIT_S
        while not all(d.up for d in stub.ListDevices(base.pb.ListDevicesRequest()).devices):
            self.assertLess(time.monotonic(), deadline, "not every GPU up within %d s" % WAIT_S)
            time.sleep(0.05)
        bumps = iter(range(1, 1000000))
        poke = lambda: replace(card(0, "ras/umc_err_count"), b"ue: 0\nce: %d\nde: 0\n" % next(bumps))
        events.wait_for(lambda e: e.metric == "ras_correctable[umc]" and e.bdf == "0000:05:00.0", "daemon: first look", poke=poke)
        printed.wait_for(lambda e: e["metric"] == "ras_correctable[umc]" and e["bdf"] == "0000:05:00.0", "CLI: first look",
                         poke=poke)
        printed_remote.wait_for(lambda e: e["metric"] == "ras_correctable[umc]" and e["bdf"] == "0000:05:00.0",
                                "--host: stream open", poke=poke)

    def plant_changes(self, card, events, printed):
        """The changes of PLANTED, each seen by the daemon and the CLI before the next is made."""
        def both(kind, bdf):
            events.wait_for(lambda e: e.kind == kind and e.bdf == bdf, "daemon: %s %s" % (kind, bdf))
            printed.wait_for(lambda e: e["event"] == kind and e["bdf"] == bdf, "CLI: %s %s" % (kind, bdf))

        replace(card(8, "ras/umc_err_count"), b"ue: 3\nce: 20\nde: 0\n")  # GPU 1: 2 -> 3 uncorrectable, 14 -> 20
        both("memory-errors", "0000:27:00.0")
        events.wait_for(lambda e: e.metric == "ras_correctable[umc]" and e.bdf == "0000:27:00.0", "daemon: GPU 1 correctable")
        with open(os.path.join(base.capture(base.SPX), "class/drm/card48/device/gpu_metrics"), "rb") as f:
            calm = f.read()
        with open(card(48, "gpu_metrics"), "rb") as f:
            throttled = f.read()
        replace(card(48, "gpu_metrics"), calm)  # GPU 6: its counters start again from 0
        both("counters-restarted", "0000:c7:00.0")
        replace(card(48, "gpu_metrics"), throttled)  # ...and socket_thermal residency rises
        both("throttling", "0000:c7:00.0")
        replace(card(16, "current_compute_partition"), b"CPX\n")  # GPU 2
        both("partition-mode-changed", "0000:47:00.0")

    def check_the_outputs_agree(self, stub, events, printed, printed_remote):
        """Every planted change on the daemon's stream, the CLI's lines and --host's, in the same words
        and order, with sequences and device ids right. The daemon's events as keys."""
        streamed = [key(e.kind, e.bdf, e.metric, e.before, e.after) for e in events.snapshot()]
        from_cli = [key(e["event"], e["bdf"], e["metric"], e["before"], e["after"]) for e in printed.snapshot()]
        printed_remote.wait_for(lambda e: e["event"] == "partition-mode-changed", "--host: partition-mode-changed")
        remotely = {key(e["event"], e["bdf"], e["metric"], e["before"], e["after"]): e for e in printed_remote.snapshot()}
        for item in PLANTED:
            self.assertIn(item, remotely, "--host:\n" + "\n".join(map(str, remotely)))
        local_lines = {key(e["event"], e["bdf"], e["metric"], e["before"], e["after"]): e for e in printed.snapshot()}
        for item in PLANTED:  # the same object but for the time
            self.assertEqual(dict(remotely[item], time=None), dict(local_lines[item], time=None))
        for item in PLANTED:
            self.assertIn(item, streamed, "daemon:\n" + "\n".join(map(str, streamed)))
            self.assertIn(item, from_cli, "CLI:\n" + "\n".join(map(str, from_cli)))
        # The same words for the same change.
        messages = {key(e.kind, e.bdf, e.metric, e.before, e.after): e.message for e in events.snapshot()}
        for e in printed.snapshot():
            k = key(e["event"], e["bdf"], e["metric"], e["before"], e["after"])
            if k in PLANTED:
                self.assertEqual(messages[k], e["message"])
        order = [streamed.index(item) for item in PLANTED[2:]]
        self.assertEqual(order, sorted(order), "events out of order:\n" + "\n".join(map(str, streamed)))
        devices = {d.bdf: d for d in stub.ListDevices(base.pb.ListDevicesRequest()).devices}
        sequences = [e.sequence for e in events.snapshot()]
        self.assertEqual(sequences, sorted(sequences))
        self.assertEqual(len(set(sequences)), len(sequences))
        for e in events.snapshot():
            self.assertEqual((e.uuid, e.device_index), (devices[e.bdf].uuid, devices[e.bdf].index))
            self.assertGreater(e.time_unix_ms, 1.7e12)
        return streamed

    def check_a_gpu_leaving_and_a_replay(self, stub, events, sysfs, work):
        """A GPU whose card folder goes: unreadable while gone (the daemon does not rescan), readable
        back. A client reconnecting with the last sequence it saw gets what came after, at once."""
        os.rename(os.path.join(sysfs, "class/drm/card24"), os.path.join(work, "card24"))
        events.wait_for(lambda e: e.kind == "unreadable" and e.bdf == "0000:65:00.0", "daemon: unreadable 0000:65:00.0")
        self.assertFalse({d.bdf: d for d in stub.ListDevices(base.pb.ListDevicesRequest()).devices}["0000:65:00.0"].up)
        os.rename(os.path.join(work, "card24"), os.path.join(sysfs, "class/drm/card24"))
        events.wait_for(lambda e: e.kind == "readable" and e.bdf == "0000:65:00.0", "daemon: readable 0000:65:00.0")
        kept = events.snapshot()
        middle = kept[len(kept) // 2]
        replayed, batches = self.start_stream(stub, base.pb.WatchEventsRequest(since_sequence=middle.sequence))
        last = kept[-1]
        replayed.wait_for(lambda e: e.sequence == last.sequence, "replay up to sequence %d" % last.sequence)
        self.assertEqual([e.sequence for e in replayed.snapshot()][:len(kept) - len(kept) // 2 - 1],
                         [e.sequence for e in kept[len(kept) // 2 + 1:]])
        self.assertEqual(batches.snapshot()[0], 0)  # nothing missed: all still kept

    def test_kfd_events_reach_the_stream_the_cli_and_metrics(self):
        """AMD KFD SMI events from a capture's device root (/dev/kfd-smi-events/GPU_ID): the daemon
        subscribes as the CLI does; both say the same about each line the stream receives, and
        /metrics counts them (hipstack_gpu_kfd_events_total)."""
        work = tempfile.mkdtemp(prefix="smid-events-kfd-")
        self.addCleanup(shutil.rmtree, work, True)
        sysfs = os.path.join(work, "sys")
        os.symlink(base.capture(base.SPX), sysfs)
        os.makedirs(os.path.join(work, "dev/kfd-smi-events"))
        stub = self.start(sysfs=sysfs)
        gpu1 = stub.ListDevices(base.pb.ListDevicesRequest()).devices[1]
        gpu_id = value_of_metric(stub, gpu1.index, "kfd_gpu_id")
        stream_path = os.path.join(work, "dev/kfd-smi-events", str(gpu_id))
        with open(stream_path, "w") as f:
            f.write("1 1092:python3\n")
        events, _ = self.start_stream(stub, base.pb.WatchEventsRequest())
        cli, printed, cli_reader = self.start_cli("--sysfs-root", sysfs, "--json", "event", "-w", "0.1")
        events.wait_for(lambda e: e.kind == "vm-fault" and e.bdf == gpu1.bdf, "daemon: vm-fault")
        printed.wait_for(lambda e: e["event"] == "vm-fault" and e["bdf"] == gpu1.bdf, "CLI: vm-fault")
        with open(stream_path, "a") as f:
            f.write("3 2 mode1 reset\n")
        events.wait_for(lambda e: e.kind == "gpu-pre-reset", "daemon: gpu-pre-reset")
        printed.wait_for(lambda e: e["event"] == "gpu-pre-reset", "CLI: gpu-pre-reset")
        cli.terminate()
        cli.wait(timeout=30)
        cli_reader.join(timeout=10)
        self.assertEqual(cli.stderr.read(), "")
        expected = [key("vm-fault", gpu1.bdf, "kfd_events[vm_fault]", "0", "1"),
                    key("gpu-pre-reset", gpu1.bdf, "kfd_events[gpu_pre_reset]", "0", "1")]
        streamed = {key(e.kind, e.bdf, e.metric, e.before, e.after): e.message for e in events.snapshot()}
        from_cli = {key(e["event"], e["bdf"], e["metric"], e["before"], e["after"]): e["message"] for e in printed.snapshot()}
        self.assertEqual(sorted(streamed), sorted(expected))
        self.assertEqual(sorted(from_cli), sorted(expected))
        for item in expected:  # the same words but for the subscription's start, which differs
            self.assertEqual(streamed[item].split(" (")[0], from_cli[item].split(" (")[0])
        self.assertTrue(streamed[expected[0]].startswith("VM fault in process 4242 (python3) ("), streamed[expected[0]])
        metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.daemon.http_port, timeout=10).read().decode()
        counts = {m.group(1): m.group(2) for m in re.finditer(
            r'^hipstack_gpu_kfd_events_total\{[^}]*bdf="%s"[^}]*event="(\w+)"[^}]*\} (\S+)$' % re.escape(gpu1.bdf),
            metrics, re.M)}
        self.assertEqual(counts, {"vm_fault": "1", "thermal_throttle": "0", "gpu_pre_reset": "1", "gpu_post_reset": "0"},
                         "\n".join(l for l in metrics.splitlines() if "kfd_events" in l))

    def test_bad_requests_are_refused(self):
        stub = self.start()
        call = stub.WatchEvents(base.pb.WatchEventsRequest(devices=["no-such-gpu"]))
        with self.assertRaises(base.grpc.RpcError) as caught:
            next(iter(call))
        self.assertEqual(caught.exception.code(), base.grpc.StatusCode.NOT_FOUND, caught.exception.details())
        self.assertIn("no-such-gpu", caught.exception.details())


def main():
    base.SMID, base.SMI, base.CAPTURES, base.PROTO = (os.path.abspath(a) for a in sys.argv[1:5])
    stubs = tempfile.mkdtemp(prefix="smid-events-stubs-")
    try:
        base.load_grpc(stubs)
        result = unittest.main(argv=[sys.argv[0]] + sys.argv[5:], verbosity=2, exit=False).result
    finally:
        shutil.rmtree(stubs, ignore_errors=True)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
