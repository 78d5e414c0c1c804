#!/usr/bin/env python3
"""hipstack-smi against nvidia-smi and pynvml on a real NVIDIA GPU (ctest label `gpu`; 77 = skipped).

Usage: test_nvidia_smi.py HIPSTACK_SMI [--markdown FILE]

Reads only; never changes a device setting. nvidia-smi is queried three times right before and three
times right after hipstack-smi: a value agrees when it equals nvidia-smi's (identity, static facts) or,
for live values, lies within the range of those back-to-back reads (plus the tools' rounding). pynvml, where
importable, is a second oracle reported in the same table.
"""
import json
import shutil
import subprocess
import sys

GEN_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
NA = ("[N/A]", "N/A", "[Not Supported]", "Not Supported", "")


def text(v):
    return v.strip()


def number(v):
    return float(v)


def mib(v):
    return float(v) * 2**20


def gen(v):
    return GEN_GTS[int(v)]


def hex_high(v):
    return "0x%04x" % (int(v, 16) >> 16)


def lower(v):
    return v.strip().lower()


def bus(v):
    return v.strip().lower()[-12:]


# nvidia-smi field, hipstack metric, parser of nvidia-smi's text, live (bracketed) or not, rounding slack
FIELDS = [
    ("name", "marketing_name", text, False, 0),
    ("uuid", "uuid", text, False, 0),
    ("serial", "serial_number", text, False, 0),
    ("vbios_version", "vbios_version", text, False, 0),
    ("driver_version", "driver_version", text, False, 0),
    ("compute_cap", "compute_capability", text, False, 0),
    ("pci.bus_id", "bdf", bus, False, 0),
    ("pci.device_id", "pci_device_id", hex_high, False, 0),
    ("pci.sub_device_id", "pci_subsystem_device_id", hex_high, False, 0),
    ("memory.total", "vram_total", mib, False, 2**20),
    ("power.min_limit", "power_cap_min", number, False, 0.01),
    ("power.max_limit", "power_cap_max", number, False, 0.01),
    ("power.default_limit", "power_cap_default", number, False, 0.01),
    ("enforced.power.limit", "power_cap", number, False, 0.01),
    ("clocks.max.graphics", "clock_sclk_max", number, False, 0),
    ("clocks.max.memory", "clock_mclk_max", number, False, 0),
    ("clocks.max.sm", "clock_sm_max", number, False, 0),
    ("pcie.link.gen.max", "pcie_speed_max", gen, False, 0),
    ("pcie.link.width.max", "pcie_width_max", number, False, 0),
    ("ecc.mode.current", "ecc_mode", lower, False, 0),
    ("mig.mode.current", "mig_mode", lower, False, 0),
    ("persistence_mode", "persistence_mode", lower, False, 0),
    ("temperature.gpu", "temperature_junction", number, True, 1),
    ("temperature.memory", "temperature_memory", number, True, 1),
    ("power.draw.average", "power_average", number, True, 0.05),
    ("power.draw.instant", "power_current", number, True, 0.05),
    ("clocks.gr", "clock_sclk", number, True, 0),
    ("clocks.sm", "clock_sm", number, True, 0),
    ("clocks.mem", "clock_mclk", number, True, 0),
    ("clocks.video", "clock_video", number, True, 0),
    ("utilization.gpu", "gpu_busy", number, True, 0),
    ("utilization.memory", "memory_busy", number, True, 0),
    ("memory.used", "vram_used", mib, True, 2**20),
    ("memory.free", "vram_free", mib, True, 2**20),
    ("memory.reserved", "vram_reserved", mib, True, 2**20),
    ("pcie.link.gen.current", "pcie_speed", gen, True, 0),
    ("pcie.link.width.current", "pcie_width", number, True, 0),
    ("pstate", "performance_state", text, True, 0),
    ("clocks_event_reasons.active", "throttle_status", lambda v: int(v, 16), True, 0),
    ("fan.speed", "fan_pwm", number, True, 0),
]


def nvidia_smi():
    names = ",".join(f[0] for f in FIELDS)
    out = subprocess.run(["nvidia-smi", f"--query-gpu={names}", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip([f[0] for f in FIELDS], (v.strip() for v in line.split(",")))) for line in out.strip().splitlines()]


