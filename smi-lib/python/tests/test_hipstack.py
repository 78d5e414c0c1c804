"""The hipstack Python package on recorded captures: what it says must be what the C++ API says through
hipstack-smi's JSON for the same capture, and its errors must be exceptions naming the cause.
Environment: HIPSTACK_SMI_LIBRARY (the built library), HIPSTACK_SMI (the built hipstack-smi),
HIPSTACK_CAPTURES_DIR."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import unittest

import hipstack

CAPTURES = os.environ["HIPSTACK_CAPTURES_DIR"]
SMI = os.environ["HIPSTACK_SMI"]
MI300X = os.path.join(CAPTURES, "constructed/mi300x-8gpu-spx-nps1")


def smi_json(*args, sysfs=os.path.join(MI300X, "sys"), procfs=os.path.join(MI300X, "proc")):
    out = subprocess.run([SMI, *args, "--json", "--sysfs-root", sysfs, "--procfs-root", procfs], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


class Library(unittest.TestCase):
    def test_version_and_catalogue(self):
        self.assertRegex(hipstack.version(), r"^\d+\.\d+\.\d+")
        names = [m.name for m in hipstack.catalogue()]
        self.assertEqual(len(names), len(set(names)))
        edge = hipstack.metric("temperature_edge")
        self.assertEqual((edge.unit, edge.unit_symbol, edge.type, edge.scope), ("celsius", "C", "real", "device"))
        self.assertEqual(hipstack.metric(edge.id), edge)
        with self.assertRaises(hipstack.NotFound):
            hipstack.metric("no_such_metric")
        self.assertIn("thermal.temperature", hipstack.health_checks())
        self.assertIn("memory.uncorrectable_ecc", hipstack.health_checks())


class OneGpu(unittest.TestCase):
    def setUp(self):
        self.system = hipstack.System(sysfs_root=os.path.join(CAPTURES, "real/lact/rx6900xt/sys"))

    def tearDown(self):
        self.system.close()

    def test_devices_and_readings(self):
        (gpu,) = self.system.devices()
        self.assertEqual((gpu.vendor, gpu.backend, gpu.bdf, gpu.fault), ("amd", "amdgpu", "0000:0c:00.0", ""))
        self.assertEqual(self.system.resolve("0c:00.0"), 0)
        self.assertEqual(self.system.resolve(gpu.uuid), 0)
        readings = {(r.metric, r.instance): r for r in self.system.sample(0, kinds=("identity", "live"))}
        edge = readings[("temperature_edge", "")]
        self.assertTrue(edge.ok)
        self.assertEqual((edge.value, edge.unit), (56.0, "C"))
        self.assertNotEqual(edge.detail, "")
        self.assertEqual(readings[("vbios_version", "")].value, "113-D4121EXT-CO1")
        unsupported = [r for r in readings.values() if r.status == "not_supported"]
        self.assertTrue(unsupported and all(r.value is None for r in unsupported))
        (power,) = self.system.sample(0, metrics=["power_average"])
        self.assertEqual(power.metric, "power_average")
        self.assertEqual(self.system.fault(0), "")

    def test_a_prepared_query_gives_the_samples_values(self):
        """Query.values: each metric's value as sample() gives it (every kind), None where not ok; with
        text among them through a sample's list, numbers only through hipstack_smi_read_values."""
        with_text = ["temperature_edge", "vbios_version", "power_cap", "vram_total", "gpu_busy", "temperature_hbm"]
        numbers = ["ecc_corrected_volatile", "vram_total", "temperature_edge", "power_cap", "gpu_busy", "vram_used"]
        for names, missing in ((with_text, "temperature_hbm"), (numbers, "ecc_corrected_volatile")):
            sampled = {r.metric: r for r in self.system.sample(0, kinds=("identity", "static", "live"), metrics=names)}
            self.assertFalse(sampled[missing].ok)  # a Navi 21 has no HBM and no RAS: the None case is exercised
            query = self.system.query(names)
            self.assertEqual(query._numeric, names is numbers)
            for _ in range(2):  # asked again, the same answers
                values = query.values(0)
                self.assertEqual(values, [sampled[n].value if sampled[n].ok else None for n in names])
                for name, value in zip(names, values):
                    self.assertIs(type(value), type(sampled[name].value) if sampled[name].ok else type(None), name)
            with self.assertRaises(hipstack.NoSuchDevice):
                query.values(7)
        values = self.system.query(with_text).values(0)
        self.assertIsInstance(values[3], int)
        self.assertIsInstance(values[1], str)
        # One query from several threads at once: each has its own buffer, every answer whole.
        query, want = self.system.query(numbers), self.system.query(numbers).values(0)
        answers = []

        def poll():
            answers.append([query.values(0) for _ in range(300)])

        threads = [threading.Thread(target=poll) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(answers), 4)
        for got in answers:
            self.assertEqual(got, [want] * 300)
        with self.assertRaises(hipstack.NoSuchDevice):
            query.values(-1)
        with self.assertRaises(hipstack.NoSuchDevice):
            query.values(1 << 40)
        with self.assertRaises(hipstack.InvalidArgument):
            self.system.query(["partition_memory"])
        with self.assertRaises(hipstack.NotFound):
            self.system.query(["no_such_metric"])

    def test_errors_are_exceptions_naming_the_cause(self):
        with self.assertRaises(hipstack.NoSuchDevice):
            self.system.sample(5)
        with self.assertRaises(hipstack.NoSuchDevice):
            self.system.resolve("ff:00.0")
        with self.assertRaisesRegex(hipstack.InvalidArgument, "unknown kind"):
            self.system.sample(0, kinds=("sometimes",))
        with self.assertRaisesRegex(hipstack.InvalidArgument, "/nonexistent/sys"):
            hipstack.System(sysfs_root="/nonexistent/sys")
        with self.assertRaisesRegex(hipstack.InvalidArgument, "no health threshold"):
            self.system.health(0, thermal_edge=3)


