"""The amdsmi calls scripts and exporters use, answered by libhipstack-smi for AMD and NVIDIA GPUs
alike (docs/python.md, "hipstack.amdsmi"). A script ports by changing its import:

    import hipstack.amdsmi as amdsmi          # was: import amdsmi
    from hipstack.amdsmi import *             # was: from amdsmi import *

Keys, units and types are those of amdsmi's Python interface in ROCm 7.x: whole numbers as int
(power in W, power caps in microwatts, voltages in mV, temperatures in degrees C, activity in %,
clocks in MHz, PCIe speeds in MT/s), amdsmi_get_gpu_vram_usage in MB, other memory in bytes. A value
hipstack has no source for is "N/A", as amdsmi writes it; a call whose whole answer is missing raises
AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED). Handles are enumerated as amdsmi enumerates
them: one per compute partition of an AMD GPU (8 per MI300X in CPX), whose BDF's function is the
partition; the GPU-wide figures answer on partition 0 only, as amdsmi's do. HIPSTACK_SYSFS_ROOT /
HIPSTACK_PROCFS_ROOT (a capture) and HIPSTACK_NVML_LIBRARY are honoured.
"""
import errno
import re
import threading
from typing import Any, Dict, List, Optional

import hipstack
from hipstack._amdsmi_types import *  # noqa: F401,F403 (amdsmi's namespace: scripts read it whole)
from hipstack._amdsmi_types import (AMDSMI_STATUS_API_FAILED, AMDSMI_STATUS_NOT_FOUND, AMDSMI_STATUS_NOT_INIT,
                                    AMDSMI_STATUS_NOT_SUPPORTED, AMDSMI_STATUS_UNEXPECTED_DATA,
                                    AMDSMI_STATUS_UNKNOWN_ERROR, AmdSmiBdfFormatException, AmdSmiClkType,
                                    AmdSmiDevPerfLevel, AmdSmiFwBlock, AmdSmiGpuBlock, AmdSmiInitFlags,
                                    AmdSmiLibraryException, AmdSmiMemoryPageStatus, AmdSmiMemoryType,
                                    AmdSmiParameterException, AmdSmiTemperatureMetric, AmdSmiTemperatureType,
                                    AmdSmiTimeoutException)


class amdsmi_processor_handle:  # noqa: N801 (amdsmi's name)
    """A GPU, or one compute partition of an AMD GPU (partition: its index in the GPU; None: the whole GPU)."""

    def __init__(self, index: int, bdf: str, partition: Optional[int] = None):
        self.index, self.bdf, self.partition = index, bdf, partition

    def __eq__(self, other):
        return isinstance(other, amdsmi_processor_handle) and (other.index, other.partition) == (self.index, self.partition)

    def __hash__(self):
        return hash((self.index, self.partition))

    def __repr__(self):
        return f"amdsmi_processor_handle({self.index}, {self.bdf})"


_lock = threading.Lock()
_system: Optional[hipstack.System] = None
MB = 1 << 20


class _Names(dict):
    """amdsmi's names -> the catalogue metrics hipstack answers them from, in candidate order: the
    library's table (hipstack.foreign_names("amdsmi"), docs/foreign-names.md), read by the first
    amdsmi_init. This module names no metric itself."""

    def __missing__(self, name):
        if not self:
            raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_INIT, "amdsmi_init() was not called")
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED,
                                     f"{name}: not in the library's table (a library older than this module)")


_M = _Names()


def _metric(name: str) -> str:
    """The one metric an amdsmi name reads."""
    return _M[name][0]


# The name of each (temperature type, temperature metric) hipstack reads.
_TEMPERATURES = {
    (AmdSmiTemperatureType.EDGE, AmdSmiTemperatureMetric.CURRENT): "amdsmi_get_temp_metric(EDGE, CURRENT)",
    (AmdSmiTemperatureType.EDGE, AmdSmiTemperatureMetric.CRITICAL): "amdsmi_get_temp_metric(EDGE, CRITICAL)",
    (AmdSmiTemperatureType.EDGE, AmdSmiTemperatureMetric.EMERGENCY): "amdsmi_get_temp_metric(EDGE, EMERGENCY)",
    (AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.CURRENT): "amdsmi_get_temp_metric(HOTSPOT, CURRENT)",
    (AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.CRITICAL): "amdsmi_get_temp_metric(HOTSPOT, CRITICAL)",
    (AmdSmiTemperatureType.HOTSPOT, AmdSmiTemperatureMetric.EMERGENCY): "amdsmi_get_temp_metric(HOTSPOT, EMERGENCY)",
    (AmdSmiTemperatureType.VRAM, AmdSmiTemperatureMetric.CURRENT): "amdsmi_get_temp_metric(VRAM, CURRENT)",
    (AmdSmiTemperatureType.VRAM, AmdSmiTemperatureMetric.CRITICAL): "amdsmi_get_temp_metric(VRAM, CRITICAL)",
    (AmdSmiTemperatureType.VRAM, AmdSmiTemperatureMetric.EMERGENCY): "amdsmi_get_temp_metric(VRAM, EMERGENCY)",
}
_MEMORY_TOTALS = {AmdSmiMemoryType.VRAM: "amdsmi_get_gpu_memory_total(VRAM)",
                  AmdSmiMemoryType.VIS_VRAM: "amdsmi_get_gpu_memory_total(VIS_VRAM)",
                  AmdSmiMemoryType.GTT: "amdsmi_get_gpu_memory_total(GTT)"}


