"""pynvml, answered by libhipstack-smi for AMD and NVIDIA GPUs alike (docs/python.md, "hipstack.pynvml").
A script ports by changing its import, or unchanged where `import pynvml` resolves here:

    import hipstack.pynvml as pynvml          # was: import pynvml

The calls, constants, structures and error behaviour are pynvml's (the names clients use are listed in
docs/pynvml-clients.md), with NVML's units and types: power in milliwatts, energy in millijoules,
memory in bytes, clocks in MHz, temperatures in degrees C, utilisation in whole percent. A call
hipstack has no figure for on a GPU raises NVMLError_NotSupported, as NVML does; a read that does not
return in the library's deadline raises NVMLError_Timeout. HIPSTACK_SYSFS_ROOT / HIPSTACK_PROCFS_ROOT
(a capture) and HIPSTACK_NVML_LIBRARY are honoured, as by every hipstack tool.
"""
import ctypes
import errno
import threading
from dataclasses import dataclass
from typing import List, Optional

import hipstack
from hipstack._nvml_constants import *  # noqa: F401,F403 (pynvml's namespace: clients read it whole)
from hipstack._nvml_errors import *  # noqa: F401,F403
from hipstack._nvml_errors import NVMLError, _nvmlCheckReturn  # noqa: F401
from hipstack._nvml_types import *  # noqa: F401,F403
from hipstack._nvml_types import _PrintableStructure  # noqa: F401
from hipstack._nvml_types import (c_nvmlBAR1Memory_t, c_nvmlFieldValue_t, c_nvmlMemory_t, c_nvmlMemory_v2_t,
                                  c_nvmlProcessInfo_t, c_nvmlUtilization_t, nvmlMemory_v2, nvmlPciInfo_t)

_lock = threading.Lock()
_system: Optional[hipstack.System] = None
_inits = 0  # nvmlInit calls not yet matched by nvmlShutdown, as NVML counts them
_queries = {}  # metric names -> hipstack.Query of _system (emptied with it)
# Each thread's readers: (table name, GPU index) -> the Query.reader of its candidate that answered.
# Replaced with _system (a thread's dict cannot be emptied from another thread).
_per_thread = threading.local()
_bound_sets = {}  # a call's table names -> the bound Query.values of their metrics (emptied with _system)
_nvmlGetFunctionPointer_cache = {}  # name -> callable, as pynvml keeps it (gpustat adds to it)

_MIB = 1 << 20


class _Names(dict):
    """pynvml's names -> the catalogue metrics hipstack answers them from, in candidate order: the
    library's table (hipstack.foreign_names("pynvml"), docs/foreign-names.md), read by the first
    nvmlInit. This module names no metric itself."""

    def __missing__(self, name):
        if not self:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "%s: not in the library's table (a library older than this module)" % name)


_M = _Names()


@dataclass(frozen=True)
class _Handle:
    """A GPU: hipstack's device index."""
    index: int


# ---- Life cycle ----------------------------------------------------------------------------------

def nvmlInitWithFlags(flags: int = 0) -> None:  # noqa: N802
    global _system, _inits
    with _lock:
        if _system is None:
            try:
                system = hipstack.System()
            except hipstack.Error as e:
                raise NVMLError(NVML_ERROR_UNKNOWN, str(e)) from e
            try:
                with _AsNvmlErrors():
                    backends = system.backends()
                    no_driver = not system.devices() and not any(b.present for b in backends)
            except NVMLError:
                system.close()
                raise
            if no_driver and not flags & NVML_INIT_FLAG_NO_GPUS:
                system.close()
                reasons = "; ".join("%s: %s" % (b.name, b.reason) for b in backends)
                raise NVMLError(NVML_ERROR_DRIVER_NOT_LOADED, "no GPU driver: " + reasons)
            if not _M:
                try:
                    _M.update(hipstack.foreign_names("pynvml"))
                except hipstack.Error as e:
                    system.close()
                    raise NVMLError(NVML_ERROR_UNKNOWN, str(e)) from e
            _system = system
        _inits += 1


def nvmlInit() -> None:  # noqa: N802
    nvmlInitWithFlags(0)


nvmlInit_v2 = nvmlInit


def nvmlShutdown() -> None:  # noqa: N802
    global _system, _inits, _per_thread
    with _lock:
        if _inits == 0:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        _inits -= 1
        if _inits == 0 and _system is not None:
            _queries.clear()
            _per_thread = threading.local()
            _bound_sets.clear()
            _system.close()
            _system = None


