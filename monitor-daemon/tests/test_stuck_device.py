#!/usr/bin/env python3
"""hipstack-smid with a GPU whose sysfs read blocks (a FIFO in place of a hwmon file): the other
GPUs' answers go on, the stuck one is reported stale and down past read_deadline_ms, signals and
reloads are not held up, and stuck readers do not pile up. A FIFO in a file the start reads to find
the GPUs ends the start after its deadline, naming why; a stop signal stops it meanwhile.

Usage: test_stuck_device.py HIPSTACK_SMID CAPTURES_DIR [unittest arguments]

Uses test_daemon.py's helpers (a daemon per test on 127.0.0.1 port 0, stopped by PID).
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import test_daemon as base
from test_daemon import DaemonTest, bdf_of_card, http_get, parse_metrics, promtool_check, series, spx, wait_ready


# The full profile: these tests read each GPU's sample age (hipstack_gpu_sample_age_seconds).
STUCK_CONFIG = "fast_interval_ms = 100\nread_deadline_ms = 300\nmetrics_profile = full\n"


class StuckDeviceTests(DaemonTest):
    CARD, HWMON = "card8", "hwmon3"

    @classmethod
    def setUpClass(cls):
        # One copy for the class (cp -a of 1800 files takes ~2 s here); each test turns the file
        # into a FIFO and its cleanup puts the original back once its daemon is gone.
        cls.base = tempfile.mkdtemp(prefix="smid-stuck-")
        cls.root = os.path.join(cls.base, "sys")
        subprocess.run(["cp", "-a", spx(), cls.root], check=True)
        cls.path = os.path.join(cls.root, "class/drm", cls.CARD, "device/hwmon", cls.HWMON, "temp2_input")
        with open(cls.path, "rb") as f:
            cls.original = f.read()
        cls.bdf = bdf_of_card(cls.root, cls.CARD)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def stuck_capture(self):
        """The class's copy of the SPX capture; make_fifo(path) makes GPU `bdf` block in its reads."""
        self.assertTrue(os.path.isfile(self.path), self.path)
        self.addCleanup(self.restore)  # runs after the daemon's stop (cleanups run last in, first out)
        return self.root, self.path, self.bdf

    def restore(self):
        tmp = self.path + ".orig"
        with open(tmp, "wb") as f:
            f.write(self.original)
        os.replace(tmp, self.path)

    def check_others(self, samples, stuck_bdf):
        up = series(samples, "hipstack_gpu_up")
        others = [(l, v) for l, v in up if l["bdf"] != stuck_bdf]
        self.assertEqual(len(others), 7, up)
        self.assertTrue(all(v == 1 for _, v in others), others)
        ages = {l["bdf"]: v for l, v in series(samples, "hipstack_gpu_sample_age_seconds")}
        for labels, _ in others:
            self.assertLess(ages[labels["bdf"]], 0.5, ages)
        self.assertEqual(len([1 for l, _ in series(samples, "hipstack_gpu_temperature_junction_celsius")
                              if l["bdf"] != stuck_bdf]), 7)
        # No value of the stuck GPU is presented as current.
        for name, labels, _ in samples:
            if labels.get("bdf") == stuck_bdf:
                self.assertIn(name, ("hipstack_gpu_up", "hipstack_gpu_sample_age_seconds"), labels)
        self.assertNotIn(1, [v for _, v in series(samples, "hipstack_gpu_up", bdf=stuck_bdf)])

    def test_stuck_from_the_start(self):
        root, fifo, stuck_bdf = self.stuck_capture()
        self.make_fifo(fifo)
        d = self.start(sysfs=root, config=self.config(STUCK_CONFIG))
        wait_ready(d.port, timeout=3)  # the stuck GPU counts as ready once past the deadline
        # Down once its read outlived the deadline: polled (the loop below then checks it stays so).
        self.wait_metrics(d.port, lambda b: [v for _, v in series(parse_metrics(b), "hipstack_gpu_up", bdf=stuck_bdf)] == [0])
        for _ in range(2):
            start = time.monotonic()
            status, _, body = http_get(d.port, "/metrics", timeout=1.0)
            self.assertLess(time.monotonic() - start, 1.0)
            self.assertEqual(status, 200)
            self.check_others(parse_metrics(body), stuck_bdf)
            time.sleep(0.3)
        promtool_check(self, body)
        d.signal(signal.SIGTERM)
        self.assertLess(self.assert_exits(d, 0, 2.0), 2.0)

    def test_stuck_from_the_start_reports_up_0(self):
        root, fifo, stuck_bdf = self.stuck_capture()
        self.make_fifo(fifo)
        d = self.start(sysfs=root, config=self.config(STUCK_CONFIG))
        wait_ready(d.port, timeout=3)
        body, samples = self.wait_metrics(
            d.port, lambda b: [v for _, v in series(parse_metrics(b), "hipstack_gpu_up", bdf=stuck_bdf)] == [0])
        self.assertEqual([v for _, v in series(samples, "hipstack_gpu_up", bdf=stuck_bdf)], [0])

    def test_stuck_after_first_samples(self):
        root, fifo, stuck_bdf = self.stuck_capture()
        d = self.start(sysfs=root, config=self.config(STUCK_CONFIG))
        wait_ready(d.port)
        # Ready also counts a GPU whose first sample is merely slow (past the 300 ms deadline, as under
        # ASan on two cores): wait for it to be up before the file turns into a FIFO.
        _, samples = self.wait_metrics(
            d.port, lambda b: [v for _, v in series(parse_metrics(b), "hipstack_gpu_up", bdf=stuck_bdf)] == [1])
        self.assertEqual([v for _, v in series(samples, "hipstack_gpu_up", bdf=stuck_bdf)], [1])
        self.make_fifo(fifo)
        went_down = None
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            start = time.monotonic()
            status, _, body = http_get(d.port, "/metrics", timeout=1.0)
            self.assertLess(time.monotonic() - start, 1.0)
            samples = parse_metrics(body)
            if [v for _, v in series(samples, "hipstack_gpu_up", bdf=stuck_bdf)] == [0]:
                went_down = samples
                break
            time.sleep(0.1)
        self.assertIsNotNone(went_down, "the stuck GPU never reported hipstack_gpu_up 0")
        time.sleep(0.3)
        body, samples = self.metrics(d.port)
        self.check_others(samples, stuck_bdf)
        self.assertEqual([v for _, v in series(samples, "hipstack_gpu_up", bdf=stuck_bdf)], [0])
        age = series(samples, "hipstack_gpu_sample_age_seconds", bdf=stuck_bdf)
        self.assertEqual(len(age), 1)
        self.assertGreater(age[0][1], 0.3)
        promtool_check(self, body)
        d.signal(signal.SIGTERM)
        self.assert_exits(d, 0, 2.0)

    def test_more_stuck_gpus_than_pool_workers(self):
        # Six of eight GPUs block in a read: more than the sampling pool's 4 workers. Each stuck
        # worker gets a stand-in, so the two others keep being sampled on time.
        self.stuck_capture()
        stuck_cards = ["card%d" % n for n in (0, 16, 24, 32, 40, 48)]  # the primary nodes of six GPUs
        stuck = {bdf_of_card(self.root, card) for card in stuck_cards}
        for card in stuck_cards:
            [path] = glob.glob(os.path.join(self.root, "class/drm", card, "device/hwmon/hwmon*/temp2_input"))
            with open(path, "rb") as f:
                original = f.read()
            self.addCleanup(self.put_back, path, original)
            self.make_fifo(path)
        d = self.start(sysfs=self.root, config=self.config(STUCK_CONFIG))
        wait_ready(d.port, timeout=3)
        body, samples = self.wait_metrics(
            d.port, lambda b: sorted(l["bdf"] for l, v in series(parse_metrics(b), "hipstack_gpu_up") if v == 0) == sorted(stuck))
        up = {l["bdf"]: v for l, v in series(samples, "hipstack_gpu_up")}
        self.assertEqual({b for b, v in up.items() if v == 0}, stuck, up)
        self.assertEqual(len([b for b, v in up.items() if v == 1]), 2, up)
        time.sleep(0.5)  # five more fast intervals: the two free GPUs must still be fresh after them
        _, samples = self.metrics(d.port)
        ages = {l["bdf"]: v for l, v in series(samples, "hipstack_gpu_sample_age_seconds")}
        for bdf, age in ages.items():
            if bdf not in stuck:
                self.assertLess(age, 0.5, ages)
        d.signal(signal.SIGTERM)
        self.assert_exits(d, 0, 2.0)

    @staticmethod
    def put_back(path, original):
        tmp = path + ".orig"
        with open(tmp, "wb") as f:
            f.write(original)
        os.replace(tmp, path)

    def test_once_with_a_stuck_device(self):
        root, fifo, stuck_bdf = self.stuck_capture()
        self.make_fifo(fifo)
        # --once prints when every GPU has a first sample or is past the read deadline: 2 s, not the
        # class's 300 ms, so that a first sample that is merely slow (ASan on two cores) is not
        # taken for a stuck one.
        conf = self.config("fast_interval_ms = 100\nread_deadline_ms = 2000\nmetrics_profile = full\n")
        r = subprocess.run([base.SMID, "--once", "--config", conf, "--sysfs-root", root], capture_output=True, timeout=15)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        body = r.stdout.decode()
        promtool_check(self, body)
        up = series(parse_metrics(body), "hipstack_gpu_up")
        self.assertEqual(len([1 for l, v in up if l["bdf"] != stuck_bdf and v == 1]), 7)

    def test_a_fifo_in_a_discovery_file_ends_the_start_with_the_reason(self):
        """Issue 40: unique_id as a FIFO hung the start forever, with no listener and SIGTERM
        ignored (signals are read through a signalfd once the start begins). Now the start ends
        after its discovery deadline (8 s) naming why, exit 1; and a stop signal still stops it."""
        path = os.path.join(self.root, "class/drm", self.CARD, "device/unique_id")
        with open(path, "rb") as f:
            original = f.read()

        def put_back():
            with open(path + ".orig", "wb") as f:
                f.write(original)
            os.replace(path + ".orig", path)
        self.addCleanup(put_back)  # after the daemons' stops (cleanups run last in, first out)
        self.make_fifo(path)
        conf = self.config("fast_interval_ms = 100\n")
        d = base.Daemon(self, sysfs=self.root, config=conf)
        self.assertLess(self.assert_exits(d, 1, 15.0), 15.0)
        self.assertIn("finding the GPUs took longer than 8 s: a read of the GPUs' files is stuck", d.stderr())
        # SIGTERM while it waits on the FIFO: it ends at once. Sent once the discovery thread runs
        # (the process has a second thread), so the signal reaches the signalfd, not the default action.
        d = base.Daemon(self, sysfs=self.root, config=conf)
        deadline = time.monotonic() + 10
        while len(os.listdir("/proc/%d/task" % d.pid)) < 2:
            self.assertLess(time.monotonic(), deadline, "no discovery thread:\n" + d.stderr())
            time.sleep(0.02)
        d.signal(signal.SIGTERM)
        self.assertLess(self.assert_exits(d, 0, 3.0), 3.0)
        self.assertIn("stopped (signal 15) while finding the GPUs", d.stderr())


if __name__ == "__main__":
    sys.exit(base.main(__doc__))