def amdsmi_init(flag: AmdSmiInitFlags = AmdSmiInitFlags.INIT_AMD_GPUS) -> None:
    """Opens hipstack's System (GPUs of every backend). CPU flags are accepted; hipstack reports GPUs."""
    global _system
    if not isinstance(flag, AmdSmiInitFlags):
        raise AmdSmiParameterException(flag, AmdSmiInitFlags)
    with _lock:
        if _system is None:
            try:
                system = hipstack.System()
            except hipstack.Error as e:
                raise AmdSmiLibraryException(AMDSMI_STATUS_UNKNOWN_ERROR, str(e)) from e
            if not _M:
                try:
                    _M.update(hipstack.foreign_names("amdsmi"))
                except hipstack.Error as e:
                    system.close()
                    raise AmdSmiLibraryException(AMDSMI_STATUS_UNKNOWN_ERROR, str(e)) from e
            _system = system


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


def _call(what, *args):
    """A call of the System with its errors as amdsmi's exceptions."""
    try:
        return what(*args)
    except hipstack.TimedOut as e:
        raise AmdSmiTimeoutException(str(e)) from e
    except hipstack.NoSuchDevice as e:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_FOUND, str(e)) from e
    except hipstack.Error as e:
        raise AmdSmiLibraryException(AMDSMI_STATUS_UNKNOWN_ERROR, str(e)) from e


def amdsmi_get_processor_handles() -> List[amdsmi_processor_handle]:
    """One handle per GPU; an AMD GPU in compute partitions (CPX, DPX, ...) has one per partition, with
    the partition's BDF (function = partition), as amdsmi enumerates them."""
    system = _open()
    handles = []
    for d in _call(system.devices):
        if d.vendor == "amd" and d.partition_count > 1:
            handles += [amdsmi_processor_handle(d.index, p.bdf, p.index) for p in _call(system.partitions, d.index)]
        else:
            handles.append(amdsmi_processor_handle(d.index, d.bdf))
    return handles


def _device(handle) -> hipstack.Device:
    """The handle's GPU; NOT_FOUND when there is no such GPU (a handle of another System)."""
    devices = _call(_open().devices)
    if not 0 <= _checked(handle).index < len(devices):
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_FOUND, f"no GPU {handle.index} (there are {len(devices)})")
    return devices[handle.index]


def _checked(handle) -> amdsmi_processor_handle:
    if not isinstance(handle, amdsmi_processor_handle):
        raise AmdSmiParameterException(handle, amdsmi_processor_handle)
    return handle


def _secondary(handle) -> bool:
    """A compute partition other than the first: amdsmi reports the GPU-wide figures on partition 0 only."""
    return handle.partition not in (None, 0)


def _readings(handle, kinds, *metrics, instanced: bool = False) -> Dict[Any, hipstack.Reading]:
    """The GPU's readings of `metrics` by name (instanced: by (name, instance)); none for a secondary
    partition."""
    _checked(handle)
    if _secondary(handle):
        return {}
    found = _call(_open().sample, handle.index, kinds, metrics)
    if instanced:
        return {(r.metric, r.instance): r for r in found}
    return {r.metric: r for r in found if not r.instance}


def _instances(handle, kinds, metric) -> List[hipstack.Reading]:
    """The readings of an instanced metric, in the GPU's order."""
    return [r for (name, _), r in _readings(handle, kinds, metric, instanced=True).items() if name == metric]


def _partition(handle) -> Optional[hipstack.Partition]:
    """The handle's compute partition (None for a whole GPU)."""
    if _checked(handle).partition is None:
        return None
    for p in _call(_open().partitions, handle.index):
        if p.index == handle.partition:
            return p
    raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_FOUND, f"GPU {handle.index} has no partition {handle.partition} now")


def _partition_value(handle, metric: str) -> Any:
    p = _partition(handle)
    r = next((r for r in p.readings if r.metric == metric and not r.instance), None) if p is not None else None
    return r.value if r is not None and r.ok else "N/A"


def _or_na(reading: Optional[hipstack.Reading], convert=lambda v: v) -> Any:
    return convert(reading.value) if reading is not None and reading.ok else "N/A"


def _int(value) -> int:
    return int(round(value))


def _missing(handle, name: str, reading: Optional[hipstack.Reading]) -> AmdSmiLibraryException:
    if _secondary(handle):
        return AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED,
                                      f"{name}: partition {handle.partition} (amdsmi reports GPU-wide figures on partition 0)")
    why = f"{reading.status}: {reading.detail}" if reading is not None else "not reported"
    # A value that cannot be true (used above total: docs/api.md "Impossible readings") is data the
    # library read and refused, not a missing feature.
    impossible = reading is not None and reading.status == "error" and reading.error_code == errno.ERANGE
    return AmdSmiLibraryException(AMDSMI_STATUS_UNEXPECTED_DATA if impossible else AMDSMI_STATUS_NOT_SUPPORTED,
                                  f"{name} {why}")


