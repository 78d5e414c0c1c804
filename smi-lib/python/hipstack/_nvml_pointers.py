"""pynvml's _nvmlGetFunctionPointer: NVML's C entry points for clients that call them directly with
ctypes arguments (nvitop does for memory and process lists; gpustat looks entry points up and keeps
them in _nvmlGetFunctionPointer_cache). Each entry point here is hipstack's answer in C form: it
takes the ctypes arguments NVML's function takes, fills the structures they point at and returns
NVML's return code. A name hipstack does not provide in C form raises NVMLError_FunctionNotFound, as
pynvml does for a symbol the driver lacks (clients then take their fallback). docs/pynvml-clients.md."""
import ctypes

from hipstack import pynvml as _p
from hipstack._nvml_errors import (NVML_ERROR_FUNCTION_NOT_FOUND, NVML_ERROR_INSUFFICIENT_SIZE,
                                   NVML_ERROR_INVALID_ARGUMENT, NVML_SUCCESS, NVMLError)


def _target(pointer):
    """The object a ctypes.byref() or ctypes.pointer() argument points at."""
    if hasattr(pointer, "_obj"):
        return pointer._obj
    if isinstance(pointer, ctypes._Pointer):
        return pointer.contents
    raise NVMLError(NVML_ERROR_INVALID_ARGUMENT, "not a pointer: %r" % (pointer,))


def _returns_code(call):
    """A C-style entry point: NVMLError becomes its return code."""
    def entry(*args):
        try:
            call(*args)
        except NVMLError as e:
            return e.value
        return NVML_SUCCESS
    entry.__name__ = call.__name__
    return entry


def _memory(version):
    def nvmlDeviceGetMemoryInfo(handle, memory_pointer):  # noqa: N802
        target = _target(memory_pointer)
        answer = _p.nvmlDeviceGetMemoryInfo(handle, version)
        for name, _ in answer._fields_:
            if name != "version" and hasattr(target, name):
                setattr(target, name, getattr(answer, name))
    return _returns_code(nvmlDeviceGetMemoryInfo)


def _process_list(list_call):
    def running_processes(handle, count_pointer, infos):
        """NVML's protocol: with too small an array (or none), the count needed and INSUFFICIENT_SIZE."""
        count = _target(count_pointer)
        processes = list_call(handle)
        if infos is None or count.value < len(processes):
            count.value = len(processes)
            if processes:
                raise NVMLError(NVML_ERROR_INSUFFICIENT_SIZE)
            return
        for info, process in zip(infos, processes):
            for name, _ in info._fields_:
                value = getattr(process, name, None)
                if name == "usedGpuMemory" and value is None:
                    value = _p.NVML_VALUE_NOT_AVAILABLE_ulonglong
                if value is not None:
                    setattr(info, name, value)
        count.value = len(processes)
    return _returns_code(running_processes)


_ENTRY_POINTS = {
    "nvmlDeviceGetMemoryInfo": _memory(None),
    "nvmlDeviceGetMemoryInfo_v2": _memory(_p.nvmlMemory_v2),
}
for _suffix in ("", "_v2", "_v3"):
    _ENTRY_POINTS["nvmlDeviceGetComputeRunningProcesses" + _suffix] = _process_list(_p.nvmlDeviceGetComputeRunningProcesses)
    _ENTRY_POINTS["nvmlDeviceGetGraphicsRunningProcesses" + _suffix] = _process_list(_p.nvmlDeviceGetGraphicsRunningProcesses)


def _nvmlGetFunctionPointer(name):  # noqa: N802
    """The C-form entry point `name`; NVMLError_Uninitialized before nvmlInit, as pynvml."""
    _p._open()
    cache = _p._nvmlGetFunctionPointer_cache
    if name in cache:
        return cache[name]
    if name not in _ENTRY_POINTS:
        raise NVMLError(NVML_ERROR_FUNCTION_NOT_FOUND, "%s: hipstack provides no C entry point of that name" % name)
    cache[name] = _ENTRY_POINTS[name]
    return cache[name]
