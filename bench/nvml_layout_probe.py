#!/usr/bin/env python3
"""Does the installed NVML touch only what hipstack's struct layouts (nvml_api.hpp) give it?

Each call gets its buffer followed by a guard of known bytes; the probe reports, per call, how many
bytes NVML wrote past what hipstack gives it (0 is the only good answer) and whether the values land
where hipstack's layout reads them. For nvmlGpmMetricsGet it also checks reads: a child process
places a request of exactly numMetrics entries just before an inaccessible page (a read past it
kills the child). Read-only: no setting of the GPU is changed. GPU 0 only.

  nvmlGpmMetricsGet            hipstack passes kGpmMetricsCapacity entries; NVML's header declares
                               NVML_GPM_METRIC_MAX (333 in CUDA 13): are entries past numMetrics
                               written, or read?
  nvmlDeviceGetComputeRunningProcesses_v3
                               24-byte nvmlProcessInfo_t entries (a child process holds GPU memory;
                               needs torch)
  nvmlDeviceGetProcessUtilization
                               32-byte nvmlProcessUtilizationSample_t entries (the same child runs
                               matrix products, so NVML samples it)
  nvmlDeviceGetFieldValues     40-byte nvmlFieldValue_t entries
  nvmlDeviceGetMemoryInfo_v2   the versioned 40-byte nvmlMemory_v2_t

Usage: nvml_layout_probe.py       (exit 1 when any call wrote or read past its buffer)
"""
import ctypes
import os
import subprocess
import sys
import time

GUARD = 0xA5
GUARD_BYTES = 16384
GPM_ENTRY = 40  # nvmlGpmMetric_t: id (4), return (4), double (8), three pointers (24)
GPM_HEADER = 24  # version, numMetrics, sample1, sample2
GPM_IDS = [1, 2, 3, 5, 10, 11, 12, 13, 20, 21] + list(range(62, 98))  # hipstack's, 18 NVLinks
PAGE = 4096


def guarded(size):
    """A buffer of `size` bytes followed by the guard."""
    buf = (ctypes.c_ubyte * (size + GUARD_BYTES))()
    ctypes.memset(buf, GUARD, size + GUARD_BYTES)
    return buf


def written_past(buf, size):
    """Bytes after `size` that no longer hold the guard: distance of the last one touched."""
    last = 0
    raw = bytes(buf)
    for i in range(size, len(raw)):
        if raw[i] != GUARD:
            last = i - size + 1
    return last


def fill_gpm_request(address, k, s1, s2):
    """nvmlGpmMetricsGet_t at `address` with hipstack's first k metric ids (zeroed before)."""
    ctypes.c_uint.from_address(address).value = 1  # NVML_GPM_METRICS_GET_VERSION
    ctypes.c_uint.from_address(address + 4).value = k
    ctypes.c_void_p.from_address(address + 8).value = s1.value
    ctypes.c_void_p.from_address(address + 16).value = s2.value
    for i in range(k):
        ctypes.c_uint.from_address(address + GPM_HEADER + i * GPM_ENTRY).value = GPM_IDS[i]


def gpm_read_child(k):
    """In a child: a request of exactly k entries ending at an inaccessible page; exits 0 if NVML
    answered (a read past the request would have killed it)."""
    libc = ctypes.CDLL(None)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    assert nvml.nvmlInit_v2() == 0
    dev = ctypes.c_void_p()
    assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
    s1, s2 = ctypes.c_void_p(), ctypes.c_void_p()
    assert nvml.nvmlGpmSampleAlloc(ctypes.byref(s1)) == 0 and nvml.nvmlGpmSampleAlloc(ctypes.byref(s2)) == 0
    assert nvml.nvmlGpmSampleGet(dev, s1) == 0
    time.sleep(0.5)
    assert nvml.nvmlGpmSampleGet(dev, s2) == 0
    size = GPM_HEADER + k * GPM_ENTRY
    pages = (size + PAGE - 1) // PAGE
    base = libc.mmap(None, (pages + 1) * PAGE, 3, 0x22, -1, 0)  # PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS
    assert base not in (None, ctypes.c_void_p(-1).value) and libc.mprotect(base + pages * PAGE, PAGE, 0) == 0
    start = base + pages * PAGE - size
    ctypes.memset(start, 0, size)
    fill_gpm_request(start, k, s1, s2)
    rc = nvml.nvmlGpmMetricsGet(ctypes.c_void_p(start))
    os._exit(0 if rc == 0 else 3)