def _open() -> hipstack.System:
    system = _system
    if system is None:
        raise NVMLError(NVML_ERROR_UNINITIALIZED)
    return system


# ---- Readings as NVML answers ----------------------------------------------------------------------

def _index(handle) -> int:
    if not isinstance(handle, _Handle):
        if type(handle) is _MigHandle:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "a MIG device: hipstack answers this call for whole GPUs")
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "not a handle of hipstack.pynvml")
    return handle.index


def _nvml_error(error: hipstack.Error) -> NVMLError:
    """The NVML error a library exception stands for."""
    if isinstance(error, hipstack.TimedOut):
        code = NVML_ERROR_TIMEOUT
    elif isinstance(error, hipstack.NoSuchDevice):
        code = NVML_ERROR_INVALID_ARGUMENT
    elif isinstance(error, hipstack.NotFound):  # a library older than this package: the metric is not in its catalogue
        code = NVML_ERROR_NOT_SUPPORTED
    else:
        code = NVML_ERROR_UNKNOWN
    return NVMLError(code, str(error))


class _AsNvmlErrors:
    """The library's exceptions as the NVML errors they stand for: only NVMLErrors leave a call."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, _):
        if error is None or not isinstance(error, hipstack.Error):
            return False
        raise _nvml_error(error) from error


def _devices() -> List[hipstack.Device]:
    with _AsNvmlErrors():
        return _open().devices()


def _readings(handle, *metrics) -> List[hipstack.Reading]:
    index = _index(handle)
    with _AsNvmlErrors():
        return _open().sample(index, kinds=("identity", "static", "live"), metrics=metrics)


def _failure(handle, r: hipstack.Reading) -> NVMLError:
    """The NVML error a reading that is not ok stands for."""
    # GPU_IS_LOST where NVML answered it for this call (the backend's ENXIO) or the library finds the GPU
    # unreadable now (its fault: lost, handle refused, device folder gone).
    with _AsNvmlErrors():
        lost = r.status == "error" and (r.error_code == errno.ENXIO or bool(_open().fault(handle.index)))
    if lost:
        return NVMLError(NVML_ERROR_GPU_IS_LOST, r.detail)
    if r.error_code == errno.ETIMEDOUT:
        return NVMLError(NVML_ERROR_TIMEOUT, r.detail)
    code = NVML_ERROR_NOT_SUPPORTED if r.status == "not_supported" else NVML_ERROR_UNKNOWN
    return NVMLError(code, "%s: %s (%s)" % (r.metric, r.status, r.detail))


def _query(metrics) -> hipstack.Query:
    """The prepared question for these metrics (one per call site: a poller's calls cost microseconds)."""
    query = _queries.get(metrics)
    if query is None:
        with _AsNvmlErrors():
            query = _queries.setdefault(metrics, _open().query(metrics))
    return query


def _quick(handle, metrics) -> list:
    """Each metric's value, None where it is not ok (the slow path then says why): no context manager,
    one look-up of the prepared query."""
    index = _index(handle)
    query = _queries.get(metrics) or _query(metrics)
    try:
        return query.values(index)
    except hipstack.Error as e:
        raise _nvml_error(e) from e


def _values(handle, *metrics, instance: str = ""):
    """The value of each metric (single-valued, or the named instance); the first one's error when one
    is missing."""
    if not instance:
        values = _quick(handle, metrics)
        if None not in values:
            return values
    found = {r.metric: r for r in _readings(handle, *metrics) if r.instance == instance}
    out = []
    for name in metrics:
        r = found.get(name)
        if r is None:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "%s: not reported" % name)
        if not r.ok:
            raise _failure(handle, r)
        out.append(r.value)
    return out


