"""hipstack.amdsmi's amdsmi_get_clk_freq: a clock's DPM table as amdsmi lists it (through rocm-smi's
rsmi_dev_gpu_clk_freq_get): pp_dpm_<clock>'s lines in the file's order, the deep-sleep level S first,
the middle line of a fine-grained "min / current * / max" table (MI300's sclk) as a line of its own,
`current` the place of the starred line, frequencies in Hz. Recorded from rocm-smi-lib 7.2.4 on the
MI300X captures (python.amdsmi checks against that record). Every metric comes from the library's
table (docs/foreign-names.md)."""
from typing import Any, Dict

import hipstack
from hipstack import amdsmi as _amdsmi
from hipstack._amdsmi_types import (AMDSMI_STATUS_INVAL, AMDSMI_STATUS_NOT_SUPPORTED, AMDSMI_STATUS_UNEXPECTED_DATA,
                                    AmdSmiClkType, AmdSmiLibraryException, AmdSmiParameterException)

# Each clock type hipstack reads a table of -> the table's names of its lines and of its starred line.
_TABLES = {
    AmdSmiClkType.SYS: ("amdsmi_get_clk_freq(SYS).frequency", "amdsmi_get_clk_freq(SYS).current"),
    AmdSmiClkType.DF: ("amdsmi_get_clk_freq(DF).frequency", "amdsmi_get_clk_freq(DF).current"),
    AmdSmiClkType.DCEF: ("amdsmi_get_clk_freq(DCEF).frequency", "amdsmi_get_clk_freq(DCEF).current"),
    AmdSmiClkType.SOC: ("amdsmi_get_clk_freq(SOC).frequency", "amdsmi_get_clk_freq(SOC).current"),
    AmdSmiClkType.MEM: ("amdsmi_get_clk_freq(MEM).frequency", "amdsmi_get_clk_freq(MEM).current"),
    AmdSmiClkType.VCLK0: ("amdsmi_get_clk_freq(VCLK0).frequency", "amdsmi_get_clk_freq(VCLK0).current"),
    AmdSmiClkType.DCLK0: ("amdsmi_get_clk_freq(DCLK0).frequency", "amdsmi_get_clk_freq(DCLK0).current"),
}
# The video clocks: amdsmi reads their tables itself and leaves `current` 0 when no line is starred
# (rocm-smi's tables answer UNEXPECTED_DATA then).
_VIDEO = (AmdSmiClkType.VCLK0, AmdSmiClkType.DCLK0)


def _place(label: str) -> int:
    return -1 if label == "S" else int(label)


def amdsmi_get_clk_freq(handle, clk_type: AmdSmiClkType) -> Dict[str, Any]:
    if not isinstance(clk_type, AmdSmiClkType):
        raise AmdSmiParameterException(clk_type, AmdSmiClkType)
    if clk_type == AmdSmiClkType.PCIE:  # rocm-smi lists PCIe levels through its bandwidth call: INVALID_ARGS
        raise AmdSmiLibraryException(AMDSMI_STATUS_INVAL, "PCIE: amdsmi_get_pcie_info lists the PCIe levels")
    if clk_type not in _TABLES:
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, f"{clk_type.name}: hipstack does not read this clock's table")
    levels_name, current_name = _TABLES[clk_type]
    levels = _amdsmi._metric(levels_name)
    label_metric, clock_metric = _amdsmi._M[current_name]
    clock = hipstack.foreign_table("amdsmi")[current_name].instance
    r = _amdsmi._readings(handle, ("static", "live"), levels, label_metric, clock_metric, instanced=True)
    lines = {x.instance: x.value for (name, _), x in r.items() if name == levels and x.ok}
    if not lines:
        raise _amdsmi._missing(handle, levels, None)
    label, starred = r.get((label_metric, clock)), r.get((clock_metric, clock))
    if label is not None and label.ok and label.value not in lines and starred is not None and starred.ok:
        lines[label.value] = starred.value  # a fine-grained table's middle line: the clock now, no level
    order = sorted(lines, key=_place)
    if label is not None and label.ok and label.value in lines:
        current = order.index(label.value)
    elif clk_type in _VIDEO:
        current = 0
    else:
        raise AmdSmiLibraryException(AMDSMI_STATUS_UNEXPECTED_DATA, f"{clk_type.name}: no line of the clock's table is starred")
    return {"num_supported": len(order), "current": current, "frequency": [round(lines[label] * 1_000_000) for label in order]}
