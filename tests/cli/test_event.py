#!/usr/bin/env python3
"""hipstack-smi event on a copied capture that the test changes while the command runs.

Usage: test_event.py HIPSTACK_SMI CAPTURES_DIR

Planted one after the other, each must come out as its event, as JSON lines: RAS/ECC counts rising,
a counter going back (a reset), throttling (the firmware's violation residency rising), a partition
mode change, a GPU disappearing (its DRM card and KFD node gone) and coming back.

No sleep stands for "it has happened": the command's output is read as it comes, each change is
planted once the previous one's event came out (each wait bounded, naming what was awaited), and the
first look is known to be done once a counter bumped on GPU 0 until then comes out as an event.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from smi_cli import fake_nvml_env

SMI = CAPTURES = None
INTERVAL = 0.2
WAIT_S = 30  # the longest wait for one event (a loaded machine): a bound, not a pace


class Lines:
    """The JSON lines of a running `hipstack-smi event`, read by a thread as they come."""

    def __init__(self, stream):
        self.cond = threading.Condition()
        self.events = []
        self.thread = threading.Thread(target=self.read, args=(stream,), daemon=True)
        self.thread.start()

    def read(self, stream):
        for line in stream:
            with self.cond:
                self.events.append(json.loads(line))
                self.cond.notify_all()

    def wait_for(self, test, what, timeout=WAIT_S, poke=None):
        """Waits until an event satisfies test(event); poke() runs between waits of 50 ms."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not any(test(e) for e in self.events):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no %s event within %d s; seen:\n%s" % (what, timeout, "\n".join(map(str, self.events))))
                if poke is None:
                    self.cond.wait(left)
                else:
                    self.cond.release()
                    try:
                        poke()
                    finally:
                        self.cond.acquire()
                    self.cond.wait(min(left, 0.05))


def kfd_node_of(sysfs, bdf):
    """The KFD topology node folder of the GPU at `bdf` (domain:bus:device.function)."""
    nodes = os.path.join(sysfs, "class/kfd/kfd/topology/nodes")
    for node in os.listdir(nodes):
        props = {}
        with open(os.path.join(nodes, node, "properties")) as f:
            for line in f:
                key, _, value = line.partition(" ")
                props[key] = int(value) if value.strip().isdigit() else value
        location = props.get("location_id", 0)
        if props.get("simd_count", 0) and "%04x:%02x:%02x.%x" % (props.get("domain", 0), location >> 8, (location >> 3) & 0x1f,
                                                                 location & 7) == bdf:
            return os.path.join(nodes, node)
    raise AssertionError("no KFD node for " + bdf)