def _figure(handle, name: str):
    """The figure of pynvml's `name` (its name in the library's table, _M): the value of the first of
    its candidate metrics the GPU gives (NVML's figure has one source per vendor). The candidate that
    answered a GPU is bound to the name at that GPU's first call: a call is then one C read of one
    metric, with no search and no tuple made."""
    if type(handle) is _Handle:
        index = handle.index
    elif type(handle) is _MigHandle and name in _nvml_mig.MIG_FIGURES:
        return _nvml_mig.figure(handle, _nvml_mig.MIG_FIGURES[name])
    else:
        index = _index(handle)
    try:
        read = _per_thread.readers[name, index]
    except (AttributeError, KeyError):  # this thread's first call of the name for the GPU
        read = None
    if read is not None:
        try:
            value = read()
        except hipstack.Error as e:
            raise _nvml_error(e) from e
        if value is not None:
            return value
    metrics = _M[name]
    for metric in metrics:
        query = _query((metric,))
        try:
            value = query.value(index)
        except hipstack.Error as e:
            raise _nvml_error(e) from e
        if value is not None:
            readers = getattr(_per_thread, "readers", None)
            if readers is None:
                readers = _per_thread.readers = {}
            readers[name, index] = query.reader(index)
            return value
    readings = {r.metric: r for r in _readings(handle, *metrics) if not r.instance}
    for metric in metrics:
        if metric in readings and readings[metric].ok:
            return readings[metric].value
    present = [readings[m] for m in metrics if m in readings]
    failed = next((r for r in present if r.status != "not_supported"), present[0] if present else None)
    if failed is None:
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "%s: not reported" % ", ".join(metrics))
    raise _failure(handle, failed)


def _figures(handle, *names) -> list:
    """The values of all the metrics of these names of the table (a call's struct), in order; the
    first one's error when one is missing."""
    values = _figures_or_none(handle, *names)
    if None not in values:
        return values
    return _values(handle, *(metric for name in names for metric in _M[name]))


def _figures_or_none(handle, *names) -> list:
    """The values of all the metrics of these names, None where one is not ok (the caller decides what
    a missing one means). Their Query is bound to the names at the first call."""
    read = _bound_sets.get(names)
    if read is None:
        read = _bound_sets[names] = _query(tuple(metric for name in names for metric in _M[name])).values
    try:
        return read(handle.index if type(handle) is _Handle else _index(handle))
    except hipstack.Error as e:
        raise _nvml_error(e) from e


def _sum(handle, metric: str) -> int:
    """An instanced count summed over its instances (amdgpu's RAS blocks)."""
    readings = [r for r in _readings(handle, metric) if r.metric == metric]
    ok = [r for r in readings if r.ok]
    if not ok:
        raise _failure(handle, readings[0]) if readings else NVMLError(NVML_ERROR_NOT_SUPPORTED, metric)
    return int(sum(r.value for r in ok))


# A figure as NVML's whole number: round() of a float is an int already (the builtin itself, no call
# of ours: these are on every call's path).
_whole = round


def _enabled(text: str) -> int:
    return NVML_FEATURE_ENABLED if text == "enabled" else NVML_FEATURE_DISABLED


# ---- The system and its GPUs ---------------------------------------------------------------------

def nvmlSystemGetDriverVersion() -> str:  # noqa: N802
    """The first GPU's driver version."""
    if not _devices():
        raise NVMLError(NVML_ERROR_NOT_FOUND, "no GPU")
    return _values(_Handle(0), *_M["nvmlSystemGetDriverVersion"])[0]


def nvmlSystemGetCudaDriverVersion() -> int:  # noqa: N802
    """The CUDA version the NVIDIA driver supports, as NVML encodes it (13.0 is 13000)."""
    for device in _devices():
        if device.vendor == "nvidia":
            major, _, minor = _values(_Handle(device.index), *_M["nvmlSystemGetCudaDriverVersion"])[0].partition(".")
            return int(major) * 1000 + int(minor or 0) * 10
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "no NVIDIA GPU: no CUDA driver")


nvmlSystemGetCudaDriverVersion_v2 = nvmlSystemGetCudaDriverVersion


def nvmlDeviceGetCount() -> int:  # noqa: N802
    return len(_devices())


nvmlDeviceGetCount_v2 = nvmlDeviceGetCount


def nvmlDeviceGetHandleByIndex(index: int) -> _Handle:  # noqa: N802
    if not isinstance(index, int) or not 0 <= index < nvmlDeviceGetCount():
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "no GPU %r" % (index,))
    return _Handle(index)


nvmlDeviceGetHandleByIndex_v2 = nvmlDeviceGetHandleByIndex


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _by_selector(selector) -> _Handle:
    try:
        return _Handle(_open().resolve(_text(selector)))
    except (hipstack.NoSuchDevice, hipstack.NotFound, hipstack.InvalidArgument) as e:
        raise NVMLError(NVML_ERROR_NOT_FOUND, str(e)) from e
    except hipstack.Error as e:
        raise NVMLError(NVML_ERROR_TIMEOUT if isinstance(e, hipstack.TimedOut) else NVML_ERROR_UNKNOWN, str(e)) from e


