#!/usr/bin/env python3
"""Records what rocm-smi's library (the one amdsmi_get_clk_freq wraps for sclk, fclk, dcefclk, socclk and
mclk) answers for each GPU and rsmi clock type 0-9 on the sysfs tree mounted over /sys: JSON
{device: {clock type: [result] or [0, has_deep_sleep, num_supported, current, [Hz...]]}}. Run inside
the second oracle's root (tests/lib/rocm_root.sh: librocm-smi64-7 7.2.4) with a capture's live tree
bound over its /sys, as tests/differential/run_rocm_smi.sh does; rsmi_clk_freq_7.2.4.json holds its
output for the MI300X captures (test_amdsmi.py compares hipstack.amdsmi with it)."""
import ctypes
import json


class Frequencies(ctypes.Structure):  # rsmi_frequencies_t of rocm-smi 6.x/7.x
    _fields_ = [("has_deep_sleep", ctypes.c_bool), ("num_supported", ctypes.c_int32), ("current", ctypes.c_uint32),
                ("frequency", ctypes.c_uint64 * 33)]


lib = ctypes.CDLL("librocm_smi64.so.7")
assert lib.rsmi_init(ctypes.c_uint64(0)) == 0
count = ctypes.c_uint32()
lib.rsmi_num_monitor_devices(ctypes.byref(count))
out = {}
for device in range(count.value):
    answers = {}
    for clock in range(10):
        f = Frequencies()
        result = lib.rsmi_dev_gpu_clk_freq_get(ctypes.c_uint32(device), ctypes.c_int(clock), ctypes.byref(f))
        answers[clock] = [result] if result else [result, f.has_deep_sleep, f.num_supported, f.current,
                                                   [f.frequency[i] for i in range(max(0, min(f.num_supported, 33)))]]
    out[device] = answers
print(json.dumps(out))
