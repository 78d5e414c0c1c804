#!/usr/bin/env python3
"""Side by side on one GPU, in one run: hipstack's kernel programs against torch doing the same work.

  stream copy and triad  vs  torch's device-to-device copy_ of 1 GiB (read + write counted)
  transfer pinned h2d/d2h vs  torch's pinned copy_(non_blocking=True), same size
  gemm fp32 and bf16      vs  torch.mm of the same shapes, dtypes and value distribution (no TF32)

torch is timed like our programs: a warm-up, then best (and mean) of 20, each call between two CUDA
events. Prints a table with both figures, the ratio ours/torch, the share of the device's peak (memory
bandwidth from stream's JSON, the PCIe link's rate for transfers, the published dense peak for GEMM),
and PASS/FAIL against the targets: stream copy and triad >= 95% of torch's copy, pinned transfers >=
95% of torch's, GEMM >= 90% of torch.mm. The tiled GEMM fallback is measured too, without a target.

Usage: compare_with_torch.py DIR [--device N] [--gemm-size N] [--json]
  DIR holds the programs stream, transfer and gemm. Exit 0 all targets met, 1 one missed or a program
  failed, 2 bad arguments, 77 no GPU.
"""
import argparse
import json
import os
import subprocess
import sys

TARGETS = {"copy": 0.95, "triad": 0.95, "transfer": 0.95, "gemm": 0.90}

# Published dense peaks in TFLOPS (fp32 without tensor cores, bf16 tensor cores without sparsity), by
# a substring of the device name, first match wins. Sources: NVIDIA H100 Tensor Core GPU datasheet
# (SXM 67 / 1979 with sparsity, PCIe 51 / 1513, NVL 60 / 1671) and NVIDIA H200 datasheet (H200 SXM the
# same compute as H100 SXM, H200 NVL as H100 NVL); the dense bf16 figure is half the sparse one.
PEAK_TFLOPS = [
    ("H100 PCIe", {"fp32": 51.0, "bf16": 756.0}),
    ("H100 NVL", {"fp32": 60.0, "bf16": 835.0}),
    ("H200 NVL", {"fp32": 60.0, "bf16": 835.0}),
    ("H100", {"fp32": 67.0, "bf16": 989.0}),
    ("H200", {"fp32": 67.0, "bf16": 989.0}),
]


def fail(message, code):
    print(message, file=sys.stderr)
    sys.exit(code)


def run_program(directory, name, *args):
    """Runs one of our programs with --json; returns its object (77 from it means no GPU)."""
    path = os.path.join(directory, name)
    if not os.access(path, os.X_OK):
        fail(f"no program {path}", 2)
    done = subprocess.run([path, *args, "--json"], capture_output=True, text=True, timeout=400)
    sys.stderr.write(done.stderr)
    if done.returncode == 77:
        fail(f"{name}: no GPU", 77)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        fail(f"{name} exited {done.returncode} without JSON:\n{done.stdout}", 1)
    result = json.loads(lines[-1])
    result["exit_code"] = done.returncode
    return result