class EightGpus(unittest.TestCase):
    """Partitions, processes, links and health as hipstack-smi (the C++ API) gives them."""

    @classmethod
    def setUpClass(cls):
        cls.system = hipstack.System(sysfs_root=os.path.join(MI300X, "sys"), procfs_root=os.path.join(MI300X, "proc"))

    @classmethod
    def tearDownClass(cls):
        cls.system.close()

    def test_devices_and_partitions(self):
        want = smi_json("list")["devices"]
        got = self.system.devices()
        self.assertEqual([(d.index, d.bdf, d.uuid, d.name, d.partition_count) for d in got],
                         [(d["index"], d["bdf"], d["uuid"], d["name"], d["partitions"]) for d in want])
        for d in got:
            partitions = self.system.partitions(d.index)
            self.assertEqual(len(partitions), d.partition_count)
            self.assertTrue(all(p.id.startswith(d.uuid) for p in partitions))

    def test_processes(self):
        want = {d["index"]: [(p["pid"], p["name"], p["command_line"]) for p in d["processes"]]
                for d in smi_json("process")["devices"]}
        seen = 0
        for d in self.system.devices():
            got = self.system.processes(d.index)
            self.assertEqual([(p.pid, p.name, p.command_line) for p in got], want.get(d.index, []))
            seen += len(got)
            for p in got:
                self.assertTrue(any(r.metric == "process_vram" for r in p.readings))
        self.assertEqual(seen, 7)

    def test_links(self):
        links = self.system.links()
        self.assertEqual(len(links), len(smi_json("topology")["links"]))
        self.assertEqual(len(links), 56)
        self.assertTrue(all(link.source != link.target and link.readings for link in links))

    def test_health(self):
        want = {d["index"]: d for d in smi_json("health")["devices"]}
        for d in self.system.devices():
            report = self.system.health(d.index)
            self.assertEqual(report.overall, want[d.index]["overall"])
            self.assertEqual([(f.check, f.verdict) for f in report.findings],
                             [(f["check"], f["verdict"]) for f in want[d.index]["findings"]])
        # A threshold changes the verdict: no margin at all, then a margin so wide every GPU warns.
        lenient = self.system.health(0, thermal_margin=0)
        strict = self.system.health(0, thermal_margin=500)
        verdict = lambda report: next(f.verdict for f in report.findings if f.check == "thermal.temperature")  # noqa: E731
        self.assertEqual((verdict(lenient), verdict(strict)), ("PASS", "WARN"))


