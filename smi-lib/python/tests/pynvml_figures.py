#!/usr/bin/env python3
"""A pynvml script as users write them, importing the module named on its command line: `pynvml`
(NVIDIA's) or `hipstack.pynvml`. Calls every per-GPU call hipstack.pynvml answers and prints each
GPU's results as JSON (a structure as its fields, an error as {"error": code}), so two runs can be
compared (test_pynvml.py on the fake NVML; on a GPU machine against the real pynvml, docs/python.md).
  pynvml_figures.py MODULE"""
import importlib
import json
import sys

pynvml = importlib.import_module(sys.argv[1])
N = pynvml


def plain(value):
    """JSON-able: bytes as text, structures and objects as their fields, sequences as lists."""
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "_fields_"):
        return {f[0]: plain(getattr(value, f[0])) for f in value._fields_}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: plain(v) for k, v in vars(value).items()}
    return value


def processes(call):
    return lambda h: sorted([p.pid, p.usedGpuMemory] for p in call(h))


CALLS = {
    "name": N.nvmlDeviceGetName, "uuid": N.nvmlDeviceGetUUID, "serial": N.nvmlDeviceGetSerial,
    "index": N.nvmlDeviceGetIndex, "minor_number": N.nvmlDeviceGetMinorNumber, "vbios": N.nvmlDeviceGetVbiosVersion,
    "pci": lambda h: {k: v for k, v in plain(N.nvmlDeviceGetPciInfo(h)).items() if k != "busIdLegacy"},
    "memory": N.nvmlDeviceGetMemoryInfo,
    "memory_v2": lambda h: {k: v for k, v in plain(N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)).items()
                            if k != "version"},
    "bar1": N.nvmlDeviceGetBAR1MemoryInfo, "utilization": N.nvmlDeviceGetUtilizationRates,
    "encoder": lambda h: N.nvmlDeviceGetEncoderUtilization(h)[0],
    "decoder": lambda h: N.nvmlDeviceGetDecoderUtilization(h)[0],
    "fan": N.nvmlDeviceGetFanSpeed, "temperature": lambda h: N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU),
    "power_mw": N.nvmlDeviceGetPowerUsage, "enforced_limit": N.nvmlDeviceGetEnforcedPowerLimit,
    "management_limit": N.nvmlDeviceGetPowerManagementLimit,
    "default_limit": N.nvmlDeviceGetPowerManagementDefaultLimit,
    "limit_constraints": N.nvmlDeviceGetPowerManagementLimitConstraints,
    "energy_mj": N.nvmlDeviceGetTotalEnergyConsumption,
    "clocks": lambda h: [N.nvmlDeviceGetClockInfo(h, t) for t in
                         (N.NVML_CLOCK_GRAPHICS, N.NVML_CLOCK_SM, N.NVML_CLOCK_MEM, N.NVML_CLOCK_VIDEO)],
    "max_clocks": lambda h: [N.nvmlDeviceGetMaxClockInfo(h, t) for t in
                             (N.NVML_CLOCK_GRAPHICS, N.NVML_CLOCK_SM, N.NVML_CLOCK_MEM, N.NVML_CLOCK_VIDEO)],
    "pcie_generation": N.nvmlDeviceGetCurrPcieLinkGeneration, "pcie_generation_max": N.nvmlDeviceGetMaxPcieLinkGeneration,
    "pcie_width": N.nvmlDeviceGetCurrPcieLinkWidth, "pcie_width_max": N.nvmlDeviceGetMaxPcieLinkWidth,
    "performance_state": N.nvmlDeviceGetPerformanceState, "persistence_mode": N.nvmlDeviceGetPersistenceMode,
    "display_active": N.nvmlDeviceGetDisplayActive,
    "compute_mode": N.nvmlDeviceGetComputeMode, "mig_mode": N.nvmlDeviceGetMigMode, "ecc_mode": N.nvmlDeviceGetEccMode,
    "compute_capability": N.nvmlDeviceGetCudaComputeCapability,
    "ecc_errors": lambda h: [N.nvmlDeviceGetTotalEccErrors(h, e, c) for e in
                             (N.NVML_MEMORY_ERROR_TYPE_CORRECTED, N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)
                             for c in (N.NVML_VOLATILE_ECC, N.NVML_AGGREGATE_ECC)],
    "remapped_rows": N.nvmlDeviceGetRemappedRows,
    "clock_event_reasons": N.nvmlDeviceGetCurrentClocksEventReasons,
    "processes": processes(N.nvmlDeviceGetComputeRunningProcesses),
    "graphics_processes": processes(N.nvmlDeviceGetGraphicsRunningProcesses),
}

# The calls NVML answers for a MIG device's handle.
MIG_CALLS = {
    "name": N.nvmlDeviceGetName, "uuid": N.nvmlDeviceGetUUID, "memory": N.nvmlDeviceGetMemoryInfo,
    "bar1": N.nvmlDeviceGetBAR1MemoryInfo, "gpu_instance": N.nvmlDeviceGetGpuInstanceId, "compute_instance": N.nvmlDeviceGetComputeInstanceId,
    "processes": processes(N.nvmlDeviceGetComputeRunningProcesses),
}


def answers(calls, *args):
    """Each call's answer as JSON, or {"error": NVML's code}."""
    out = {}
    for key, call in calls.items():
        try:
            out[key] = plain(call(*args))
        except N.NVMLError as e:
            out[key] = {"error": e.value}
    return out


def mig_devices(h):
    """Each MIG slot's device and its answers (an error for an empty slot), one slot past an H100's 7."""
    out = []
    for slot in range(8):
        try:
            mig = N.nvmlDeviceGetMigDeviceHandleByIndex(h, slot)
        except N.NVMLError as e:
            out.append({"error": e.value})
            continue
        out.append(answers(MIG_CALLS, mig))
    return out


CALLS.update({
    "max_mig_devices": N.nvmlDeviceGetMaxMigDeviceCount, "mig_devices": mig_devices,
    "gpu_instance_of_a_gpu": N.nvmlDeviceGetGpuInstanceId,
})

pynvml.nvmlInit()
out = []
for i in range(pynvml.nvmlDeviceGetCount()):
    out.append(answers(CALLS, pynvml.nvmlDeviceGetHandleByIndex(i)))
system = answers({"driver_version": N.nvmlSystemGetDriverVersion, "cuda_version": N.nvmlSystemGetCudaDriverVersion})
pynvml.nvmlShutdown()
print(json.dumps({"gpus": out, "system": system}))