def _value(handle, kind: str, name: str) -> Any:
    reading = _readings(handle, (kind,), name).get(name)
    if reading is None or not reading.ok:
        raise _missing(handle, name, reading)
    return reading.value


# ---- Identity ------------------------------------------------------------------------------------

def amdsmi_get_gpu_device_uuid(handle) -> str:
    """The GPU's UUID (a partition's handle: its GPU's, as amdsmi before ROCm 7.0 gives)."""
    return _device(handle).uuid


def amdsmi_get_gpu_device_bdf(handle) -> str:
    """A partition's handle: the GPU's BDF with the partition as the function."""
    return _checked(handle).bdf


_BDF = re.compile(r"^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$")


def _bdf_fields(bdf: str):
    match = _BDF.match(bdf.strip()) if isinstance(bdf, str) else None
    if match is None:
        raise AmdSmiBdfFormatException(bdf)
    domain, bus, device, function = match.groups()
    return int(domain or "0", 16), int(bus, 16), int(device, 16), int(function)


def amdsmi_get_gpu_bdf_id(handle) -> int:
    """amdsmi's 64-bit BDF id: domain << 32 | partition << 28 | bus << 8 | device << 3 | function."""
    domain, bus, device, function = _bdf_fields(_checked(handle).bdf)
    return domain << 32 | ((handle.partition or 0) & 0xF) << 28 | (bus & 0xFF) << 8 | (device & 0x1F) << 3 | function


def amdsmi_get_processor_handle_from_bdf(bdf: str) -> amdsmi_processor_handle:
    """The handle whose BDF this is ("dddd:bb:dd.f" or "bb:dd.f"; the function selects a partition).
    None matches: AMDSMI_STATUS_API_FAILED, as amdsmi answers."""
    wanted = _bdf_fields(bdf)
    for handle in amdsmi_get_processor_handles():
        if _bdf_fields(handle.bdf) == wanted:
            return handle
    raise AmdSmiLibraryException(AMDSMI_STATUS_API_FAILED, f"no GPU or partition at {bdf}")


def amdsmi_get_gpu_id(handle) -> int:
    """The PCI device id."""
    return int(_value(_whole_gpu(handle), "identity", _metric("amdsmi_get_gpu_id")), 16)


def amdsmi_get_gpu_subsystem_id(handle) -> str:
    """The PCI subsystem device id as amdsmi 7.x writes it ("0x74a1")."""
    return "0x%04x" % int(_value(_whole_gpu(handle), "identity", _metric("amdsmi_get_gpu_subsystem_id")), 16)


def _no_source(what: str):
    def call(handle, *args):
        _checked(handle)
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, f"{what}: hipstack has no source for it")
    call.__name__ = what
    return call


amdsmi_get_gpu_vendor_name = _no_source("amdsmi_get_gpu_vendor_name")  # amdsmi reads pci.ids; hipstack does not
amdsmi_get_gpu_subsystem_name = _no_source("amdsmi_get_gpu_subsystem_name")


def amdsmi_get_gpu_asic_info(handle) -> Dict[str, Any]:
    """The GPU's identity (a partition's handle: its GPU's, with the partition's compute units)."""
    m = {name.rpartition(".")[2]: _metric(name) for name in _ASIC_NAMES}
    whole_units, partition_units = _M["amdsmi_get_gpu_asic_info.num_compute_units"]
    r = _readings(_whole_gpu(handle), ("identity", "static"), *m.values(), whole_units)
    serial = _or_na(r.get(m["asic_serial"]), lambda v: f"0x{int(v, 16):016X}" if all(c in "0123456789abcdefABCDEF" for c in v) else v)
    units = _partition_value(handle, partition_units) if handle.partition is not None else _or_na(r.get(whole_units))
    return {"market_name": _or_na(r.get(m["market_name"])), "vendor_id": _or_na(r.get(m["vendor_id"])),
            "vendor_name": "N/A", "device_id": _or_na(r.get(m["device_id"])), "rev_id": _or_na(r.get(m["rev_id"])),
            "subsystem_id": _or_na(r.get(m["subsystem_id"])), "asic_serial": serial,
            "num_compute_units": units, "num_of_compute_units": units,  # both spellings amdsmi releases use
            "target_graphics_version": _or_na(r.get(m["target_graphics_version"]))}


_ASIC_NAMES = ("amdsmi_get_gpu_asic_info.market_name", "amdsmi_get_gpu_asic_info.vendor_id",
               "amdsmi_get_gpu_asic_info.device_id", "amdsmi_get_gpu_asic_info.rev_id",
               "amdsmi_get_gpu_asic_info.subsystem_id", "amdsmi_get_gpu_asic_info.asic_serial",
               "amdsmi_get_gpu_asic_info.target_graphics_version")


def amdsmi_get_gpu_board_info(handle) -> Dict[str, str]:
    """The board's FRU facts (amdgpu's product_number, serial_number, product_name, manufacturer)."""
    return _keyed(_whole_gpu(handle), ("identity",), ("amdsmi_get_gpu_board_info.model_number",
                  "amdsmi_get_gpu_board_info.product_serial", "fru_id", "amdsmi_get_gpu_board_info.product_name",
                  "amdsmi_get_gpu_board_info.manufacturer_name"))