def nvmlDeviceGetHandleByUUID(uuid) -> _Handle:  # noqa: N802
    return _by_selector(uuid)


def nvmlDeviceGetHandleByPciBusId(bus_id) -> _Handle:  # noqa: N802
    """NVML's form ("00000000:18:00.0") or Linux's ("0000:18:00.0"), any case."""
    return _by_selector(_bdf(_text(bus_id)))


nvmlDeviceGetHandleByPciBusId_v2 = nvmlDeviceGetHandleByPciBusId


def _bdf(bus_id: str) -> str:
    """A bus id with NVML's 8-digit domain as hipstack writes it (4 digits)."""
    domain, _, rest = bus_id.strip().partition(":")
    return "%04x:%s" % (int(domain, 16), rest.lower()) if rest and len(domain) == 8 else bus_id.lower()


def nvmlDeviceGetHandleBySerial(serial) -> _Handle:  # noqa: N802
    wanted = _text(serial)
    for device in _devices():
        try:
            if _values(_Handle(device.index), *_M["nvmlDeviceGetHandleBySerial"])[0] == wanted:
                return _Handle(device.index)
        except NVMLError:
            continue
    raise NVMLError(NVML_ERROR_NOT_FOUND, "no GPU with serial %s" % wanted)


def nvmlDeviceGetIndex(handle) -> int:  # noqa: N802
    return _index(handle)


def _device(handle) -> hipstack.Device:
    devices = _devices()
    if not 0 <= _index(handle) < len(devices):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "no GPU %d (there are %d)" % (handle.index, len(devices)))
    return devices[handle.index]


def nvmlDeviceGetName(handle) -> str:  # noqa: N802
    return _figure(handle, "nvmlDeviceGetName")


def nvmlDeviceGetUUID(handle) -> str:  # noqa: N802
    return _figure(handle, "nvmlDeviceGetUUID")


def nvmlDeviceGetSerial(handle) -> str:  # noqa: N802
    return _figure(handle, "nvmlDeviceGetSerial")


def nvmlDeviceGetVbiosVersion(handle) -> str:  # noqa: N802
    return _figure(handle, "nvmlDeviceGetVbiosVersion")


def nvmlDeviceGetMinorNumber(handle) -> int:  # noqa: N802
    """N of /dev/nvidiaN (NVIDIA); AMD GPUs have no such device: NotSupported."""
    return int(_figure(handle, "nvmlDeviceGetMinorNumber"))


def nvmlDeviceGetPciInfo(handle) -> nvmlPciInfo_t:  # noqa: N802
    bdf, device_id, vendor_id, sub_device, sub_vendor = _values(
        handle, *_M["nvmlDeviceGetPciInfo.busId"], *_M["nvmlDeviceGetPciInfo.pciDeviceId"],
        *_M["nvmlDeviceGetPciInfo.pciSubSystemId"])
    domain, bus, rest = bdf.split(":")
    slot, _, _ = rest.partition(".")
    info = nvmlPciInfo_t()
    info.busId = ("0000" + bdf).upper()
    info.busIdLegacy = bdf.upper()
    info.domain, info.bus, info.device = int(domain, 16), int(bus, 16), int(slot, 16)
    info.pciDeviceId = int(device_id, 16) << 16 | int(vendor_id, 16)
    info.pciSubSystemId = int(sub_device, 16) << 16 | int(sub_vendor, 16)
    return info


nvmlDeviceGetPciInfo_v2 = nvmlDeviceGetPciInfo_v3 = nvmlDeviceGetPciInfo


def nvmlDeviceGetCudaComputeCapability(handle):  # noqa: N802
    major, _, minor = _figure(handle, "nvmlDeviceGetCudaComputeCapability").partition(".")
    return (int(major), int(minor or 0))


# ---- Memory, use, power, temperature, clocks -----------------------------------------------------

