"""hipstack.amdsmi, an amdsmi stand-in: an amdsmi script with its import changed runs on the 8-GPU
MI300X capture, and every figure is the library's reading in amdsmi's units and keys (W, mV, degrees C,
%, MB for vram usage, bytes elsewhere); errors are amdsmi's exceptions. Each case runs a fresh
interpreter (the module keeps its System between amdsmi_init and amdsmi_shut_down).
Environment: HIPSTACK_SMI_LIBRARY, HIPSTACK_CAPTURES_DIR."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import hipstack
from hipstack._amdsmi_types import AmdSmiLinkType

AMDSMI_LINK_TYPE_XGMI = int(AmdSmiLinkType.AMDSMI_LINK_TYPE_XGMI)

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


class ScriptOnTheCapture(unittest.TestCase):
    """Runs SCRIPT once (its JSON in cls.gpus) and opens the same capture to compare with."""
    SCRIPT = ""

    @classmethod
    def setUpClass(cls):
        cls.gpus = json.loads(run(cls.SCRIPT))
        cls.system = hipstack.System(sysfs_root=ENV["HIPSTACK_SYSFS_ROOT"], procfs_root=ENV["HIPSTACK_PROCFS_ROOT"], nvml=False)

    @classmethod
    def tearDownClass(cls):
        cls.system.close()

    def all_readings(self, index):
        return {(r.metric, r.instance): r for r in self.system.sample(index, kinds=("identity", "static", "live"))}


class PortedScript(ScriptOnTheCapture):
    SCRIPT = PORTED_SCRIPT

    def readings(self, index):
        return {metric: r for (metric, instance), r in self.all_readings(index).items() if not instance}

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
            self.assertEqual(gpu["power"]["current_socket_power"], round(r["power_current"].value))  # W, an int
            self.assertEqual(gpu["power"]["socket_power"], round(r["power_current"].value))
            self.assertEqual(gpu["power"]["average_socket_power"], "N/A" if not r["power_average"].ok else round(r["power_average"].value))
            self.assertEqual(gpu["power"]["power_limit"], round(r["power_cap"].value * 1e6))  # microwatts, as amdsmi 7.x
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


# Every call this module adds, on a whole GPU: the values the script prints, compared below.
MORE_SCRIPT = r"""
import json
from hipstack.amdsmi import *
amdsmi_init()
out = []
for h in amdsmi_get_processor_handles():
    clocks = {}
    for clk in (AmdSmiClkType.GFX, AmdSmiClkType.MEM, AmdSmiClkType.DF, AmdSmiClkType.SOC, AmdSmiClkType.VCLK0,
                AmdSmiClkType.DCLK0):
        clocks[clk.name] = amdsmi_get_clock_info(h, clk)
    metrics = amdsmi_get_gpu_metrics_info(h)
    out.append({"bdf": amdsmi_get_gpu_device_bdf(h), "bdf_id": amdsmi_get_gpu_bdf_id(h),
                "same": amdsmi_get_processor_handle_from_bdf(amdsmi_get_gpu_device_bdf(h)) == h,
                "id": amdsmi_get_gpu_id(h), "subsystem_id": amdsmi_get_gpu_subsystem_id(h),
                "kfd": amdsmi_get_gpu_kfd_info(h), "compute_partition": amdsmi_get_gpu_compute_partition(h),
                "memory_partition": amdsmi_get_gpu_memory_partition(h), "numa": amdsmi_topo_get_numa_node_number(h),
                "board": amdsmi_get_gpu_board_info(h), "power": amdsmi_get_power_info(h),
                "caps": amdsmi_get_power_cap_info(h), "energy": amdsmi_get_energy_count(h),
                "pcie": amdsmi_get_pcie_info(h), "perf": amdsmi_get_gpu_perf_level(h), "clocks": clocks,
                "fw": {e["fw_name"].name: e["fw_version"] for e in amdsmi_get_fw_info(h)["fw_list"]},
                "vram_used": amdsmi_get_gpu_memory_usage(h, AmdSmiMemoryType.VRAM),
                "gtt_used": amdsmi_get_gpu_memory_usage(h, AmdSmiMemoryType.GTT),
                "metrics": metrics})