def amdsmi_get_gpu_driver_info(handle) -> Dict[str, str]:
    return _keyed(_whole_gpu(handle), ("identity",), ("amdsmi_get_gpu_driver_info.driver_name",
                  "amdsmi_get_gpu_driver_info.driver_version", "driver_date"))


def amdsmi_get_gpu_vbios_info(handle) -> Dict[str, str]:
    return _keyed(_whole_gpu(handle), ("identity",), ("name", "build_date", "part_number",
                  "amdsmi_get_gpu_vbios_info.version", "boot_firmware"))


def _keyed(handle, kinds, names) -> Dict[str, Any]:
    """A call's dict, in the order of `names`: a table name ("CALL.KEY") gives KEY the value of its one
    metric ("N/A" where not ok); a bare key is one hipstack has no source for ("N/A")."""
    metrics = {name: _metric(name) for name in names if "." in name}
    r = _readings(handle, kinds, *metrics.values())
    return {name.rpartition(".")[2]: _or_na(r.get(metrics[name])) if name in metrics else "N/A" for name in names}


# amdgpu's fw_version files (the firmware_version instances) as amdsmi's blocks.
_FIRMWARE = {"asd": AmdSmiFwBlock.AMDSMI_FW_ID_ASD, "ce": AmdSmiFwBlock.AMDSMI_FW_ID_CP_CE,
             "dmcu": AmdSmiFwBlock.AMDSMI_FW_ID_DMCU, "imu": AmdSmiFwBlock.AMDSMI_FW_ID_IMU_DRAM,
             "mc": AmdSmiFwBlock.AMDSMI_FW_ID_MC, "me": AmdSmiFwBlock.AMDSMI_FW_ID_CP_ME,
             "mec": AmdSmiFwBlock.AMDSMI_FW_ID_CP_MEC1, "mec2": AmdSmiFwBlock.AMDSMI_FW_ID_CP_MEC2,
             "pfp": AmdSmiFwBlock.AMDSMI_FW_ID_CP_PFP, "rlc": AmdSmiFwBlock.AMDSMI_FW_ID_RLC,
             "rlc_srlc": AmdSmiFwBlock.AMDSMI_FW_ID_RLC_RESTORE_LIST_CNTL, "rlc_srlg": AmdSmiFwBlock.AMDSMI_FW_ID_RLC_SRLG,
             "rlc_srls": AmdSmiFwBlock.AMDSMI_FW_ID_RLC_SRLS, "sdma": AmdSmiFwBlock.AMDSMI_FW_ID_SDMA0,
             "sdma2": AmdSmiFwBlock.AMDSMI_FW_ID_SDMA1, "smc": AmdSmiFwBlock.AMDSMI_FW_ID_PM,
             "sos": AmdSmiFwBlock.AMDSMI_FW_ID_PSP_SOSDRV, "ta_ras": AmdSmiFwBlock.AMDSMI_FW_ID_TA_RAS,
             "ta_xgmi": AmdSmiFwBlock.AMDSMI_FW_ID_TA_XGMI, "uvd": AmdSmiFwBlock.AMDSMI_FW_ID_UVD,
             "vce": AmdSmiFwBlock.AMDSMI_FW_ID_VCE, "vcn": AmdSmiFwBlock.AMDSMI_FW_ID_VCN}
_HEX_DOTTED = {AmdSmiFwBlock.AMDSMI_FW_ID_PSP_SOSDRV, AmdSmiFwBlock.AMDSMI_FW_ID_TA_RAS, AmdSmiFwBlock.AMDSMI_FW_ID_TA_XGMI,
               AmdSmiFwBlock.AMDSMI_FW_ID_UVD, AmdSmiFwBlock.AMDSMI_FW_ID_VCE, AmdSmiFwBlock.AMDSMI_FW_ID_VCN}


