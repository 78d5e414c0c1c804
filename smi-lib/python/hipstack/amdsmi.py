"""The amdsmi calls most code uses, answered by libhipstack-smi for AMD and NVIDIA GPUs alike
(docs/python.md, "hipstack.amdsmi"). A script ports by changing its import:

    import hipstack.amdsmi as amdsmi          # was: import amdsmi
    from hipstack.amdsmi import *             # was: from amdsmi import *

Units and keys are amdsmi's (ROCm 6.2 and later): power in W, voltages in mV, temperatures in degrees
C, activity in %, amdsmi_get_gpu_vram_usage in MB, amdsmi_get_gpu_memory_total and process memory in
bytes. A value hipstack has no source for is "N/A", as amdsmi writes it; a call whose whole answer is
missing raises AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED). HIPSTACK_SYSFS_ROOT /
HIPSTACK_PROCFS_ROOT (a capture) and HIPSTACK_NVML_LIBRARY are honoured.
"""
import errno
import threading
from enum import IntEnum
from typing import Any, Dict, List, Optional

import hipstack

# amdsmi_status_t (amdsmi.h, ROCm 6 and later), the ones these calls can raise.
AMDSMI_STATUS_SUCCESS = 0
AMDSMI_STATUS_INVAL = 1
AMDSMI_STATUS_NOT_SUPPORTED = 2
AMDSMI_STATUS_NOT_FOUND = 31
AMDSMI_STATUS_NOT_INIT = 32
AMDSMI_STATUS_UNEXPECTED_DATA = 43  # amdsmi.h: "the data read ... is not what was expected"
AMDSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF
_STATUS_TEXT = {AMDSMI_STATUS_INVAL: "AMDSMI_STATUS_INVAL - Invalid parameters",
                AMDSMI_STATUS_NOT_SUPPORTED: "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported",
                AMDSMI_STATUS_NOT_FOUND: "AMDSMI_STATUS_NOT_FOUND - Device Not found",
                AMDSMI_STATUS_NOT_INIT: "AMDSMI_STATUS_NOT_INIT - Device not initialized",
                AMDSMI_STATUS_UNKNOWN_ERROR: "AMDSMI_STATUS_UNKNOWN_ERROR - An unknown error occurred"}


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code: int, detail: str = ""):
        super().__init__(err_code)
        self.err_code = abs(err_code)
        self.err_info = _STATUS_TEXT.get(self.err_code, _STATUS_TEXT[AMDSMI_STATUS_UNKNOWN_ERROR])
        self.detail = detail  # hipstack's: the metric and why

    def get_error_code(self) -> int:
        return self.err_code

    def get_error_info(self, detailed: bool = True) -> str:
        return f"{self.err_info}: {self.detail}" if detailed and self.detail else self.err_info

    def __str__(self):
        return f"Error code:\n\t{self.err_code} | {self.get_error_info()}"


class AmdSmiParameterException(AmdSmiException):
    def __init__(self, receivedValue, expectedType, msg: Optional[str] = None):  # noqa: N803 (amdsmi's names)
        super().__init__(msg or f"expected {expectedType}, got {receivedValue!r}")
        self.actualType = type(receivedValue)  # noqa: N815
        self.expectedType = expectedType  # noqa: N815
        self.err_msg = msg
        self.err_code = None


class AmdSmiInitFlags(IntEnum):
    INIT_ALL_PROCESSORS = 0xFFFFFFFF
    INIT_AMD_CPUS = 1
    INIT_AMD_GPUS = 2
    INIT_AMD_APUS = 3
    INIT_NON_AMD_CPUS = 4
    INIT_NON_AMD_GPUS = 8


class AmdSmiTemperatureType(IntEnum):
    EDGE = 0
    HOTSPOT = 1
    JUNCTION = 1
    VRAM = 2
    HBM_0 = 3
    HBM_1 = 4
    HBM_2 = 5
    HBM_3 = 6
    PLX = 7


class AmdSmiTemperatureMetric(IntEnum):
    CURRENT = 0
    MAX = 1
    MIN = 2
    MAX_HYST = 3
    MIN_HYST = 4
    CRITICAL = 5
    CRITICAL_HYST = 6
    EMERGENCY = 7
    EMERGENCY_HYST = 8
    CRIT_MIN = 9
    CRIT_MIN_HYST = 10
    OFFSET = 11
    LOWEST = 12
    HIGHEST = 13


class AmdSmiMemoryType(IntEnum):
    VRAM = 0
    VIS_VRAM = 1
    GTT = 2


class amdsmi_processor_handle:  # noqa: N801 (amdsmi's name)
    def __init__(self, index: int, bdf: str):
        self.index, self.bdf = index, bdf

    def __eq__(self, other):
        return isinstance(other, amdsmi_processor_handle) and other.index == self.index

    def __hash__(self):
        return hash(self.index)

    def __repr__(self):
        return f"amdsmi_processor_handle({self.index}, {self.bdf})"