def main():
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    assert nvml.nvmlInit_v2() == 0, "nvmlInit_v2 failed"
    dev = ctypes.c_void_p()
    assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
    name = ctypes.create_string_buffer(96)
    nvml.nvmlDeviceGetName(dev, name, 96)
    drv = ctypes.create_string_buffer(96)
    nvml.nvmlSystemGetDriverVersion(drv, 96)
    print(f"GPU 0: {name.value.decode()}, driver {drv.value.decode()}")
    bad = False

    # --- GPM: two samples 1 s apart, then metrics for k entries in a buffer with room for many more.
    support = (ctypes.c_uint * 2)(1, 0)
    if nvml.nvmlGpmQueryDeviceSupport(dev, support) == 0 and support[1]:
        s1, s2 = ctypes.c_void_p(), ctypes.c_void_p()
        assert nvml.nvmlGpmSampleAlloc(ctypes.byref(s1)) == 0 and nvml.nvmlGpmSampleAlloc(ctypes.byref(s2)) == 0
        assert nvml.nvmlGpmSampleGet(dev, s1) == 0
        time.sleep(1)
        assert nvml.nvmlGpmSampleGet(dev, s2) == 0
        for k in (1, 10, 46):
            size = GPM_HEADER + k * GPM_ENTRY
            buf = guarded(size)
            ctypes.memset(buf, 0, size)
            fill_gpm_request(ctypes.addressof(buf), k, s1, s2)
            rc = nvml.nvmlGpmMetricsGet(buf)
            past = written_past(buf, size)
            first = ctypes.c_double.from_address(ctypes.addressof(buf) + GPM_HEADER + 8).value
            print(f"nvmlGpmMetricsGet numMetrics={k}: return {rc}, metric {GPM_IDS[0]} = {first:.3f}, "
                  f"bytes written past the {k} entries: {past}")
            bad |= past > 0
            status = os.spawnv(os.P_WAIT, sys.executable, [sys.executable, __file__, "--gpm-read-child", str(k)])
            print(f"nvmlGpmMetricsGet numMetrics={k}, request ending at an inaccessible page: "
                  + ("answered (nothing read past it)" if status == 0 else
                     f"child killed by signal {-status} (NVML touched memory past the request)" if status < 0 else
                     f"child exited {status}"))
            bad |= status != 0
    else:
        print("nvmlGpmMetricsGet: GPU 0 has no GPM (skipped)")

    # --- Processes: a child holds 1 GiB on GPU 0 and keeps its SMs busy until its stdin closes.
    child = subprocess.Popen([sys.executable, "-c",
                              "import torch,sys,threading\n"
                              "x=torch.empty(1<<28, device='cuda:0'); a=torch.randn(2048,2048,device='cuda:0')\n"
                              "def spin():\n"
                              "    while True:\n"
                              "        a@a; torch.cuda.synchronize()\n"
                              "threading.Thread(target=spin,daemon=True).start()\n"
                              "print('ready', flush=True); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready", "the child did not start"
        for _ in range(100):
            count = ctypes.c_uint(16)
            size = 16 * 24
            buf = guarded(size)
            rc = nvml.nvmlDeviceGetComputeRunningProcesses_v3(dev, ctypes.byref(count), buf)
            if rc == 0 and count.value > 0:
                break
            time.sleep(0.1)
        pids = [ctypes.c_uint.from_address(ctypes.addressof(buf) + 24 * i).value for i in range(count.value)]
        past = written_past(buf, count.value * 24)
        print(f"nvmlDeviceGetComputeRunningProcesses_v3: return {rc}, {count.value} process(es), pids at a 24-byte "
              f"stride {pids} (child {child.pid}: {'found' if child.pid in pids else 'NOT found'}), "
              f"bytes written past {count.value} entries: {past}")
        bad |= past > 0 or child.pid not in pids

        # Utilisation samples: the count first (no buffer), then exactly that many entries.
        time.sleep(2)
        count = ctypes.c_uint(0)
        rc_count = nvml.nvmlDeviceGetProcessUtilization(dev, None, ctypes.byref(count), ctypes.c_ulonglong(0))
        entries = count.value
        buf = guarded(entries * 32)
        rc = nvml.nvmlDeviceGetProcessUtilization(dev, buf, ctypes.byref(count), ctypes.c_ulonglong(0))
        base = ctypes.addressof(buf)
        samples = [(ctypes.c_uint.from_address(base + 32 * i).value, ctypes.c_ulonglong.from_address(base + 32 * i + 8).value,
                    ctypes.c_uint.from_address(base + 32 * i + 16).value) for i in range(min(count.value, entries))]
        mine = [sm for pid, stamp, sm in samples if pid == child.pid]
        past = written_past(buf, entries * 32)
        now_us = time.time() * 1e6
        stamps_ok = all(abs(now_us - stamp) < 60e6 for _, stamp, _ in samples)
        print(f"nvmlDeviceGetProcessUtilization: count call return {rc_count} ({entries}), fill return {rc}, "
              f"{count.value} sample(s), the child's SM % {mine}, timestamps within a minute of now (µs since the "
              f"epoch): {stamps_ok}, bytes written past {entries} entries: {past}")
        bad |= past > 0 or not mine or not stamps_ok
    finally:
        child.stdin.close()
        child.wait()

    # --- Field values: 4 entries of 40 bytes, fields hipstack asks for (memory temperature,
    # instantaneous power, total energy, volatile corrected ECC).
    size = 4 * 40
    buf = guarded(size)
    ctypes.memset(buf, 0, size)
    for i, field in enumerate((82, 186, 83, 3)):
        ctypes.c_uint.from_address(ctypes.addressof(buf) + 40 * i).value = field
    rc = nvml.nvmlDeviceGetFieldValues(dev, 4, buf)
    past = written_past(buf, size)
    print(f"nvmlDeviceGetFieldValues 4 fields: return {rc}, bytes written past: {past}")
    bad |= past > 0

    # --- Memory v2.
    size = 40
    buf = guarded(size)
    ctypes.memset(buf, 0, size)
    ctypes.c_uint.from_address(ctypes.addressof(buf)).value = 40 | (2 << 24)
    rc = nvml.nvmlDeviceGetMemoryInfo_v2(dev, buf)
    past = written_past(buf, size)
    total = ctypes.c_ulonglong.from_address(ctypes.addressof(buf) + 8).value
    print(f"nvmlDeviceGetMemoryInfo_v2: return {rc}, total {total / 2**30:.1f} GiB, bytes written past: {past}")
    bad |= past > 0

    nvml.nvmlShutdown()
    print("RESULT:", "NVML wrote past a buffer" if bad else "every call stayed inside hipstack's layouts")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--gpm-read-child":
        gpm_read_child(int(sys.argv[2]))
    sys.exit(main())