def _firmware_text(block: AmdSmiFwBlock, version: int) -> str:
    """amdsmi 7.x's forms: dotted hex bytes (PSP, TA, video blocks), dotted decimal bytes (PM), else decimal."""
    octets = [(version >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    if block in _HEX_DOTTED:
        return ".".join("%02X" % o for o in octets)
    if block == AmdSmiFwBlock.AMDSMI_FW_ID_PM:
        return ".".join("%02d" % o for o in octets)
    return str(version)


def amdsmi_get_fw_info(handle) -> Dict[str, list]:
    """{"fw_list": [{"fw_name": AmdSmiFwBlock, "fw_version": str}]}, in amdsmi's block order."""
    found = []
    metric = _metric("amdsmi_get_fw_info.fw_list")
    for r in _instances(_whole_gpu(handle), ("identity",), metric):
        block = _FIRMWARE.get(r.instance)
        if r.ok and block is not None:
            found.append({"fw_name": block, "fw_version": _firmware_text(block, int(r.value, 16))})
    if not found:
        raise _missing(handle, metric, None)
    return {"fw_list": sorted(found, key=lambda e: int(e["fw_name"]))}


def amdsmi_get_gpu_kfd_info(handle) -> Dict[str, Any]:
    """kfd_id: KFD's gpu_id of the GPU or partition; node_id: "N/A" (hipstack keeps no KFD node index);
    current_partition_id: the partition (0 for a whole GPU)."""
    whole, partition = _M["amdsmi_get_gpu_kfd_info.kfd_id"]
    if _checked(handle).partition is not None:
        kfd = _partition_value(handle, partition)
    else:
        kfd = _or_na(_readings(handle, ("identity",), whole).get(whole))
    return {"kfd_id": kfd, "node_id": "N/A", "current_partition_id": handle.partition or 0}


def amdsmi_get_gpu_compute_partition(handle) -> str:
    return _value(_whole_gpu(handle), "static", _metric("amdsmi_get_gpu_compute_partition"))


def amdsmi_get_gpu_memory_partition(handle) -> str:
    return _value(_whole_gpu(handle), "static", _metric("amdsmi_get_gpu_memory_partition"))


def _whole_gpu(handle) -> amdsmi_processor_handle:
    """The first partition of a partition's GPU: the GPU's own settings answer for every partition."""
    return amdsmi_processor_handle(_checked(handle).index, handle.bdf, None if handle.partition is None else 0)


def amdsmi_topo_get_numa_node_number(handle) -> int:
    return int(_value(_whole_gpu(handle), "static", _metric("amdsmi_topo_get_numa_node_number")))


# ---- Power, temperature, activity, clocks -----------------------------------------------------------

def _microwatts(watts) -> int:
    return _int(watts * 1_000_000)


def amdsmi_get_power_info(handle) -> Dict[str, Any]:
    """W (int) and mV; power_limit in microwatts, as amdsmi 7.x gives it. socket_power: the current
    socket power where the GPU reports it (MI300), else the average."""
    m = {name.rpartition(".")[2]: _metric(name) for name in _POWER_NAMES}
    socket = _M["amdsmi_get_power_info.socket_power"]  # the first of them the GPU gives
    r = _readings(handle, ("static", "live"), *dict.fromkeys((*socket, *m.values())))
    given = [_or_na(r.get(name), _int) for name in socket]
    return {"socket_power": next((v for v in given if v != "N/A"), "N/A"),
            "current_socket_power": _or_na(r.get(m["current_socket_power"]), _int),
            "average_socket_power": _or_na(r.get(m["average_socket_power"]), _int),
            "gfx_voltage": _or_na(r.get(m["gfx_voltage"]), _int), "soc_voltage": _or_na(r.get(m["soc_voltage"]), _int),
            "mem_voltage": _or_na(r.get(m["mem_voltage"]), _int),
            "power_limit": _or_na(r.get(m["power_limit"]), _microwatts), "ubb_power": "N/A"}


_POWER_NAMES = ("amdsmi_get_power_info.current_socket_power", "amdsmi_get_power_info.average_socket_power",
                "amdsmi_get_power_info.power_limit", "amdsmi_get_power_info.gfx_voltage",
                "amdsmi_get_power_info.soc_voltage", "amdsmi_get_power_info.mem_voltage")


def amdsmi_get_power_cap_info(handle, sensor_ind: int = 0) -> Dict[str, Any]:
    """Microwatts; dpm_cap (MHz) "N/A": hipstack has no source for it. Sensor 0 only (PPT0)."""
    if not isinstance(sensor_ind, int):
        raise AmdSmiParameterException(sensor_ind, int)
    if sensor_ind != 0:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, f"power cap sensor {sensor_ind}: hipstack reads PPT0")
    cap, default, low, high = (_metric(name) for name in (
        "amdsmi_get_power_cap_info.power_cap", "amdsmi_get_power_cap_info.default_power_cap",
        "amdsmi_get_power_cap_info.min_power_cap", "amdsmi_get_power_cap_info.max_power_cap"))
    r = _readings(handle, ("static",), cap, default, low, high)
    if cap not in r or not r[cap].ok:
        raise _missing(handle, cap, r.get(cap))
    return {"power_cap": _microwatts(r[cap].value), "default_power_cap": _or_na(r.get(default), _microwatts),
            "dpm_cap": "N/A", "min_power_cap": _or_na(r.get(low), _microwatts),
            "max_power_cap": _or_na(r.get(high), _microwatts)}


def amdsmi_get_energy_count(handle) -> Dict[str, Any]:
    """Energy since the driver loaded: energy_accumulator * counter_resolution microjoules. hipstack reads
    joules, so the counter is in microjoules and the resolution 1.0; timestamp: the firmware's, in ns."""
    energy = _metric("amdsmi_get_energy_count.energy_accumulator")
    timestamp = _metric("amdsmi_get_energy_count.timestamp")
    r = _readings(handle, ("live",), energy, timestamp)
    if energy not in r or not r[energy].ok:
        raise _missing(handle, energy, r.get(energy))
    return {"energy_accumulator": _int(r[energy].value * 1_000_000), "counter_resolution": 1.0,
            "timestamp": _or_na(r.get(timestamp), lambda s: _int(s * 1_000_000_000))}


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
    return int(_value(handle, kind, _metric(name)))


def amdsmi_get_gpu_activity(handle) -> Dict[str, Any]:
    """%: gfx (gpu_busy), umc (memory_busy), mm (media_busy)."""
    gfx, umc, mm = (_metric(name) for name in ("amdsmi_get_gpu_activity.gfx_activity",
                                               "amdsmi_get_gpu_activity.umc_activity", "amdsmi_get_gpu_activity.mm_activity"))
    r = _readings(handle, ("live",), gfx, umc, mm)
    return {"gfx_activity": _or_na(r.get(gfx), _int), "umc_activity": _or_na(r.get(umc), _int),
            "mm_activity": _or_na(r.get(mm), _int)}


# Each clock type's names in the table: clk (the clock now), min_clk (its DPM levels), max_clk (the
# driver's top clock, else the levels).
_CLOCKS = {
    AmdSmiClkType.SYS: ("amdsmi_get_clock_info(SYS).clk", "amdsmi_get_clock_info(SYS).min_clk",
                        "amdsmi_get_clock_info(SYS).max_clk"),
    AmdSmiClkType.MEM: ("amdsmi_get_clock_info(MEM).clk", "amdsmi_get_clock_info(MEM).min_clk",
                        "amdsmi_get_clock_info(MEM).max_clk"),
    AmdSmiClkType.DF: ("amdsmi_get_clock_info(DF).clk", "amdsmi_get_clock_info(DF).min_clk",
                       "amdsmi_get_clock_info(DF).max_clk"),
    AmdSmiClkType.SOC: ("amdsmi_get_clock_info(SOC).clk", "amdsmi_get_clock_info(SOC).min_clk",
                        "amdsmi_get_clock_info(SOC).max_clk"),
    AmdSmiClkType.DCEF: ("amdsmi_get_clock_info(DCEF).clk", "amdsmi_get_clock_info(DCEF).min_clk",
                         "amdsmi_get_clock_info(DCEF).max_clk"),
    AmdSmiClkType.VCLK0: ("amdsmi_get_clock_info(VCLK0).clk", "amdsmi_get_clock_info(VCLK0).min_clk",
                          "amdsmi_get_clock_info(VCLK0).max_clk"),
    AmdSmiClkType.DCLK0: ("amdsmi_get_clock_info(DCLK0).clk", "amdsmi_get_clock_info(DCLK0).min_clk",
                          "amdsmi_get_clock_info(DCLK0).max_clk"),
}


def amdsmi_get_clock_info(handle, clock_type: AmdSmiClkType) -> Dict[str, Any]:
    """MHz: the clock now, its lowest and highest DPM level (the driver's top clock where it gives one),
    the deep-sleep level; clk_locked "N/A" (hipstack does not read the lock)."""
    if not isinstance(clock_type, AmdSmiClkType):
        raise AmdSmiParameterException(clock_type, AmdSmiClkType)
    if clock_type not in _CLOCKS:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, f"{clock_type.name}: hipstack does not read this clock")
    now_name, levels_name, max_name = _CLOCKS[clock_type]
    current, levels = _metric(now_name), _metric(levels_name)
    top = next((m for m in _M[max_name] if m != levels), None)  # the driver's top clock, where it has one
    names = [n for n in (current, levels, top) if n]
    r = _readings(handle, ("static", "live"), *names, instanced=True)
    now = r.get((current, ""))
    if now is None or not now.ok:
        raise _missing(handle, current, now)
    steps = {x.instance: x.value for (name, _), x in r.items() if name == levels and x.ok}
    numbered = [v for level, v in steps.items() if level.isdigit()]
    highest = r.get((top, "")) if top else None
    return {"clk": _int(now.value), "min_clk": _int(min(numbered)) if numbered else "N/A",
            "max_clk": _int(highest.value) if highest is not None and highest.ok else (_int(max(numbered)) if numbered else "N/A"),
            "clk_locked": "N/A", "clk_deep_sleep": _int(steps["S"]) if "S" in steps else "N/A"}


