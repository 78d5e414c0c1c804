"""Documented disagreements with rocm-smi where hipstack takes a fact from a better source
("precedence"), or where rocm-smi shows a value the capture does not hold ("upstream": rocm-smi's
behaviour, named with its evidence).

docs/amdgpu-backend.md ("Source precedence") says which source hipstack uses for each metric and why.
rocm-smi 5.2.3 reads one file per field (the starred pp_dpm_* line for clocks, the raw gpu_metrics
energy counter), so on some GPUs the two tools report different values on purpose. Such a row is not
a failure only when the evidence is there: the capture's own file holds exactly the value hipstack
reports (clocks), or hipstack's other readings show why the rocm-smi value cannot be true (energy).
Anything else stays a DISAGREE. Python 3 standard library only.
"""

import glob
import math
import os
import struct


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _device_dir(capture, bdf):
    """The capture's class/drm/cardN/device folder of the card at `bdf` (None when not found)."""
    if not capture:
        return None
    for uevent in sorted(glob.glob(os.path.join(capture, "class", "drm", "card*", "device", "uevent"))):
        text = (_read(uevent) or b"").replace(b"\0", b"").decode("utf-8", "replace")
        for line in text.splitlines():
            if line.startswith("PCI_SLOT_NAME=") and line.split("=", 1)[1].strip().lower() == bdf:
                return os.path.dirname(uevent)
    return None


def _hwmon_mhz(device, name):
    """hwmon freqN_input (Hz) of the amdgpu hwmon, in MHz."""
    for path in sorted(glob.glob(os.path.join(device, "hwmon", "hwmon*", name))):
        raw = (_read(path) or b"").replace(b"\0", b"").strip()
        try:
            return int(raw) / 1e6
        except ValueError:
            continue
    return None


def _gpu_metrics_clock(device, offset):
    """A u16 clock (MHz) of a gpu_metrics v1.3 table: current_gfxclk at 54, current_uclk at 58
    (the kernel's struct gpu_metrics_v1_3; 0xFFFF is 'not supported')."""
    blob = _read(os.path.join(device, "gpu_metrics"))
    if not blob or len(blob) < 120:
        return None
    size, fmt, content = struct.unpack_from("<HBB", blob, 0)
    if (fmt, content) != (1, 3) or size < 120:
        return None
    value = struct.unpack_from("<H", blob, offset)[0]
    return None if value == 0xFFFF else float(value)


_CLOCKS = {"clock_sclk": ("freq1_input", 54, "current_gfxclk"), "clock_mclk": ("freq2_input", 58, "current_uclk")}


def explain(metric, rocm_value, hip_state, hip_value, hdev, capture):
    """Why a DISAGREE row is hipstack's documented precedence, with its evidence; None if it is not."""
    if metric in _CLOCKS and hip_state == "ok" and isinstance(hip_value, (int, float)):
        hwmon_file, offset, field = _CLOCKS[metric]
        device = _device_dir(capture, (hdev.get("bdf") or "").lower())
        if device is None:
            return None
        gm = _gpu_metrics_clock(device, offset)
        if gm is not None:
            # gpu_metrics comes first: only its value may explain the row.
            if abs(gm - hip_value) <= 0.5:
                return ("precedence: gpu_metrics %s %g MHz > hwmon > starred pp_dpm level (rocm-smi reads the "
                        "starred line)" % (field, gm))
            return None
        hw = _hwmon_mhz(device, hwmon_file)
        if hw is not None and abs(hw - hip_value) <= 0.005:
            return ("precedence: hwmon %s %g MHz over the starred pp_dpm level (rocm-smi reads the starred line)"
                    % (hwmon_file, hw))
        return None
    if metric == "unique_id" and hip_state == "not_supported" and rocm_value == 0:
        device = _device_dir(capture, (hdev.get("bdf") or "").lower())
        text = _read(os.path.join(device, "unique_id")) if device is not None else None
        if device is not None and not (text or b"").replace(b"\0", b"").strip():
            return ("upstream: rocm-smi 6 and later print the KFD node's unique_id, where 0 means the driver "
                    "has none (the capture's device/unique_id is %s); hipstack says not_supported"
                    % ("absent" if text is None else "empty"))
    if metric == "pci_subsystem_device_id" and hip_state == "ok" and isinstance(rocm_value, int) and rocm_value < 0:
        device = _device_dir(capture, (hdev.get("bdf") or "").lower())
        text = _read(os.path.join(device, "subsystem_device")) if device is not None else None
        try:
            recorded = int((text or b"").replace(b"\0", b"").strip(), 16)
        except ValueError:
            recorded = None
        try:
            hip = hip_value if isinstance(hip_value, int) else int(str(hip_value), 16)
        except ValueError:
            hip = None
        if recorded is not None and recorded == rocm_value & 0xFFFF and recorded == hip:
            return ("upstream: rocm-smi 7.2.4 prints a subsystem id above 0x7fff as a signed 16-bit number "
                    "(%s is 0x%04x); the capture's device/subsystem_device holds 0x%04x" % (hex(rocm_value), recorded, recorded))
    if metric == "firmware_timestamp" and hip_state == "not_supported" and rocm_value is not None \
            and math.isclose(rocm_value * 1e9, float((0xFFFFFFFFFFFFFFFF * 10) % (1 << 64)), rel_tol=1e-12):
        return ("upstream: rocm-smi 7.2.4 converts the table's 'not supported' marker (all ones) to ns as well: "
                "(2^64 - 1) x 10 wraps to 2^64 - 10; hipstack says not_supported")
    if metric == "energy_consumed" and hip_state == "not_supported" and rocm_value == 0:
        power = ((hdev.get("metrics") or {}).get("power_average") or {})
        if power.get("status") == "ok" and (power.get("value") or 0) > 0:
            return ("stale counter: gpu_metrics energy_accumulator is 0 while power_average is %g W; rocm-smi "
                    "prints the raw 0, hipstack reports not_supported" % power["value"])
    return None