class Changing(unittest.TestCase):
    """Events and controls on a private copy of a capture."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="hipstack-python-")

    def tearDown(self):
        shutil.rmtree(self.root)

    def copy(self, capture):
        for part in ("sys", "proc"):
            source = os.path.join(CAPTURES, capture, part)
            if os.path.isdir(source):
                shutil.copytree(source, os.path.join(self.root, part), symlinks=True)
        return os.path.join(self.root, "sys")

    def test_event_watch(self):
        sys_root = self.copy("constructed/mi300x-8gpu-faults")
        with hipstack.EventWatch(selectors=["0000:05:00.0"], sysfs_root=sys_root) as watch:
            self.assertEqual(watch.poll(), [])
            with open(os.path.join(sys_root, "class/drm/card0/device/ras/umc_err_count"), "w") as f:
                f.write("ue: 3\nce: 0\nde: 0\n")
            events = watch.poll()
        rise = [e for e in events if e.kind == "memory-errors" and e.metric == "ras_uncorrectable[umc]"]
        self.assertEqual(len(rise), 1, events)
        self.assertEqual((rise[0].bdf, rise[0].before, rise[0].after), ("0000:05:00.0", "0", "3"))

    def test_control_dry_run_and_refusal(self):
        sys_root = self.copy("constructed/mi300x-8gpu-spx-nps1")
        with hipstack.System(sysfs_root=sys_root, procfs_root=os.path.join(self.root, "proc")) as system:
            planned = system.control(2, "compute_partition", "cpx", dry_run=True)
            self.assertEqual((planned.outcome, planned.action), ("planned", "compute partition SPX -> CPX"))
            self.assertEqual([(w.path, w.value, w.done) for w in planned.writes],
                             [("/sys/class/drm/card16/device/current_compute_partition", "CPX", False)])
            refused = system.control(4, "compute_partition", "CPX")
            self.assertEqual((refused.outcome, refused.reason, refused.ok), ("refused", "device_busy", False))
            with self.assertRaisesRegex(hipstack.InvalidArgument, "unknown control"):
                system.control(2, "overclock")
        with open(os.path.join(sys_root, "class/drm/card32/device/current_compute_partition")) as f:
            self.assertEqual(f.read(), "SPX\n")


class ReadDeadline(unittest.TestCase):
    """A FIFO stands in for a file of a wedged driver (its open blocks until a writer comes): every call
    that reads gives up at the read deadline, which is on by default."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="hipstack-python-deadline-")
        self.fifos = []

    def tearDown(self):
        for path in self.fifos:
            self.release(path, "0\n")
        shutil.rmtree(self.root)

    def copy(self, name):
        sys_root = os.path.join(self.root, name)
        shutil.copytree(os.path.join(CAPTURES, "real/lact/rx6900xt/sys"), sys_root, symlinks=True)
        return sys_root

    def plant(self, sys_root, name):
        path = os.path.join(sys_root, "class/drm/card0/device", name)
        if os.path.exists(path):
            os.remove(path)
        os.mkfifo(path)
        self.fifos.append(path)
        return path

    def release(self, path, text):
        """Gives a reader blocked on the FIFO `text` and leaves a regular file with it in its place."""
        if not stat.S_ISFIFO(os.lstat(path).st_mode):
            return
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader waits
            fd = None
        with open(path + ".regular", "w") as f:
            f.write(text)
        os.replace(path + ".regular", path)
        if fd is not None:
            os.write(fd, text.encode())
            os.close(fd)

    def test_open_gives_up_on_a_fifo_in_each_discovery_file(self):
        # The capture has no `device` file; a real GPU's folder has one.
        for name in ("vendor", "device", "uevent", "unique_id"):
            with self.subTest(name):
                sys_root = self.copy(name)  # one each: a released read goes on in its own copy
                self.plant(sys_root, name)
                start = time.monotonic()
                with self.assertRaisesRegex(hipstack.TimedOut, "finding the GPUs: no answer within 300 ms"):
                    hipstack.System(sysfs_root=sys_root, read_deadline_ms=300)
                self.assertLess(time.monotonic() - start, 5)

    def test_on_by_default(self):
        sys_root = self.copy("default")
        self.plant(sys_root, "vendor")
        with self.assertRaises(TimeoutError) as caught:  # hipstack.TimedOut is one
            hipstack.System(sysfs_root=sys_root)
        self.assertIsInstance(caught.exception, hipstack.TimedOut)
        self.assertIn("no answer within 10000 ms", str(caught.exception))

    def test_a_stuck_sample_then_the_gpu_answers_again(self):
        sys_root = self.copy("sample")
        with hipstack.System(sysfs_root=sys_root, read_deadline_ms=1000) as system:
            fifo = self.plant(sys_root, "gpu_busy_percent")
            with self.assertRaisesRegex(hipstack.TimedOut, "GPU 0: no answer within 1000 ms"):
                system.sample(0)
            with self.assertRaisesRegex(hipstack.TimedOut, "has not returned yet"):
                system.sample(0, metrics=["gpu_busy"])
            with self.assertRaises(hipstack.TimedOut):
                system.health(0)
            self.assertEqual(len(system.devices()), 1)  # the node's list still answers
            self.release(fifo, "42\n")
            deadline = time.monotonic() + 10
            while True:
                try:
                    (busy,) = system.sample(0, metrics=["gpu_busy"])
                    break
                except hipstack.TimedOut:
                    self.assertLess(time.monotonic(), deadline, "the released read did not end")
            self.assertEqual((busy.status, busy.value), ("ok", 42.0))

    def test_bad_deadlines_are_refused(self):
        for bad in (0, -1, 1.5, True, "100", hipstack.NO_READ_DEADLINE + 1):
            with self.subTest(bad), self.assertRaisesRegex(hipstack.InvalidArgument, "read_deadline_ms must be"):
                hipstack.System(sysfs_root=os.path.join(CAPTURES, "real/lact/rx6900xt/sys"), read_deadline_ms=bad)


if __name__ == "__main__":
    unittest.main()