def nvmlDeviceGetMemoryInfo(handle, version=None):  # noqa: N802
    """NVML's memory call. The first version: used + free = total (the driver's reservation counts as
    used: on an H200 NVML's first call answered used = total - free to the byte); with
    version=nvmlMemory_v2 the reservation apart (NVIDIA). NVIDIA GPUs report free memory; amdgpu
    reports used VRAM (free = total - used)."""
    if type(handle) is _MigHandle:
        return _nvml_mig.memory(handle, version)
    total = int(_figure(handle, "nvmlDeviceGetMemoryInfo.total"))
    # free, used (free = total - used where the driver gives no free figure), reserved, used (v2): one
    # read of the numbers; the readings only to say why neither free nor used is there.
    free, used, reserved, used_v2 = _figures_or_none(handle, "nvmlDeviceGetMemoryInfo.free",
                                                     "nvmlDeviceGetMemoryInfo(nvmlMemory_v2).reserved",
                                                     "nvmlDeviceGetMemoryInfo(nvmlMemory_v2).used")
    if free is not None:
        free = int(free)
    elif used is not None:
        free = total - int(used)
    else:
        free_name, used_name = _M["nvmlDeviceGetMemoryInfo.free"]
        readings = {r.metric: r for r in _readings(handle, free_name, used_name) if not r.instance}
        free_r, used_r = readings.get(free_name), readings.get(used_name)
        raise _failure(handle, used_r or free_r) if (used_r or free_r) else NVMLError(NVML_ERROR_NOT_SUPPORTED, "vram")
    if version is None:
        return c_nvmlMemory_t(total=total, free=free, used=total - free)
    if version != nvmlMemory_v2:
        raise NVMLError(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "version %r" % (version,))
    reserved = int(reserved) if reserved is not None else 0
    used = int(used_v2) if used_v2 is not None else total - free - reserved
    return c_nvmlMemory_v2_t(version=version, total=total, reserved=reserved, free=free, used=used)


def nvmlDeviceGetBAR1MemoryInfo(handle) -> c_nvmlBAR1Memory_t:  # noqa: N802
    if type(handle) is _MigHandle:
        return _nvml_mig.bar1(handle)
    total, used = (int(v) for v in _figures(handle, "nvmlDeviceGetBAR1MemoryInfo.bar1Total", "nvmlDeviceGetBAR1MemoryInfo.bar1Used"))
    return c_nvmlBAR1Memory_t(bar1Total=total, bar1Free=total - used, bar1Used=used)


def nvmlDeviceGetUtilizationRates(handle) -> c_nvmlUtilization_t:  # noqa: N802
    gpu, memory = _figures(handle, "nvmlDeviceGetUtilizationRates.gpu", "nvmlDeviceGetUtilizationRates.memory")
    return c_nvmlUtilization_t(gpu=_whole(gpu), memory=_whole(memory))


def nvmlDeviceGetEncoderUtilization(handle) -> list:  # noqa: N802
    """[percent, sampling period in µs]; hipstack does not know NVML's period: 0."""
    return [_whole(_figure(handle, "nvmlDeviceGetEncoderUtilization")), 0]


def nvmlDeviceGetDecoderUtilization(handle) -> list:  # noqa: N802
    return [_whole(_figure(handle, "nvmlDeviceGetDecoderUtilization")), 0]


def nvmlDeviceGetFanSpeed(handle) -> int:  # noqa: N802
    """Percent of the fan's top speed (NVIDIA); AMD: the fan's PWM duty."""
    return _whole(_figure(handle, "nvmlDeviceGetFanSpeed"))


def nvmlDeviceGetFanSpeed_v2(handle, fan: int) -> int:  # noqa: N802
    if fan != 0:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "fan %r: hipstack reads one fan" % (fan,))
    return nvmlDeviceGetFanSpeed(handle)


def nvmlDeviceGetTemperature(handle, sensor: int) -> int:  # noqa: N802
    """NVML_TEMPERATURE_GPU: NVML's GPU sensor on NVIDIA; on AMD the junction (hotspot) sensor, the one
    amd-smi reports as the GPU's temperature, else the edge sensor."""
    if sensor != NVML_TEMPERATURE_GPU:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "sensor %r: only NVML_TEMPERATURE_GPU (0) is known" % (sensor,))
    return _whole(_figure(handle, "nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)"))


def _milliwatts(watts) -> int:
    return round(watts * 1000)


def nvmlDeviceGetPowerUsage(handle) -> int:  # noqa: N802
    """Milliwatts: the average power NVML's call reports on NVIDIA GPUs; on AMD the driver's average
    where it has one, else its current socket power (MI300: power1_input only, as amd-smi shows)."""
    return _milliwatts(_figure(handle, "nvmlDeviceGetPowerUsage"))


def nvmlDeviceGetEnforcedPowerLimit(handle) -> int:  # noqa: N802
    return _milliwatts(_figure(handle, "nvmlDeviceGetEnforcedPowerLimit"))