_PERF_LEVELS = {"auto": AmdSmiDevPerfLevel.AUTO, "low": AmdSmiDevPerfLevel.LOW, "high": AmdSmiDevPerfLevel.HIGH,
                "manual": AmdSmiDevPerfLevel.MANUAL, "profile_standard": AmdSmiDevPerfLevel.STABLE_STD,
                "profile_peak": AmdSmiDevPerfLevel.STABLE_PEAK, "profile_min_mclk": AmdSmiDevPerfLevel.STABLE_MIN_MCLK,
                "profile_min_sclk": AmdSmiDevPerfLevel.STABLE_MIN_SCLK, "perf_determinism": AmdSmiDevPerfLevel.DETERMINISM}


def amdsmi_get_gpu_perf_level(handle) -> str:
    """amdsmi's name of the level (amdgpu's power_dpm_force_performance_level): "AMDSMI_DEV_PERF_LEVEL_AUTO", ..."""
    level = _PERF_LEVELS.get(_value(handle, "live", _metric("amdsmi_get_gpu_perf_level")), AmdSmiDevPerfLevel.UNKNOWN)
    return "AMDSMI_DEV_PERF_LEVEL_" + level.name


def amdsmi_get_gpu_fan_speed(handle, sensor_idx: int) -> int:
    """The fan's PWM level relative to amdsmi_get_gpu_fan_speed_max (255 on hwmon)."""
    return _int(_value(_fan(handle, sensor_idx), "live", _metric("amdsmi_get_gpu_fan_speed")))


