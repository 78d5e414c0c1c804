#!/usr/bin/env python3
"""hipstack-smi monitor and process -w/-i for people and scripts (issue 15, item 3), and the human views
on a real terminal: tmux at 80x30 (item 9).

Usage: test_monitor.py HIPSTACK_SMI CAPTURES_DIR

The terminal tests run each view in a detached tmux session of 80x30 on a private server and read the
whole pane history back twice: as the screen shows it, and with wrapped lines joined (-J). The two are
equal exactly when no line wrapped. The view signals tmux when it has ended (wait-for), so the test
waits for that, not for a time.
"""
import csv
import datetime
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from smi_cli import TmuxScreen, fake_nvml_env

SMI = CAPTURES = None
SPX, CPX = "constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1"


def root(name):
    return f"{CAPTURES}/{name}/sys"


def run(*args, expect=0):
    proc = subprocess.run([SMI, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != expect:
        raise AssertionError(f"{args}: exit {proc.returncode}, expected {expect}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


def read(path):
    with open(path) as f:
        return f.read()


def table(text):
    """(titles, units, rows of cells) of a monitor table printed once."""
    lines = text.splitlines()
    return lines[0].split(), lines[1].split(), [line.split() for line in lines[2:]]


class Monitor(unittest.TestCase):
    def test_default_columns_are_what_the_gpus_report(self):
        titles, units, rows = table(run("monitor", "-i", "1", "--sysfs-root", root(SPX)).stdout)
        # An MI300X has no edge sensor, no fan and no average power: those columns are left out.
        self.assertEqual(titles, ["time", "gpu", "hotsp", "mtemp", "power", "sclk", "mclk", "busy", "mbusy", "vram"])
        self.assertEqual(units, ["°C", "°C", "W", "MHz", "MHz", "%", "%", "GiB"])
        self.assertEqual([r[1] for r in rows], [str(i) for i in range(8)])
        metrics = json.loads(run("metric", "--json", "--sysfs-root", root(SPX)).stdout)["devices"]
        for row, device in zip(rows, metrics):
            m = {k: v["value"] for k, v in device["metrics"].items() if v.get("status") == "ok"}
            cells = dict(zip(titles, row))
            self.assertRegex(cells["time"], r"^\d\d:\d\d:\d\d$")
            self.assertEqual(cells["hotsp"], f"{m['temperature_junction']:.0f}")
            self.assertEqual(cells["power"], f"{m['power_current']:.0f}")
            self.assertEqual(cells["vram"], f"{m['vram_used'] / 2**30:.1f}")
            self.assertEqual(cells["busy"], f"{m['gpu_busy']:.0f}")
        for line in run("monitor", "-i", "1", "--sysfs-root", root(CPX)).stdout.splitlines():
            self.assertLessEqual(len(line), 80, line)

    def test_metrics_named_are_kept_group_members_only_when_reported(self):
        titles, units, rows = table(run("monitor", "-i", "1", "-g", "0", "-m", "power_current,power_average,power_cap",
                                        "--sysfs-root", root(SPX)).stdout)
        self.assertEqual(titles, ["time", "gpu", "power", "pavg", "power_cap"])  # named: kept though never read
        self.assertEqual(rows[0][2:], ["133", "-", "750"])  # a limit beside the value it bounds
        titles, _, _ = table(run("monitor", "-i", "1", "-g", "0", "-m", "temperature", "--sysfs-root", root(SPX)).stdout)
        self.assertIn("hotsp", titles)
        self.assertIn("temperature_junction_critical", titles)
        self.assertNotIn("edge", titles)  # a group member no GPU reports

    def test_metrics_shape_table_csv_and_json_alike(self):
        args = ["monitor", "-i", "1", "-m", "power_current,vram_used", "--sysfs-root", root(SPX)]
        titles, units, _ = table(run(*args).stdout)
        self.assertEqual(titles, ["time", "gpu", "power", "vram"])
        rows = list(csv.reader(io.StringIO(run(*args, "--csv").stdout)))
        self.assertEqual(rows[0], ["time", "index", "bdf", "power_current [W]", "vram_used [B]", "fault"])
        self.assertEqual(len(rows), 9)
        doc = json.loads(run(*args, "--json").stdout)
        self.assertEqual({k for d in doc["devices"] for k in d["metrics"]}, {"power_current", "vram_used"})
        exact = json.loads(run("metric", "--json", "-m", "vram_used", "--sysfs-root", root(SPX)).stdout)["devices"]
        self.assertEqual([int(r[4]) for r in rows[1:]], [d["metrics"]["vram_used"]["value"] for d in exact])

    def test_activity_over_the_refresh_window(self):
        """Each refresh is a window look (fake NVML GPM): empty on the first round, the GEMM's figures
        after; GPU 1 has no GPM and stays empty."""
        env = fake_nvml_env(self, "h100x2-mig.txt")
        empty = tempfile.mkdtemp(prefix="monitor-window-")
        self.addCleanup(shutil.rmtree, empty, True)
        proc = subprocess.run([SMI, "--sysfs-root", empty, "monitor", "--csv", "-i", "2", "-w", "0.05", "-m",
                               "sm_active,tensor_active"], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [(r["index"], r["sm_active [%]"], r["tensor_active [%]"]) for r in csv.DictReader(io.StringIO(proc.stdout))]
        self.assertEqual(rows, [("0", "", ""), ("1", "", ""), ("0", "96.7", "93.8"), ("1", "", "")])

    def test_csv_rounds_carry_utc_times(self):
        rows = list(csv.DictReader(io.StringIO(run("monitor", "--csv", "-i", "3", "-w", "0.05",
                                                   "--sysfs-root", root(SPX)).stdout)))
        self.assertEqual(len(rows), 24)
        times = [datetime.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%S.%fZ") for r in rows]
        self.assertEqual(len(set(times)), 3)
        self.assertEqual(times, sorted(times))
        self.assertTrue(all(r["temperature_junction [C]"] for r in rows))

    def test_header_once_in_a_pipe(self):
        out = run("monitor", "-i", "4", "-w", "0.01", "--sysfs-root", root(SPX)).stdout.splitlines()
        self.assertEqual(sum(line.split()[:1] == ["time"] for line in out), 1)
        self.assertEqual(len(out), 2 + 4 * 8)
        self.assertRegex(out[2].split()[0], r"^\d\d:\d\d:\d\d\.\d{3}$")  # rounds under a second apart


class ProcessWatch(unittest.TestCase):
    def test_command_line_and_partitions_from_the_files(self):
        capture = f"{CAPTURES}/{CPX}"
        doc = json.loads(run("process", "--json", "--sysfs-root", root(CPX)).stdout)
        parts = json.loads(run("partition", "--json", "--sysfs-root", root(CPX)).stdout)["devices"]
        seen = 0
        for device, partitioned in zip(doc["devices"], parts):
            index_of = {p["metrics"]["partition_kfd_gpu_id"]["value"]: p["index"] for p in partitioned["partition_list"]}
            for p in device["processes"]:
                with open(f"{capture}/proc/{p['pid']}/cmdline", "rb") as f:
                    self.assertEqual(p["command_line"], f.read().rstrip(b"\0").replace(b"\0", b" ").decode())
                kfd = f"{capture}/sys/class/kfd/kfd/proc/{p['pid']}"
                want = sorted(index_of[int(name[5:])] for name in os.listdir(kfd) if name.startswith("vram_")
                              and int(name[5:]) in index_of and int(read(f"{kfd}/{name}")) > 0) \
                    if os.path.isdir(kfd) else []
                got = p["metrics"]["process_partitions"]
                if want:
                    self.assertEqual(got["value"], ",".join(map(str, want)), p["pid"])
                    seen += 1
                else:
                    self.assertNotEqual(got.get("status"), "ok", p["pid"])
        self.assertGreater(seen, 0)
        out = run("process", "--sysfs-root", root(CPX)).stdout
        # In 80 columns the engines and the command line go on a line under each row (header too).
        lines = out.splitlines()
        self.assertEqual(lines[0].split() + lines[1].split(), ["GPU", "PID", "USER", "NAME", "PART", "VRAM", "GTT", "CU",
                                                               "QUEUES", "ENGINES", "COMMAND"])
        self.assertTrue(lines[1].startswith("    ENGINES"), lines[1])
        self.assertIn("python3 -u train.py", out)

    def test_watch_rounds_in_every_form(self):
        rows = list(csv.DictReader(io.StringIO(run("process", "-i", "2", "-w", "0.05", "--csv",
                                                   "--sysfs-root", root(SPX)).stdout)))
        times = sorted({r["time"] for r in rows})
        self.assertEqual(len(times), 2)
        for when in times:
            datetime.datetime.strptime(when, "%Y-%m-%dT%H:%M:%S.%fZ")
        busy = [r for r in rows if r["metric"] == "process_engine_busy" and r["instance"]]  # processes with engines
        self.assertTrue(busy)
        # A recorded capture's fdinfo counters stand still: no look measures busy (not even the
        # second, which on a running system measures since the first), and JSON says why.
        self.assertTrue(all(r["status"] == "unavailable" and r["value"] == "" for r in busy), busy)
        lines = run("process", "-i", "3", "-w", "0.02", "--json", "--sysfs-root", root(SPX)).stdout.splitlines()
        self.assertEqual(len(lines), 3)
        self.assertTrue(all(json.loads(line)["command"] == "process" and "time" in json.loads(line) for line in lines))
        last = [share for d in json.loads(lines[-1])["devices"] for p in d["processes"]
                for share in p["metrics"]["process_engine_busy"].get("instances", {}).values()]
        self.assertTrue(last)
        self.assertTrue(all("recorded capture" in r["detail"] and "value" not in r for r in last), last[0])
        table = run("process", "-i", "2", "-w", "0.02", "--sysfs-root", root(SPX)).stdout
        self.assertEqual(sum(line.startswith("TIME ") for line in table.splitlines()), 2)
        rows = [line for line in table.splitlines() if line and not line.startswith((" ", "TIME "))]  # no line under a row
        self.assertTrue(rows and all(re.match(r"^\d\d:\d\d:\d\d ", line) for line in rows), rows)


class Terminal(unittest.TestCase):
    """The views on tmux at 80x30: no line wraps; monitor's header stays on the screen."""
    ROWS = 30

    def in_tmux(self, args):
        shown, joined = TmuxScreen(80, self.ROWS).run([SMI, *args])
        self.assertEqual(shown[-1], "exit=0", shown[-5:])
        self.assertEqual(shown, joined, "a line wrapped at 80 columns")
        return shown[:-1]

    def test_default_view_never_wraps(self):
        for node in (SPX, CPX):
            with self.subTest(node=node):
                shown = self.in_tmux(["--sysfs-root", root(node)])
                self.assertTrue(any(line.startswith("GPU") for line in shown), shown)

    def test_monitor_never_wraps_and_keeps_its_header_in_view(self):
        for node, gpus in ((SPX, 8), (CPX, 8)):  # CPX: 8 GPUs of 8 partitions each
            with self.subTest(node=node):
                shown = self.in_tmux(["monitor", "-i", "12", "-w", "0.01", "--sysfs-root", root(node)])
                headers = [i for i, line in enumerate(shown) if line.split()[:2] == ["time", "gpu"]]
                self.assertEqual(headers[0], 0)
                rows = [line for line in shown if line.split()[1:2] and line.split()[1].isdigit()]
                self.assertEqual(len(rows), 12 * gpus)
                for here, following in zip(headers, headers[1:] + [len(shown)]):
                    printed = following - here  # the header's two lines and the rows below it
                    # Printed again before it would scroll off a 30-row screen, and not sooner.
                    self.assertLessEqual(printed, max(self.ROWS, 2 + gpus))
                    if following != len(shown):
                        self.assertGreater(printed + gpus, self.ROWS)


def main():
    global SMI, CAPTURES
    SMI, CAPTURES = (os.path.abspath(a) for a in sys.argv[1:3])
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)


if __name__ == "__main__":
    main()