amdsmi_shut_down()
print(json.dumps(out))
"""


class MoreCalls(ScriptOnTheCapture):
    """The calls scripts and exporters use beyond the first set, on the SPX capture: amdsmi's keys,
    ints in amdsmi's units, each from the library's reading."""
    SCRIPT = MORE_SCRIPT

    def readings(self, index):
        return self.all_readings(index)

    def test_identity_and_topology(self):
        for i, gpu in enumerate(self.gpus):
            r = self.readings(i)
            domain, bus, rest = r[("bdf", "")].value.split(":")
            device, function = rest.split(".")
            self.assertEqual(gpu["bdf_id"], int(domain, 16) << 32 | int(bus, 16) << 8 | int(device, 16) << 3 | int(function))
            self.assertTrue(gpu["same"])
            self.assertEqual(gpu["id"], 0x74A1)
            self.assertEqual(gpu["subsystem_id"], "0x74a1")
            self.assertEqual(gpu["kfd"], {"kfd_id": r[("kfd_gpu_id", "")].value, "node_id": "N/A", "current_partition_id": 0})
            self.assertEqual((gpu["compute_partition"], gpu["memory_partition"]), ("SPX", "NPS1"))
            self.assertEqual(gpu["numa"], r[("numa_node", "")].value)
            self.assertEqual(gpu["board"], {"model_number": r[("product_number", "")].value,
                                            "product_serial": r[("serial_number", "")].value, "fru_id": "N/A",
                                            "product_name": r[("product_name", "")].value, "manufacturer_name": "AMD"})

    def test_power_energy_and_clocks_as_amdsmi_ints(self):
        for i, gpu in enumerate(self.gpus):
            r = self.readings(i)
            watts = r[("power_current", "")].value
            self.assertEqual(gpu["power"]["current_socket_power"], round(watts))
            self.assertIsInstance(gpu["power"]["current_socket_power"], int)
            self.assertEqual(gpu["power"]["power_limit"], round(r[("power_cap", "")].value * 1e6))  # microwatts
            uw = {k: round(r[(k, "")].value * 1e6) for k in ("power_cap", "power_cap_default", "power_cap_min", "power_cap_max")}
            self.assertEqual(gpu["caps"], {"power_cap": uw["power_cap"], "default_power_cap": uw["power_cap_default"],
                                           "dpm_cap": "N/A", "min_power_cap": uw["power_cap_min"],
                                           "max_power_cap": uw["power_cap_max"]})
            self.assertIn(750_000_000, [g["caps"]["max_power_cap"] for g in self.gpus])
            self.assertEqual(gpu["energy"]["counter_resolution"], 1.0)
            self.assertEqual(gpu["energy"]["energy_accumulator"], round(r[("energy_consumed", "")].value * 1e6))  # µJ
            self.assertEqual(gpu["clocks"]["SYS"]["clk"], round(r[("clock_sclk", "")].value))
            self.assertEqual(gpu["clocks"]["SYS"]["max_clk"], round(r[("clock_sclk_max", "")].value))
            self.assertEqual(gpu["clocks"]["SYS"]["min_clk"], round(r[("sclk_level", "0")].value))
            self.assertEqual(gpu["clocks"]["MEM"]["clk"], round(r[("clock_mclk", "")].value))
            sleep = r.get(("socclk_level", "S"))
            self.assertEqual(gpu["clocks"]["SOC"]["clk_deep_sleep"], round(sleep.value) if sleep else "N/A")
            self.assertEqual(gpu["clocks"]["DF"]["max_clk"], round(r[("fclk_level", "2")].value))
            # amdgpu's power_dpm_force_performance_level words and amdsmi's names for them (amdsmi.h).
            amdsmi_name = {"auto": "AUTO", "manual": "MANUAL", "high": "HIGH", "low": "LOW", "profile_peak": "STABLE_PEAK",
                           "profile_standard": "STABLE_STD", "perf_determinism": "DETERMINISM"}
            self.assertEqual(gpu["perf"], "AMDSMI_DEV_PERF_LEVEL_" + amdsmi_name[r[("performance_level", "")].value])

    def test_pcie_memory_firmware(self):
        for i, gpu in enumerate(self.gpus):
            r = self.readings(i)
            self.assertEqual(gpu["pcie"]["pcie_static"]["max_pcie_speed"], round(r[("pcie_speed_max", "")].value * 1000))  # MT/s
            self.assertEqual(gpu["pcie"]["pcie_static"]["pcie_interface_version"], 5)  # 32 GT/s
            self.assertEqual(gpu["pcie"]["pcie_metric"]["pcie_width"], r[("pcie_width", "")].value)
            self.assertEqual(gpu["pcie"]["pcie_metric"]["pcie_l0_to_recovery_count"], r[("pcie_recovery_count", "")].value)
            self.assertEqual(gpu["vram_used"], r[("vram_used", "")].value)
            self.assertEqual(gpu["gtt_used"], r[("gtt_used", "")].value)
            # amdsmi 7.x's firmware forms: dotted hex (PSP SOS, TA, VCN), dotted decimal bytes (PM), decimal.
            sos = int(r[("firmware_version", "sos")].value, 16)
            self.assertEqual(gpu["fw"]["AMDSMI_FW_ID_PSP_SOSDRV"], ".".join("%02X" % (sos >> s & 0xFF) for s in (24, 16, 8, 0)))
            smc = int(r[("firmware_version", "smc")].value, 16)
            self.assertEqual(gpu["fw"]["AMDSMI_FW_ID_PM"], ".".join("%02d" % (smc >> s & 0xFF) for s in (24, 16, 8, 0)))
            self.assertEqual(gpu["fw"]["AMDSMI_FW_ID_CP_MEC1"], str(int(r[("firmware_version", "mec")].value, 16)))

    def test_gpu_metrics_keys_and_units(self):
        for i, gpu in enumerate(self.gpus):
            r, m = self.readings(i), gpu["metrics"]
            self.assertEqual((m["common_header.format_revision"], m["common_header.content_revision"]), (1, 6))
            self.assertEqual(m["temperature_hotspot"], int(r[("temperature_junction", "")].value))
            self.assertEqual(m["current_socket_power"], round(r[("power_current", "")].value))
            self.assertEqual(m["pcie_link_speed"], round(r[("pcie_speed", "")].value * 10))  # 0.1 GT/s
            self.assertEqual(m["current_gfxclks"], [round(r[("clock_sclk_xcc", str(x))].value) for x in range(8)])
            self.assertEqual(m["xgmi_read_data_acc"], [r[("xgmi_read_data", str(x))].value // 1024 for x in range(8)])  # KB
            self.assertEqual(m["accumulation_counter"], r[("violation_accumulation_count", "")].value)
            self.assertEqual(m["num_partition"], 1)
            self.assertEqual(m["energy_accumulator"], "N/A")
            self.assertEqual(len(m["xcp_stats.jpeg_busy"]), 8)
            self.assertEqual(len(m["xcp_stats.jpeg_busy"][0]), 40)


def run_on(capture, script):
    base = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], capture)
    env = dict(ENV, HIPSTACK_SYSFS_ROOT=os.path.join(base, "sys"), HIPSTACK_PROCFS_ROOT=os.path.join(base, "proc"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"the script failed ({done.returncode}): {done.stderr}")
    return json.loads(done.stdout)


class ComputePartitions(unittest.TestCase):
    """CPX: one handle per partition (64 on 8 MI300X), each with the partition's BDF, KFD id and VRAM;
    the GPU-wide figures on partition 0 only, as amdsmi's."""

    def test_one_handle_per_partition(self):
        base = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-cpx-nps1")
        handles = run_on("constructed/mi300x-8gpu-cpx-nps1", r"""
import json
from hipstack.amdsmi import *
amdsmi_init()
out = []
for h in amdsmi_get_processor_handles():
    e = {"bdf": amdsmi_get_gpu_device_bdf(h), "bdf_id": amdsmi_get_gpu_bdf_id(h), "kfd": amdsmi_get_gpu_kfd_info(h),
         "vram": amdsmi_get_gpu_memory_total(h, AmdSmiMemoryType.VRAM), "cus": amdsmi_get_gpu_asic_info(h)["num_compute_units"],
         "uuid": amdsmi_get_gpu_device_uuid(h), "partition": amdsmi_get_gpu_compute_partition(h),
         "power": amdsmi_get_power_info(h)["current_socket_power"], "board": amdsmi_get_gpu_board_info(h)["product_serial"]}
    try:
        e["temp"] = amdsmi_get_temp_metric(h, AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.CURRENT)
    except AmdSmiLibraryException as x:
        e["temp"] = x.get_error_code()
    e["from_bdf"] = amdsmi_get_processor_handle_from_bdf(e["bdf"]) == h
    out.append(e)
print(json.dumps(out))
""")
        self.assertEqual(len(handles), 64)
        with hipstack.System(sysfs_root=os.path.join(base, "sys"), nvml=False) as system:
            for gpu in system.devices():
                r = {x.metric: x.value for x in system.sample(gpu.index, kinds=("live",)) if not x.instance and x.ok}
                for p in system.partitions(gpu.index):
                    h = handles[gpu.index * 8 + p.index]
                    pr = {x.metric: x.value for x in p.readings}
                    domain, bus, rest = gpu.bdf.split(":")
                    self.assertEqual(h["bdf"], f"{domain}:{bus}:{rest[:2]}.{p.index}")
                    self.assertEqual(h["bdf_id"], int(domain, 16) << 32 | p.index << 28 | int(bus, 16) << 8 | p.index)
                    self.assertTrue(h["from_bdf"])
                    self.assertEqual(h["kfd"], {"kfd_id": pr["partition_kfd_gpu_id"], "node_id": "N/A",
                                                "current_partition_id": p.index})
                    self.assertEqual((h["vram"], h["cus"]), (pr["partition_memory"], pr["partition_compute_units"]))
                    self.assertEqual((h["uuid"], h["partition"]), (gpu.uuid, "CPX"))
                    self.assertNotEqual(h["board"], "N/A")  # identity is the GPU's on every partition
                    if p.index == 0:
                        self.assertEqual((h["power"], h["temp"]), (round(r["power_current"]), int(r["temperature_junction"])))
                    else:  # amdsmi's secondary partitions: "N/A" in a dict, NOT_SUPPORTED for a value
                        self.assertEqual((h["power"], h["temp"]), ("N/A", 2))