_lock = threading.Lock()
_system: Optional[hipstack.System] = None
MB = 1 << 20
# The catalogue metric of each (temperature type, temperature metric) hipstack reads.
_TEMPERATURES = {
    (AmdSmiTemperatureType.EDGE, AmdSmiTemperatureMetric.CURRENT): "temperature_edge",
    (AmdSmiTemperatureType.EDGE, AmdSmiTemperatureMetric.CRITICAL): "temperature_edge_critical",
    (AmdSmiTemperatureType.EDGE, AmdSmiTemperatureMetric.EMERGENCY): "temperature_edge_emergency",
    (AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.CURRENT): "temperature_junction",
    (AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.CRITICAL): "temperature_junction_critical",
    (AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.EMERGENCY): "temperature_junction_emergency",
    (AmdSmiTemperatureType.VRAM, AmdSmiTemperatureMetric.CURRENT): "temperature_memory",
    (AmdSmiTemperatureType.VRAM, AmdSmiTemperatureMetric.CRITICAL): "temperature_memory_critical",
    (AmdSmiTemperatureType.VRAM, AmdSmiTemperatureMetric.EMERGENCY): "temperature_memory_emergency",
}
_MEMORY_TOTALS = {AmdSmiMemoryType.VRAM: "vram_total", AmdSmiMemoryType.VIS_VRAM: "vram_visible_total",
                  AmdSmiMemoryType.GTT: "gtt_total"}


def amdsmi_init(flag: AmdSmiInitFlags = AmdSmiInitFlags.INIT_AMD_GPUS) -> None:
    """Opens hipstack's System (GPUs of every backend). CPU flags are accepted; hipstack reports GPUs."""
    global _system
    if not isinstance(flag, AmdSmiInitFlags):
        raise AmdSmiParameterException(flag, AmdSmiInitFlags)
    with _lock:
        if _system is None:
            try:
                _system = hipstack.System()
            except hipstack.Error as e:
                raise AmdSmiLibraryException(AMDSMI_STATUS_UNKNOWN_ERROR, str(e)) from e


def amdsmi_shut_down() -> None:
    global _system
    with _lock:
        if _system is not None:
            _system.close()
            _system = None


def _open() -> hipstack.System:
    if _system is None:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_INIT, "amdsmi_init() was not called")
    return _system


def amdsmi_get_processor_handles() -> List[amdsmi_processor_handle]:
    return [amdsmi_processor_handle(d.index, d.bdf) for d in _open().devices()]


def _readings(handle, kinds, *metrics) -> Dict[str, hipstack.Reading]:
    if not isinstance(handle, amdsmi_processor_handle):
        raise AmdSmiParameterException(handle, amdsmi_processor_handle)
    try:
        return {r.metric: r for r in _open().sample(handle.index, kinds=kinds, metrics=metrics) if not r.instance}
    except hipstack.NoSuchDevice as e:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_FOUND, str(e)) from e


def _or_na(reading: Optional[hipstack.Reading], convert=lambda v: v) -> Any:
    return convert(reading.value) if reading is not None and reading.ok else "N/A"


def _value(handle, kind: str, name: str) -> Any:
    reading = _readings(handle, (kind,), name).get(name)
    if reading is None or not reading.ok:
        why = f"{reading.status}: {reading.detail}" if reading is not None else "not reported"
        # A value that cannot be true (used above total: docs/api.md "Impossible readings") is data
        # the library read and refused, not a missing feature.
        impossible = reading is not None and reading.status == "error" and reading.error_code == errno.ERANGE
        raise AmdSmiLibraryException(AMDSMI_STATUS_UNEXPECTED_DATA if impossible else AMDSMI_STATUS_NOT_SUPPORTED,
                                     f"{name} {why}")
    return reading.value


def amdsmi_get_gpu_device_uuid(handle) -> str:
    return _value(handle, "identity", "uuid")


def amdsmi_get_gpu_device_bdf(handle) -> str:
    return _value(handle, "identity", "bdf")


def amdsmi_get_gpu_asic_info(handle) -> Dict[str, Any]:
    r = _readings(handle, ("identity", "static"), "marketing_name", "pci_vendor_id", "pci_device_id",
                  "pci_revision_id", "pci_subsystem_device_id", "unique_id", "compute_units", "gfx_target")
    serial = _or_na(r.get("unique_id"), lambda v: f"0x{int(v, 16):016X}" if all(c in "0123456789abcdefABCDEF" for c in v) else v)
    units = _or_na(r.get("compute_units"))
    return {"market_name": _or_na(r.get("marketing_name")), "vendor_id": _or_na(r.get("pci_vendor_id")),
            "vendor_name": "N/A", "device_id": _or_na(r.get("pci_device_id")), "rev_id": _or_na(r.get("pci_revision_id")),
            "subsystem_id": _or_na(r.get("pci_subsystem_device_id")), "asic_serial": serial,
            "num_compute_units": units, "num_of_compute_units": units,  # both spellings amdsmi releases use
            "target_graphics_version": _or_na(r.get("gfx_target"))}


