#!/usr/bin/env python3
"""hipstack-smid's activity over a window (docs/activity.md): an MI300X capture whose firmware table
moves (tests/lib/moving_firmware.py) gives exact averages; window_interval_ms = 0 turns them off.
With everything a live MI300X adds to a capture (windows, KFD events, RAS), the default profile
stays within its series budget (docs/daemon.md, "Series profiles").

Usage: test_window.py HIPSTACK_SMID CAPTURES_DIR [unittest arguments]

Uses test_daemon.py's helpers (a daemon per test on 127.0.0.1 port 0, stopped by PID).
"""
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
        """The faults capture (RAS counts, bad pages) with GPU 0 as a live node has it: its firmware
        table moving (the window metrics) and its KFD SMI events subscribed. The default profile
        keeps at most 60 series for it, every health-relevant one among them; the full profile has
        the detail on top."""
        work = self.tempdir()
        root = os.path.join(work, "sys")
        subprocess.run(["cp", "-a", base.capture("constructed/mi300x-8gpu-faults"), root], check=True)
        os.makedirs(os.path.join(work, "dev/kfd-smi-events"))
        counts = {}
        with MovingFirmware(os.path.join(root, "class/drm/card0/device/gpu_metrics"), 60):
            for profile in ("default", "full"):
                config = self.config("fast_interval_ms = 50\nwindow_interval_ms = 200\nmetrics_profile = %s\n" % profile)
                d = self.start(sysfs=root, config=config)
                wait_ready(d.port)
                _, samples = self.metrics(d.port)
                gpu_id = series(samples, "hipstack_gpu_info", gpu="0")[0][0]["kfd_gpu_id"]
                with open(os.path.join(work, "dev/kfd-smi-events", gpu_id), "w") as f:
                    f.write("1 1092:python3\n")  # a VM fault
                body, samples = self.wait_metrics(d.port, lambda b: re.search(
                    r'^hipstack_gpu_kfd_events_total{gpu="0".*event="vm_fault".* 1$', b, re.M) and re.search(
                    r'^hipstack_gpu_graphics_active_ratio{gpu="0"', b, re.M), timeout=15)
                base.promtool_check(self, body)
                families = {}
                for name, labels, _ in samples:
                    if labels.get("gpu") == "0":
                        families[name] = families.get(name, 0) + 1
                counts[profile] = (sum(families.values()), families)
                d.stop()
        total, families = counts["default"]
        self.assertLessEqual(total, 60, families)
        for family in ("hipstack_gpu_info", "hipstack_gpu_partition_info", "hipstack_gpu_up", "hipstack_gpu_health",
                       "hipstack_gpu_gpu_busy_ratio", "hipstack_gpu_graphics_active_ratio", "hipstack_gpu_vram_used_bytes",
                       "hipstack_gpu_power_current_watts", "hipstack_gpu_power_cap_watts", "hipstack_gpu_energy_consumed_joules_total",
                       "hipstack_gpu_clock_sclk_hertz", "hipstack_gpu_temperature_junction_celsius",
                       "hipstack_gpu_temperature_junction_critical_celsius", "hipstack_gpu_temperature_memory_celsius",
                       "hipstack_gpu_pcie_width_lanes", "hipstack_gpu_pcie_width_max_lanes", "hipstack_gpu_pcie_replay_count_total",
                       "hipstack_gpu_ras_correctable_total", "hipstack_gpu_ras_uncorrectable_total",
                       "hipstack_gpu_bad_pages_pending", "hipstack_gpu_bad_pages_reserved", "hipstack_gpu_bad_pages_failed",
                       "hipstack_gpu_violation_residency_total", "hipstack_gpu_violation_accumulation_count_total",
                       "hipstack_gpu_kfd_events_total", "hipstack_gpu_running_processes", "hipstack_gpu_performance_level"):
            self.assertIn(family, families, "the default profile lost %s" % family)
        self.assertEqual(families["hipstack_gpu_health"], counts["full"][1]["hipstack_gpu_health"])
        full_total, full_families = counts["full"]
        self.assertGreater(full_total, 150, full_families)
        print("series for GPU 0 (faults capture, window and KFD events on): default %d, full %d" % (total, full_total))


if __name__ == "__main__":
    sys.exit(base.main(__doc__))
