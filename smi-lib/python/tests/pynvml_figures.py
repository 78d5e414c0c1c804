#!/usr/bin/env python3
"""A pynvml script as users write them, importing the module named on its command line: `pynvml`
(NVIDIA's) or `hipstack.pynvml`. Prints each GPU's figures as JSON, so two runs can be compared
(test_pynvml.py on the fake NVML; on a GPU machine against the real pynvml, docs/python.md).
  pynvml_figures.py MODULE"""
import importlib
import json
import sys

pynvml = importlib.import_module(sys.argv[1])


def text(value):  # older pynvml releases answer bytes
    return value.decode() if isinstance(value, bytes) else value


def memory(h):
    m = pynvml.nvmlDeviceGetMemoryInfo(h)
    return {"total": m.total, "free": m.free, "used": m.used}


def utilization(h):
    u = pynvml.nvmlDeviceGetUtilizationRates(h)
    return {"gpu": u.gpu, "memory": u.memory}


def processes(h):
    return [(p.pid, p.usedGpuMemory) for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)]


pynvml.nvmlInit()
out = []
for i in range(pynvml.nvmlDeviceGetCount()):
    h = pynvml.nvmlDeviceGetHandleByIndex(i)
    gpu = {"name": text(pynvml.nvmlDeviceGetName(h)), "uuid": text(pynvml.nvmlDeviceGetUUID(h))}
    for key, call in (("memory", memory), ("utilization", utilization), ("processes", processes),
                      ("power_mw", pynvml.nvmlDeviceGetPowerUsage),
                      ("temperature", lambda h: pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU))):
        try:
            gpu[key] = call(h)
        except pynvml.NVMLError as e:
            gpu[key] = {"error": e.value, "text": str(e)}
    out.append(gpu)
pynvml.nvmlShutdown()
print(json.dumps(out))
