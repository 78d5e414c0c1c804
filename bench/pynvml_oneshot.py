#!/usr/bin/env python3
"""A one-shot pynvml script's whole run, as a cron job or a textfile collector runs it (a fresh
interpreter: start, nvmlInit, power, temperature, utilisation and memory of every GPU, nvmlShutdown):
median and fastest wall time of RUNS runs each of NVIDIA's pynvml and hipstack.pynvml, alternating
(these machines are noisy), beside an empty `python3 -c pass`.

Usage: bench/pynvml_oneshot.py HIPSTACK_PYTHON_DIR [RUNS]   (default 15; PYTHONPATH names NVIDIA's
pynvml, HIPSTACK_SMI_LIBRARY hipstack's library)
"""
import statistics
import subprocess
import sys
import time

ROUND = ("import sys; sys.path.insert(0, sys.argv[1]); import {module} as n; n.nvmlInit(); "
         "[(n.nvmlDeviceGetPowerUsage(h), n.nvmlDeviceGetTemperature(h, 0), n.nvmlDeviceGetUtilizationRates(h), "
         "n.nvmlDeviceGetMemoryInfo(h)) for h in [n.nvmlDeviceGetHandleByIndex(i) for i in range(n.nvmlDeviceGetCount())]]; "
         "n.nvmlShutdown()")


def timed(args) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True)
    return time.perf_counter() - start


def main():
    package = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    times = {"pynvml": [], "hipstack.pynvml": [], "python3 -c pass": []}
    for _ in range(runs):
        for module in ("pynvml", "hipstack.pynvml"):
            times[module].append(timed([sys.executable, "-c", ROUND.format(module=module), package]))
        times["python3 -c pass"].append(timed([sys.executable, "-c", "pass"]))
    for name, seconds in times.items():
        print("%-16s median %.1f ms  fastest %.1f ms" % (name, statistics.median(seconds) * 1e3, min(seconds) * 1e3))


if __name__ == "__main__":
    main()
