#!/usr/bin/env python3
"""hipstack-smid's costly metrics (the catalogue's cost class, docs/performance.md): read every
costly_interval_ms, their last values exported in between; energy_consumed between its exact reads
is the exact value plus the power integrated since, and never goes down.

Usage: test_costly.py HIPSTACK_SMID CAPTURES_DIR [unittest arguments]

Uses test_daemon.py's helpers (a daemon per test on 127.0.0.1 port 0, stopped by PID).
"""
import os
import subprocess
import sys
import time

import test_daemon as base
from test_daemon import series, write

RX_DEVICE = "class/drm/card0/device"
RX_POWER = RX_DEVICE + "/hwmon/hwmon5/power1_average"  # microwatts
RX_ENERGY_J = 269.9536437988281  # the capture's gpu_metrics energy accumulator, as hipstack-smi reads it


def value(samples, family, gpu="0"):
    found = series(samples, family, gpu=gpu)
    return found[0][1] if found else None


class CostlyTests(base.DaemonTest):
    def copy(self, capture):
        root = os.path.join(self.tempdir(), "sys")
        subprocess.run(["cp", "-a", base.capture(capture), root], check=True)
        return root

    def test_costly_metrics_wait_for_their_interval(self):
        """A new PCIe replay count (costly) is not read by the fast samples that see a new busy
        share (cheap); with costly_interval_ms at the fast interval it is read at once."""
        for costly_ms, expect_replays in ((3600000, 0), (50, 7)):
            with self.subTest(costly_interval_ms=costly_ms):
                root = self.copy("constructed/mi300x-8gpu-spx-nps1")
                config = self.config("fast_interval_ms = 50\ncostly_interval_ms = %d\n" % costly_ms)
                d = self.start(sysfs=root, config=config)
                self.wait_metrics(d.port, lambda b: "hipstack_gpu_pcie_replay_count_total{" in b)
                write(os.path.join(root, "class/drm/card0/device/pcie_replay_count"), "7\n")
                # A busy share of 42 %, then 43 %: the sample that sees 43 % began after both writes,
                # so it is a whole fast sample taken after the replay count changed.
                samples = None
                for busy in (42, 43):
                    write(os.path.join(root, "class/drm/card0/device/gpu_busy_percent"), "%d\n" % busy)
                    _, samples = self.wait_metrics(
                        d.port, lambda b: value(base.parse_metrics(b), "hipstack_gpu_gpu_busy_ratio") == busy / 100)
                    self.assertEqual(value(samples, "hipstack_gpu_gpu_busy_ratio"), busy / 100)
                if expect_replays == 7:
                    _, samples = self.wait_metrics(
                        d.port, lambda b: value(base.parse_metrics(b), "hipstack_gpu_pcie_replay_count_total") == 7)
                self.assertEqual(value(samples, "hipstack_gpu_pcie_replay_count_total"), expect_replays)

    def test_a_failed_costly_read_is_tried_again_soon(self):
        """A PCIe replay count that does not parse (an error, like EIO while a GPU recovers) is read
        again within seconds, not after the hour-long costly interval, and its value then exported."""
        root = self.copy("constructed/mi300x-8gpu-spx-nps1")
        replays = os.path.join(root, "class/drm/card0/device/pcie_replay_count")
        write(replays, "garbage\n")
        d = self.start(sysfs=root, config=self.config("fast_interval_ms = 50\ncostly_interval_ms = 3600000\n"))
        _, samples = self.wait_metrics(d.port, lambda b: "hipstack_gpu_gpu_busy_ratio{" in b)
        self.assertIsNone(value(samples, "hipstack_gpu_pcie_replay_count_total"))
        write(replays, "7\n")
        _, samples = self.wait_metrics(
            d.port, lambda b: value(base.parse_metrics(b), "hipstack_gpu_pcie_replay_count_total") == 7, timeout=20)
        self.assertEqual(value(samples, "hipstack_gpu_pcie_replay_count_total"), 7)

    def test_energy_between_exact_reads_integrates_power(self):
        """At 100 W the exported energy grows by about 100 J a second from the exact read, though the
        exact counter (a static recording) does not move; it never goes down between scrapes."""
        root = self.copy("real/lact/rx6900xt")
        write(os.path.join(root, RX_POWER), "100000000\n")
        config = self.config("fast_interval_ms = 100\ncostly_interval_ms = 3600000\n")
        started = time.monotonic()
        d = self.start(sysfs=root, config=config)
        family = "hipstack_gpu_energy_consumed_joules_total"
        seen = []

        def grown(body):
            v = value(base.parse_metrics(body), family)
            if v is not None:
                seen.append(v)
            return v is not None and v > RX_ENERGY_J + 50
        self.wait_metrics(d.port, grown, timeout=10)
        elapsed = time.monotonic() - started
        self.assertGreater(seen[-1], RX_ENERGY_J + 50, seen[-5:])
        # No more than 100 W for as long as the daemon has run (it started after `started`).
        self.assertLessEqual(seen[-1], RX_ENERGY_J + 100 * elapsed + 1e-6, seen[-5:])
        self.assertAlmostEqual(seen[0], RX_ENERGY_J, delta=100 * elapsed)
        self.assertTrue(all(b >= a for a, b in zip(seen, seen[1:])), "the exported counter went down")

    def test_energy_read_every_sample_is_exact(self):
        """With costly_interval_ms at the fast interval every sample reads the counter: the exported
        value is the recording's, whatever the power says."""
        root = self.copy("real/lact/rx6900xt")
        write(os.path.join(root, RX_POWER), "100000000\n")
        config = self.config("fast_interval_ms = 50\ncostly_interval_ms = 50\n")
        d = self.start(sysfs=root, config=config)
        # Busy at 42 %, then 43 %: the sample that sees 43 % is at least the second since the start,
        # so power had a sample to integrate from, had the counter not been read.
        samples = None
        for busy in (42, 43):
            write(os.path.join(root, RX_DEVICE, "gpu_busy_percent"), "%d\n" % busy)
            _, samples = self.wait_metrics(
                d.port, lambda b: value(base.parse_metrics(b), "hipstack_gpu_gpu_busy_ratio") == busy / 100)
            self.assertEqual(value(samples, "hipstack_gpu_gpu_busy_ratio"), busy / 100)
        self.assertAlmostEqual(value(samples, "hipstack_gpu_energy_consumed_joules_total"), RX_ENERGY_J, places=9)


if __name__ == "__main__":
    sys.exit(base.main(__doc__))
