#!/usr/bin/env python3
"""hipstack-info end to end: the agents of every bundled KFD topology, the JSON schema, the install
checks and exit codes, and the advice on a machine with no GPU.

Usage: test_info.py HIPSTACK_INFO CAPTURES_DIR HIPSTACK_SMI
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

INFO = None
CAPTURES = None
SMI = None
K8S = "real/k8s-device-plugin"


def run(*args, expect=0):
    proc = subprocess.run([INFO, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != expect:
        raise AssertionError(f"{args}: exit {proc.returncode}, expected {expect}\nstdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr}")
    return proc


def sys_root(name):
    return f"{CAPTURES}/{name}/sys"


def report(name, expect=0):
    return json.loads(run("--json", "--sysfs-root", sys_root(name), expect=expect).stdout)


def props(capture, node):
    """A KFD node's properties as the fixture file holds them."""
    path = f"{sys_root(capture)}/class/kfd/kfd/topology/nodes/{node}/properties"
    with open(path) as f:
        return {k: int(v) for k, v in (line.split() for line in f if line.strip())}


def checks_of(doc):
    return {c["name"]: c for c in doc["checks"]}


class Agents(unittest.TestCase):
    def check_against_fixture(self, capture):
        """Every agent against its node's properties file: kind, CUs, SIMDs, wave size, clocks, BDF."""
        doc = report(capture)
        nodes = sorted(int(n) for n in os.listdir(f"{sys_root(capture)}/class/kfd/kfd/topology/nodes"))
        self.assertEqual([a["node"] for a in doc["agents"]], nodes)
        for agent in doc["agents"]:
            p = props(capture, agent["node"])
            self.assertEqual(agent["kind"], "gpu" if p["simd_count"] > 0 else "cpu", agent["node"])
            links = os.listdir(f"{sys_root(capture)}/class/kfd/kfd/topology/nodes/{agent['node']}/io_links")
            self.assertEqual(len(agent["links"]), len(links))
            if agent["kind"] == "cpu":
                self.assertEqual(agent["cpu_cores"], p["cpu_cores_count"])
                continue
            self.assertEqual(agent["compute_units"], p["simd_count"] // p["simd_per_cu"])
            self.assertEqual(agent["simds_per_cu"], p["simd_per_cu"])
            self.assertEqual(agent["wavefront_size"], p["wave_front_size"])
            self.assertEqual(agent["max_waves_per_simd"], p["max_waves_per_simd"])
            self.assertEqual(agent["max_clock_mhz"], p["max_engine_clk_fcompute"])
            self.assertEqual(agent["drm_render_minor"], p["drm_render_minor"])
            loc = p["location_id"]
            self.assertEqual(agent["bdf"], f"{p.get('domain', 0):04x}:{loc >> 8:02x}:{(loc >> 3) & 0x1f:02x}.{loc & 7:x}")
            self.assertEqual(agent["problems"], [])
        self.assertEqual(doc["usable"], True)
        return doc

    def test_mi300x_cpx(self):
        doc = self.check_against_fixture(f"{K8S}/topo-mi300-cpx")
        gpus = [a for a in doc["agents"] if a["kind"] == "gpu"]
        self.assertEqual(len(gpus), 63)
        self.assertEqual(sum(a["kind"] == "cpu" for a in doc["agents"]), 2)
        self.assertEqual({a["isa"] for a in gpus}, {"gfx942"})
        self.assertEqual({a["marketing_name"] for a in gpus}, {"AMD Instinct MI300X"})
        self.assertEqual({a["compute_units"] for a in gpus}, {38})
        self.assertEqual(gpus[0]["bdf"], "0000:05:00.0")
        self.assertEqual((gpus[1]["partition_index"], gpus[1]["partition_count"]), (1, 8))
        text = run("--sysfs-root", sys_root(f"{K8S}/topo-mi300-cpx")).stdout
        self.assertIn("Agent 65\n", text)
        self.assertNotIn("Agent 66\n", text)
        self.assertIn("Marketing Name:             AMD Instinct MI300X", text)
        self.assertIn("Result: usable", text)

    def test_mi210_xgmi(self):
        doc = self.check_against_fixture(f"{K8S}/topo-mi210-xgmi-pcie")
        gpus = [a for a in doc["agents"] if a["kind"] == "gpu"]
        self.assertEqual(len(gpus), 8)
        self.assertEqual({a["isa"] for a in gpus}, {"gfx90a"})
        self.assertEqual({a["compute_units"] for a in gpus}, {104})
        self.assertEqual(len({a["bdf"] for a in gpus}), 8)
        node2 = gpus[0]
        self.assertEqual([(l["type"], l["to_node"], l["weight"]) for l in node2["links"]],
                         [("pcie", 0, 20), ("xgmi", 3, 15), ("xgmi", 4, 15), ("xgmi", 5, 15)])

    def test_topology_parsing(self):
        doc = self.check_against_fixture(f"{K8S}/topology-parsing")
        cpu, gpu = doc["agents"][0], doc["agents"][1]
        self.assertEqual(cpu["pools"], [{"kind": "system", "bytes": 67155521536, "width_bits": 64, "max_clock_mhz": 2666}])
        self.assertEqual(gpu["pools"], [{"kind": "vram_public", "bytes": 17163091968, "width_bits": 2048, "max_clock_mhz": 945}])
        self.assertEqual(gpu["isa"], "gfx900")
        self.assertEqual(sum(c["instances"] for c in gpu["caches"]), props(f"{K8S}/topology-parsing", 1)["caches_count"])

    def test_constructed_and_other_captures(self):
        for capture, gpus in (("constructed/mi300x-8gpu-spx-nps1", 8), ("constructed/mi300x-8gpu-cpx-nps1", 64),
                              ("constructed/mi300x-8gpu-faults", 8), ("real/lact/phoenix", 1)):
            doc = self.check_against_fixture(capture)
            self.assertEqual(sum(a["kind"] == "gpu" for a in doc["agents"]), gpus, capture)
            checks = checks_of(doc)
            self.assertEqual(checks["agents.gpu"]["status"], "pass")
            for name in ("device.kfd", "runtime.hip", "runtime.cuda", "devices.agree"):
                self.assertEqual(checks[name]["status"], "skip", f"{capture} {name}")

    def test_each_gpu_is_named_as_hipstack_smi_names_it(self):
        """One model of the node: an agent's marketing name is the library's name of its GPU (the
        physical function's), on every capture with a KFD topology."""
        compared = 0
        captures = sorted(os.path.relpath(folder, CAPTURES) for folder, subfolders, _ in os.walk(CAPTURES)
                          if "sys" in subfolders and os.path.isdir(os.path.join(folder, "sys/class/kfd/kfd/topology/nodes")))
        for capture in captures:
            listed = subprocess.run([SMI, "list", "--json", "--sysfs-root", sys_root(capture)], capture_output=True,
                                    text=True, timeout=60)
            if listed.returncode != 0:
                continue  # no GPU the library reads (a topology-only capture): nothing to agree with
            names = {d["bdf"][:-1]: d["name"] for d in json.loads(listed.stdout)["devices"] if d["vendor"] == "amd"}
            info = subprocess.run([INFO, "--json", "--sysfs-root", sys_root(capture)], capture_output=True, text=True,
                                  timeout=60)
            self.assertIn(info.returncode, (0, 1), f"{capture}: {info.stderr}")  # 1: not usable (a faulty capture)
            for agent in json.loads(info.stdout)["agents"]:
                if agent["kind"] != "gpu":
                    continue
                with self.subTest(capture=capture, node=agent["node"]):
                    self.assertEqual(agent["marketing_name"], names[agent["bdf"][:-1]])
                    compared += 1
        self.assertGreater(compared, 100)


class Checks(unittest.TestCase):
    def test_no_gpu_advice_and_exit_1(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(f"{root}/sys")
            proc = run("--sysfs-root", f"{root}/sys", expect=1)
            self.assertIn("no amdgpu or nvidia kernel module is loaded: no GPU driver is installed or no GPU is present", proc.stdout)
            self.assertIn("FAIL  agents.gpu", proc.stdout)
            self.assertIn("Result: NOT usable", proc.stdout)
            doc = json.loads(run("--json", "--sysfs-root", f"{root}/sys", expect=1).stdout)
            self.assertEqual(doc["agents"], [])
            self.assertFalse(doc["usable"])
            self.assertEqual(checks_of(doc)["agents.gpu"]["status"], "fail")
            # --no-checks: the report alone, exit 0
            proc = run("--no-checks", "--sysfs-root", f"{root}/sys")
            self.assertNotIn("Install checks", proc.stdout)

    def test_fake_devfs_missing_kfd(self):
        src = sys_root("constructed/mi300x-8gpu-spx-nps1")
        with tempfile.TemporaryDirectory() as dev:
            os.makedirs(f"{dev}/dri")
            for agent in report("constructed/mi300x-8gpu-spx-nps1")["agents"]:
                if agent["kind"] == "gpu":
                    open(f"{dev}/dri/renderD{agent['drm_render_minor']}", "w").close()
            doc = json.loads(run("--json", "--sysfs-root", src, "--devfs-root", dev, expect=1).stdout)
            checks = checks_of(doc)
            self.assertEqual(checks["device.kfd"]["status"], "fail")
            self.assertIn("/dev/kfd is missing", checks["device.kfd"]["detail"])
            self.assertEqual(checks["device.render_nodes"]["status"], "pass")
            open(f"{dev}/kfd", "w").close()
            run("--sysfs-root", src, "--devfs-root", dev)  # now usable: exit 0

    def test_malformed_node_warns(self):
        with tempfile.TemporaryDirectory() as root:
            nodes = f"{root}/sys/class/kfd/kfd/topology/nodes"
            os.makedirs(f"{nodes}/0")
            os.makedirs(f"{nodes}/1")
            with open(f"{nodes}/0/properties", "w") as f:
                f.write("cpu_cores_count 0\nsimd_count 8\nsimd_per_cu 2\nwave_front_size 32\nlocation_id 256\ndevice_id 0x7\n")
            doc = json.loads(run("--json", "--sysfs-root", f"{root}/sys").stdout)
            (agent,) = doc["agents"]
            self.assertEqual(agent["compute_units"], 4)
            self.assertTrue(any("device_id has value '0x7', not a number" in p for p in agent["problems"]), agent["problems"])
            topology = checks_of(doc)["topology.kfd"]
            self.assertEqual(topology["status"], "warn")
            self.assertIn("node 1:", topology["detail"])

    def test_bytes_that_are_not_utf8_become_replacement_characters(self):
        # A properties line with byte 0xff: named as a problem, and the JSON must still be written.
        with tempfile.TemporaryDirectory() as root:
            node = f"{root}/sys/class/kfd/kfd/topology/nodes/0"
            os.makedirs(node)
            with open(f"{node}/properties", "wb") as f:
                f.write(b"cpu_cores_count 0\nsimd_count 8\nsimd_per_cu 2\nwave_front_size 32\nlocation_id 256\n"
                        b"device_id 7\nvendor_id \xff\xfe\n")
            proc = subprocess.run([INFO, "--json", "--sysfs-root", f"{root}/sys"], capture_output=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            (agent,) = json.loads(proc.stdout.decode("utf-8"))["agents"]
            self.assertTrue(any("vendor_id has value '\ufffd\ufffd', not a number" in p for p in agent["problems"]),
                            agent["problems"])


class Arguments(unittest.TestCase):
    def test_bad_arguments_exit_2(self):
        run("--no-such-flag", expect=2)
        proc = run("--sysfs-root", "/nonexistent/sys", expect=2)
        self.assertIn("/nonexistent/sys", proc.stderr)

    def test_a_capture_loads_no_vendor_library(self):
        # docs/info.md: with --sysfs-root (with or without --no-checks) neither the runtimes nor NVML
        # are loaded, even where the capture records both drivers. The dynamic loader's own trace says
        # what was looked for; the live --no-checks run shows that the trace does show NVML.
        vendor = ("libnvidia-ml", "libcuda", "libamdhip64")
        env = {k: v for k, v in os.environ.items()
               if k not in ("HIPSTACK_NVML_LIBRARY", "HIPSTACK_CUDA_LIBRARY", "HIPSTACK_HIP_LIBRARY", "HIPSTACK_SYSFS_ROOT")}
        env["LD_DEBUG"] = "libs,files"
        live = subprocess.run([INFO, "--no-checks"], capture_output=True, text=True, timeout=60, env=env)
        # Without the trace this test would prove nothing: that is a failure, not a pass.
        self.assertIn("libnvidia-ml.so.1", live.stderr,
                      "the dynamic loader's LD_DEBUG trace of a live run does not show NVML being looked for")
        with tempfile.TemporaryDirectory() as root:
            for driver in ("nvidia", "amdgpu"):
                os.makedirs(f"{root}/sys/module/{driver}")
            with open(f"{root}/sys/module/nvidia/version", "w") as f:
                f.write("580.159.04\n")
            for args in (["--no-checks"], []):
                proc = subprocess.run([INFO, *args, "--sysfs-root", f"{root}/sys"], capture_output=True, text=True,
                                      timeout=60, env=env)
                self.assertIn(proc.returncode, (0, 1), proc.stderr[-2000:])
                loaded = [line for line in proc.stderr.splitlines() if any(lib in line for lib in vendor)]
                self.assertEqual(loaded, [], args)

    def test_output_that_cannot_be_written_exits_3(self):
        self.assertTrue(os.path.exists("/dev/full"), "no /dev/full: this test needs a full device to write to")
        # Not exit 0 (or 1, "a check failed") when the report was lost.
        for args in (["--json"], [], ["--version"]):
            with self.subTest(args=args), open("/dev/full", "w") as full:
                proc = subprocess.run([INFO, *args, "--sysfs-root", sys_root("constructed/mi300x-8gpu-spx-nps1")],
                                      stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
                self.assertEqual(proc.returncode, 3, proc.stderr)
                self.assertIn("cannot write to standard output: No space left on device", proc.stderr)

    def test_version(self):
        self.assertRegex(run("--version").stdout, r"^hipstack-info \d+\.\d+\.\d+\n$")

    def test_json_schema(self):
        doc = report("constructed/mi300x-8gpu-spx-nps1")
        self.assertEqual(doc["schema"], "hipstack-info/v1")
        self.assertTrue(doc["capture"])
        self.assertEqual([c["name"] for c in doc["checks"]],
                         ["driver.amdgpu_loaded", "driver.nvidia_loaded", "topology.kfd", "agents.gpu", "device.kfd",
                          "device.render_nodes", "device.nvidia_nodes", "runtime.hip", "runtime.cuda", "devices.agree"])
        for c in doc["checks"]:
            self.assertIn(c["status"], ("pass", "warn", "fail", "skip"))
        self.assertEqual([r["runtime"] for r in doc["runtimes"]], ["hip", "cuda"])


if __name__ == "__main__":
    INFO, CAPTURES, SMI = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=[sys.argv[0], "-v"])