nvmlDeviceGetPowerManagementLimit = nvmlDeviceGetEnforcedPowerLimit


def nvmlDeviceGetPowerManagementDefaultLimit(handle) -> int:  # noqa: N802
    return _milliwatts(_figure(handle, "nvmlDeviceGetPowerManagementDefaultLimit"))


def nvmlDeviceGetPowerManagementLimitConstraints(handle) -> list:  # noqa: N802
    low, high = _figures(handle, "nvmlDeviceGetPowerManagementLimitConstraints.minLimit", "nvmlDeviceGetPowerManagementLimitConstraints.maxLimit")
    return [_milliwatts(low), _milliwatts(high)]


def nvmlDeviceGetTotalEnergyConsumption(handle) -> int:  # noqa: N802
    """Millijoules since the driver loaded."""
    return _whole(_figure(handle, "nvmlDeviceGetTotalEnergyConsumption") * 1000)


# NVML clock types -> their names in the table (AMD: the shader clock for graphics and SM).
_CLOCKS = {NVML_CLOCK_GRAPHICS: "nvmlDeviceGetClockInfo(NVML_CLOCK_GRAPHICS)", NVML_CLOCK_SM: "nvmlDeviceGetClockInfo(NVML_CLOCK_SM)",
           NVML_CLOCK_MEM: "nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)", NVML_CLOCK_VIDEO: "nvmlDeviceGetClockInfo(NVML_CLOCK_VIDEO)"}
_MAX_CLOCKS = {NVML_CLOCK_GRAPHICS: "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_GRAPHICS)",
               NVML_CLOCK_SM: "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)", NVML_CLOCK_MEM: "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)",
               NVML_CLOCK_VIDEO: "nvmlDeviceGetMaxClockInfo(NVML_CLOCK_VIDEO)"}


def _clock(table, handle, clock_type) -> int:
    if clock_type not in table:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "clock type %r" % (clock_type,))
    return _whole(_figure(handle, table[clock_type]))


def nvmlDeviceGetClockInfo(handle, clock_type: int) -> int:  # noqa: N802
    return _clock(_CLOCKS, handle, clock_type)


def nvmlDeviceGetMaxClockInfo(handle, clock_type: int) -> int:  # noqa: N802
    return _clock(_MAX_CLOCKS, handle, clock_type)


def _pcie_generation(gts: float) -> int:
    for generation, rate in enumerate((2.5, 5, 8, 16, 32, 64), start=1):
        if abs(gts - rate) < 0.01:
            return generation
    raise NVMLError(NVML_ERROR_UNKNOWN, "%s GT/s is no PCIe generation's rate" % gts)


def nvmlDeviceGetCurrPcieLinkGeneration(handle) -> int:  # noqa: N802
    return _pcie_generation(_figure(handle, "nvmlDeviceGetCurrPcieLinkGeneration"))


def nvmlDeviceGetMaxPcieLinkGeneration(handle) -> int:  # noqa: N802
    return _pcie_generation(_figure(handle, "nvmlDeviceGetMaxPcieLinkGeneration"))


def nvmlDeviceGetCurrPcieLinkWidth(handle) -> int:  # noqa: N802
    return int(_figure(handle, "nvmlDeviceGetCurrPcieLinkWidth"))


def nvmlDeviceGetMaxPcieLinkWidth(handle) -> int:  # noqa: N802
    return int(_figure(handle, "nvmlDeviceGetMaxPcieLinkWidth"))


def nvmlDeviceGetPcieThroughput(handle, counter: int) -> int:  # noqa: N802
    """KB/s over NVML's 20 ms window (NVIDIA), or amdgpu's 1 s pcie_bw count: the call waits that long."""
    names = {NVML_PCIE_UTIL_TX_BYTES: "nvmlDeviceGetPcieThroughput(NVML_PCIE_UTIL_TX_BYTES)",
             NVML_PCIE_UTIL_RX_BYTES: "nvmlDeviceGetPcieThroughput(NVML_PCIE_UTIL_RX_BYTES)"}
    if counter not in names:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "counter %r" % (counter,))
    metric, = _M[names[counter]]
    with _AsNvmlErrors():
        readings = _open().sample(_index(handle), kinds=("pcie_throughput",), metrics=(metric,))
    for r in readings:
        if r.metric == metric and not r.instance:
            if not r.ok:
                raise _failure(handle, r)
            return _whole(r.value / 1000)
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED, metric)


