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
    return json.loads(done.stdout)["gpus"]


def run_all(env_extra):
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
        """Every call on the scripted H200: the script's NVML numbers (h200.txt), in NVML's units and types."""
        doc = run_all(self.fake("h200.txt"))
        (gpu,) = doc["gpus"]
        not_supported = {"error": 3}
        expected = {
            "name": "NVIDIA H200", "uuid": "GPU-aca16b07-651f-93bd-1093-3f6f187afb47", "serial": "1654124008493",
            "index": 0, "minor_number": 0, "vbios": "96.00.A5.00.1A",
            "pci": {"domain": 0, "bus": 0, "device": 6, "pciDeviceId": 0x233510DE, "pciSubSystemId": 0x18BF10DE,
                    "busId": "00000000:00:06.0"},
            # NVML's first memory call: used = total - free (the reservation counts as used); v2 apart.
            "memory": {"total": 143771 * MIB, "free": 143156 * MIB, "used": (143771 - 143156) * MIB},
            "memory_v2": {"total": 143771 * MIB, "reserved": 616 * MIB, "free": 143156 * MIB, "used": 0},
            "bar1": {"bar1Total": 262144 * MIB, "bar1Free": 262143 * MIB, "bar1Used": 1 * MIB},
            "utilization": {"gpu": 0, "memory": 0}, "encoder": 0, "decoder": 0,
            "fan": not_supported,  # a fanless H200: NVML answers NOT_SUPPORTED
            "temperature": 41, "power_mw": 125760, "enforced_limit": 700000, "management_limit": 700000,
            "default_limit": 700000, "limit_constraints": [200000, 700000], "energy_mj": 3621847123,
            "clocks": [1980, 1980, 3201, 1545], "max_clocks": [1980, 1980, 3201, 1545],
            "pcie_generation": 5, "pcie_generation_max": 5, "pcie_width": 16, "pcie_width_max": 16,
            "performance_state": 0, "persistence_mode": 1, "display_active": 0, "compute_mode": 0, "mig_mode": [0, 0], "ecc_mode": [1, 1],
            "compute_capability": [9, 0], "ecc_errors": [0, 0, 0, 0], "remapped_rows": [0, 0, 0, 0],
            "clock_event_reasons": 1,  # GPU_IDLE
            "processes": [], "graphics_processes": [],
            # MIG off: no slots, and every slot asked for is NOT_FOUND (what an H100's NVML answered).
            "max_mig_devices": 0, "mig_devices": [{"error": 6}] * 8, "gpu_instance_of_a_gpu": {"error": 2},
        }
        self.assertEqual(gpu, expected)
        for key, value in gpu.items():  # NVML's types: whole numbers are ints, never floats
            for v in (value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]):
                self.assertNotIsInstance(v, float, key)
        self.assertEqual(doc["system"], {"driver_version": "580.159.04", "cuda_version": 13000})

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


    def test_error_classes_behave_as_pynvmls(self):
        """What clients rely on at import (docs/pynvml-clients.md): bare subclasses carry their code,
        NVMLError(code) is the subclass, every code has a text and a class, __new__ is a Python function."""
        script = r'''
import hipstack.pynvml as p
p.NVMLError.__new__.__doc__ = "clients document it"   # a builtin __new__ refuses this
print(p.NVMLError_FunctionNotFound().value, p.NVMLError_NotFound().value, type(p.NVMLError(15)).__name__)
codes = {v for k, v in vars(p).items() if k.startswith("NVML_ERROR_")}
print(set(p.NVMLError._errcode_to_string) <= codes, len(codes))
print(all(p.nvmlExceptionClass(c).__name__.startswith("NVMLError_") for c in p.NVMLError._errcode_to_string))
print(p.nvmlExceptionClass(3) is p.NVMLError_NotSupported, str(p.NVMLError(3)), type(p.NVMLError(12345)).__name__)
try:
    p._nvmlCheckReturn(p.NVML_ERROR_TIMEOUT)
except p.NVMLError_Timeout as e:
    print("timeout", e.value)
'''
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.splitlines(), ["13 6 NVMLError_GpuIsLost", "True 30", "True",
                                            "True Not Supported NVMLError", "timeout 10"])

    def test_c_form_entry_points(self):
        """_nvmlGetFunctionPointer's entry points take NVML's ctypes arguments and return its codes: the
        process list's count protocol, the versioned memory structure; other names are not found."""
        script = r'''
import ctypes
import hipstack.pynvml as p
try:
    p._nvmlGetFunctionPointer("nvmlDeviceGetMemoryInfo_v2")
except p.NVMLError_Uninitialized:
    print("uninitialized")
p.nvmlInit()
h = p.nvmlDeviceGetHandleByIndex(0)
fn = p._nvmlGetFunctionPointer("nvmlDeviceGetComputeRunningProcesses_v3")
count = ctypes.c_uint(0)
print(fn(h, ctypes.byref(count), None) == p.NVML_ERROR_INSUFFICIENT_SIZE, count.value)
infos = (p.c_nvmlProcessInfo_v2_t * 5)()
count.value = 5
print(fn(h, ctypes.byref(count), infos), count.value, [(infos[i].pid, infos[i].usedGpuMemory) for i in range(count.value)])
memory = p.c_nvmlMemory_v2_t()
memory.version = p.nvmlMemory_v2
print(p._nvmlGetFunctionPointer("nvmlDeviceGetMemoryInfo_v2")(h, ctypes.byref(memory)), memory.total, memory.used)
print(p._nvmlGetFunctionPointer("nvmlDeviceGetMemoryInfo_v2") is p._nvmlGetFunctionPointer_cache["nvmlDeviceGetMemoryInfo_v2"])
for name in ("nvmlDeviceGetConfComputeMemSizeInfo", "nvmlDeviceGetRunningProcessDetailList"):
    try:
        p._nvmlGetFunctionPointer(name)
    except p.NVMLError_FunctionNotFound:
        print("not found")
gone = p.nvmlDeviceGetHandleByIndex(1)
print(fn(p._Handle(99), ctypes.byref(count), None) == p.NVML_ERROR_INVALID_ARGUMENT)
'''
        env = dict(os.environ, **self.fake("h100x2-mig.txt"))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
        used = json.loads(json.dumps(run(self.fake("h100x2-mig.txt"))[0]["memory_v2"]["used"]))
        self.assertEqual(out.splitlines(), ["uninitialized", "True 2",
                                            "0 2 [(4242, %d), (4310, %d)]" % (20480 * MIB, 1024 * MIB),
                                            "0 %d %d" % (81559 * MIB, used), "True", "not found", "not found", "True"])


    def test_mig_handles(self):
        """A MIG device's handle says it is one, leads back to its GPU, answers the MIG calls and raises
        NotSupported for the others; a GPU's handle is no MIG handle and has no instance ids; a slot
        emptied after the handle was taken answers NotFound. (The MIG figures themselves are checked
        against NVIDIA's pynvml on the same double: python.pynvml-clients.)"""
        script = r'''
import hipstack.pynvml as p
p.nvmlInit()
gpu = p.nvmlDeviceGetHandleByIndex(1)
mig = p.nvmlDeviceGetMigDeviceHandleByIndex(gpu, 1)
print(p.nvmlDeviceIsMigDeviceHandle(mig), p.nvmlDeviceIsMigDeviceHandle(gpu))
print(p.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(mig) == gpu, p.nvmlDeviceGetUUID(mig))
for call in (lambda: p.nvmlDeviceGetTemperature(mig, p.NVML_TEMPERATURE_GPU), lambda: p.nvmlDeviceGetPowerUsage(mig),
             lambda: p.nvmlDeviceGetMaxMigDeviceCount(mig), lambda: p.nvmlDeviceGetComputeInstanceId(gpu),
             lambda: p.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(gpu), lambda: p.nvmlDeviceGetMigDeviceHandleByIndex(gpu, -1)):
    try:
        print(call())
    except p.NVMLError as e:
        print(type(e).__name__)
print(p.nvmlDeviceGetMemoryInfo(p._MigHandle(1, 0)).used, p.nvmlDeviceGetComputeRunningProcesses(p._MigHandle(1, 0))[0].pid)
try:
    p.nvmlDeviceGetName(p._MigHandle(1, 4))
except p.NVMLError_NotFound:
    print("slot 4 is empty")
'''
        env = dict(os.environ, **self.fake("h100x2-mig.txt"))
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.splitlines(), ["1 0", "True MIG-8c0f7a42-1e63-5b9d-b4f2-05d8e6a1c7e9",
                                            "NVMLError_NotSupported", "NVMLError_NotSupported", "NVMLError_InvalidArgument",
                                            "NVMLError_InvalidArgument", "NVMLError_InvalidArgument",
                                            "NVMLError_InvalidArgument", "%d 5001" % (10496 * MIB), "slot 4 is empty"])


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
