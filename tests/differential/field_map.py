"""The map from rocm-smi's fields to hipstack's metrics (compare.py): how each rocm-smi value is
parsed, how hipstack's value is normalised, how the two are compared, and the fields left out on
purpose with the reason. Fields of rocm-smi 5.2.3 and of 7.x (new names, and the gpu_metrics table
7.x prints field by field). Python 3 standard library only.
"""

import math
import re

# ---------------------------------------------------------------------------
# rocm-smi value parsers: each returns a comparable value, or None for N/A
# ---------------------------------------------------------------------------


def _na(s):
    return s is None or str(s).strip() in ("", "N/A", "n/a", "None", "Unsupported")


def p_float(s):
    if _na(s):
        return None
    return float(str(s).strip())


def p_mhz(s):
    """'(1249Mhz)', '1249Mhz *', '1 (31Mhz)' -> 1249.0 / 31.0"""
    if _na(s):
        return None
    m = re.search(r"([\d.]+)\s*Mhz", str(s), re.I)
    return float(m.group(1)) if m else None


def p_hexint(s):
    if _na(s):
        return None
    s = str(s).strip()
    try:
        return int(s, 16)
    except ValueError:
        return None


def p_text(s):
    if _na(s):
        return None
    return str(s).strip()


def p_numa(s):
    """rocm-smi prints the sysfs numa_node through an uint32: -1 -> 4294967295"""
    if _na(s):
        return None
    v = int(str(s).strip())
    return v - (1 << 32) if v >= (1 << 31) else v


def p_pcie(s):
    """'16.0GT/s x16 *', '0 (8.0GT/s x16)', '16.0GT/s, x16 619Mhz *' -> (16.0, 16)"""
    if _na(s):
        return None
    m = re.search(r"([\d.]+)\s*GT/s,?\s*x(\d+)", str(s))
    return (float(m.group(1)), int(m.group(2))) if m else None


def p_fw(s, name=""):
    """rocm-smi prints VCN/VCE/UVD/SOS/ASD as hex, SMC/TA XGMI/TA RAS as the
    four bytes in decimal (00.58.86.00), the others in decimal."""
    if _na(s):
        return None
    s = str(s).strip()
    if s.lower().startswith("0x"):
        return int(s, 16)
    parts = s.split(".")
    if len(parts) == 4 and all(p.isdigit() for p in parts):
        v = 0
        for p in parts:
            v = (v << 8) | int(p)
        return v
    return int(s)


def p_energy_j(s):
    """'Accumulated Energy (uJ)' -> J"""
    v = p_float(s)
    return None if v is None else v * 1e-6


# hipstack value normalizers ------------------------------------------------

