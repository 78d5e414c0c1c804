"""pynvml's MIG calls (hipstack.pynvml): a GPU's MIG devices are the library's partitions of an
NVIDIA GPU in MIG mode, each in the MIG slot NVML put it in (slots may be empty). A MIG handle answers
the calls NVML answers for MIG devices (name, UUID, memory, BAR1, processes, instance ids); the others raise
NVMLError_NotSupported. Metric names come from the library's table (pynvml.py's _M). docs/python.md."""
from dataclasses import dataclass

from hipstack import pynvml as _p
from hipstack._nvml_errors import (NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_NOT_FOUND, NVML_ERROR_NOT_SUPPORTED,
                                   NVMLError)


@dataclass(frozen=True)
class _MigHandle:
    """A MIG device: its GPU's index (hipstack's) and its MIG slot."""
    parent: int
    slot: int


# pynvml calls a MIG handle answers with a figure of its partition -> that figure's name in the table.
MIG_FIGURES = {
    "nvmlDeviceGetName": "nvmlDeviceGetName(MIG)",
    "nvmlDeviceGetUUID": "nvmlDeviceGetUUID(MIG)",
}


def _gpu(handle) -> int:
    """A whole GPU's index; a MIG handle is INVALID_ARGUMENT where NVML wants the GPU (as NVML says)."""
    if type(handle) is _MigHandle:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "a MIG device's handle: this call takes its GPU's")
    return _p._index(handle)


def _readings(handle: _MigHandle) -> dict:
    """The readings of the partition in the handle's MIG slot now, by metric."""
    with _p._AsNvmlErrors():
        partitions = _p._open().partitions(handle.parent)
    slot_metric, = _p._M["nvmlDeviceGetMigDeviceHandleByIndex"]
    for partition in partitions:
        readings = {r.metric: r for r in partition.readings if not r.instance}
        slot = readings.get(slot_metric)
        if slot is not None and slot.ok and slot.value == handle.slot:
            return readings
    raise NVMLError(NVML_ERROR_NOT_FOUND, "GPU %d has no MIG device in slot %d now" % (handle.parent, handle.slot))


def figure(handle: _MigHandle, name: str, readings: dict = None):
    """The figure of the table's `name` for the MIG device."""
    readings = readings if readings is not None else _readings(handle)
    for metric in _p._M[name]:
        r = readings.get(metric)
        if r is not None and r.ok:
            return r.value
        if r is not None:
            raise _p._failure(_p._Handle(handle.parent), r)
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "%s: not reported for MIG devices" % name)


def memory(handle: _MigHandle, version):
    """nvmlDeviceGetMemoryInfo of a MIG device: its memory and what is in use (free = total - used)."""
    readings = _readings(handle)
    total = int(figure(handle, "nvmlDeviceGetMemoryInfo(MIG).total", readings))
    used = int(figure(handle, "nvmlDeviceGetMemoryInfo(MIG).used", readings))
    if version is None:
        return _p.c_nvmlMemory_t(total=total, free=total - used, used=used)
    raise NVMLError(NVML_ERROR_NOT_SUPPORTED, "nvmlMemory_v2 of a MIG device: hipstack has no reserved figure for it")


def bar1(handle: _MigHandle):
    """nvmlDeviceGetBAR1MemoryInfo of a MIG device (bar1Free = total - used)."""
    readings = _readings(handle)
    total = int(figure(handle, "nvmlDeviceGetBAR1MemoryInfo(MIG).bar1Total", readings))
    used = int(figure(handle, "nvmlDeviceGetBAR1MemoryInfo(MIG).bar1Used", readings))
    return _p.c_nvmlBAR1Memory_t(bar1Total=total, bar1Free=total - used, bar1Used=used)


def instance_ids(handle: _MigHandle) -> tuple:
    """(GPU instance id, compute instance id) of the MIG device: its processes are the GPU's that run there."""
    readings = _readings(handle)
    return (figure(handle, "nvmlDeviceGetGpuInstanceId", readings), figure(handle, "nvmlDeviceGetComputeInstanceId", readings))


def nvmlDeviceGetMaxMigDeviceCount(handle) -> int:  # noqa: N802
    return int(_p._figure(_p._Handle(_gpu(handle)), "nvmlDeviceGetMaxMigDeviceCount"))


def nvmlDeviceGetMigDeviceHandleByIndex(handle, index: int) -> _MigHandle:  # noqa: N802
    """The MIG device in slot `index`: NOT_FOUND for an empty slot and for every slot of a GPU with MIG
    off (an H100's NVML 580.159.04 answered so for slots 0-7), INVALID_ARGUMENT past the slots of a GPU
    with MIG on."""
    gpu = _gpu(handle)
    if _p._figure(_p._Handle(gpu), "nvmlDeviceGetMigMode.currentMode") != "enabled":
        raise NVMLError(NVML_ERROR_NOT_FOUND, "GPU %d: MIG is off, no MIG devices" % gpu)
    slots = nvmlDeviceGetMaxMigDeviceCount(handle)
    if not isinstance(index, int) or not 0 <= index < slots:
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "MIG slot %r: GPU %d has %d" % (index, gpu, slots))
    mig = _MigHandle(gpu, index)
    _readings(mig)  # NOT_FOUND when the slot is empty
    return mig


def nvmlDeviceIsMigDeviceHandle(handle) -> int:  # noqa: N802
    if type(handle) is _MigHandle:
        return 1
    _p._index(handle)
    return 0


def nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle):  # noqa: N802
    if type(handle) is not _MigHandle:
        _p._index(handle)
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "not a MIG device's handle")
    return _p._Handle(handle.parent)


def nvmlDeviceGetGpuInstanceId(handle) -> int:  # noqa: N802
    if type(handle) is not _MigHandle:
        _p._index(handle)
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "a whole GPU has no GPU instance id (a MIG device has)")
    return int(figure(handle, "nvmlDeviceGetGpuInstanceId"))


def nvmlDeviceGetComputeInstanceId(handle) -> int:  # noqa: N802
    if type(handle) is not _MigHandle:
        _p._index(handle)
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "a whole GPU has no compute instance id (a MIG device has)")
    return int(figure(handle, "nvmlDeviceGetComputeInstanceId"))