class ClockTables(unittest.TestCase):
    """amdsmi_get_clk_freq against rocm-smi-lib 7.2.4's own answers on the same captures
    (rsmi_clk_freq_7.2.4.json, recorded with rsmi_clk_freq_probe.py: amdsmi wraps that call for these
    clocks): the deep-sleep level first, the fine-grained sclk's middle line, `current`, Hz, every GPU
    and CPX partition; a table the GPU lacks is NOT_SUPPORTED where rocm-smi says so, PCIE INVAL."""
    RSMI_TYPES = {0: "SYS", 1: "DF", 2: "DCEF", 3: "SOC", 4: "MEM", 5: "PCIE"}
    SCRIPT = r"""
import json
from hipstack.amdsmi import *
amdsmi_init()
out = []
for h in amdsmi_get_processor_handles():
    gpu = {}
    for name in ("SYS", "DF", "DCEF", "SOC", "MEM", "PCIE"):
        try:
            gpu[name] = amdsmi_get_clk_freq(h, AmdSmiClkType[name])
        except AmdSmiLibraryException as e:
            gpu[name] = e.get_error_code()
    gpu["GFX"] = amdsmi_get_clk_freq(h, AmdSmiClkType.GFX) if isinstance(gpu["SYS"], dict) else None
    out.append(gpu)
print(json.dumps(out))
"""

    def test_as_rocm_smi_lists_them(self):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rsmi_clk_freq_7.2.4.json")) as f:
            record = json.load(f)
        not_supported, invalid = 2, 1  # rocm-smi's results; amdsmi's codes for them are the same numbers
        for capture in ("mi300x-8gpu-spx-nps1", "mi300x-8gpu-cpx-nps1"):
            with self.subTest(capture=capture):
                ours = run_on("constructed/" + capture, self.SCRIPT)
                theirs = record[capture]
                self.assertEqual(len(ours), len(theirs))
                answered = 0
                for index, gpu in enumerate(ours):
                    for rsmi_type, name in self.RSMI_TYPES.items():
                        answer = theirs[str(index)][str(rsmi_type)]
                        if answer[0] == 0:
                            _, _, count, current, hz = answer
                            self.assertEqual(gpu[name], {"num_supported": count, "current": current, "frequency": hz},
                                             f"{capture} handle {index} {name}")
                            answered += 1
                        else:
                            self.assertEqual(gpu[name], {not_supported: 2, invalid: 1}[answer[0]], f"{capture} handle {index} {name}")
                    if gpu["GFX"] is not None:
                        self.assertEqual(gpu["GFX"], gpu["SYS"])
                self.assertEqual(answered, 8 * 4)  # sclk, fclk, socclk, mclk of each GPU (partition 0 in CPX)
        # The two shapes rocm-smi lists differently from pp_dpm's numbering, as recorded above.
        spx = record["mi300x-8gpu-spx-nps1"]["0"]
        self.assertEqual(spx["0"][2:], [3, 1, [500000000, 142000000, 2100000000]])  # min, the clock now *, max
        self.assertEqual(spx["3"][1:4], [True, 4, 0])  # "S: 30Mhz *" is line 0


