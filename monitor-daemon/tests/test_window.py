#!/usr/bin/env python3
"""hipstack-smid's activity over a window (docs/activity.md): an MI300X capture whose firmware table
moves (tests/lib/moving_firmware.py) gives exact averages; window_interval_ms = 0 turns them off.

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
        config = self.config("fast_interval_ms = 20\nwindow_interval_ms = 0\n")
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


if __name__ == "__main__":
    sys.exit(base.main(__doc__))
