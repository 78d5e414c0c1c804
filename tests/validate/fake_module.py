#!/usr/bin/env python3
"""A stand-in for hipstack-validate's kernel programs, for testing the orchestrator without a GPU.

Installed in a test folder under each module's name (vector_add, stream, ...): the name says which
module's JSON to print. $FAKE_SCENARIO names a JSON file mapping a module name to how it behaves:
  {"stream": {"mode": "ok", "copy": 4500}, "memtest": {"mode": "fail"}, "gemm": {"mode": "crash"}}
"stderr_bytes" (a latin-1 string) is written to stderr first, byte for byte.
modes: ok (the default), fail (the module's own check fails: exit 1), crash (SIGSEGV), hang (sleeps;
with --timeout), stubborn (a hang that ignores SIGTERM), garbage (not JSON), overflow (a number beyond a double), malformed (JSON without the fields), nogpu (exit 77). Every call
is appended to $FAKE_CALLS as one JSON line: the module, its arguments, its pid and the file
descriptors it was started with, and its CUDA_/HIP_VISIBLE_DEVICES. The fake p2p measures every pair of
the GPUs those variables let it see (two without them), or the scenario's "pairs": [[src, dst], ...].
"""
import json, os, signal, sys, time


def open_fds():
    """The descriptors this process was started with, beyond the ones Python itself opens: the
    listing's own descriptor is closed again by the time it is looked up."""
    found = []
    for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
        try:
            found.append([fd, os.readlink(f"/proc/self/fd/{fd}")])
        except OSError:
            pass
    return found


FDS_AT_START = open_fds()
VISIBILITY = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
scenario = {}
if os.environ.get("FAKE_SCENARIO"):
    with open(os.environ["FAKE_SCENARIO"]) as f:
        scenario = json.load(f).get(name, {})
if os.environ.get("FAKE_CALLS"):
    with open(os.environ["FAKE_CALLS"], "a") as f:
        f.write(json.dumps({"module": name, "args": args, "pid": os.getpid(), "fds": FDS_AT_START,
                            "env": {k: os.environ.get(k) for k in VISIBILITY}}) + "\n")
mode = scenario.get("mode", "ok")
if "stderr_bytes" in scenario:  # bytes 0-255 as a latin-1 string: lets a scenario write non-UTF-8
    sys.stderr.buffer.write(scenario["stderr_bytes"].encode("latin-1"))
    sys.stderr.flush()
device = int(args[args.index("--device") + 1]) if "--device" in args else 0
dev = {"index": device, "name": "fake", "arch": "gfx942", "compute_units": 304, "memory_bytes": 206158430208,
       "memory_clock_khz": 1300000, "memory_bus_bits": 8192, "peak_memory_gbps": 5324.8}

if mode == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "stubborn":  # a hang that SIGTERM cannot end: only SIGKILL does
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    mode = "hang"
if mode == "hang":
    time.sleep(3600)
if mode == "garbage":
    print("this is not JSON {")
    sys.exit(0)
if mode == "overflow":  # valid JSON syntax, but a number no double holds
    print('{"test": "%s", "result": "pass", "kernel_ms": 1e999}' % name)
    sys.exit(0)
if mode == "nogpu":
    print("SKIP: needs two or more GPUs (1 present)" if name == "p2p" else "SKIP: no GPU")
    sys.exit(77)
ok = mode != "fail"
get = lambda key, default: scenario.get(key, default)
if mode == "malformed":
    out = {"test": name, "result": "pass"}
elif name == "vector_add":
    out = {"test": name, "device": dev, "elements": 16777216, "kernel_ms": 0.25, "planted_error": False,
           "wrong_elements": 0 if ok else 1, "first_wrong": -1 if ok else 42}
elif name == "stream":
    out = {"test": name, "device": dev, "kernels": [
        {"kernel": k, "best_gbps": get(k, 4500.0), "mean_gbps": get(k, 4500.0) * 0.99} for k in
        ("copy", "mul", "add", "triad", "dot")]}
elif name == "transfer":
    out = {"test": name, "device": dev, "copies": [
        {"memory": m, "direction": d, "best_gbps": get(f"{m}_{d}", 55.0 if m == "pinned" else 12.0),
         "mean_gbps": 50.0, "verified": get("verified", ok)} for m in ("pinned", "pageable") for d in ("h2d", "d2h")]}
elif name == "memtest":
    pats = [{"pattern": p, "errors": 0 if ok or p != "random" else 3, "seconds": 0.5, "gbps": 3000.0}
            for p in ("walking-ones", "moving-inversions", "random")]
    out = {"test": name, "device": dev, "bytes_tested": 10737418240, "passes": 1, "patterns": pats,
           "errors": sum(p["errors"] for p in pats), "first_errors": []}
elif name == "gemm":
    out = {"test": name, "device": dev, "size": 8192, "repeats": 20, "runs": [
        {"precision": p, "backend": get("backend", "rocblas"), "library": "/opt/rocm/lib/librocblas.so.4",
         "m": 8192, "n": 8192, "k": 8192, "best_ms": 1.0, "mean_ms": 1.0, "tflops": get(p, 700.0 if p == "bf16" else 100.0),
         "mean_tflops": 1.0, "max_relative_error": 1e-6, "verified": get("verified", ok)} for p in ("fp32", "bf16")]}
elif name == "stress":
    out = {"test": name, "device": dev, "seconds": 1.0, "launches": 10, "tflops": get("tflops", 60.0),
           "errors": 0 if ok else 5}
elif name == "p2p":  # every ordered pair of the GPUs it can see, numbered 0, 1, ... as a runtime would
    visible = next((os.environ[k] for k in VISIBILITY if os.environ.get(k)), "0,1").split(",")
    out = {"test": name, "devices": [dict(dev, index=i) for i in range(len(visible))], "bytes": 268435456,
           "repeats": 10, "pairs": [
        {"src": s, "dst": d, "peer_access": get("peer_access", True), "unidirectional_gbps": get("gbps", 50.0),
         "bidirectional_gbps": 90.0, "verified": ok}
        for s, d in get("pairs", [(s, d) for s in range(len(visible)) for d in range(len(visible)) if s != d])]}
else:
    sys.exit(f"fake_module: unknown module {name}")
out["result"] = "pass" if ok else "fail"
print(json.dumps(out))
sys.exit(0 if ok else 1)
