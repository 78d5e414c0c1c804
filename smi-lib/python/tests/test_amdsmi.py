"""hipstack.amdsmi, an amdsmi stand-in: an amdsmi script with its import changed runs on the 8-GPU
MI300X capture, and every figure is the library's reading in amdsmi's units and keys (W, mV, degrees C,
%, MB for vram usage, bytes elsewhere); errors are amdsmi's exceptions. Each case runs a fresh
interpreter (the module keeps its System between amdsmi_init and amdsmi_shut_down).
Environment: HIPSTACK_SMI_LIBRARY, HIPSTACK_CAPTURES_DIR."""
import json
import os
import subprocess
import sys
import unittest

import hipstack

CAPTURE = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-spx-nps1")
ENV = dict(os.environ, HIPSTACK_SYSFS_ROOT=os.path.join(CAPTURE, "sys"), HIPSTACK_PROCFS_ROOT=os.path.join(CAPTURE, "proc"),
           HIPSTACK_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")

# An amdsmi script as users write them; only its import differs from the original.
PORTED_SCRIPT = r'''
import json
from hipstack.amdsmi import *
amdsmi_init()
out = []
for h in amdsmi_get_processor_handles():
    gpu = {"bdf": amdsmi_get_gpu_device_bdf(h), "uuid": amdsmi_get_gpu_device_uuid(h),
           "asic": amdsmi_get_gpu_asic_info(h), "driver": amdsmi_get_gpu_driver_info(h),
           "vbios": amdsmi_get_gpu_vbios_info(h), "power": amdsmi_get_power_info(h),
           "activity": amdsmi_get_gpu_activity(h), "vram": amdsmi_get_gpu_vram_usage(h),
           "vram_total": amdsmi_get_gpu_memory_total(h, AmdSmiMemoryType.VRAM),
           "processes": amdsmi_get_gpu_process_list(h),
           "hotspot": amdsmi_get_temp_metric(h, AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.CURRENT),
           "hotspot_critical": amdsmi_get_temp_metric(h, AmdSmiTemperatureType.JUNCTION, AmdSmiTemperatureMetric.CRITICAL)}
    try:
        gpu["hbm0"] = amdsmi_get_temp_metric(h, AmdSmiTemperatureType.HBM_0, AmdSmiTemperatureMetric.CURRENT)
    except AmdSmiLibraryException as e:
        gpu["hbm0"] = {"err_code": e.get_error_code(), "info": e.err_info}
    out.append(gpu)
amdsmi_shut_down()
print(json.dumps(out))
'''


def run(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"the script failed ({done.returncode}): {done.stderr}")
    return done.stdout


class PortedScript(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gpus = json.loads(run(PORTED_SCRIPT))
        cls.system = hipstack.System(sysfs_root=ENV["HIPSTACK_SYSFS_ROOT"], procfs_root=ENV["HIPSTACK_PROCFS_ROOT"], nvml=False)

    @classmethod
    def tearDownClass(cls):
        cls.system.close()

    def readings(self, index):
        return {r.metric: r for r in self.system.sample(index, kinds=("identity", "static", "live")) if not r.instance}

    def test_identity(self):
        self.assertEqual(len(self.gpus), 8)
        for i, gpu in enumerate(self.gpus):
            r = self.readings(i)
            self.assertEqual((gpu["bdf"], gpu["uuid"]), (r["bdf"].value, r["uuid"].value))
            self.assertEqual(gpu["asic"]["market_name"], "AMD Instinct MI300X")
            self.assertEqual(gpu["asic"]["vendor_id"], "0x1002")
            self.assertEqual(gpu["asic"]["target_graphics_version"], "gfx942")
            self.assertEqual(gpu["asic"]["asic_serial"], "0x" + r["unique_id"].value.upper().rjust(16, "0"))
            self.assertEqual(gpu["asic"]["num_compute_units"], r["compute_units"].value)
            self.assertEqual(gpu["driver"]["driver_name"], "amdgpu")
            self.assertEqual(gpu["vbios"]["version"], r["vbios_version"].value)

    def test_figures_in_amdsmi_units(self):
        for i, gpu in enumerate(self.gpus):
            r = self.readings(i)
            self.assertEqual(gpu["power"]["current_socket_power"], r["power_current"].value)  # W
            self.assertEqual(gpu["power"]["socket_power"], r["power_current"].value)
            self.assertEqual(gpu["power"]["average_socket_power"], "N/A" if not r["power_average"].ok else r["power_average"].value)
            self.assertEqual(gpu["power"]["power_limit"], r["power_cap"].value)
            self.assertEqual(gpu["activity"]["gfx_activity"], round(r["gpu_busy"].value))
            self.assertEqual(gpu["activity"]["mm_activity"], "N/A")
            self.assertEqual(gpu["vram"], {"vram_total": r["vram_total"].value // 2**20, "vram_used": r["vram_used"].value // 2**20})
            self.assertEqual(gpu["vram_total"], r["vram_total"].value)  # bytes
            self.assertEqual(gpu["hotspot"], int(r["temperature_junction"].value))
            self.assertEqual(gpu["hotspot_critical"], int(r["temperature_junction_critical"].value))
            self.assertEqual(gpu["hbm0"], {"err_code": 2, "info": "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported"})

    def test_processes(self):
        seen = 0
        for i, gpu in enumerate(self.gpus):
            want = self.system.processes(i)
            self.assertEqual([(p["pid"], p["name"]) for p in gpu["processes"]], [(p.pid, p.name) for p in want])
            for entry, process in zip(gpu["processes"], want):
                vram = next(r.value for r in process.readings if r.metric == "process_vram")
                self.assertEqual((entry["mem"], entry["memory_usage"]["vram_mem"]), (vram, vram))
                self.assertEqual(entry["engine_usage"], {"gfx": "N/A", "enc": "N/A"})
            seen += len(want)
        self.assertEqual(seen, 7)


class Errors(unittest.TestCase):
    def test_amdsmi_exceptions(self):
        script = r'''
from hipstack.amdsmi import *
try:
    amdsmi_get_processor_handles()
except AmdSmiLibraryException as e:
    print("not init", e.get_error_code())
try:
    amdsmi_init("gpus")
except AmdSmiParameterException as e:
    print("parameter", e.expectedType.__name__)
amdsmi_init()
h = amdsmi_get_processor_handles()[0]
try:
    amdsmi_get_gpu_memory_total(h, 0)
except AmdSmiParameterException:
    print("memory type")
try:
    amdsmi_get_temp_metric(h, AmdSmiTemperatureType.PLX, AmdSmiTemperatureMetric.CURRENT)
except AmdSmiLibraryException as e:
    print("plx", e.err_code, isinstance(e, AmdSmiException))
amdsmi_shut_down()
'''
        self.assertEqual(run(script).split("\n"), ["not init 32", "parameter AmdSmiInitFlags", "memory type", "plx 2 True", ""])


if __name__ == "__main__":
    unittest.main()