def time_torch(torch, fn, repeats=20, warmup=3):
    """(best ms, mean ms) of fn over repeats, each between two CUDA events, after warmup calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return min(times), sum(times) / len(times)


def pcie_link(torch, device):
    """The GPU's PCIe link from sysfs: speed (GT/s), width, and the data rate per direction in GB/s after
    the line encoding (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s). None where sysfs has no link."""
    props = torch.cuda.get_device_properties(device)
    bdf = None
    if hasattr(props, "pci_bus_id") and hasattr(props, "pci_domain_id"):
        bdf = f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    else:
        try:
            out = subprocess.run(["nvidia-smi", "-i", str(device), "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
            domain, rest = out.split(":", 1)  # 00000000:19:00.0 -> 0000:19:00.0
            bdf = f"{domain[-4:]}:{rest}".lower()
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
    base = f"/sys/bus/pci/devices/{bdf}"

    def read(name):
        try:
            with open(f"{base}/{name}") as f:
                return f.read().strip()
        except OSError:
            return None

    def rate(speed, width):
        try:
            gts, lanes = float(speed.split()[0]), int(width)
        except (AttributeError, ValueError, IndexError):
            return None, None, None
        efficiency = 8 / 10 if gts <= 5.0 else 128 / 130
        return gts, lanes, gts * efficiency / 8 * lanes

    gts, lanes, gbps = rate(read("current_link_speed"), read("current_link_width"))
    max_gts, max_lanes, max_gbps = rate(read("max_link_speed"), read("max_link_width"))
    if gbps is None:
        return None
    return {"bdf": bdf, "speed_gts": gts, "width": lanes, "gbps": round(gbps, 2),
            "max_speed_gts": max_gts, "max_width": max_lanes, "max_gbps": round(max_gbps, 2) if max_gbps else None}


class Comparison:
    """The rows of the comparison, and whether our programs' own checks all passed."""

    def __init__(self):
        self.rows = []
        self.programs_ok = True

    def ran(self, result):
        """A program's JSON result, counted against programs_ok unless it exited 0 and passed."""
        self.programs_ok &= result["exit_code"] == 0 and result["result"] == "pass"
        return result

    def row(self, kind, what, unit, ours, theirs, peak=None, target=None):
        ratio = ours / theirs if theirs else None
        self.rows.append({"kind": kind, "what": what, "unit": unit, "ours": round(ours, 2), "torch": round(theirs, 2),
                          "ratio": round(ratio, 4) if ratio else None, "peak": peak,
                          "ours_of_peak": round(ours / peak, 4) if peak else None,
                          "torch_of_peak": round(theirs / peak, 4) if peak else None,
                          "target": target, "pass": None if target is None else bool(ratio and ratio >= target)})


def compare_memory(torch, dev, args, cmp):
    """stream's copy and triad against torch's device-to-device copy_; stream's result."""
    stream = cmp.ran(run_program(args.directory, "stream", "--device", str(args.device)))
    kernels = {k["kernel"]: k for k in stream["kernels"]}
    peak_mem = stream["device"]["peak_memory_gbps"]
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    best, _ = time_torch(torch, lambda: dst.copy_(src))
    torch_d2d = 2 * n / (best * 1e-3) / 1e9
    del src, dst
    cmp.row("copy", "stream copy vs torch d2d copy_", "GB/s", kernels["copy"]["best_gbps"], torch_d2d, peak_mem,
            TARGETS["copy"])
    cmp.row("triad", "stream triad vs torch d2d copy_", "GB/s", kernels["triad"]["best_gbps"], torch_d2d, peak_mem,
            TARGETS["triad"])
    return stream


def compare_transfers(torch, dev, args, cmp):
    """Pinned host<->device copies, the same size as transfer's; the PCIe link read right after."""
    transfer = cmp.ran(run_program(args.directory, "transfer", "--device", str(args.device)))
    m = transfer["bytes"]
    host = torch.empty(m, dtype=torch.uint8, pin_memory=True)
    device_buffer = torch.empty(m, dtype=torch.uint8, device=dev)
    h2d, _ = time_torch(torch, lambda: device_buffer.copy_(host, non_blocking=True))
    d2h, _ = time_torch(torch, lambda: host.copy_(device_buffer, non_blocking=True))
    link = pcie_link(torch, args.device)  # read right after the copies, before an idle link slows down
    del host, device_buffer
    ours = {(c["memory"], c["direction"]): c["best_gbps"] for c in transfer["copies"]}
    link_gbps = link["gbps"] if link else None
    cmp.row("transfer", "transfer pinned h2d vs torch copy_", "GB/s", ours[("pinned", "h2d")], m / (h2d * 1e-3) / 1e9,
            link_gbps, TARGETS["transfer"])
    cmp.row("transfer", "transfer pinned d2h vs torch copy_", "GB/s", ours[("pinned", "d2h")], m / (d2h * 1e-3) / 1e9,
            link_gbps, TARGETS["transfer"])
    torch.cuda.empty_cache()
    return link