def amdsmi_get_gpu_fan_rpms(handle, sensor_idx: int) -> int:
    return _int(_value(_fan(handle, sensor_idx), "live", _metric("amdsmi_get_gpu_fan_rpms")))


def amdsmi_get_gpu_fan_speed_max(handle, sensor_idx: int) -> int:
    return _int(_value(_fan(handle, sensor_idx), "static", _metric("amdsmi_get_gpu_fan_speed_max")))


def _fan(handle, sensor_idx):
    if not isinstance(sensor_idx, int):
        raise AmdSmiParameterException(sensor_idx, int)
    if sensor_idx != 0:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, f"fan {sensor_idx}: hipstack reads fan 0")
    return handle


# ---- PCIe, ECC, bad pages ----------------------------------------------------------------------------

def _pcie_generation(gts):
    for generation, rate in enumerate((2.5, 5, 8, 16, 32, 64), start=1):
        if abs(gts - rate) < 0.01:
            return generation
    return "N/A"


def amdsmi_get_pcie_info(handle) -> Dict[str, Dict[str, Any]]:
    """Speeds in MT/s, bandwidth in Mb/s (amdsmi 7.x's units); counters as the driver counts them."""
    m = {name.partition(".")[2]: _metric(name) for name in _PCIE_NAMES}
    r = _readings(handle, ("static", "live"), *dict.fromkeys(m.values()))
    get = lambda key, convert=_int: _or_na(r.get(m[key]), convert)  # noqa: E731
    mts = lambda gts: _int(gts * 1000)  # noqa: E731
    return {"pcie_static": {"max_pcie_width": get("pcie_static.max_pcie_width"),
                            "max_pcie_speed": get("pcie_static.max_pcie_speed", mts),
                            "pcie_interface_version": get("pcie_static.pcie_interface_version", _pcie_generation),
                            "slot_type": "N/A"},
            "pcie_metric": {"pcie_width": get("pcie_metric.pcie_width"), "pcie_speed": get("pcie_metric.pcie_speed", mts),
                            "pcie_bandwidth": get("pcie_metric.pcie_bandwidth", lambda b: _int(b * 8 / 1_000_000)),
                            "pcie_replay_count": get("pcie_metric.pcie_replay_count"),
                            "pcie_l0_to_recovery_count": get("pcie_metric.pcie_l0_to_recovery_count"),
                            "pcie_replay_roll_over_count": "N/A",
                            "pcie_nak_sent_count": get("pcie_metric.pcie_nak_sent_count"),
                            "pcie_nak_received_count": get("pcie_metric.pcie_nak_received_count"),
                            "pcie_lc_perf_other_end_recovery_count": "N/A"}}


_PCIE_NAMES = ("amdsmi_get_pcie_info.pcie_static.max_pcie_width", "amdsmi_get_pcie_info.pcie_static.max_pcie_speed",
               "amdsmi_get_pcie_info.pcie_static.pcie_interface_version", "amdsmi_get_pcie_info.pcie_metric.pcie_width",
               "amdsmi_get_pcie_info.pcie_metric.pcie_speed", "amdsmi_get_pcie_info.pcie_metric.pcie_bandwidth",
               "amdsmi_get_pcie_info.pcie_metric.pcie_replay_count",
               "amdsmi_get_pcie_info.pcie_metric.pcie_l0_to_recovery_count",
               "amdsmi_get_pcie_info.pcie_metric.pcie_nak_sent_count",
               "amdsmi_get_pcie_info.pcie_metric.pcie_nak_received_count")


# Each call's names in the table: correctable, uncorrectable, deferred counts.
_ECC = {None: ("amdsmi_get_gpu_total_ecc_count.correctable_count", "amdsmi_get_gpu_total_ecc_count.uncorrectable_count",
               "amdsmi_get_gpu_total_ecc_count.deferred_count"),
        "block": ("amdsmi_get_gpu_ecc_count.correctable_count", "amdsmi_get_gpu_ecc_count.uncorrectable_count",
                  "amdsmi_get_gpu_ecc_count.deferred_count")}


def _ecc(handle, block: Optional[str]) -> Dict[str, Any]:
    keyed = [(name.rpartition(".")[2], _metric(name)) for name in _ECC[None if block is None else "block"]]
    r = _readings(handle, ("live",), *[m for _, m in keyed], instanced=True)
    out = {}
    for key, metric in keyed:
        counts = [x.value for (name, instance), x in r.items() if name == metric and x.ok and block in (None, instance)]
        out[key] = int(sum(counts)) if counts else None
    if out["correctable_count"] is None and out["uncorrectable_count"] is None:
        correctable = keyed[0][1]
        what = f"{correctable} of {block}" if block else correctable
        raise _missing(handle, what, next((x for (name, _), x in r.items() if name == correctable), None))
    return {k: ("N/A" if v is None else v) for k, v in out.items()}  # a count not reported is not 0


