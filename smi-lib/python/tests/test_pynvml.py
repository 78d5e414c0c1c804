"""hipstack.pynvml, a pynvml stand-in: on the fake NVML its figures must be the script's NVML numbers
in NVML's units; on an AMD capture the same calls answer from the amdgpu backend. Each case runs a
fresh interpreter, since the module keeps its System between nvmlInit and nvmlShutdown as NVML does.
Environment: HIPSTACK_SMI_LIBRARY, FAKE_NVML_FULL, FAKE_NVML_SCRIPTS_DIR, HIPSTACK_CAPTURES_DIR."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

# A pynvml script as users write them, with its import changed to hipstack.pynvml.
FIGURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pynvml_figures.py")
MIB = 1 << 20


def run(env_extra):
    env = dict(os.environ, **env_extra)
    done = subprocess.run([sys.executable, FIGURES, "hipstack.pynvml"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"the script failed ({done.returncode}): {done.stderr}")
    return json.loads(done.stdout)


class OnTheFakeNvml(unittest.TestCase):
    def setUp(self):
        self.empty = tempfile.mkdtemp(prefix="hipstack-pynvml-")  # no AMD GPU: an empty sysfs root

    def tearDown(self):
        os.rmdir(self.empty)

    def fake(self, script):
        return {"HIPSTACK_NVML_LIBRARY": os.environ["FAKE_NVML_FULL"], "HIPSTACK_SYSFS_ROOT": self.empty,
                "HIPSTACK_FAKE_NVML_SCRIPT": os.path.join(os.environ["FAKE_NVML_SCRIPTS_DIR"], script)}

    def test_h200_figures_in_nvml_units(self):
        (gpu,) = run(self.fake("h200.txt"))
        self.assertEqual(gpu["name"], "NVIDIA H200")
        self.assertEqual(gpu["uuid"], "GPU-aca16b07-651f-93bd-1093-3f6f187afb47")
        # The script: total 143771 MiB, free 143156 MiB; NVML's first memory call: used = total - free.
        self.assertEqual(gpu["memory"], {"total": 143771 * MIB, "free": 143156 * MIB, "used": (143771 - 143156) * MIB})
        self.assertEqual(gpu["utilization"], {"gpu": 0, "memory": 0})
        self.assertEqual(gpu["power_mw"], 125760)
        self.assertEqual(gpu["temperature"], 41)
        self.assertEqual(gpu["processes"], [])

    def test_processes_with_their_memory(self):
        gpus = run(self.fake("h100x2-mig.txt"))
        self.assertEqual(gpus[0]["processes"], [[4242, 20480 * MIB], [4310, 1024 * MIB]])

    def test_a_lost_gpu_is_gpu_is_lost(self):
        # faults.txt: GPU 1 fell off the bus (every call GPU_IS_LOST); GPU 0 answers, some calls failing.
        script = r'''
import hipstack.pynvml as pynvml
pynvml.nvmlInit()
for i in range(pynvml.nvmlDeviceGetCount()):
    h = pynvml.nvmlDeviceGetHandleByIndex(i)
    for call in (pynvml.nvmlDeviceGetName, pynvml.nvmlDeviceGetPowerUsage):
        try:
            call(h)
            print(i, call.__name__, "ok")
        except pynvml.NVMLError as e:
            print(i, call.__name__, type(e).__name__)
'''
        env = dict(os.environ, **self.fake("faults.txt"))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
        lines = out.split("\n")
        self.assertIn("0 nvmlDeviceGetName ok", lines)
        self.assertIn("1 nvmlDeviceGetName NVMLError_GpuIsLost", lines)
        self.assertIn("1 nvmlDeviceGetPowerUsage NVMLError_GpuIsLost", lines)
        # GPU 0 answers, but NVML answers its power call with GPU_IS_LOST: pynvml raises that, and so do we.
        self.assertIn("0 nvmlDeviceGetPowerUsage NVMLError_GpuIsLost", lines)

    def test_errors_are_nvml_errors(self):
        script = r'''
import hipstack.pynvml as pynvml
try:
    pynvml.nvmlDeviceGetCount()
except pynvml.NVMLError_Uninitialized as e:
    print("uninitialized", e.value)
pynvml.nvmlInit()
try:
    pynvml.nvmlDeviceGetHandleByIndex(7)
except pynvml.NVMLError as e:
    print(type(e).__name__, e.value)
h = pynvml.nvmlDeviceGetHandleByIndex(0)
try:
    pynvml.nvmlDeviceGetTemperature(h, 1)
except pynvml.NVMLError_InvalidArgument as e:
    print("sensor", e.value)
print(pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED).__class__.__name__)
pynvml.nvmlShutdown()
try:
    pynvml.nvmlShutdown()
except pynvml.NVMLError_Uninitialized:
    print("twice")
'''
        env = dict(os.environ, **self.fake("h200.txt"))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.split("\n"), ["uninitialized 1", "NVMLError_InvalidArgument 2", "sensor 2",
                                           "NVMLError_NotSupported", "twice", ""])


class OnAnAmdCapture(unittest.TestCase):
    def test_the_same_script_answers_for_amd_gpus(self):
        capture = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-spx-nps1")
        env = {"HIPSTACK_SYSFS_ROOT": os.path.join(capture, "sys"), "HIPSTACK_PROCFS_ROOT": os.path.join(capture, "proc"),
               "HIPSTACK_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}
        gpus = run(env)
        self.assertEqual(len(gpus), 8)
        # The figures are the library's readings in NVML's units.
        import hipstack
        with hipstack.System(sysfs_root=env["HIPSTACK_SYSFS_ROOT"], procfs_root=env["HIPSTACK_PROCFS_ROOT"],
                             nvml=False) as system:
            for i, gpu in enumerate(gpus):
                readings = {r.metric: r for r in system.sample(i, kinds=("identity", "static", "live")) if not r.instance}
                self.assertEqual(gpu["name"], "AMD Instinct MI300X")
                self.assertEqual(gpu["uuid"], readings["uuid"].value)
                self.assertEqual(gpu["memory"]["total"], readings["vram_total"].value)
                self.assertEqual(gpu["memory"]["used"], readings["vram_used"].value)  # amdgpu: used, not free
                self.assertEqual(gpu["memory"]["free"], readings["vram_total"].value - readings["vram_used"].value)
                power = readings["power_average"] if readings["power_average"].ok else readings["power_current"]
                self.assertEqual(gpu["power_mw"], round(power.value * 1000))
                self.assertEqual(gpu["temperature"], round(readings["temperature_junction"].value))
                want_processes = [[p.pid, next((r.value for r in p.readings if r.metric == "process_vram" and r.ok), None)]
                                  for p in system.processes(i)]
                self.assertEqual(gpu["processes"], want_processes)
        self.assertEqual(sum(len(g["processes"]) for g in gpus), 7)

    def test_memory_used_above_total_is_an_error_never_a_negative_free(self):
        # A copy of the node with GPU 0's used VRAM planted above its total (206141652992 bytes):
        # pynvml's fields are unsigned, so free = total - used must never be computed from it.
        capture = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-spx-nps1")
        with tempfile.TemporaryDirectory(prefix="hipstack-pynvml-") as tmp:
            sys_root = os.path.join(tmp, "sys")
            shutil.copytree(os.path.join(capture, "sys"), sys_root, symlinks=True)
            used = os.path.join(sys_root, "class/drm/card0/device/mem_info_vram_used")
            os.remove(used)
            with open(used, "w") as f:
                f.write("210491047936\n")
            script = r'''
import hipstack.amdsmi as amdsmi
import hipstack.pynvml as pynvml
pynvml.nvmlInit()
for i in (0, 1):
    try:
        m = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i))
        print(i, "pynvml", m.used, m.free, m.total)
    except pynvml.NVMLError as e:
        print(i, "pynvml", type(e).__name__, "cannot be" in str(e))
amdsmi.amdsmi_init()
for i, h in enumerate(amdsmi.amdsmi_get_processor_handles()[:2]):
    try:
        print(i, "amdsmi", amdsmi.amdsmi_get_gpu_vram_usage(h))
    except amdsmi.AmdSmiLibraryException as e:
        print(i, "amdsmi", e.get_error_code() == amdsmi.AMDSMI_STATUS_UNEXPECTED_DATA)
'''
            env = dict(os.environ, HIPSTACK_SYSFS_ROOT=sys_root, HIPSTACK_PROCFS_ROOT=os.path.join(capture, "proc"),
                       HIPSTACK_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
            out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        self.assertEqual(lines[0], "0 pynvml NVMLError_Unknown True")
        self.assertEqual(lines[2], "0 amdsmi True")
        # GPU 1, untouched: its figures, within its total.
        used1, free1, total1 = (int(x) for x in lines[1].split()[2:])
        self.assertEqual((used1 + free1, total1 > used1 >= 0), (total1, True))
        self.assertRegex(lines[3], r"^1 amdsmi \{'vram_total': \d+, 'vram_used': \d+\}$")


if __name__ == "__main__":
    unittest.main()