def h_num(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    try:
        return float(s)
    except ValueError:
        m = re.match(r"^([-\d.]+)", s)
        return float(m.group(1)) if m else None


def h_int_any(v):
    """firmware / ids: int, '0x003a5600', '3823104'"""
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(v)
    s = str(v).strip()
    try:
        return int(s, 16) if s.lower().startswith("0x") else int(s)
    except ValueError:
        return None


def h_hexint(v):
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(v)
    try:
        return int(str(v).strip(), 16)
    except ValueError:
        return None


def h_pcie(v):
    if v is None:
        return None
    if isinstance(v, dict):   # tolerate a structured level
        sp, w = v.get("speed") or v.get("gts"), v.get("width") or v.get("lanes")
        return (float(sp), int(w)) if sp is not None and w is not None else None
    return p_pcie(v)


def h_text(v):
    return None if v is None else str(v).strip()


# comparators ----------------------------------------------------------------

def num_eq(abs_tol=1e-6, rel_tol=0.0):
    def eq(a, b):
        return math.isclose(a, b, abs_tol=abs_tol, rel_tol=rel_tol)
    eq.desc = "±%g%s" % (abs_tol, " or %g%%" % (rel_tol * 100) if rel_tol else "")
    return eq


def exact(a, b):
    return a == b


def text_ci(a, b):
    return a.strip().lower() == b.strip().lower()


# ---------------------------------------------------------------------------
# The map.  Each entry: (regex on the rocm-smi key, function(match) -> spec)
# spec = (metric, instance or None, rocm parser, hipstack normalizer, equal, note)
# ---------------------------------------------------------------------------

_MEM = {"VRAM": "vram", "VIS_VRAM": "vram_visible", "GTT": "gtt"}
_TEMP = {"edge": "temperature_edge", "junction": "temperature_junction",
         "memory": "temperature_memory"}

MAP = [
    (r"PCI Bus", lambda m: ("bdf", None, p_text, h_text, text_ci, "")),
    (r"GPU ID", lambda m: ("pci_device_id", None, p_hexint, h_hexint, exact, "device/device")),
    (r"Card [vV]endor", lambda m: ("pci_vendor_id", None, p_hexint, h_hexint, exact,
                                   "rocm-smi prints the hex id when pci.ids has no name ('Card Vendor' from 6.x)")),
    # Names rocm-smi 6 and later print (the second oracle, 7.2.4)
    (r"Device ID", lambda m: ("pci_device_id", None, p_hexint, h_hexint, exact, "device/device")),
    (r"Device Rev", lambda m: ("pci_revision_id", None, p_hexint, h_hexint, exact, "device/revision")),
    (r"Subsystem ID", lambda m: ("pci_subsystem_device_id", None, p_hexint, h_hexint, exact,
                                 "device/subsystem_device")),
    (r"GUID", lambda m: ("kfd_gpu_id", None, p_float, h_num, exact, "the KFD node's gpu_id")),
    (r"GFX Version", lambda m: ("gfx_target", None, p_text, h_text, text_ci, "the KFD node's gfx_target_version")),
    (r"Unique ID", lambda m: ("unique_id", None, p_hexint, h_hexint, exact, "")),
    (r"VBIOS version", lambda m: ("vbios_version", None, p_text, h_text, exact, "")),
    (r"Serial Number", lambda m: ("serial_number", None, p_text, h_text, exact, "")),
    (r"GPU memory vendor", lambda m: ("vram_vendor", None, p_text, h_text, text_ci, "")),
    (r"Temperature \(Sensor (edge|junction|memory)\) \(C\)",
     lambda m: (_TEMP[m.group(1)], None, p_float, h_num, num_eq(0.001), "°C")),
    (r"Temperature \(Sensor HBM (\d+)\) \(C\)",
     lambda m: ("temperature_hbm", m.group(1), p_float, h_num, num_eq(0.001), "°C")),
    (r"Average Graphics Package Power \(W\)",
     lambda m: ("power_average", None, p_float, h_num, num_eq(0.001), "W, power1_average")),
    (r"Max Graphics Package Power \(W\)",
     lambda m: ("power_cap", None, p_float, h_num, num_eq(0.001), "W, power1_cap")),
    (r"Voltage \(mV\)", lambda m: ("voltage_gfx", None, p_float, h_num, num_eq(0.5), "mV")),
    (r"Fan RPM", lambda m: ("fan_speed", None, p_float, h_num, num_eq(0.5), "RPM")),
    (r"Fan speed \(level\)", lambda m: ("fan_pwm_level", None, p_float, h_num, exact, "raw pwm1")),
    (r"Fan speed \(%\)", lambda m: ("fan_pwm", None, p_float, h_num, num_eq(0.5 + 1e-6),
                                    "rocm-smi rounds pwm1/pwm1_max to whole %")),
    (r"GPU use \(%\)", lambda m: ("gpu_busy", None, p_float, h_num, num_eq(0.001), "%")),
    (r"GPU memory use \(%\)", lambda m: ("memory_busy", None, p_float, h_num, num_eq(0.001), "%")),
    (r"(VRAM|VIS_VRAM|GTT) Total Memory \(B\)",
     lambda m: (_MEM[m.group(1)] + "_total", None, p_float, h_num, num_eq(0.5), "bytes")),
    (r"(VRAM|VIS_VRAM|GTT) Total Used Memory \(B\)",
     lambda m: (_MEM[m.group(1)] + "_used", None, p_float, h_num, num_eq(0.5), "bytes")),
    (r"Performance Level", lambda m: ("performance_level", None, p_text, h_text, text_ci, "")),
    (r"PCIe Replay Count", lambda m: ("pcie_replay_count", None, p_float, h_num, num_eq(0.5), "")),
    (r"\(Topology\) Numa Affinity",
     lambda m: ("numa_node", None, p_numa, h_num, num_eq(0.5), "device/numa_node; rocm-smi prints -1 as 4294967295")),
    (r"(sclk|mclk|fclk|socclk|dcefclk|vclk|dclk) clock speed:",
     lambda m: ("clock_" + m.group(1), None, p_mhz, h_num, num_eq(1.0),
                "MHz of the starred pp_dpm level; rocm-smi truncates to whole MHz")),
    (r"(sclk) clock level",
     lambda m: ("clock_" + m.group(1), None, p_mhz, h_num, num_eq(1.0), "-g: 'level (MHz)'")),
    (r"Supported (sclk|mclk|fclk|socclk|dcefclk|vclk|dclk) frequencies: (\d+)",
     lambda m: (m.group(1) + "_level", m.group(2), p_mhz, h_num, num_eq(0.5 + 1e-6),
                "-s text; rocm-smi rounds to whole MHz")),
    (r"Supported PCIe frequencies: (\d+)",
     lambda m: ("pcie_level", m.group(1), p_pcie, h_pcie, exact, "-s text; GT/s and lanes")),
    (r"pcie clock level",
     lambda m: ("pcie_level", "@current", p_pcie, h_pcie, exact,
                "the starred pp_dpm_pcie level; GT/s and lanes")),
    (r"(.+) firmware version",
     lambda m: ("firmware_version", m.group(1).strip().lower().replace(" ", "_"),
                lambda s, _n=m.group(1): p_fw(s, _n), h_int_any, exact,
                "fw_version/<ip>_fw_version as an integer")),
    (r"Accumulated Energy \(uJ\)",
     lambda m: ("energy_consumed", None, p_energy_j, h_num, num_eq(0.001, 0.005),
                "J; rocm-smi scales the counter by 15.3 µJ, the counter's unit is 15.259 µJ")),
]

# rocm-smi 6 and later (the second oracle, 7.2.4) print the gpu_metrics table itself (--showmetrics,
# part of -a): each field by its struct name and unit, a per-instance field as a list ("name [i]"
# after expand_lists). Compared with what hipstack's own decoder makes of the same table.
def _scaled(factor):
    def parse(s):
        v = p_float(s)
        return None if v is None else v * factor
    return parse


_GM_TEMP = {"hotspot": "temperature_junction", "mem": "temperature_memory", "edge": "temperature_edge",
            "vrsoc": "temperature_vr_soc", "vrgfx": "temperature_vr_gfx", "vrmem": "temperature_vr_mem"}
_GM_CLOCK = {"gfxclk": "clock_sclk", "uclk": "clock_mclk", "socclk": "clock_socclk", "vclk0": "clock_vclk",
             "dclk0": "clock_dclk"}
_GM_RESIDENCY = {"prochot": "prochot", "ppt": "ppt", "socket_thm": "socket_thermal", "vr_thm": "vr_thermal",
                 "hbm_thm": "hbm_thermal"}
_GM_PCIE = {"l0_to_recov": "pcie_recovery_count", "replay": "pcie_replay_count", "nak_sent": "pcie_nak_sent_count",
            "nak_rcvd": "pcie_nak_received_count"}
_GM_VOLT = {"gfx": "voltage_gfx", "soc": "voltage_soc", "mem": "voltage_memory"}
_GM = "gpu_metrics "
MAP += [
    (r"temperature_(hotspot|mem|edge|vrsoc|vrgfx|vrmem) \(C\)",
     lambda m: (_GM_TEMP[m.group(1)], None, p_float, h_num, num_eq(0.001), _GM + "temperature_" + m.group(1))),
    (r"temperature_hbm \(C\) \[(\d+)\]",
     lambda m: ("temperature_hbm", m.group(1), p_float, h_num, num_eq(0.001), _GM + "temperature_hbm[i]")),
    (r"current_socket_power \(W\)|Current Socket Graphics Package Power \(W\)",
     lambda m: ("power_current", None, p_float, h_num, num_eq(0.001), _GM + "current_socket_power")),
    (r"average_socket_power \(W\)",
     lambda m: ("power_average", None, p_float, h_num, num_eq(0.001), _GM + "average_socket_power")),
    (r"current_(gfxclk|uclk|socclk|vclk0|dclk0) \(MHz\)",
     lambda m: (_GM_CLOCK[m.group(1)], None, p_float, h_num, num_eq(0.5), _GM + "current_" + m.group(1))),
    (r"current_gfxclks \(MHz\) \[(\d+)\]",
     lambda m: ("clock_sclk_xcc", m.group(1), p_float, h_num, num_eq(0.5), _GM + "current_gfxclk[XCC]")),
    (r"average_gfx_activity \(%\)", lambda m: ("gpu_busy", None, p_float, h_num, num_eq(0.001), _GM + "average_gfx_activity")),
    (r"average_umc_activity \(%\)", lambda m: ("memory_busy", None, p_float, h_num, num_eq(0.001), _GM + "average_umc_activity")),
    (r"gfx_activity_acc \(%\)",
     lambda m: ("gfx_activity_accumulated", None, p_float, h_num, exact, _GM + "gfx_activity_acc")),
    (r"energy_accumulator \(15\.259uJ \(2\^-16\)\)",
     lambda m: ("energy_consumed", None, _scaled(2.0 ** -16), h_num, num_eq(1e-6, 1e-12),
                _GM + "energy_accumulator; J = count x 2^-16 (15.259 uJ)")),
    (r"accumulation_counter \(Count\)",
     lambda m: ("violation_accumulation_count", None, p_float, h_num, exact, _GM + "accumulation_counter")),
    (r"(prochot|ppt|socket_thm|vr_thm|hbm_thm)_residency_acc \(Count\)",
     lambda m: ("violation_residency", _GM_RESIDENCY[m.group(1)], p_float, h_num, exact,
                _GM + m.group(1) + "_residency_acc")),
    (r"pcie_link_width \(Lanes\)", lambda m: ("pcie_width", None, p_float, h_num, exact, _GM + "pcie_link_width")),
    (r"pcie_link_speed \(0\.1 GT/s\)",
     lambda m: ("pcie_speed", None, _scaled(0.1), h_num, num_eq(1e-9), _GM + "pcie_link_speed, 0.1 GT/s")),
    (r"pcie_(l0_to_recov|replay|nak_sent|nak_rcvd)_count_acc \(Count\)",
     lambda m: (_GM_PCIE[m.group(1)], None, p_float, h_num, exact, _GM + "pcie_" + m.group(1) + "_count_acc")),
    (r"pcie_bandwidth_inst \(GB/s\)",
     lambda m: ("pcie_bandwidth", None, _scaled(1e9), h_num, num_eq(0.5), _GM + "pcie_bandwidth_inst, GB/s")),
    (r"xgmi_link_width", lambda m: ("xgmi_link_width", None, p_float, h_num, exact, _GM + "xgmi_link_width")),
    (r"xgmi_link_speed \(Gbps\)",
     lambda m: ("xgmi_link_speed", None, p_float, h_num, exact, _GM + "xgmi_link_speed (Gb/s per lane = GT/s)")),
    (r"xgmi_(read|write)_data_acc \(kB\) \[(\d+)\]",
     lambda m: ("xgmi_%s_data" % m.group(1), m.group(2), _scaled(1024.0), h_num, exact,
                _GM + "xgmi_%s_data_acc[link], kB" % m.group(1))),
    (r"firmware_timestamp \(10ns resolution\)",
     lambda m: ("firmware_timestamp", None, _scaled(1e-9), h_num, num_eq(1e-6),
                _GM + "firmware_timestamp; the table counts 10 ns, rocm-smi prints ns (the count x 10)")),
    (r"throttle_status", lambda m: ("throttle_status", None, p_float, h_num, exact, _GM + "throttle_status")),
    (r"voltage_(gfx|soc|mem) \(mV\)",
     lambda m: (_GM_VOLT[m.group(1)], None, p_float, h_num, num_eq(0.5), _GM + "voltage_" + m.group(1))),
    (r"current_fan_speed \(rpm\)", lambda m: ("fan_speed", None, p_float, h_num, num_eq(0.5), _GM + "current_fan_speed")),
    (r"Metric Version and Size \(Bytes\)",
     lambda m: ("gpu_metrics_version", None, lambda s: None if _na(s) else str(s).split()[0], h_text, exact,
                "gpu_metrics format.content revision")),
]
MAP = [(re.compile("^" + rx + "$"), fn) for rx, fn in MAP]

# rocm-smi fields deliberately not compared, with the reason.
EXCLUDED = [
    (r"Driver version", "rocm-smi falls back to the HOST's `uname -r` when /sys/module/amdgpu/version "
                        "is absent (no capture has it): not a fact of the capture"),
    (r"Card SKU", "rocm-smi derives it from vbios_version (6 characters after the first '-'); "
                  "VBIOS version itself is compared"),
    (r"Card [sS]eries|Card [mM]odel|Device Name", "rocm-smi's own pci.ids lookup; without pci.ids (not "
                                                  "installed here) it prints ids or N/A: not a sysfs value"),
    (r"Node ID", "the KFD node's number: an enumeration index of this boot, not a fact of the GPU"),
    (r"Energy counter", "raw gpu_metrics energy_accumulator count; 'Accumulated Energy (uJ)' is compared"),
    (r"GFX Activity|Memory Activity", "rocm-smi's coarse-grain activity accumulators (gpu_metrics "
                                      "gfx/mem_activity_acc); N/A on every capture, no hipstack metric"),
    (r"\(Topology\) Numa Node", "taken from the KFD io_links (to the CPU node), and the KFD topology is "
                                "synthesized for every capture but phoenix; numa_node is compared "
                                "through '(Topology) Numa Affinity'"),
    (r"(sclk|mclk|fclk|socclk|dcefclk|vclk|dclk) clock level:",
     "index of the starred pp_dpm level; its frequency is compared ('clock speed:')"),
]
EXCLUDED = [(re.compile("^(" + rx + ")$"), why) for rx, why in EXCLUDED]

# rocm-smi keys of the "system" object
SYSTEM_EXCLUDED = {"Driver version": EXCLUDED[0][1]}
