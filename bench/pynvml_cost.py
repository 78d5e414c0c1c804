#!/usr/bin/env python3
"""Per-call cost of hipstack.pynvml against NVIDIA's pynvml on the same GPU, same process, in
alternating blocks of 100 calls (these machines are noisy; blocks, not single calls, because
hipstack's read worker keeps looking for the next call for 50 us after each, which would slow
NVIDIA's call made right after it): the three calls a monitoring loop makes most (power,
temperature, utilisation), each called RUNS times; prints the median cost of each call for both
modules and their ratio (issue 41's target: at most 2x). Then a poller's round: the first call
after a 1 ms pause (hipstack's read worker asleep by then, so it is woken), median of RUNS / 100.

Usage: bench/pynvml_cost.py [RUNS]   (HIPSTACK_SMI_LIBRARY and PYTHONPATH name hipstack's package)
"""
import statistics
import sys
import time

import hipstack.pynvml as ours
import pynvml as theirs


def calls(n):
    n.nvmlInit()
    h = n.nvmlDeviceGetHandleByIndex(0)
    return {"nvmlDeviceGetPowerUsage": lambda: n.nvmlDeviceGetPowerUsage(h),
            "nvmlDeviceGetTemperature": lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
            "nvmlDeviceGetUtilizationRates": lambda: n.nvmlDeviceGetUtilizationRates(h)}


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    mine, real = calls(ours), calls(theirs)
    for name in mine:
        a, b = [], []
        for _ in range(max(1, runs // 100)):
            for call, times in ((real[name], b), (mine[name], a)):
                time.sleep(0.001)  # the worker stops looking (50 us) before the other module's block
                for _ in range(100):
                    t = time.perf_counter_ns()
                    call()
                    times.append(time.perf_counter_ns() - t)
        ma, mb = statistics.median(a) / 1000, statistics.median(b) / 1000
        print(f"{name:32} pynvml {mb:8.1f} us   hipstack.pynvml {ma:8.1f} us   ratio {ma / mb:6.1f}")
    a, b = [], []
    for _ in range(max(1, runs // 100)):
        for call, times in ((real["nvmlDeviceGetPowerUsage"], b), (mine["nvmlDeviceGetPowerUsage"], a)):
            time.sleep(0.001)
            t = time.perf_counter_ns()
            call()
            times.append(time.perf_counter_ns() - t)
    ma, mb = statistics.median(a) / 1000, statistics.median(b) / 1000
    print(f"{'first call after 1 ms':32} pynvml {mb:8.1f} us   hipstack.pynvml {ma:8.1f} us   ratio {ma / mb:6.1f}")


if __name__ == "__main__":
    main()