def amdsmi_get_gpu_total_ecc_count(handle) -> Dict[str, int]:
    """The sums over amdgpu's RAS blocks since the driver loaded."""
    return _ecc(handle, None)


def amdsmi_get_gpu_ecc_count(handle, block: AmdSmiGpuBlock) -> Dict[str, int]:
    if not isinstance(block, AmdSmiGpuBlock):
        raise AmdSmiParameterException(block, AmdSmiGpuBlock)
    return _ecc(handle, block.name.lower())


_PAGE_STATES = {"reserved": AmdSmiMemoryPageStatus.RESERVED, "pending": AmdSmiMemoryPageStatus.PENDING,
                "failed": AmdSmiMemoryPageStatus.UNRESERVABLE}


def amdsmi_get_gpu_bad_page_info(handle) -> List[Dict[str, int]]:
    """The retired pages: address, size (bytes), status (AmdSmiMemoryPageStatus as an int); [] for none."""
    if _secondary(_checked(handle)):
        raise _missing(handle, "bad_pages", None)
    try:
        pages = _call(_open().bad_pages, handle.index)
    except AmdSmiLibraryException as e:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, e.detail) from e
    return [{"value": i, "page_address": p.frame, "page_size": p.size,
             "status": int(_PAGE_STATES.get(p.state, AmdSmiMemoryPageStatus.UNRESERVABLE))} for i, p in enumerate(pages)]


# ---- Memory and processes ------------------------------------------------------------------------

_MEMORY_USED = {AmdSmiMemoryType.VRAM: "amdsmi_get_gpu_memory_usage(VRAM)",
                AmdSmiMemoryType.VIS_VRAM: "amdsmi_get_gpu_memory_usage(VIS_VRAM)",
                AmdSmiMemoryType.GTT: "amdsmi_get_gpu_memory_usage(GTT)"}


def amdsmi_get_gpu_vram_usage(handle) -> Dict[str, int]:
    """MB (amdsmi divides bytes by 2**20)."""
    return {"vram_total": int(_value(handle, "static", _metric("amdsmi_get_gpu_vram_usage.vram_total"))) // MB,
            "vram_used": int(_value(handle, "live", _metric("amdsmi_get_gpu_vram_usage.vram_used"))) // MB}


def amdsmi_get_gpu_memory_total(handle, mem_type: AmdSmiMemoryType) -> int:
    """Bytes. A partition's handle: the partition's VRAM (amdgpu's per-partition share)."""
    if not isinstance(mem_type, AmdSmiMemoryType):
        raise AmdSmiParameterException(mem_type, AmdSmiMemoryType)
    whole, *partition = _M[_MEMORY_TOTALS[mem_type]]  # VRAM: (the GPU's, a partition's)
    if _checked(handle).partition is not None and partition:
        memory = _partition_value(handle, partition[0])
        if memory == "N/A":
            raise _missing(handle, partition[0], None)
        return int(memory)
    return int(_value(handle, "static", whole))


def amdsmi_get_gpu_memory_usage(handle, mem_type: AmdSmiMemoryType) -> int:
    """Bytes in use."""
    if not isinstance(mem_type, AmdSmiMemoryType):
        raise AmdSmiParameterException(mem_type, AmdSmiMemoryType)
    return int(_value(handle, "live", _metric(_MEMORY_USED[mem_type])))


def amdsmi_get_gpu_process_list(handle) -> List[Dict[str, Any]]:
    """The processes using the GPU (ROCm 6.2 and later: dicts), GPU-wide as amdsmi's other figures
    (partition 0 of a partitioned GPU). Memory in bytes; cu_occupancy a count of compute units;
    engine_usage (amdsmi's nanoseconds of engine time) is "N/A": hipstack measures engine busy as a
    share of time, not accumulated time."""
    if _secondary(_checked(handle)):
        raise _missing(handle, "processes", None)
    vram_metric, gtt_metric, cu_metric = (_metric(name) for name in (
        "amdsmi_get_gpu_process_list.mem", "amdsmi_get_gpu_process_list.memory_usage.gtt_mem",
        "amdsmi_get_gpu_process_list.cu_occupancy"))
    out = []
    for p in _call(_open().processes, handle.index):
        r = {x.metric: x for x in p.readings if not x.instance}
        vram, gtt = _or_na(r.get(vram_metric)), _or_na(r.get(gtt_metric))
        out.append({"name": p.name or "N/A", "pid": p.pid, "mem": vram,
                    "engine_usage": {"gfx": "N/A", "enc": "N/A"},
                    "memory_usage": {"gtt_mem": gtt, "cpu_mem": "N/A", "vram_mem": vram},
                    "cu_occupancy": _or_na(r.get(cu_metric))})
    return out


from hipstack._amdsmi_metrics import amdsmi_get_gpu_metrics_info  # noqa: E402,F401 (needs the helpers above)
from hipstack._amdsmi_limits import (amdsmi_get_gpu_xgmi_link_status, amdsmi_get_violation_status,  # noqa: E402,F401
                                     amdsmi_topo_get_link_type, amdsmi_topo_get_link_weight)
from hipstack._amdsmi_clocks import amdsmi_get_clk_freq  # noqa: E402,F401
