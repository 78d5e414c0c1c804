"""The pynvml calls most code uses, answered by libhipstack-smi for AMD and NVIDIA GPUs alike
(docs/python.md, "hipstack.pynvml"). A script ports by changing its import:

    import hipstack.pynvml as pynvml          # was: import pynvml

Units are NVML's: power in milliwatts, memory in bytes, temperature in degrees C, utilisation in
percent. Where hipstack has no figure for a call on a GPU, the call raises NVMLError_NotSupported, as
NVML does. HIPSTACK_SYSFS_ROOT / HIPSTACK_PROCFS_ROOT (a capture) and HIPSTACK_NVML_LIBRARY are
honoured, as by every hipstack tool.
"""
import errno
import threading
from dataclasses import dataclass
from typing import List, Optional

import hipstack

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_UNKNOWN = 999
NVML_TEMPERATURE_GPU = 0

_ERROR_TEXT = {NVML_ERROR_UNINITIALIZED: "Uninitialized", NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument",
               NVML_ERROR_NOT_SUPPORTED: "Not Supported", NVML_ERROR_NOT_FOUND: "Not Found",
               NVML_ERROR_GPU_IS_LOST: "GPU is lost", NVML_ERROR_UNKNOWN: "Unknown Error"}


class NVMLError(Exception):
    """As pynvml's: `value` is the NVML return code; NVMLError(code) gives the subclass for it."""
    _subclasses = {}

    def __new__(cls, value, detail: str = ""):
        if cls is NVMLError:
            cls = NVMLError._subclasses.get(value, NVMLError)
        error = Exception.__new__(cls)
        error.value = value
        return error

    def __init__(self, value, detail: str = ""):
        super().__init__(value)
        self.value = value
        self.detail = detail

    def __str__(self):
        text = _ERROR_TEXT.get(self.value, "Unknown Error")
        return f"{text}: {self.detail}" if self.detail else text

    def __eq__(self, other):
        return isinstance(other, NVMLError) and self.value == other.value

    __hash__ = Exception.__hash__


def _error_class(name: str, value: int):
    cls = type(f"NVMLError_{name}", (NVMLError,), {})
    NVMLError._subclasses[value] = cls
    return cls


NVMLError_Uninitialized = _error_class("Uninitialized", NVML_ERROR_UNINITIALIZED)
NVMLError_InvalidArgument = _error_class("InvalidArgument", NVML_ERROR_INVALID_ARGUMENT)
NVMLError_NotSupported = _error_class("NotSupported", NVML_ERROR_NOT_SUPPORTED)
NVMLError_NotFound = _error_class("NotFound", NVML_ERROR_NOT_FOUND)
NVMLError_GpuIsLost = _error_class("GpuIsLost", NVML_ERROR_GPU_IS_LOST)
NVMLError_Unknown = _error_class("Unknown", NVML_ERROR_UNKNOWN)

_lock = threading.Lock()
_system: Optional[hipstack.System] = None
_inits = 0  # nvmlInit calls not yet matched by nvmlShutdown, as NVML counts them


@dataclass(frozen=True)
class _Handle:
    index: int


class c_nvmlMemory_t:  # noqa: N801 (pynvml's name)
    def __init__(self, total: int, free: int, used: int):
        self.total, self.free, self.used = total, free, used


class c_nvmlUtilization_t:  # noqa: N801
    def __init__(self, gpu: int, memory: int):
        self.gpu, self.memory = gpu, memory


class c_nvmlProcessInfo_t:  # noqa: N801
    def __init__(self, pid: int, usedGpuMemory: Optional[int]):  # noqa: N803
        self.pid, self.usedGpuMemory = pid, usedGpuMemory
        self.gpuInstanceId = self.computeInstanceId = None


def nvmlInit() -> None:  # noqa: N802
    global _system, _inits
    with _lock:
        if _system is None:
            try:
                _system = hipstack.System()
            except hipstack.Error as e:
                raise NVMLError(NVML_ERROR_UNKNOWN, str(e)) from e
        _inits += 1


nvmlInit_v2 = nvmlInit


def nvmlShutdown() -> None:  # noqa: N802
    global _system, _inits
    with _lock:
        if _inits == 0:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        _inits -= 1
        if _inits == 0 and _system is not None:
            _system.close()
            _system = None


def _open() -> hipstack.System:
    if _system is None:
        raise NVMLError(NVML_ERROR_UNINITIALIZED)
    return _system


def nvmlDeviceGetCount() -> int:  # noqa: N802
    return len(_open().devices())


nvmlDeviceGetCount_v2 = nvmlDeviceGetCount