def pynvml_values(uuid):
    """The same facts through NVIDIA's Python bindings, keyed by hipstack metric."""
    try:
        import pynvml as n
    except ImportError:
        return None
    n.nvmlInit()
    try:
        for i in range(n.nvmlDeviceGetCount()):
            h = n.nvmlDeviceGetHandleByIndex(i)
            u = n.nvmlDeviceGetUUID(h)
            if (u.decode() if isinstance(u, bytes) else u) != uuid:
                continue
            out = {}
            def put(metric, fn):
                try:
                    v = fn()
                    out[metric] = v.decode() if isinstance(v, bytes) else v
                except n.NVMLError as e:
                    out[metric] = "err: %s" % e
            put("marketing_name", lambda: n.nvmlDeviceGetName(h))
            put("serial_number", lambda: n.nvmlDeviceGetSerial(h))
            put("vbios_version", lambda: n.nvmlDeviceGetVbiosVersion(h))
            put("product_number", lambda: n.nvmlDeviceGetBoardPartNumber(h))
            put("vram_total", lambda: n.nvmlDeviceGetMemoryInfo(h).total)
            put("bar1_total", lambda: n.nvmlDeviceGetBAR1MemoryInfo(h).bar1Total)
            put("power_cap", lambda: n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0)
            put("power_cap_default", lambda: n.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0)
            put("clock_sclk_max", lambda: float(n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_GRAPHICS)))
            put("compute_units", lambda: n.nvmlDeviceGetAttributes(h).multiprocessorCount)
            put("temperature_junction_critical",
                lambda: float(n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)))
            put("temperature_junction_emergency",
                lambda: float(n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)))
            put("pcie_replay_count", lambda: n.nvmlDeviceGetPcieReplayCounter(h))
            put("ecc_uncorrected_aggregate",
                lambda: n.nvmlDeviceGetTotalEccErrors(h, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_AGGREGATE_ECC))
            put("numa_node", lambda: n.nvmlDeviceGetNumaNodeId(h))
            return out
    finally:
        n.nvmlShutdown()
    return None


def hipstack(smi):
    devices = {}
    for command in ("static", "metric"):
        doc = json.loads(subprocess.run([smi, command, "--json"], capture_output=True, text=True, check=True).stdout)
        for d in doc["devices"]:
            if d["vendor"] == "nvidia":
                devices.setdefault(d["uuid"], {}).update(d["metrics"])
    return devices


def close(a, b, slack):
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    return abs(float(a) - float(b)) <= slack + 1e-9


def main(argv):
    smi = argv[1] if len(argv) > 1 else "hipstack-smi"
    markdown = argv[argv.index("--markdown") + 1] if "--markdown" in argv else None
    if shutil.which("nvidia-smi") is None:
        print("no nvidia-smi: skipped")
        return 77
    # Live values move between any two reads: the spread of several back-to-back nvidia-smi reads
    # around hipstack's read is the tolerance ("within the change between back-to-back reads").
    reads = [nvidia_smi() for _ in range(3)]
    ours = hipstack(smi)
    reads += [nvidia_smi() for _ in range(3)]
    rows, failures, compared = [], 0, 0
    for gpu, (b, a) in enumerate(zip(reads[0], reads[-1])):
        metrics = ours.get(b["uuid"])
        if metrics is None:
            print("FAIL hipstack-smi has no device %s" % b["uuid"])
            failures += 1
            continue
        for field, metric, parse, live, slack in FIELDS:
            entry = metrics.get(metric, {})
            value = entry.get("value", entry.get("status", "absent"))
            if b[field] in NA:
                verdict = "both n/a" if entry.get("status") != "ok" else "only hipstack"
                rows.append((field, metric, b[field], "", value, verdict))
                continue
            compared += 1
            seen = [parse(r[gpu][field]) for r in reads if r[gpu][field] not in NA]
            lo, hi = seen[0], seen[-1]
            if entry.get("status") != "ok":
                ok = False
            elif live and not isinstance(lo, str):
                # Within the range nvidia-smi saw, widened by the largest change between two of its
                # back-to-back reads (the tolerance for instantaneous values).
                step = max((abs(y - x) for x, y in zip(seen, seen[1:])), default=0.0)
                ok = min(seen) - step - slack - 1e-9 <= float(value) <= max(seen) + step + slack + 1e-9
                lo, hi = min(seen), max(seen)
            else:
                ok = any(close(v, value, slack) for v in seen)
            failures += 0 if ok else 1
            shown = b[field] if lo == hi else "%s .. %s" % (lo, hi)
            rows.append((field, metric, shown, "", value, "agree" if ok else "DISAGREE"))
        extra = pynvml_values(b["uuid"])
        if extra is not None:
            for metric, theirs in extra.items():
                entry = metrics.get(metric, {})
                value = entry.get("value", entry.get("status", "absent"))
                if isinstance(theirs, str) and theirs.startswith("err:"):
                    rows.append(("(pynvml)", metric, "", theirs, value, "both n/a" if entry.get("status") != "ok" else "only hipstack"))
                    continue
                compared += 1
                ok = entry.get("status") == "ok" and close(theirs, value, 0.01)
                failures += 0 if ok else 1
                rows.append(("(pynvml)", metric, "", theirs, value, "agree" if ok else "DISAGREE"))
    table = ["| nvidia-smi field | hipstack metric | nvidia-smi | pynvml | hipstack-smi | result |", "|---|---|---|---|---|---|"]
    table += ["| %s | `%s` | %s | %s | %s | %s |" % r for r in rows]
    print("\n".join(table))
    print("%d values compared, %d disagree" % (compared, failures))
    if markdown:
        with open(markdown, "w") as f:
            f.write("\n".join(table) + "\n\n%d values compared, %d disagree\n" % (compared, failures))
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