# ---- Modes and states ----------------------------------------------------------------------------

def nvmlDeviceGetPerformanceState(handle) -> int:  # noqa: N802
    """0 (P0, the most) .. 15; NVIDIA only."""
    return int(_figure(handle, "nvmlDeviceGetPerformanceState").lstrip("P"))


def nvmlDeviceGetPersistenceMode(handle) -> int:  # noqa: N802
    return _enabled(_figure(handle, "nvmlDeviceGetPersistenceMode"))


def nvmlDeviceGetDisplayActive(handle) -> int:  # noqa: N802
    return _enabled(_figure(handle, "nvmlDeviceGetDisplayActive"))


_COMPUTE_MODES = {"default": NVML_COMPUTEMODE_DEFAULT, "exclusive_thread": NVML_COMPUTEMODE_EXCLUSIVE_THREAD,
                  "prohibited": NVML_COMPUTEMODE_PROHIBITED, "exclusive_process": NVML_COMPUTEMODE_EXCLUSIVE_PROCESS}


def nvmlDeviceGetComputeMode(handle) -> int:  # noqa: N802
    mode = _figure(handle, "nvmlDeviceGetComputeMode")
    if mode not in _COMPUTE_MODES:
        raise NVMLError(NVML_ERROR_UNKNOWN, "compute mode %r" % mode)
    return _COMPUTE_MODES[mode]


def nvmlDeviceGetMigMode(handle) -> list:  # noqa: N802
    """[current, pending after the next reset] (NVIDIA)."""
    return [_enabled(v) for v in _figures(handle, "nvmlDeviceGetMigMode.currentMode", "nvmlDeviceGetMigMode.pendingMode")]


def nvmlDeviceGetEccMode(handle) -> list:  # noqa: N802
    """[current, pending after the next reset] (NVIDIA)."""
    return [_enabled(v) for v in _figures(handle, "nvmlDeviceGetEccMode.currentMode", "nvmlDeviceGetEccMode.pendingMode")]


def nvmlDeviceGetCurrentClocksEventReasons(handle) -> int:  # noqa: N802
    """NVML's clock-event bits (NVIDIA). AMD's throttle bits mean other things: NotSupported there."""
    if _device(handle).vendor != "nvidia":
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "throttle_status of an AMD GPU has no NVML bits")
    return int(_figure(handle, "nvmlDeviceGetCurrentClocksEventReasons"))


nvmlDeviceGetCurrentClocksThrottleReasons = nvmlDeviceGetCurrentClocksEventReasons


_ECC_ERRORS = {
    (NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC):
        "nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC)",
    (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC):
        "nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC)",
    (NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC):
        "nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC)",
    (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC):
        "nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC)",
}


def nvmlDeviceGetTotalEccErrors(handle, error_type: int, counter_type: int) -> int:  # noqa: N802
    """NVIDIA: NVML's totals. AMD: the volatile ones are the sums over RAS blocks (since the driver
    loaded); amdgpu keeps no aggregate."""
    name = _ECC_ERRORS.get((error_type, counter_type))
    if name is None:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "error type %r, counter %r" % (error_type, counter_type))
    metrics = _M[name]  # volatile: (NVML's total, the AMD RAS blocks' count)
    if _device(handle).vendor == "amd" and counter_type == NVML_VOLATILE_ECC:
        return _sum(handle, metrics[1])
    return int(_values(handle, metrics[0])[0])


def nvmlDeviceGetRemappedRows(handle):  # noqa: N802
    """(correctable, uncorrectable, pending, failed) rows (NVIDIA, Ampere and later)."""
    rows = hipstack.foreign_table("pynvml")  # the instance of each count is the table's too
    correctable, uncorrectable = (int(_values(handle, *_M[name], instance=rows[name].instance)[0]) for name in (
        "nvmlDeviceGetRemappedRows.corrRows", "nvmlDeviceGetRemappedRows.uncRows"))
    pending, failed = (int(v) for v in _figures(handle, "nvmlDeviceGetRemappedRows.isPending", "nvmlDeviceGetRemappedRows.failureOccurred"))
    return (correctable, uncorrectable, pending, failed)


def _not_read(what: str):
    def call(handle, *args):
        _index(handle)
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "%s: hipstack does not read it" % what)
    call.__name__ = what
    return call