def nvmlDeviceGetHandleByIndex(index: int) -> _Handle:  # noqa: N802
    if not 0 <= index < nvmlDeviceGetCount():
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, f"no GPU {index}")
    return _Handle(index)


nvmlDeviceGetHandleByIndex_v2 = nvmlDeviceGetHandleByIndex


def _readings(handle: _Handle, kinds, *metrics) -> List[hipstack.Reading]:
    if not isinstance(handle, _Handle):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "not a handle of hipstack.pynvml")
    try:
        return _open().sample(handle.index, kinds=kinds, metrics=metrics)
    except hipstack.NoSuchDevice as e:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, str(e)) from e


def _value(handle: _Handle, kind: str, name: str):
    """The value of one single-valued metric, or the NVML error its status stands for."""
    for r in _readings(handle, (kind,), name):
        if r.instance:
            continue
        if r.ok:
            return r.value
        # GPU_IS_LOST where NVML answered it for this call (the backend's ENXIO) or the library finds the
        # GPU unreadable now (its fault: lost, handle refused, device folder gone).
        if r.status == "error" and (r.error_code == errno.ENXIO or _open().fault(handle.index)):
            raise NVMLError(NVML_ERROR_GPU_IS_LOST, r.detail)
        code = NVML_ERROR_NOT_SUPPORTED if r.status == "not_supported" else NVML_ERROR_UNKNOWN
        raise NVMLError(code, f"{name}: {r.status} ({r.detail})")
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED, f"{name}: not reported")


def nvmlDeviceGetName(handle: _Handle) -> str:  # noqa: N802
    return _value(handle, "identity", "marketing_name")


def nvmlDeviceGetUUID(handle: _Handle) -> str:  # noqa: N802
    return _value(handle, "identity", "uuid")


def nvmlDeviceGetMemoryInfo(handle: _Handle, version=None) -> c_nvmlMemory_t:  # noqa: N802
    """NVML's first memory call: used + free = total (the driver's reservation counts as used). NVIDIA
    GPUs report free memory (used = total - free); amdgpu reports used VRAM (free = total - used)."""
    total = int(_value(handle, "static", "vram_total"))
    try:
        free = int(_value(handle, "live", "vram_free"))
    except NVMLError_NotSupported:
        free = total - int(_value(handle, "live", "vram_used"))
    return c_nvmlMemory_t(total, free, total - free)


def nvmlDeviceGetUtilizationRates(handle: _Handle) -> c_nvmlUtilization_t:  # noqa: N802
    return c_nvmlUtilization_t(int(round(_value(handle, "live", "gpu_busy"))),
                               int(round(_value(handle, "live", "memory_busy"))))


def nvmlDeviceGetPowerUsage(handle: _Handle) -> int:  # noqa: N802
    """Milliwatts: the average power NVML's call reports on NVIDIA GPUs; on AMD the driver's average
    where it has one, else its current socket power (MI300: power1_input only, as amd-smi shows)."""
    try:
        watts = _value(handle, "live", "power_average")
    except NVMLError_NotSupported:
        watts = _value(handle, "live", "power_current")
    return int(round(watts * 1000))


def nvmlDeviceGetTemperature(handle: _Handle, sensor: int) -> int:  # noqa: N802
    """NVML_TEMPERATURE_GPU: NVML's GPU sensor on NVIDIA; on AMD the junction (hotspot) sensor, the one
    amd-smi reports as the GPU's temperature."""
    if sensor != NVML_TEMPERATURE_GPU:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, f"sensor {sensor}: only NVML_TEMPERATURE_GPU (0) is known")
    return int(round(_value(handle, "live", "temperature_junction")))


def nvmlDeviceGetComputeRunningProcesses(handle: _Handle) -> List[c_nvmlProcessInfo_t]:  # noqa: N802
    """Processes using the GPU, with the VRAM each holds (None where the driver does not say)."""
    if not isinstance(handle, _Handle):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "not a handle of hipstack.pynvml")
    out = []
    for process in _open().processes(handle.index):
        vram = next((r.value for r in process.readings if r.metric == "process_vram" and r.ok), None)
        out.append(c_nvmlProcessInfo_t(process.pid, vram))
    return out


nvmlDeviceGetComputeRunningProcesses_v2 = nvmlDeviceGetComputeRunningProcesses
nvmlDeviceGetComputeRunningProcesses_v3 = nvmlDeviceGetComputeRunningProcesses


def nvmlSystemGetDriverVersion() -> str:  # noqa: N802
    """The first GPU's driver version."""
    if nvmlDeviceGetCount() == 0:
        raise NVMLError(NVML_ERROR_NOT_FOUND, "no GPU")
    return _value(_Handle(0), "identity", "driver_version")
