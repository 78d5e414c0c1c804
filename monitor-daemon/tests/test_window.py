#!/usr/bin/env python3
"""hipstack-smid's activity over a window (docs/activity.md): an MI300X capture whose firmware table
moves (tests/lib/moving_firmware.py) gives exact averages; window_interval_ms = 0 turns them off.
With everything a live MI300X adds to a capture (windows, KFD events, RAS), the default profile
stays within its series budget (docs/daemon.md, "Series profiles").

Usage: test_window.py HIPSTACK_SMID CAPTURES_DIR [unittest arguments]

Uses test_daemon.py's helpers (a daemon per test on 127.0.0.1 port 0, stopped by PID).
"""
import contextlib
import glob
import os
import re
import subprocess
import sys

import test_daemon as base
from test_daemon import parse_metrics, series, wait_ready

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from moving_firmware import MovingFirmware  # noqa: E402 (shared with tests/deploy)


class WindowTests(base.DaemonTest):
    def copy_spx(self):
        root = os.path.join(self.tempdir(), "sys")
        subprocess.run(["cp", "-a", base.spx(), root], check=True)
        return root

    def test_window_metrics_are_averages_between_looks(self):
        """graphics_active is the accumulators' growth over the window: exactly the firmware's 60 %,
        for the one GPU whose table moves; the seven recorded tables that do not move export none."""
        root = self.copy_spx()
        config = self.config("fast_interval_ms = 50\nwindow_interval_ms = 200\n")
        with MovingFirmware(os.path.join(root, "class/drm/card0/device/gpu_metrics"), 60):
            d = self.start(sysfs=root, config=config)
            family = "hipstack_gpu_graphics_active_ratio"
            body, samples = self.wait_metrics(d.port, lambda b: re.search("^%s{" % family, b, re.M), timeout=10)
            active = series(samples, family)
            self.assertEqual(len(active), 1, active)
            self.assertEqual(active[0][0]["gpu"], "0")
            self.assertAlmostEqual(active[0][1], 0.6, places=9)
            base.promtool_check(self, body)

    def test_window_interval_0_turns_them_off(self):
        root = self.copy_spx()
        # The full profile: the accumulator itself is detail the default leaves out.
        config = self.config("fast_interval_ms = 20\nwindow_interval_ms = 0\nmetrics_profile = full\n")
        with MovingFirmware(os.path.join(root, "class/drm/card0/device/gpu_metrics"), 60):
            d = self.start(sysfs=root, config=config)
            wait_ready(d.port)
            # Live samples that saw the firmware's accumulator move three times (three windows of
            # 50 ms, had the window been on), and still no window metric.
            seen = set()

            def moved(body):
                for labels, value in series(parse_metrics(body), "hipstack_gpu_gfx_activity_accumulated_total", gpu="0"):
                    seen.add(value)
                return len(seen) >= 4
            body, _ = self.wait_metrics(d.port, moved, timeout=10)
            self.assertGreaterEqual(len(seen), 4, seen)
            self.assert_family(body, "hipstack_gpu_graphics_active_ratio", present=False)

    def test_default_profile_budget_per_mi300x_gpu(self):
        """The faults capture (RAS counts, bad pages) as a live node has it: every GPU's firmware
        table moving (the window metrics) and its KFD SMI events subscribed. The default profile
        keeps at most 62 series for each GPU, every health-relevant one among them (60 until
        readings.plausible joined the health checks, 61 until errors.recent did: each check is a
        series of every profile);
        the full profile has the detail on top."""
        work = self.tempdir()
        root = os.path.join(work, "sys")
        subprocess.run(["cp", "-a", base.capture("constructed/mi300x-8gpu-faults"), root], check=True)
        os.makedirs(os.path.join(work, "dev/kfd-smi-events"))
        tables = sorted(glob.glob(os.path.join(root, "class/drm/card*/device/gpu_metrics")))
        self.assertEqual(len(tables), 8, tables)
        moving = [MovingFirmware(path, 60) for path in tables]
        counts = {}
        with contextlib.ExitStack() as stack:
            for table in moving:
                stack.enter_context(table)
            for profile in ("default", "full"):
                config = self.config("fast_interval_ms = 50\nwindow_interval_ms = 200\nmetrics_profile = %s\n" % profile)
                d = self.start(sysfs=root, config=config)
                wait_ready(d.port)
                _, samples = self.metrics(d.port)
                for labels, _ in series(samples, "hipstack_gpu_info"):
                    with open(os.path.join(work, "dev/kfd-smi-events", labels["kfd_gpu_id"]), "w") as f:
                        f.write("1 1092:python3\n")  # a VM fault
                body, samples = self.wait_metrics(d.port, lambda b: len(re.findall(
                    r'^hipstack_gpu_kfd_events_total{.*event="vm_fault".* 1$', b, re.M)) == 8 and len(re.findall(
                    r'^hipstack_gpu_graphics_active_ratio{', b, re.M)) == 8, timeout=15)
                base.promtool_check(self, body)
                per_gpu = {}
                for name, labels, _ in samples:
                    if "gpu" in labels:
                        per_gpu.setdefault(labels["gpu"], {}).setdefault(name, 0)
                        per_gpu[labels["gpu"]][name] += 1
                self.assertEqual(sorted(per_gpu), [str(i) for i in range(8)])
                counts[profile] = {gpu: (sum(f.values()), f) for gpu, f in per_gpu.items()}
                d.stop()
        for gpu, (total, families) in counts["default"].items():
            self.assertLessEqual(total, 62, (gpu, families))
            for family in ("hipstack_gpu_info", "hipstack_gpu_partition_info", "hipstack_gpu_up", "hipstack_gpu_health",
                           "hipstack_gpu_gpu_busy_ratio", "hipstack_gpu_graphics_active_ratio", "hipstack_gpu_vram_used_bytes",
                           "hipstack_gpu_power_current_watts", "hipstack_gpu_power_cap_watts", "hipstack_gpu_energy_consumed_joules_total",
                           "hipstack_gpu_clock_sclk_hertz", "hipstack_gpu_temperature_junction_celsius",
                           "hipstack_gpu_temperature_junction_critical_celsius", "hipstack_gpu_temperature_memory_celsius",
                           "hipstack_gpu_pcie_width_lanes", "hipstack_gpu_pcie_width_max_lanes", "hipstack_gpu_pcie_replay_count_total",
                           "hipstack_gpu_bad_pages_pending", "hipstack_gpu_bad_pages_reserved", "hipstack_gpu_bad_pages_failed",
                           "hipstack_gpu_violation_residency_total", "hipstack_gpu_violation_accumulation_count_total",
                           "hipstack_gpu_kfd_events_total", "hipstack_gpu_running_processes", "hipstack_gpu_performance_level"):
                self.assertIn(family, families, "GPU %s: the default profile lost %s" % (gpu, family))
            self.assertEqual(families["hipstack_gpu_health"], counts["full"][gpu][1]["hipstack_gpu_health"])
            # The memory-error totals wherever the library could total every RAS block (GPU 0 of this
            # capture has an unreadable block: no total, and its health says so).
            has_total = "hipstack_gpu_ecc_uncorrected_volatile_total" in counts["full"][gpu][1]
            self.assertEqual("hipstack_gpu_ecc_uncorrected_volatile_total" in families, has_total, gpu)
            self.assertEqual("hipstack_gpu_ecc_corrected_volatile_total" in families, has_total, gpu)
        self.assertTrue(any("hipstack_gpu_ecc_uncorrected_volatile_total" in f for _, f in counts["default"].values()))
        for gpu, (total, families) in counts["full"].items():
            self.assertGreater(total, 150, (gpu, families))
        print("series per GPU (faults capture, windows and KFD events on), default: %s; full: %s" % (
            sorted(t for t, _ in counts["default"].values()), sorted(t for t, _ in counts["full"].values())))

if __name__ == "__main__":
    sys.exit(base.main(__doc__))