nvmlDeviceGetDisplayMode = _not_read("nvmlDeviceGetDisplayMode")
nvmlDeviceGetDriverModel = _not_read("nvmlDeviceGetDriverModel")  # NVML: Windows only
nvmlDeviceGetCurrentDriverModel = _not_read("nvmlDeviceGetCurrentDriverModel")
nvmlDeviceGetBrand = _not_read("nvmlDeviceGetBrand")
nvmlDeviceGetProcessUtilization = _not_read("nvmlDeviceGetProcessUtilization")
nvmlDeviceGetMPSComputeRunningProcesses = _not_read("nvmlDeviceGetMPSComputeRunningProcesses")
nvmlDeviceGetMPSComputeRunningProcesses_v2 = nvmlDeviceGetMPSComputeRunningProcesses_v3 = nvmlDeviceGetMPSComputeRunningProcesses


def nvmlDeviceGetFieldValues(handle, field_ids) -> list:  # noqa: N802
    """Each field answered NVML_ERROR_NOT_SUPPORTED in its nvmlReturn: hipstack reads no field values."""
    _index(handle)
    out = (c_nvmlFieldValue_t * len(field_ids))()
    for value, field in zip(out, field_ids):
        value.fieldId, value.scopeId = (field if isinstance(field, tuple) else (field, 0))
        value.nvmlReturn = NVML_ERROR_NOT_SUPPORTED
    return list(out)


# ---- Processes -----------------------------------------------------------------------------------

def _processes(handle, graphics: bool) -> list:
    """Processes of a kind as NVML lists them, with the VRAM each holds (None where the driver does not
    say). A process without a type (amdgpu) is a compute process."""
    # A MIG device's: the GPU's processes that run in its GPU and compute instance.
    instances = _nvml_mig.instance_ids(handle) if type(handle) is _MigHandle else None
    with _AsNvmlErrors():
        found = _open().processes(handle.parent if instances is not None else _index(handle))
    kind_name, = _M["nvmlDeviceGetGraphicsRunningProcesses" if graphics else "nvmlDeviceGetComputeRunningProcesses"]
    vram, = _M["nvmlProcessInfo_t.usedGpuMemory"]
    gpu_instance, = _M["nvmlProcessInfo_t.gpuInstanceId"]
    compute_instance, = _M["nvmlProcessInfo_t.computeInstanceId"]
    out = []
    for process in found:
        values = {r.metric: r.value for r in process.readings if r.ok and not r.instance}
        kind = values.get(kind_name, "compute")
        if ("graphics" if graphics else "compute") not in kind:
            continue
        if instances is not None and (values.get(gpu_instance), values.get(compute_instance)) != instances:
            continue
        info = c_nvmlProcessInfo_t(pid=process.pid, usedGpuMemory=int(values.get(vram, 0)),
                                   gpuInstanceId=int(values.get(gpu_instance, NVML_VALUE_NOT_AVAILABLE_uint)),
                                   computeInstanceId=int(values.get(compute_instance, NVML_VALUE_NOT_AVAILABLE_uint)))
        friendly = nvmlStructToFriendlyObject(info)
        if vram not in values:
            friendly.usedGpuMemory = None
        out.append(friendly)
    return out


def nvmlDeviceGetComputeRunningProcesses(handle) -> list:  # noqa: N802
    return _processes(handle, graphics=False)


def nvmlDeviceGetGraphicsRunningProcesses(handle) -> list:  # noqa: N802
    return _processes(handle, graphics=True)


nvmlDeviceGetComputeRunningProcesses_v2 = nvmlDeviceGetComputeRunningProcesses_v3 = nvmlDeviceGetComputeRunningProcesses
nvmlDeviceGetGraphicsRunningProcesses_v2 = nvmlDeviceGetGraphicsRunningProcesses_v3 = nvmlDeviceGetGraphicsRunningProcesses


# ---- NVML's C entry points, for clients that call them through pointers --------------------------
from hipstack import _nvml_mig  # noqa: E402 (needs the names above)
from hipstack._nvml_mig import (_MigHandle, nvmlDeviceGetComputeInstanceId,  # noqa: E402,F401
                                nvmlDeviceGetDeviceHandleFromMigDeviceHandle, nvmlDeviceGetGpuInstanceId,
                                nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMigDeviceHandleByIndex,
                                nvmlDeviceIsMigDeviceHandle)
from hipstack._nvml_pointers import _nvmlGetFunctionPointer  # noqa: E402,F401 (needs the calls above)