def compare_gemm(torch, dev, args, cmp):
    """gemm (vendor BLAS, and the tiled kernel) against torch.mm on the values k/16, k in [-16, 16], the
    distribution gemm uses, so the data are alike. The runs that used a vendor BLAS."""
    size = args.gemm_size
    flop = 2.0 * size ** 3
    name = torch.cuda.get_device_name(dev)
    peaks = next((p for key, p in PEAK_TFLOPS if key in name), None)
    d = ["--device", str(args.device)]
    gemm = cmp.ran(run_program(args.directory, "gemm", "--precision", "fp32,bf16", "--size", str(size), *d))
    tiled = cmp.ran(run_program(args.directory, "gemm", "--backend", "tiled", "--precision", "fp32,bf16", "--size",
                                str(size), *d))
    torch_tflops = {}
    for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a = (torch.randint(-16, 17, (size, size), device=dev) / 16).to(dtype)
        b = (torch.randint(-16, 17, (size, size), device=dev) / 16).to(dtype)
        c = torch.empty(size, size, dtype=dtype, device=dev)
        best, _ = time_torch(torch, lambda: torch.mm(a, b, out=c))
        torch_tflops[precision] = flop / (best * 1e-3) / 1e12
        del a, b, c
        torch.cuda.empty_cache()
    for result, kind in ((gemm, "gemm"), (tiled, "gemm-tiled")):
        for r in result["runs"]:
            label = f"gemm {r['precision']} ({r['backend']}) vs torch.mm"
            cmp.row(kind, label, "TFLOPS", r["tflops"], torch_tflops[r["precision"]],
                    peaks[r["precision"]] if peaks else None, TARGETS["gemm"] if kind == "gemm" else None)
    return [r for r in gemm["runs"] if r["backend"] != "tiled"]


def print_report(torch, name, stream, link, blas, cmp, ok):
    print(f"{name}: ours against torch {torch.__version__}; best of each (ours: stream 50, transfer 10, gemm 20; "
          f"torch 20)")
    print(f"peak memory bandwidth {stream['device']['peak_memory_gbps']:.1f} GB/s (stream's figure); ", end="")
    if link:
        print(f"PCIe {link['bdf']}: {link['speed_gts']:g} GT/s x{link['width']} = {link['gbps']:.2f} GB/s per "
              f"direction (max {link['max_speed_gts']} GT/s x{link['max_width']})")
    else:
        print("PCIe link: not readable from sysfs")
    if blas:
        print(f"gemm library: {blas[0]['library']}")
    else:
        print("gemm: no vendor BLAS loaded, so its figures are the tiled kernel's: FAIL")
    print(f"{'':38} {'ours':>9} {'torch':>9} {'ours/torch':>10} {'ours %pk':>8} {'torch %pk':>9} "
          f"{'target':>6}  verdict")
    for r in cmp.rows:
        pct = lambda v: f"{100 * v:7.1f}%" if v is not None else f"{'-':>8}"
        target = f"{100 * r['target']:5.0f}%" if r["target"] else f"{'-':>6}"
        verdict = "-" if r["pass"] is None else "PASS" if r["pass"] else "FAIL"
        print(f"{r['what']:38} {r['ours']:9.2f} {r['torch']:9.2f} {r['ratio']:10.3f} {pct(r['ours_of_peak'])} "
              f"{pct(r['torch_of_peak']):>9} {target}  {verdict}   {r['unit']}")
    print(f"our programs' own checks: {'PASS' if cmp.programs_ok else 'FAIL'}; overall: {'PASS' if ok else 'FAIL'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="folder holding stream, transfer and gemm")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--gemm-size", type=int, default=8192)
    parser.add_argument("--json", action="store_true")
    try:
        args = parser.parse_args()
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    if args.gemm_size < 1 or args.device < 0:
        fail("--gemm-size must be >= 1 and --device >= 0", 2)
    import torch  # after the arguments, so a bad call fails fast
    if not torch.cuda.is_available() or args.device >= torch.cuda.device_count():
        print("SKIP: torch sees no GPU", args.device)
        sys.exit(77)
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    # torch.matmul's fp32 default is real fp32; make sure of it (no TF32).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    cmp = Comparison()
    stream = compare_memory(torch, dev, args, cmp)
    link = compare_transfers(torch, dev, args, cmp)
    blas = compare_gemm(torch, dev, args, cmp)
    verdicts = [r["pass"] for r in cmp.rows if r["pass"] is not None]
    ok = cmp.programs_ok and all(verdicts) and bool(blas)
    if args.json:
        print(json.dumps({"test": "compare_with_torch", "device": stream["device"], "torch": torch.__version__,
                          "pcie": link, "gemm_library": blas[0]["library"] if blas else "",
                          "programs_verified": cmp.programs_ok, "rows": cmp.rows, "result": "pass" if ok else "fail"}))
    else:
        print_report(torch, torch.cuda.get_device_name(dev), stream, link, blas, cmp, ok)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
