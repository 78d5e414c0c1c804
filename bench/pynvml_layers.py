#!/usr/bin/env python3
"""Where a hipstack.pynvml call's time goes, layer by layer, against NVIDIA's pynvml on the same GPU
in the same process (these machines are noisy: each figure is the best of REPEATS rounds of N calls,
the rounds of all layers interleaved). For GPU 0's power, in microseconds a call:
  - NVIDIA's pynvml nvmlDeviceGetPowerUsage (the peer),
  - hipstack_smi_read_values through ctypes with nothing around it, with the read deadline (the
    default) and without it (read_deadline_ms=NO_READ_DEADLINE),
  - Query.value and Query.values (hipstack's Python package), with the deadline,
  - hipstack.pynvml nvmlDeviceGetPowerUsage,
and each one's ratio to the peer.

Usage: bench/pynvml_layers.py [N [REPEATS]]   (default 20000 5; HIPSTACK_SMI_LIBRARY and PYTHONPATH
name hipstack's package, PYTHONPATH NVIDIA's pynvml)
"""
import sys
import timeit

import hipstack
import hipstack.pynvml as ours
import pynvml as theirs


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    theirs.nvmlInit()
    peer_handle = theirs.nvmlDeviceGetHandleByIndex(0)
    ours.nvmlInit()
    our_handle = ours.nvmlDeviceGetHandleByIndex(0)
    bounded = hipstack.System()
    unbounded = hipstack.System(read_deadline_ms=hipstack.NO_READ_DEADLINE)
    query = bounded.query(["power_average"])
    raw = unbounded.query(["power_average"])

    def bare(q, system):
        out = q._value_array()
        read_values, ids, count = q._read_values, q._ids, q._count
        return lambda: read_values(system._handle, 0, ids, count, out)

    layers = [("NVIDIA pynvml nvmlDeviceGetPowerUsage", lambda: theirs.nvmlDeviceGetPowerUsage(peer_handle)),
              ("read_values via ctypes, deadline", bare(query, bounded)),
              ("read_values via ctypes, no deadline", bare(raw, unbounded)),
              ("Query.value", lambda: query.value(0)),
              ("Query.values", lambda: query.values(0)),
              ("hipstack.pynvml nvmlDeviceGetPowerUsage", lambda: ours.nvmlDeviceGetPowerUsage(our_handle))]
    best = [float("inf")] * len(layers)
    for _ in range(repeats):
        for i, (_, call) in enumerate(layers):
            call()  # the first call after another layer's wakes nothing up in the figure
            best[i] = min(best[i], timeit.timeit(call, number=n) / n * 1e6)
    for (name, _), us in zip(layers, best):
        print("%-42s %7.2f us   ratio %4.1f" % (name, us, us / best[0]))
    bounded.close()
    unbounded.close()


if __name__ == "__main__":
    main()