class EventTest(unittest.TestCase):
    def test_planted_changes_come_out_as_events(self):
        work = tempfile.mkdtemp(prefix="smi-event-")
        self.addCleanup(shutil.rmtree, work, True)
        sysfs = os.path.join(work, "sys")
        faults = os.path.join(CAPTURES, "constructed/mi300x-8gpu-faults/sys")
        spx = os.path.join(CAPTURES, "constructed/mi300x-8gpu-spx-nps1/sys")
        subprocess.run(["cp", "-a", faults, sysfs], check=True)
        devices = {d["bdf"]: d for d in json.loads(subprocess.run([SMI, "--sysfs-root", sysfs, "--json", "list"],
                                                                  capture_output=True, text=True, check=True).stdout)["devices"]}
        proc = subprocess.Popen([SMI, "--sysfs-root", sysfs, "--json", "event", "-w", str(INTERVAL)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        lines = Lines(proc.stdout)
        card = lambda n, *path: os.path.join(sysfs, "class/drm/card%d/device" % n, *path)

        def replace(path, data):
            with open(path + ".new", "wb") as f:
                f.write(data)
            os.replace(path + ".new", path)

        def expect(kind, bdf):
            lines.wait_for(lambda e: e["event"] == kind and e["bdf"] == bdf, "%s %s" % (kind, bdf))

        # The first look (the baseline) is done once a change comes out: GPU 0's correctable count is
        # raised every 50 ms until its event appears.
        bumps = iter(range(1, 1000000))
        lines.wait_for(lambda e: e["bdf"] == "0000:05:00.0" and e["metric"] == "ras_correctable[umc]",
                       "first look done (GPU 0 correctable count)",
                       poke=lambda: replace(card(0, "ras/umc_err_count"), b"ue: 0\nce: %d\nde: 0\n" % next(bumps)))
        replace(card(8, "ras/umc_err_count"), b"ue: 3\nce: 20\nde: 0\n")  # GPU 1: 2 -> 3 uncorrectable
        expect("memory-errors", "0000:27:00.0")
        lines.wait_for(lambda e: e["metric"] == "ras_correctable[umc]" and e["bdf"] == "0000:27:00.0",
                       "memory-errors (correctable) 0000:27:00.0")
        with open(os.path.join(spx, "class/drm/card48/device/gpu_metrics"), "rb") as f:
            calm = f.read()
        with open(card(48, "gpu_metrics"), "rb") as f:
            throttled = f.read()
        replace(card(48, "gpu_metrics"), calm)  # GPU 6: its counters start again from 0
        expect("counters-restarted", "0000:c7:00.0")
        replace(card(48, "gpu_metrics"), throttled)  # ...and socket_thermal residency rises
        expect("throttling", "0000:c7:00.0")
        replace(card(16, "current_compute_partition"), b"CPX\n")  # GPU 2
        expect("partition-mode-changed", "0000:47:00.0")
        gone_bdf = "0000:65:00.0"
        node = kfd_node_of(sysfs, gone_bdf)
        os.rename(os.path.join(sysfs, "class/drm/card24"), os.path.join(work, "card24"))
        os.rename(node, os.path.join(work, "node"))
        expect("device-removed", gone_bdf)
        os.rename(os.path.join(work, "card24"), os.path.join(sysfs, "class/drm/card24"))
        os.rename(os.path.join(work, "node"), node)
        expect("device-added", gone_bdf)
        if proc.poll() is not None:
            self.fail("hipstack-smi event ended early: " + proc.stderr.read())
        proc.terminate()
        proc.wait(timeout=30)
        lines.thread.join(timeout=10)  # stdout is the reader thread's
        self.assertEqual(proc.stderr.read(), "")
        with lines.cond:
            events = list(lines.events)
        seen = [(e["event"], e["bdf"], e["metric"], e["before"], e["after"]) for e in events]
        expected = [
            ("memory-errors", "0000:27:00.0", "ras_uncorrectable[umc]", "2", "3"),
            ("memory-errors", "0000:27:00.0", "ras_correctable[umc]", "14", "20"),
            ("counters-restarted", "0000:c7:00.0", "violation_residency[socket_thermal]", "2764938", "0"),
            ("throttling", "0000:c7:00.0", "violation_residency[socket_thermal]", "0", "2764938"),
            ("partition-mode-changed", "0000:47:00.0", "compute_partition", "SPX", "CPX"),
            ("device-removed", gone_bdf, "", "", ""),
            ("device-added", gone_bdf, "", "", ""),
        ]
        for item in expected:
            self.assertIn(item, seen, "\n".join(map(str, seen)))
        # One hardware change is one event: the ECC totals summing GPU 1's block counts are named in
        # the block's event, not printed as events of their own.
        gpu1 = [e for e in events if e["bdf"] == "0000:27:00.0" and e["event"] == "memory-errors"]
        self.assertEqual(sorted(e["metric"] for e in gpu1), ["ras_correctable[umc]", "ras_uncorrectable[umc]"], gpu1)
        correctable = next(e for e in gpu1 if e["metric"] == "ras_correctable[umc]")
        self.assertTrue(correctable["message"].startswith("6 more (the device's ecc_corrected_volatile went from "), correctable)
        self.assertIsNone(correctable["action"], "a count that rose reports no error code: no action")
        order = [seen.index(item) for item in expected[2:]]
        self.assertEqual(order, sorted(order), "events out of order:\n" + "\n".join(map(str, seen)))
        for e in events:
            self.assertEqual(e["uuid"], devices[e["bdf"]]["uuid"])
            self.assertRegex(e["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
        self.assertNotIn("device-removed", [e["event"] for e in events if e["bdf"] != gone_bdf])

    def test_iterations_end_the_command(self):
        # -i N: N looks, then exit 0 (the test above stops the command itself).
        r = subprocess.run([SMI, "--sysfs-root", os.path.join(CAPTURES, "constructed/mi300x-8gpu-spx-nps1/sys"),
                            "--json", "event", "-w", "0.01", "-i", "3"], capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)

    def test_xid_errors_come_out_as_they_arrive(self):
        """NVIDIA XIDs (fake NVML, h100x2-mig.txt): the errors queued before the first drain come out
        with the first look, the next batch with the next look; each names its code and meaning."""
        env = fake_nvml_env(self, "h100x2-mig.txt")
        empty = tempfile.mkdtemp(prefix="event-xid-")
        self.addCleanup(shutil.rmtree, empty, True)
        r = subprocess.run([SMI, "--sysfs-root", empty, "--json", "event", "-w", "0.01", "-i", "3"], capture_output=True,
                           text=True, timeout=60, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        events = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual([(e["event"], e["gpu"], e["metric"], e["before"], e["after"]) for e in events],
                         [("xid", 0, "xid_errors[13]", "0", "2"), ("xid", 0, "xid_errors[31]", "0", "1"),
                          ("xid", 0, "xid_errors[48]", "0", "1")])
        self.assertIn("XID 48 (ROBUST_CHANNEL_GPU_ECC_DBE): Double Bit ECC Error; action: reset_gpu", events[2]["message"])
        # Each XID's action from NVIDIA's catalogue (docs/errors.md): 13 and 31 the application's.
        self.assertEqual([e["action"] for e in events], ["restart_app", "restart_app", "reset_gpu"])
        self.assertEqual(events[0]["uuid"], "GPU-5d3a1c2e-8f47-4b1e-9c6d-2a7e0f9b3c41")

    def test_kfd_events_come_out_as_they_arrive(self):
        """AMD KFD SMI events (docs/amdgpu-backend.md): a capture's device root carries GPU 0's stream,
        /dev/kfd-smi-events/GPU_ID. What it holds when the command subscribes comes out with the first
        look; a line appended later, with a later look; each names what the kernel said."""
        work = tempfile.mkdtemp(prefix="smi-event-kfd-")
        self.addCleanup(shutil.rmtree, work, True)
        spx = os.path.join(CAPTURES, "constructed/mi300x-8gpu-spx-nps1/sys")
        os.symlink(spx, os.path.join(work, "sys"))
        os.makedirs(os.path.join(work, "dev/kfd-smi-events"))
        listed = json.loads(subprocess.run([SMI, "--sysfs-root", spx, "--json", "list"], capture_output=True, text=True,
                                           check=True).stdout)["devices"]
        with open(os.path.join(kfd_node_of(spx, listed[0]["bdf"]), "gpu_id")) as f:
            stream = os.path.join(work, "dev/kfd-smi-events", f.read().strip())
        with open(stream, "w") as f:
            f.write("1 1092:python3\n")
        proc = subprocess.Popen([SMI, "--sysfs-root", os.path.join(work, "sys"), "--json", "event", "-w", str(INTERVAL)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        lines = Lines(proc.stdout)
        lines.wait_for(lambda e: e["event"] == "vm-fault", "vm-fault")
        with open(stream, "a") as f:
            f.write("2 4:1f\n4 3 mode1 reset\n")
        # One look finds both; its events come out in catalogue order (the reset's, then throttling's).
        lines.wait_for(lambda e: e["event"] == "gpu-post-reset", "gpu-post-reset")
        lines.wait_for(lambda e: e["event"] == "thermal-throttle", "thermal-throttle")
        proc.terminate()
        proc.wait(timeout=30)
        lines.thread.join(timeout=10)
        self.assertEqual(proc.stderr.read(), "")
        with lines.cond:
            events = list(lines.events)
        self.assertEqual([(e["event"], e["gpu"], e["metric"], e["before"], e["after"]) for e in events],
                         [("vm-fault", 0, "kfd_events[vm_fault]", "0", "1"),
                          ("gpu-post-reset", 0, "kfd_events[gpu_post_reset]", "0", "1"),
                          ("thermal-throttle", 0, "kfd_events[thermal_throttle]", "0", "1")])
        self.assertTrue(events[0]["message"].startswith("VM fault in process 4242 (python3) ("), events[0]["message"])
        self.assertTrue(events[1]["message"].startswith("GPU reset 3 done: mode1 reset ("), events[1]["message"])
        self.assertTrue(events[2]["message"].startswith("thermal throttling: reasons 0x4, throttle counter 31 ("),
                        events[2]["message"])

    def test_bad_arguments(self):
        for args in (["event", "-w", "0"], ["event", "-i", "-1"], ["event", "-w", "x"]):
            r = subprocess.run([SMI] + args, capture_output=True, text=True, timeout=10)
            self.assertEqual(r.returncode, 2, (args, r.stderr))


def main():
    global SMI, CAPTURES
    SMI, CAPTURES = (os.path.abspath(a) for a in sys.argv[1:3])
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=2)


if __name__ == "__main__":
    main()
