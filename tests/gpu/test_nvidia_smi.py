#!/usr/bin/env python3
"""hipstack-smi against nvidia-smi on a real NVIDIA GPU (ctest label `gpu`; exit 77 = skip without one).

Usage: test_nvidia_smi.py HIPSTACK_SMI
Reads only; never changes a device setting. Identity and static facts must be equal; live values are
sampled by both tools around the same moment and compared with tolerances that cover their drift.
"""
import json
import shutil
import subprocess
import sys

SMI = sys.argv[1] if len(sys.argv) > 1 else "hipstack-smi"

# (nvidia-smi field, hipstack metric, kind, tolerance). kind: "text", "int", "num" (absolute tolerance)
# or "rel" (relative tolerance). nvidia-smi prints MiB for memory: converted below.
FIELDS = [
    ("name", "marketing_name", "text", None),
    ("uuid", "uuid", "text", None),
    ("serial", "serial_number", "text", None),
    ("vbios_version", "vbios_version", "text", None),
    ("driver_version", "driver_version", "text", None),
    ("compute_cap", "compute_capability", "text", None),
    ("pci.bus_id", "bdf", "bdf", None),
    ("pci.device_id", "pci_device_id", "pciid", None),
    ("pci.sub_device_id", "pci_subsystem_device_id", "pcisub", None),
    ("memory.total", "vram_total", "mib", 1),
    ("power.min_limit", "power_cap_min", "num", 0.01),
    ("power.max_limit", "power_cap_max", "num", 0.01),
    ("power.default_limit", "power_cap_default", "num", 0.01),
    ("enforced.power.limit", "power_cap", "num", 0.01),
    ("clocks.max.graphics", "clock_sclk_max", "num", 0.5),
    ("clocks.max.memory", "clock_mclk_max", "num", 0.5),
    ("clocks.max.sm", "clock_sm_max", "num", 0.5),
    ("pcie.link.gen.max", "pcie_speed_max", "gen", None),
    ("pcie.link.width.max", "pcie_width_max", "num", 0),
    ("ecc.mode.current", "ecc_mode", "mode", None),
    ("mig.mode.current", "mig_mode", "mode", None),
    ("persistence_mode", "persistence_mode", "mode", None),
    ("temperature.gpu", "temperature_junction", "num", 3),
    ("temperature.memory", "temperature_memory", "num", 3),
    ("power.draw.average", "power_average", "rel", 0.3),
    ("power.draw.instant", "power_current", "rel", 0.5),
    ("clocks.mem", "clock_mclk", "num", 1),
    ("clocks.video", "clock_video", "rel", 0.5),
    ("memory.used", "vram_used", "mib", 64),
    ("memory.reserved", "vram_reserved", "mib", 1),
    ("pcie.link.gen.current", "pcie_speed", "gen", None),
    ("pcie.link.width.current", "pcie_width", "num", 0),
    ("pstate", "performance_state", "text", None),
    ("clocks_event_reasons.active", "throttle_status", "mask", None),
]
GEN_GTS = {"1": 2.5, "2": 5.0, "3": 8.0, "4": 16.0, "5": 32.0, "6": 64.0}


def agree(kind, tolerance, theirs, ours):
    if kind == "text":
        return theirs == ours
    if kind == "bdf":  # 00000000:00:06.0 vs 0000:00:06.0
        return theirs.lower()[-12:] == ours.lower()
    if kind == "pciid":  # 0x233510DE: device id in the high 16 bits
        return int(theirs, 16) >> 16 == int(ours, 16)
    if kind == "pcisub":
        return int(theirs, 16) >> 16 == int(ours, 16)
    if kind == "mode":
        return theirs.lower() == ours.lower()
    if kind == "gen":
        return GEN_GTS.get(theirs) == ours
    if kind == "mask":
        return int(theirs, 16) == ours
    if kind == "mib":
        return abs(float(theirs) - ours / 2**20) <= tolerance
    if kind == "rel":
        return abs(float(theirs) - ours) <= tolerance * max(abs(float(theirs)), 1.0)
    return abs(float(theirs) - float(ours)) <= tolerance


def main():
    if shutil.which("nvidia-smi") is None:
        print("no nvidia-smi: skipped")
        return 77
    names = ",".join(f for f, *_ in FIELDS)
    rows = subprocess.run(["nvidia-smi", f"--query-gpu={names}", "--format=csv,noheader,nounits"],
                          capture_output=True, text=True, check=True).stdout.strip().splitlines()
    docs = [json.loads(subprocess.run([SMI, c, "--json"], capture_output=True, text=True, check=True).stdout)
            for c in ("static", "metric")]
    devices = {}
    for doc in docs:
        for d in doc["devices"]:
            devices.setdefault(d["uuid"], {}).update(d["metrics"])
    failures = 0
    compared = 0
    for row in rows:
        values = [v.strip() for v in row.split(",")]
        theirs = dict(zip([f for f, *_ in FIELDS], values))
        ours_metrics = devices.get(theirs["uuid"])
        if ours_metrics is None:
            print(f"FAIL hipstack has no device {theirs['uuid']}")
            failures += 1
            continue
        for field, metric, kind, tolerance in FIELDS:
            value = theirs[field]
            entry = ours_metrics.get(metric, {})
            if value in ("[N/A]", "N/A", "[Not Supported]", "Not Supported", ""):
                status = "n/a" if entry.get("status") != "ok" else "nvidia-smi n/a"
                print(f"  {field:28} {value:>22} {str(entry.get('value', entry.get('status'))):>26}  {status}")
                continue
            compared += 1
            ok = entry.get("status") == "ok" and agree(kind, tolerance, value, entry["value"])
            failures += 0 if ok else 1
            print(f"{'  ' if ok else 'FAIL'}{field:28} {value:>22} {str(entry.get('value', entry.get('status'))):>26}  {metric}")
    print(f"{compared} fields compared, {failures} disagree")
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
