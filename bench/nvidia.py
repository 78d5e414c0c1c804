#!/usr/bin/env python3
"""hipstack-smi against nvidia-smi on an NVIDIA GPU machine: cold-process wall time of the same
live query, side by side, alternating runs (the machine is shared and noisy), and the library's
per-GPU sample time (bench_sample).

Usage: bench/nvidia.py HIPSTACK_SMI BENCH_SAMPLE [RUNS]
"""
import statistics
import subprocess
import sys
import time

# The live fields hipstack-smi metric --json reports for an NVIDIA GPU, as nvidia-smi names them,
# and the same metrics by hipstack's names (so both tools answer the same question).
METRICS = ("temperature_junction,temperature_memory,power_average,power_current,clock_sclk,clock_sm,clock_mclk,"
           "clock_video,gpu_busy,memory_busy,encoder_busy,decoder_busy,vram_used,vram_free,vram_reserved,fan_pwm,"
           "performance_state,throttle_status,pcie_speed,pcie_width,ecc_corrected_volatile,ecc_uncorrected_volatile,"
           "ecc_corrected_aggregate,ecc_uncorrected_aggregate,retired_pages,remapped_rows,remapped_rows_pending,"
           "remapped_rows_failed")
FIELDS = ("temperature.gpu,temperature.memory,power.draw.average,power.draw.instant,total_energy_consumption,"
          "clocks.gr,clocks.sm,clocks.mem,clocks.video,utilization.gpu,utilization.memory,"
          "utilization.encoder,utilization.decoder,memory.used,memory.free,memory.reserved,fan.speed,pstate,"
          "clocks_event_reasons.active,pcie.link.gen.current,pcie.link.width.current,"
          "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
          "ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,"
          "retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,"
          "remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure")


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def accepted(fields):
    """The fields this nvidia-smi knows (names change between driver releases)."""
    keep = []
    for field in fields.split(","):
        probe = subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv"], capture_output=True)
        if probe.returncode == 0:
            keep.append(field)
        else:
            print(f"(nvidia-smi does not know {field}: left out)")
    return keep


def main():
    smi, sampler = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    fields = accepted(FIELDS)
    ours_cmd = [smi, "metric", "--json", "-m", METRICS]
    everything_cmd = [smi, "metric", "--json"]
    theirs_cmd = ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv"]
    for cmd in (ours_cmd, theirs_cmd):  # warm the page cache
        wall(cmd)
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(wall(ours_cmd))
        theirs.append(wall(theirs_cmd))
    everything = [wall(everything_cmd) for _ in range(runs)]
    o, t = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
    print(f"cold process, median of {runs} alternating runs:")
    print(f"  hipstack-smi metric --json -m <the same {len(METRICS.split(','))} metrics> {o:8.1f} ms")
    print(f"  hipstack-smi metric --json (every live metric, energy included) {statistics.median(everything) * 1e3:8.1f} ms")
    print(f"  nvidia-smi --query-gpu=<{len(fields)} fields>  {t:8.1f} ms")
    print(f"  ratio (nvidia-smi / hipstack-smi)   {t / o:8.2f}x")
    print(subprocess.run([sampler, "200"], capture_output=True, text=True).stdout)


if __name__ == "__main__":
    main()
