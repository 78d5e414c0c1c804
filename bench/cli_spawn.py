#!/usr/bin/env python3
"""The CLI against the spawn floor (issue 44, docs/performance.md): medians of N runs from Python's
subprocess of /bin/true, `hipstack-smi version` and `hipstack-smi metric --json` on a one-GPU live
tree (a capture), side by side in one run, with their ratios to /bin/true. The runs interleave, so
a noisy neighbour slows all three alike.

Usage: bench/cli_spawn.py HIPSTACK_SMI [CAPTURE_SYS] [N]
  CAPTURE_SYS: a one-GPU sysfs tree (default: captures/real/lact/rx6900xt/sys in this checkout).
The node's daemon is not asked (HIPSTACK_SMID_SOCKET points nowhere): this is the CLI reading alone.
"""
import os
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
smi = os.path.abspath(sys.argv[1])
capture = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else os.path.join(here, "..", "captures", "real", "lact", "rx6900xt", "sys")
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
env = dict(os.environ, HIPSTACK_SMID_SOCKET="/nonexistent/smid.sock")
commands = {
    "/bin/true": ["/bin/true"],
    "hipstack-smi version": [smi, "version"],
    "hipstack-smi metric --json (1 GPU)": [smi, "--sysfs-root", capture, "metric", "--json"],
}
for argv in commands.values():  # each must work, or its time means nothing
    r = subprocess.run(argv, capture_output=True, env=env, timeout=60)
    if r.returncode != 0:
        sys.exit("%s exited %d: %s" % (" ".join(argv), r.returncode, r.stderr.decode(errors="replace")))
times = {name: [] for name in commands}
for _ in range(runs):
    for name, argv in commands.items():
        # No timeout here: with one, Python waits by polling waitpid after sleeps of 0.5, 1, 2, 4 ms,
        # so every time came out as one of those steps (a 1.8 ms run measured 3.4 ms). A blocking
        # wait measures the run itself; the runs above, with their timeout, showed each one ends.
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times[name].append((time.perf_counter() - start) * 1000)
floor = statistics.median(times["/bin/true"])
print("%-40s %12s %8s" % ("median of %d runs" % runs, "ms", "x true"))
for name, values in times.items():
    median = statistics.median(values)
    print("%-40s %12.2f %8.1f" % (name, median, median / floor))
