#!/usr/bin/env python3
"""hipstack-smi --nvidia-smi against nvidia-smi on an NVIDIA GPU machine: cold-process wall time of
the same --query-gpu, alternating runs (the machine is shared and noisy), median of each, and their
ratio. Two queries: the 7 fields of the compat example and every field nvidia-smi lists.

Usage: bench/nvidia_smi_query.py HIPSTACK_SMI [RUNS]
"""
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELD_LIST = os.path.join(HERE, "..", "captures", "recorded", "nvidia-smi-580-h100", "query-gpu-fields.tsv")
SEVEN = "index,name,memory.used,memory.total,temperature.gpu,power.draw,utilization.gpu"


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    smi = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    every = ",".join(line.split("\t")[0] for line in open(FIELD_LIST) if not line.startswith("#"))
    for label, fields in (("7 fields", SEVEN), ("all 214 fields", every)):
        theirs, ours = [], []
        for _ in range(runs):
            theirs.append(wall(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"]))
            ours.append(wall([smi, "--nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"]))
        t, o = statistics.median(theirs) * 1000, statistics.median(ours) * 1000
        print(f"{label}: nvidia-smi {t:.1f} ms, hipstack-smi --nvidia-smi {o:.1f} ms, ratio {o / t:.2f} "
              f"(medians of {runs} alternating runs)")


if __name__ == "__main__":
    main()