def amdsmi_get_gpu_driver_info(handle) -> Dict[str, str]:
    r = _readings(handle, ("identity",), "driver_name", "driver_version")
    return {"driver_name": _or_na(r.get("driver_name")), "driver_version": _or_na(r.get("driver_version")),
            "driver_date": "N/A"}


def amdsmi_get_gpu_vbios_info(handle) -> Dict[str, str]:
    r = _readings(handle, ("identity",), "vbios_version")
    return {"name": "N/A", "build_date": "N/A", "part_number": "N/A", "version": _or_na(r.get("vbios_version")),
            "boot_firmware": "N/A"}


def amdsmi_get_power_info(handle) -> Dict[str, Any]:
    """W and mV. socket_power: the current socket power where the GPU reports it, else the average."""
    r = _readings(handle, ("static", "live"), "power_current", "power_average", "power_cap", "voltage_gfx",
                  "voltage_soc", "voltage_memory")
    current, average = _or_na(r.get("power_current")), _or_na(r.get("power_average"))
    return {"socket_power": current if current != "N/A" else average, "current_socket_power": current,
            "average_socket_power": average, "gfx_voltage": _or_na(r.get("voltage_gfx")),
            "soc_voltage": _or_na(r.get("voltage_soc")), "mem_voltage": _or_na(r.get("voltage_memory")),
            "power_limit": _or_na(r.get("power_cap")), "ubb_power": "N/A"}


def amdsmi_get_temp_metric(handle, sensor_type: AmdSmiTemperatureType, metric: AmdSmiTemperatureMetric) -> int:
    """Degrees C, as an int (amdsmi divides the driver's millidegrees)."""
    if not isinstance(sensor_type, AmdSmiTemperatureType):
        raise AmdSmiParameterException(sensor_type, AmdSmiTemperatureType)
    if not isinstance(metric, AmdSmiTemperatureMetric):
        raise AmdSmiParameterException(metric, AmdSmiTemperatureMetric)
    name = _TEMPERATURES.get((AmdSmiTemperatureType(int(sensor_type)), metric))
    if name is None:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED,
                                     f"{sensor_type.name} {metric.name}: hipstack has no such temperature")
    kind = "live" if metric == AmdSmiTemperatureMetric.CURRENT else "static"
    return int(_value(handle, kind, name))


def amdsmi_get_gpu_activity(handle) -> Dict[str, Any]:
    """%: gfx (gpu_busy), umc (memory_busy); mm: "N/A" (hipstack has no multimedia busy figure)."""
    r = _readings(handle, ("live",), "gpu_busy", "memory_busy")
    as_int = lambda v: int(round(v))  # noqa: E731
    return {"gfx_activity": _or_na(r.get("gpu_busy"), as_int), "umc_activity": _or_na(r.get("memory_busy"), as_int),
            "mm_activity": "N/A"}


def amdsmi_get_gpu_vram_usage(handle) -> Dict[str, int]:
    """MB (amdsmi divides bytes by 2**20)."""
    return {"vram_total": int(_value(handle, "static", "vram_total")) // MB,
            "vram_used": int(_value(handle, "live", "vram_used")) // MB}


def amdsmi_get_gpu_memory_total(handle, mem_type: AmdSmiMemoryType) -> int:
    """Bytes."""
    if not isinstance(mem_type, AmdSmiMemoryType):
        raise AmdSmiParameterException(mem_type, AmdSmiMemoryType)
    return int(_value(handle, "static", _MEMORY_TOTALS[mem_type]))


def amdsmi_get_gpu_process_list(handle) -> List[Dict[str, Any]]:
    """The processes using the GPU (ROCm 6.2 and later: dicts). Memory in bytes; cu_occupancy a count of
    compute units; engine_usage (amdsmi's nanoseconds of engine time) is "N/A": hipstack measures
    engine busy as a share of time, not accumulated time."""
    if not isinstance(handle, amdsmi_processor_handle):
        raise AmdSmiParameterException(handle, amdsmi_processor_handle)
    out = []
    for p in _open().processes(handle.index):
        r = {x.metric: x for x in p.readings if not x.instance}
        vram, gtt = _or_na(r.get("process_vram")), _or_na(r.get("process_gtt"))
        out.append({"name": p.name or "N/A", "pid": p.pid, "mem": vram,
                    "engine_usage": {"gfx": "N/A", "enc": "N/A"},
                    "memory_usage": {"gtt_mem": gtt, "cpu_mem": "N/A", "vram_mem": vram},
                    "cu_occupancy": _or_na(r.get("process_cu_occupancy"))})
    return out
