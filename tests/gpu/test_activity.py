#!/usr/bin/env python3
"""The activity metrics on a real NVIDIA GPU (ctest label `gpu`; 77 = skipped): hipstack-smi's
WINDOW metrics (NVML GPM) under known loads, cross-checked against pynvml's own GPM calls.

Usage: test_activity.py HIPSTACK_SMI [--markdown FILE]

Loads (torch, on the first GPU in PCI order; nothing else may use that GPU meanwhile):
  idle          nothing runs: every activity <= 5 %
  bf16 GEMM     8192^3 matmuls back to back: tensor_active >= 50 %, dram_active below it
  STREAM copy   1 GiB device-to-device copies: dram_active >= 60 %, tensor_active <= 5 %
  tiny kernels  one-element kernels back to back: NVML's gpu_busy says busy, sm_active <= 5 %
Each load runs in a child process that says "ready" once warm; pynvml measures a 1 s window,
hipstack-smi the next (`metric -m activity --window-ms 1000 --json`) and pynvml the one after: ours
must lie within 5 points of the range pynvml's two windows span. Reads only; never changes a
device setting.
"""
import json
import os
import shutil
import subprocess
import sys
import time

LOADS = {
    "idle": None,
    "bf16 GEMM": """
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for _ in range(300): c = a @ b
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(50): c = a @ b
    torch.cuda.synchronize()
""",
    "STREAM copy": """
import torch
a = torch.empty(1 << 28, device="cuda", dtype=torch.float32)
b = torch.empty_like(a)
for _ in range(300): b.copy_(a)
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(50): b.copy_(a)
    torch.cuda.synchronize()
""",
    "tiny kernels": """
import torch
x = torch.zeros(1, device="cuda")
for _ in range(1000): x.add_(1)
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(10000): x.add_(1)
    torch.cuda.synchronize()
""",
}

METRICS = ["graphics_active", "sm_active", "sm_occupancy", "tensor_active", "dram_active", "fp32_active",
           "fp16_active", "pcie_rx_rate", "pcie_tx_rate", "gpu_busy"]
GPM_IDS = {"graphics_active": 1, "sm_active": 2, "sm_occupancy": 3, "tensor_active": 5, "dram_active": 10,
           "fp32_active": 12, "fp16_active": 13}


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def first_gpu_uuid():
    out = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader", "-i", "0"],
                         capture_output=True, text=True, check=True).stdout
    return out.strip()


def hipstack(smi, uuid):
    out = subprocess.run([smi, "metric", "-g", uuid, "-m", ",".join(METRICS), "--window-ms", "1000", "--json"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError("hipstack-smi failed (%d): %s" % (out.returncode, out.stderr))
    doc = json.loads(out.stdout)
    values = {}
    for name, m in doc["devices"][0]["metrics"].items():
        values[name] = m["value"] if m["status"] == "ok" else "%s: %s" % (m["status"], m.get("detail", ""))
    return values


def pynvml_gpm(uuid):
    """The same GPM metrics through pynvml over the next 1 s; None where pynvml cannot."""
    try:
        import pynvml
    except ImportError:
        return None
    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid)
        first, second = pynvml.nvmlGpmSampleAlloc(), pynvml.nvmlGpmSampleAlloc()
        pynvml.nvmlGpmSampleGet(handle, first)
        time.sleep(1.0)  # the window itself, not a wait for readiness
        pynvml.nvmlGpmSampleGet(handle, second)
        request = pynvml.c_nvmlGpmMetricsGet_t()
        request.version = pynvml.NVML_GPM_METRICS_GET_VERSION
        request.sample1, request.sample2 = first, second
        request.numMetrics = len(GPM_IDS)
        for i, gpm_id in enumerate(GPM_IDS.values()):
            request.metrics[i].metricId = gpm_id
        pynvml.nvmlGpmMetricsGet(request)
        out = {name: request.metrics[i].value for i, name in enumerate(GPM_IDS)}
        pynvml.nvmlGpmSampleFree(first)
        pynvml.nvmlGpmSampleFree(second)
        return out
    finally:
        pynvml.nvmlShutdown()


def start_load(code):
    env = dict(os.environ, CUDA_DEVICE_ORDER="PCI_BUS_ID", CUDA_VISIBLE_DEVICES="0")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()  # blocks until the load is warm (or the child died)
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError("load did not start: %s %s" % (line, proc.stderr.read()))
    return proc


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    smi = sys.argv[1]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] if "--markdown" in sys.argv else None
    if shutil.which("nvidia-smi") is None:
        skip("no nvidia-smi")
    try:
        import torch  # noqa: F401
    except ImportError:
        skip("no torch to run the loads")
    uuid = first_gpu_uuid()
    results = {}
    for load, code in LOADS.items():
        proc = start_load(code) if code else None
        try:
            before = pynvml_gpm(uuid)
            ours = hipstack(smi, uuid)
            after = pynvml_gpm(uuid)
            theirs = None if before is None else {k: (min(before[k], after[k]), max(before[k], after[k])) for k in before}
        finally:
            if proc:
                proc.kill()
                proc.wait()
        results[load] = (ours, theirs)
        print(load, json.dumps(ours), "pynvml:", json.dumps(theirs), flush=True)

    failures = []

    def check(load, name, ok, want):
        value = results[load][0].get(name)
        if not isinstance(value, (int, float)) or not ok(value):
            failures.append("%s: %s = %r, expected %s" % (load, name, value, want))

    for name in ("graphics_active", "sm_active", "tensor_active", "dram_active"):
        check("idle", name, lambda v: v <= 5, "<= 5 %")
    check("bf16 GEMM", "tensor_active", lambda v: v >= 50, ">= 50 %")
    check("bf16 GEMM", "dram_active", lambda v: v < results["bf16 GEMM"][0].get("tensor_active", 0), "below tensor_active")
    check("STREAM copy", "dram_active", lambda v: v >= 60, ">= 60 %")
    check("STREAM copy", "tensor_active", lambda v: v <= 5, "<= 5 %")
    check("tiny kernels", "sm_active", lambda v: v <= 5, "<= 5 %")
    check("tiny kernels", "gpu_busy", lambda v: v >= 20, ">= 20 % (NVML's 'a kernel ran' share)")
    # pynvml's windows just before and just after ours bracket it, within 5 points.
    for load, (ours, theirs) in results.items():
        if theirs is None:
            continue
        for name, (low, high) in theirs.items():
            mine = ours.get(name)
            if not isinstance(mine, (int, float)) or not low - 5 <= mine <= high + 5:
                failures.append("%s: %s hipstack %r, pynvml's windows %.1f..%.1f" % (load, name, mine, low, high))

    if markdown:
        with open(markdown, "w") as f:
            f.write("| load | " + " | ".join(METRICS) + " |\n|" + "---|" * (len(METRICS) + 1) + "\n")
            for load, (ours, theirs) in results.items():
                cells = []
                for name in METRICS:
                    v = ours.get(name)
                    if isinstance(v, (int, float)) and name.startswith("pcie"):
                        cells.append("%.1f MB/s" % (v / 1e6))
                    elif isinstance(v, (int, float)):
                        cells.append("%.1f %%" % v)
                    else:
                        cells.append("n/a")
                f.write("| %s | %s |\n" % (load, " | ".join(cells)))
                if theirs:
                    f.write("| %s, pynvml GPM (window before .. after) | %s |\n" % (load, " | ".join(
                        "%.1f..%.1f %%" % theirs[n] if n in theirs else "" for n in METRICS)))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("OK: activity metrics move as the loads say")
    return 0


if __name__ == "__main__":
    sys.exit(main())
