#!/usr/bin/env python3
"""What hipstack-smi and hipstack-smid may claim (docs/health.md "Verdicts", docs/cli.md):

- a GPU that cannot be read (the fake NVML's lost GPU and its GPU whose handle NVML refuses) is
  listed by list, metric, monitor and health, named without -v, and those commands exit 1;
- a GPU none of whose checks can be evaluated is UNKNOWN (exit 8), never "every check passed";
- text from files with invalid UTF-8, ANSI escapes, quotes and commas comes out as data: valid JSON,
  CSV that reads back to the JSON's values, no escape sequence on the terminal, and a /metrics page
  that promtool accepts.

Usage: test_truth.py HIPSTACK_SMI HIPSTACK_SMID CAPTURES_DIR   (env FAKE_NVML_FULL, FAKE_NVML_SCRIPTS_DIR)
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SMI = SMID = CAPTURES = None
# Invalid UTF-8, ANSI colour and title escapes, a BEL, a quote, a comma, a backslash and a newline.
HOSTILE = b'\x1b[31mEvil "GPU", model\xff\xfe\x1b]0;owned\x07 C:\\x41\nsecond line'


def run(*args, expect=0, env=None):
    proc = subprocess.run([SMI, *args], capture_output=True, timeout=60, env=env)
    if proc.returncode != expect:
        raise AssertionError(f"{args}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout: {proc.stdout.decode(errors='replace')}\nstderr: {proc.stderr.decode(errors='replace')}")
    return proc


def fake_nvml(script):
    if not os.environ.get("FAKE_NVML_FULL"):
        raise AssertionError("FAKE_NVML_FULL is not set: the fake NVML (smi-lib/tests/fake_nvml) must be built")
    env = dict(os.environ)
    env["HIPSTACK_NVML_LIBRARY"] = os.environ["FAKE_NVML_FULL"]
    env["HIPSTACK_FAKE_NVML_SCRIPT"] = os.path.join(os.environ["FAKE_NVML_SCRIPTS_DIR"], script)
    return env


class LostGpus(unittest.TestCase):
    """faults.txt: GPU 0 partly failing but readable, GPU 1 fallen off the bus, GPU 2 refused."""

    def setUp(self):
        self.env = fake_nvml("faults.txt")
        self.empty = tempfile.mkdtemp(prefix="hipstack-truth-")  # no AMD GPU beside the fake NVIDIA ones
        os.mkdir(os.path.join(self.empty, "sys"))
        self.addCleanup(shutil.rmtree, self.empty, True)

    def smi(self, *args, expect):
        return run(*args, "--sysfs-root", os.path.join(self.empty, "sys"), expect=expect, env=self.env)

    def test_list_names_every_gpu_and_why(self):
        devices = json.loads(self.smi("list", "--json", expect=1).stdout)["devices"]
        self.assertEqual([d["index"] for d in devices], [0, 1, 2])
        self.assertIsNone(devices[0]["fault"])
        self.assertIn("lost", devices[1]["fault"])
        self.assertIn("nvmlDeviceGetHandleByIndex", devices[2]["fault"])
        self.assertEqual(devices[1]["bdf"], "0000:af:00.0")  # the PCI info still answered
        text = self.smi("list", expect=1).stdout.decode()
        self.assertIn("GPU 1 cannot be read: the GPU is lost", text)
        self.assertIn("GPU 2 cannot be read: NVML gives no handle", text)
        self.assertNotIn("NVIDIA GPU", text)  # no made-up name
        rows = list(csv.DictReader(io.StringIO(self.smi("list", "--csv", expect=1).stdout.decode())))
        self.assertEqual([bool(r["fault"]) for r in rows], [False, True, True])
        self.smi("list", "-g", "0", expect=0)

    def test_health_fails_the_unreadable_gpus(self):
        devices = json.loads(self.smi("health", "--json", expect=1).stdout)["devices"]
        self.assertEqual([d["overall"] for d in devices][1:], ["FAIL", "FAIL"])
        for d in devices[1:]:
            # Beside the failure, only errors.recent, which one look at an NVIDIA GPU cannot judge.
            self.assertEqual([(f["check"], f["verdict"]) for f in d["findings"]], [("device.readable", "FAIL"), ("errors.recent", "UNKNOWN")])
            self.assertNotIn("passed", d["summary"])
        text = self.smi("health", "-g", "1", expect=1).stdout.decode()
        self.assertIn("device.readable", text)
        self.assertNotIn("every check passed", text)

    def test_metric_and_monitor_name_them(self):
        text = self.smi("metric", "-g", "1", expect=1).stdout.decode()
        self.assertIn("CANNOT BE READ: the GPU is lost", text)
        doc = json.loads(self.smi("metric", "--json", "-g", "2", expect=1).stdout)
        self.assertIn("nvmlDeviceGetHandleByIndex", doc["devices"][0]["fault"])
        self.assertTrue(all(m.get("status") == "error" for m in doc["devices"][0]["metrics"].values()))
        self.smi("metric", "-g", "0", expect=0)
        monitor = self.smi("monitor", "-i", "1", expect=1).stdout.decode()
        self.assertIn("GPU 1 cannot be read", monitor)
        self.assertIn("GPU 2 cannot be read", monitor)
        rows = list(csv.DictReader(io.StringIO(self.smi("monitor", "-i", "1", "--csv", expect=1).stdout.decode())))
        self.assertEqual([bool(r["fault"]) for r in rows], [False, True, True])


class UnknownIsNotPassed(unittest.TestCase):
    def test_nothing_checkable_is_unknown_exit_8(self):
        root = f"{CAPTURES}/real/k8s-device-plugin/topo-mi300-cpx/sys"  # KFD topology only
        devices = json.loads(run("health", "--json", "-g", "0", "--sysfs-root", root, expect=8).stdout)["devices"]
        self.assertEqual(devices[0]["overall"], "UNKNOWN")
        self.assertIn("no check could be evaluated", devices[0]["summary"])
        self.assertIn("thermal.temperature", devices[0]["not_checked"])
        text = run("health", "-g", "0", "--sysfs-root", root, expect=8).stdout.decode()
        self.assertNotIn("passed", text)
        self.assertIn("not checked: thermal.temperature", text)

    def test_partly_checked_names_what_was_not(self):
        root = f"{CAPTURES}/real/lact/rx6900xt/sys"
        (device,) = json.loads(run("health", "--json", "--sysfs-root", root).stdout)["devices"]
        # A consumer card without ECC: the memory checks cannot be evaluated (no counts in its files).
        self.assertIn("memory.uncorrectable_ecc", device["not_checked"])
        self.assertEqual(device["overall"], "PASS")
        self.assertNotIn("every check passed", device["summary"])
        text = run("health", "--sysfs-root", root).stdout.decode()
        # The summary line, wrapped to 80 columns at its commas' spaces, says the same as JSON.
        self.assertIn("not checked: " + ", ".join(device["not_checked"]), " ".join(text.split()))


class HostileText(unittest.TestCase):
    TEXT_FILES = ("product_name", "product_number", "vbios_version", "serial_number", "mem_info_vram_vendor")

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="hipstack-hostile-")
        self.addCleanup(shutil.rmtree, self.work, True)
        shutil.copytree(f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/sys", f"{self.work}/sys", symlinks=True)
        shutil.copytree(f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/proc", f"{self.work}/proc", symlinks=True)
        device = f"{self.work}/sys/class/drm/card0/device"
        for name in self.TEXT_FILES:
            with open(os.path.join(device, name), "wb") as f:
                f.write(HOSTILE + b"\n")
        for pid in os.listdir(f"{self.work}/proc"):
            if os.path.exists(f"{self.work}/proc/{pid}/comm"):
                with open(f"{self.work}/proc/{pid}/comm", "wb") as f:
                    f.write(HOSTILE[:15] + b"\n")
        self.root = ["--sysfs-root", f"{self.work}/sys", "--procfs-root", f"{self.work}/proc"]

    def assert_no_control_bytes(self, data, what):
        controls = [b for b in data if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f]
        self.assertEqual(controls, [], f"{what}: control bytes reach the output")
        data.decode("utf-8")  # strict: raises on invalid UTF-8

    def test_json_csv_and_terminal(self):
        out = run("static", "--json", "-g", "0", *self.root).stdout
        self.assert_no_control_bytes(out, "static --json")
        metrics = json.loads(out)["devices"][0]["metrics"]
        name = metrics["product_name"]["value"]
        self.assertIn("\\x1b[31mEvil", name)     # the escape is shown as text, in hex
        self.assertIn("\\xff\\xfe", name)        # so are the bytes that are not UTF-8
        self.assertIn("C:\\\\x41", name)          # and a backslash cannot pose as an escape
        table = run("static", "-g", "0", *self.root).stdout
        self.assert_no_control_bytes(table, "static table")
        self.assertIn(b"\\x1b[31mEvil", table)
        rows = list(csv.DictReader(io.StringIO(run("static", "--csv", "-g", "0", *self.root).stdout.decode())))
        by_metric = {r["metric"]: r["value"] for r in rows if not r["instance"]}
        # Quotes and commas survive the CSV quoting: the field reads back to the JSON's value.
        self.assertEqual(by_metric["product_name"], name)
        self.assertIn('"GPU", model', by_metric["product_name"])
        for args in (["process", "--json"], ["process"], ["list", "--json"], ["health", "--json"], ["metric", "--json"]):
            proc = subprocess.run([SMI, *args, *self.root], capture_output=True, timeout=60)
            self.assertIn(proc.returncode, (0, 1), args)
            self.assert_no_control_bytes(proc.stdout, " ".join(args))
        procs = json.loads(run("process", "--json", *self.root).stdout)["devices"]
        names = [p["name"] for d in procs for p in d["processes"]]
        self.assertTrue(any("\\x1b[31m" in n for n in names), names)

    def test_metrics_page_passes_promtool(self):
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool (package prometheus) is required")
        page = subprocess.run([SMID, "--once", "--sysfs-root", f"{self.work}/sys"], capture_output=True, timeout=60)
        self.assertEqual(page.returncode, 0, page.stderr.decode(errors="replace"))
        self.assert_no_control_bytes(page.stdout, "/metrics")
        # A text fact is a label of hipstack_gpu_info (docs/daemon.md), escaped once.
        self.assertIn(b'product_name="\\\\x1b[31mEvil \\"GPU\\", model\\\\xff', page.stdout)
        check = subprocess.run([promtool, "check", "metrics"], input=page.stdout, capture_output=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout.decode() + check.stderr.decode())


class StuckReads(unittest.TestCase):
    """A read that never returns (a FIFO stands in for a hung driver read): the command names that GPU
    as stuck and still shows the others, within its --read-deadline-ms, instead of hanging."""

    # One copy of each capture for the whole class (a copy of 7 MB of small files takes seconds,
    # most of this test's time on a loaded machine); each test plants its FIFOs in it and puts the
    # recorded files back when it ends, pass or fail.
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="smi-stuck-")
        cls.copies = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, True)

    def setUp(self):
        self.node = "mi300x-8gpu-spx-nps1"

    def use(self, node):
        """Makes the class's copy of constructed/NODE this test's --sysfs-root (default: SPX)."""
        self.node = node

    @property
    def root(self):
        if self.node not in self.copies:
            self.copies[self.node] = os.path.join(self.base, self.node, "sys")
            shutil.copytree(f"{CAPTURES}/constructed/{self.node}/sys", self.copies[self.node], symlinks=True)
        return self.copies[self.node]

    def make_fifo(self, relative):
        path = os.path.join(self.root, relative)
        os.unlink(path)
        os.mkfifo(path)
        self.addCleanup(self.restore, path, os.path.join(CAPTURES, "constructed", self.node, "sys", relative))

    @staticmethod
    def restore(path, original):
        os.unlink(path)
        if os.path.islink(original):
            os.symlink(os.readlink(original), path)
        else:
            shutil.copy2(original, path)

    def test_a_stuck_sensor(self):
        self.make_fifo("class/drm/card8/device/hwmon/hwmon3/temp2_input")
        start = time.monotonic()
        proc = run("metric", "--json", "--read-deadline-ms", "500", "--sysfs-root", self.root, expect=1)
        self.assertLess(time.monotonic() - start, 10)
        devices = json.loads(proc.stdout)["devices"]
        self.assertEqual(len(devices), 8)
        stuck = [d for d in devices if d.get("fault")]
        self.assertEqual(len(stuck), 1, [d.get("fault") for d in devices])
        self.assertIn("no answer within 500 ms", stuck[0]["fault"])
        self.assertTrue(stuck[0]["metrics"])
        self.assertNotIn('"status": "ok"', json.dumps(stuck[0]["metrics"]))
        self.assertIn('"status": "error"', json.dumps(stuck[0]["metrics"]))
        for d in devices:
            if not d.get("fault"):
                self.assertIn('"status": "ok"', json.dumps(d["metrics"]), d["bdf"])  # the others are read
        self.assertIn(b"no answer within 500 ms", proc.stderr)
        health = json.loads(run("health", "--json", "--read-deadline-ms", "500", "--sysfs-root", self.root,
                                expect=1).stdout)["devices"]
        failed = [d for d in health if d["overall"].lower() == "fail"]
        self.assertEqual([d["bdf"] for d in failed], [stuck[0]["bdf"]])

    def test_monitor_goes_on_without_the_stuck_gpu(self):
        self.make_fifo("class/drm/card8/device/hwmon/hwmon3/temp2_input")
        start = time.monotonic()
        proc = run("monitor", "--csv", "-i", "3", "-w", "0.1", "--read-deadline-ms", "500", "--sysfs-root", self.root, expect=1)
        self.assertLess(time.monotonic() - start, 10)  # one deadline, not one per round
        rows = list(csv.DictReader(io.StringIO(proc.stdout.decode())))
        self.assertEqual(len(rows), 3 * 8)  # every round lists every GPU
        faulted = {r["index"] for r in rows if r["fault"]}
        self.assertEqual(len(faulted), 1, faulted)
        self.assertTrue(all(r["temperature_junction [C]"] for r in rows if r["index"] not in faulted))

    def stuck_and_others(self, command, key, *extra):
        """Runs `command --json` with a 500 ms deadline: one GPU named stuck, the others listed."""
        start = time.monotonic()
        proc = run(command, "--json", "--read-deadline-ms", "500", *extra, expect=1)
        self.assertLess(time.monotonic() - start, 10)
        devices = json.loads(proc.stdout)["devices"]
        self.assertEqual(len(devices), 8)
        stuck = [d for d in devices if d.get("fault")]
        self.assertEqual(len(stuck), 1, [d.get("fault") for d in devices])
        self.assertIn("no answer within 500 ms", stuck[0]["fault"])
        self.assertEqual(stuck[0][key], [])
        self.assertIn(b"no answer within 500 ms", proc.stderr)
        return devices, stuck[0]

    def test_process_with_a_stuck_gpu(self):
        # A process's VRAM file for one GPU (KFD) blocks; the processes of the others are listed.
        self.make_fifo("class/kfd/kfd/proc/48213/vram_41002")
        devices, stuck = self.stuck_and_others("process", "processes", "--sysfs-root", self.root,
                                               "--procfs-root", f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/proc")
        self.assertTrue(any(d["processes"] for d in devices if not d.get("fault")))

    def test_bad_pages_with_a_stuck_gpu(self):
        self.use("mi300x-8gpu-faults")
        self.make_fifo("class/drm/card16/device/ras/gpu_vram_bad_pages")
        devices, stuck = self.stuck_and_others("bad-pages", "bad_pages", "--sysfs-root", self.root)
        self.assertTrue(any(d["bad_pages"] for d in devices if not d.get("fault")))

    def test_topology_stuck(self):
        self.make_fifo("class/kfd/kfd/topology/nodes/2/io_links/0/properties")
        start = time.monotonic()
        proc = run("topology", "--json", "--read-deadline-ms", "500", "--sysfs-root", self.root, expect=1)
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(proc.stdout, b"")
        self.assertIn(b"topology: no answer within 500 ms: a read of the node's topology files is stuck", proc.stderr)

    def test_selecting_by_partition_reads_no_partition_file(self):
        # -g matches partitions by the names discovery already knows: a stuck mem_banks file (read
        # by `partition`, not by discovery) neither hangs an unknown selector nor hides a partition's.
        self.use("mi300x-8gpu-cpx-nps1")
        partitions = json.loads(run("partition", "--json", "--sysfs-root", self.root).stdout)["devices"][2]
        wanted = partitions["partition_list"][5]
        nodes = os.path.join(self.root, "class/kfd/kfd/topology/nodes")
        for node in os.listdir(nodes):
            banks = os.path.join(nodes, node, "mem_banks/0/properties")
            if os.path.exists(banks):
                self.make_fifo(os.path.relpath(banks, self.root))
        for selector, expect in (("GPU-0000000000000000", 3), (wanted["bdf"], 0), (wanted["id"], 0)):
            start = time.monotonic()
            proc = subprocess.run([SMI, "list", "--json", "-g", selector, "--read-deadline-ms", "500",
                                   "--sysfs-root", self.root], capture_output=True, timeout=20)
            self.assertLess(time.monotonic() - start, 10, selector)
            self.assertEqual(proc.returncode, expect, (selector, proc.stderr))
            if expect == 0:
                self.assertEqual([d["index"] for d in json.loads(proc.stdout)["devices"]], [partitions["index"]])
            else:
                self.assertIn(b"no device matches", proc.stderr)

    def test_stuck_while_finding_the_gpus(self):
        self.make_fifo("class/drm/card3/device/uevent")
        start = time.monotonic()
        proc = run("list", "--read-deadline-ms", "500", "--sysfs-root", self.root, expect=1)
        self.assertLess(time.monotonic() - start, 10)
        self.assertIn(b"finding the GPUs took longer than 500 ms", proc.stderr)


def main():
    global SMI, SMID, CAPTURES
    SMI, SMID, CAPTURES = sys.argv[1], sys.argv[2], sys.argv[3]
    program = unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