class ViolationsAndLinks(unittest.TestCase):
    """amdsmi_get_violation_status computes as amdsmi does: two reads of the accumulators 100 ms apart
    (here the module's sleep replaces card0's gpu_metrics with grown accumulators: 1,000 more samples,
    250 of them power-limited, all 1,000 HBM-thermal); the link calls give the library's links."""
    GROWN = {32: 1000, 40: 250, 52: 1000}  # gpu_metrics v1.6 (u32 at): accumulation_counter, ppt_residency, hbm_thm_residency

    def test_violation_status_over_the_two_reads(self):
        with tempfile.TemporaryDirectory() as scratch:
            shutil.copytree(CAPTURE, os.path.join(scratch, "capture"), symlinks=True)
            metrics = os.path.join(scratch, "capture/sys/class/drm/card0/device/gpu_metrics")
            env = dict(ENV, HIPSTACK_SYSFS_ROOT=os.path.join(scratch, "capture/sys"),
                       HIPSTACK_PROCFS_ROOT=os.path.join(scratch, "capture/proc"))
            script = r"""
import json, os, struct, sys
from hipstack.amdsmi import *
import hipstack._amdsmi_limits as limits
path, grown = sys.argv[1], {int(k): v for k, v in json.loads(sys.argv[2]).items()}
calls = []
def grow(seconds):  # card0's call only: the second call (card1's) finds card0's file as the first left it
    calls.append(seconds)
    if len(calls) > 1:
        return
    data = bytearray(open(path, "rb").read())
    for offset, more in grown.items():
        struct.pack_into("<I", data, offset, struct.unpack_from("<I", data, offset)[0] + more)
    open(path + ".new", "wb").write(data)
    os.replace(path + ".new", path)
limits.time.sleep = grow
amdsmi_init()
h = amdsmi_get_processor_handles()
print(json.dumps([amdsmi_get_violation_status(h[0]), amdsmi_get_violation_status(h[1]), calls]))
"""
            done = subprocess.run([sys.executable, "-c", script, metrics, json.dumps(self.GROWN)], env=env,
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            card0, card1, waits = json.loads(done.stdout)
            self.assertEqual(waits, [0.1, 0.1], "amdsmi's 100 ms between the two reads")
            with hipstack.System(sysfs_root=env["HIPSTACK_SYSFS_ROOT"], nvml=False) as system:
                after = {(r.metric, r.instance): r.value for r in system.sample(0, kinds=("live",)) if r.ok}
        self.assertEqual(card0["acc_counter"], after[("violation_accumulation_count", "")])
        self.assertEqual((card0["acc_ppt_pwr"], card0["acc_hbm_thrm"], card0["acc_prochot_thrm"]),
                         (after[("violation_residency", "ppt")], after[("violation_residency", "hbm_thermal")], 0))
        self.assertEqual((card0["per_ppt_pwr"], card0["per_hbm_thrm"], card0["per_prochot_thrm"]), (25, 100, 0))
        self.assertEqual((card0["active_ppt_pwr"], card0["active_hbm_thrm"], card0["active_prochot_thrm"]), (True, True, False))
        self.assertEqual(card0["violation_timestamp"], round(after[("firmware_timestamp", "")] * 100_000_000))
        # card1's accumulators did not move: no share can be computed, as amdsmi answers then.
        self.assertEqual((card1["per_ppt_pwr"], card1["active_ppt_pwr"]), ("N/A", "N/A"))
        self.assertEqual(card1["acc_gfx_clk_below_host_limit"], "N/A")
        self.assertEqual(card1["per_low_utilization"], [["N/A"] * 8] * 8)

    def test_xgmi_link_status(self):
        """card0's gpu_metrics replaced by a v1.7 table (2208 bytes, every field unfilled but the link
        states): its links as amdsmi's letters, an unfilled link "X" in its place, total_links the node's
        8 GPUs; the v1.6 GPUs have no link states (NOT_SUPPORTED); a state the kernel does not define
        is UNEXPECTED_DATA."""
        script = r"""
import json
from hipstack.amdsmi import *
amdsmi_init()
out = []
for h in amdsmi_get_processor_handles()[:2]:
    try:
        out.append(amdsmi_get_gpu_xgmi_link_status(h))
    except AmdSmiLibraryException as e:
        out.append(e.get_error_code())
print(json.dumps(out))
"""
        for states, expected in (([1, 1, 0, 0xFFFF, 1], {"status": ["U", "U", "D", "X", "U", "X", "X", "X"], "total_links": 8}),
                                 ([1, 2, 1], 43)):
            with self.subTest(states=states), tempfile.TemporaryDirectory() as scratch:
                shutil.copytree(CAPTURE, os.path.join(scratch, "capture"), symlinks=True)
                table = bytearray(b"\xff" * 2208)
                table[0:4] = (2208).to_bytes(2, "little") + bytes([1, 7])
                for link, state in enumerate(states):
                    table[264 + 2 * link:266 + 2 * link] = state.to_bytes(2, "little")
                with open(os.path.join(scratch, "capture/sys/class/drm/card0/device/gpu_metrics"), "wb") as f:
                    f.write(table)
                env = dict(ENV, HIPSTACK_SYSFS_ROOT=os.path.join(scratch, "capture/sys"),
                           HIPSTACK_PROCFS_ROOT=os.path.join(scratch, "capture/proc"))
                done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(json.loads(done.stdout), [expected, 2])

    def test_link_type_hops_and_weight_of_every_pair(self):
        found = run(r"""
import json
from hipstack.amdsmi import *
amdsmi_init()
h = amdsmi_get_processor_handles()
print(json.dumps({f"{a},{b}": [amdsmi_topo_get_link_type(h[a], h[b]), amdsmi_topo_get_link_weight(h[a], h[b])]
                  for a in range(len(h)) for b in range(len(h)) if a != b}))
""")
        with hipstack.System(sysfs_root=ENV["HIPSTACK_SYSFS_ROOT"], nvml=False) as system:
            links = system.links()
        pairs = json.loads(found)
        self.assertEqual(len(pairs), 56)
        for link in links:
            r = {x.metric: x.value for x in link.readings if x.ok}
            self.assertEqual(r["link_type"], "xgmi")
            for key in (f"{link.source},{link.target}", f"{link.target},{link.source}"):
                self.assertEqual(pairs[key], [{"hops": r["link_hops"], "type": AMDSMI_LINK_TYPE_XGMI}, r["link_weight"]], key)


class EccAndBadPages(unittest.TestCase):
    def test_counts_and_pages_of_the_faults_capture(self):
        base = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-faults")
        gpus = run_on("constructed/mi300x-8gpu-faults", r"""
import json
from hipstack.amdsmi import *
amdsmi_init()
out = []
for h in amdsmi_get_processor_handles():
    e = {"total": amdsmi_get_gpu_total_ecc_count(h), "umc": amdsmi_get_gpu_ecc_count(h, AmdSmiGpuBlock.UMC),
         "pages": amdsmi_get_gpu_bad_page_info(h)}
    try:
        amdsmi_get_gpu_ecc_count(h, AmdSmiGpuBlock.GFX)
        e["gfx"] = "counted"
    except AmdSmiLibraryException as x:
        e["gfx"] = x.get_error_code()
    out.append(e)
print(json.dumps(out))
""")
        with hipstack.System(sysfs_root=os.path.join(base, "sys"), nvml=False) as system:
            for i, gpu in enumerate(gpus):
                r = [x for x in system.sample(i, kinds=("live",)) if x.ok and x.metric.startswith("ras_")]
                def counted(metric, block=None):  # "N/A" where no block reports the count, as for amdsmi's keys
                    counts = [x.value for x in r if x.metric == metric and block in (None, x.instance)]
                    return sum(counts) if counts else "N/A"
                self.assertEqual(gpu["total"], {"correctable_count": counted("ras_correctable"),
                                                "uncorrectable_count": counted("ras_uncorrectable"),
                                                "deferred_count": counted("ras_deferred")})
                self.assertEqual(gpu["umc"]["correctable_count"], counted("ras_correctable", "umc"))
                pages = system.bad_pages(i)
                self.assertEqual(gpu["pages"], [{"value": n, "page_address": p.frame, "page_size": p.size,
                                                 "status": {"reserved": 0, "pending": 1}.get(p.state, 2)}
                                                for n, p in enumerate(pages)])
        self.assertEqual(gpus[1]["total"]["correctable_count"], 14)
        self.assertEqual(len(gpus[4]["pages"]), 10)


class EccNotReported(unittest.TestCase):
    def test_a_count_the_driver_does_not_give_is_na(self):
        """A kernel whose RAS files have no deferred line (before amdgpu counted them): deferred_count
        is "N/A", never 0, and the other counts are still the driver's."""
        source = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-faults")
        copy = tempfile.mkdtemp(prefix="amdsmi-no-deferred-")
        self.addCleanup(shutil.rmtree, copy)
        shutil.copytree(os.path.join(source, "sys"), os.path.join(copy, "sys"), symlinks=True)
        edited = 0
        for folder, _, files in os.walk(os.path.join(copy, "sys")):
            for name in files:
                if name.endswith("_err_count"):
                    path = os.path.join(folder, name)
                    lines = open(path).read().splitlines(keepends=True)
                    open(path, "w").write("".join(l for l in lines if not l.startswith("de:")))
                    edited += 1
        self.assertGreater(edited, 0)
        env = dict(ENV, HIPSTACK_SYSFS_ROOT=os.path.join(copy, "sys"), HIPSTACK_PROCFS_ROOT=os.path.join(source, "proc"))
        done = subprocess.run([sys.executable, "-c", """
import json
from hipstack.amdsmi import *
amdsmi_init()
print(json.dumps([amdsmi_get_gpu_total_ecc_count(h) for h in amdsmi_get_processor_handles()]))
"""], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        totals = json.loads(done.stdout)
        self.assertEqual(totals[1], {"correctable_count": 14, "uncorrectable_count": 2, "deferred_count": "N/A"})
        self.assertTrue(all(t["deferred_count"] == "N/A" for t in totals))


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
try:
    amdsmi_get_processor_handle_from_bdf("0000:zz:00.0")
except AmdSmiBdfFormatException as e:
    print("bdf format", e.bdf)
try:
    amdsmi_get_processor_handle_from_bdf("00:01.0")
except AmdSmiLibraryException as e:
    print("no such bdf", e.get_error_code())
try:
    amdsmi_get_clock_info(h, 0)
except AmdSmiParameterException:
    print("clock type")
try:
    amdsmi_get_gpu_device_uuid(amdsmi_processor_handle(99, "0000:ff:00.0"))
except AmdSmiLibraryException as e:
    print("stale handle", e.get_error_code())
amdsmi_shut_down()
'''
        self.assertEqual(run(script).split("\n"), ["not init 32", "parameter AmdSmiInitFlags", "memory type", "plx 2 True",
                                                  "bdf format 0000:zz:00.0", "no such bdf 7", "clock type", "stale handle 31", ""])


if __name__ == "__main__":
    unittest.main()
