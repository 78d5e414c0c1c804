"""hipstack.amdsmi's throttling and topology calls: amdsmi_get_violation_status (how much of the time
the firmware held the clocks down, and why), amdsmi_topo_get_link_type / _link_weight (how two GPUs
are joined) and amdsmi_get_gpu_xgmi_link_status (which XGMI links are up). Every metric comes from the library's table (docs/foreign-names.md)."""
import time
from typing import Any, Dict

import hipstack
from hipstack import amdsmi as _amdsmi
from hipstack._amdsmi_types import (AMDSMI_STATUS_INVAL, AMDSMI_STATUS_NOT_SUPPORTED, AMDSMI_STATUS_UNEXPECTED_DATA,
                                    AmdSmiLibraryException, AmdSmiLinkType)

# amdsmi's names of the throttle reasons it keeps one accumulator for, as amdsmi_get_violation_status's
# keys (acc_<name>, per_<name>, active_<name>) -> the table's name of that accumulator.
_REASONS = {"prochot_thrm": "amdsmi_get_violation_status.acc_prochot_thrm",
            "ppt_pwr": "amdsmi_get_violation_status.acc_ppt_pwr",
            "socket_thrm": "amdsmi_get_violation_status.acc_socket_thrm",
            "vr_thrm": "amdsmi_get_violation_status.acc_vr_thrm",
            "hbm_thrm": "amdsmi_get_violation_status.acc_hbm_thrm"}
_COUNTER = "amdsmi_get_violation_status.acc_counter"
_TIMESTAMP = "amdsmi_get_violation_status.violation_timestamp"
# amdsmi's per-XCP / per-XCC lists ([8][8]) and the single gfx-clock-below-host-limit figures (no
# longer given by the driver since ROCm 7.0): hipstack keeps no accumulators for them.
_NOT_KEPT = ("gfx_clk_below_host_limit",)
_NOT_KEPT_GRIDS = ("gfx_clk_below_host_limit_pwr", "gfx_clk_below_host_limit_thm", "gfx_clk_below_host_limit_total",
                   "low_utilization")
# How long amdsmi waits between its two reads of the accumulators (its kFASTEST_POLL_TIME_MS).
_WINDOW_S = 0.1


def _accumulators(handle) -> Dict[str, Any]:
    """The counter, each reason's accumulator (by amdsmi's reason name) and the firmware timestamp,
    read once; NOT_SUPPORTED when the GPU keeps no violation counters (before MI300)."""
    rows = hipstack.foreign_table("amdsmi")
    counter, stamp = _amdsmi._metric(_COUNTER), _amdsmi._metric(_TIMESTAMP)
    residency = {reason: (_amdsmi._metric(name), rows[name].instance) for reason, name in _REASONS.items()}
    metrics = dict.fromkeys([counter, stamp, *[m for m, _ in residency.values()]])
    r = _amdsmi._readings(handle, ("live",), *metrics, instanced=True)
    count = r.get((counter, ""))
    if count is None or not count.ok:
        raise _amdsmi._missing(handle, counter, count)
    out = {"counter": int(count.value), "timestamp": r.get((stamp, ""))}
    for reason, (metric, instance) in residency.items():
        reading = r.get((metric, instance))
        out[reason] = int(reading.value) if reading is not None and reading.ok else None
    return out


def amdsmi_get_violation_status(handle) -> Dict[str, Any]:
    """As amdsmi computes it: the accumulators read twice 100 ms apart; acc_* the second read, per_* the
    share of the firmware's samples between the two reads during which the reason was active (whole %,
    "N/A" above 100), active_* whether that share is above 0; violation_timestamp the firmware's
    (10 ns units, as amdsmi passes it on), reference_timestamp the host's clock (µs since the epoch)."""
    reference = time.time_ns() // 1000
    first = _accumulators(handle)
    time.sleep(_WINDOW_S)
    second = _accumulators(handle)
    stamp = second["timestamp"]
    out: Dict[str, Any] = {"reference_timestamp": reference,
                           "violation_timestamp": round(stamp.value * 100_000_000) if stamp is not None and stamp.ok else "N/A",
                           "acc_counter": second["counter"]}
    samples = second["counter"] - first["counter"]
    for reason in _REASONS:
        before, after = first[reason], second[reason]
        out["acc_" + reason] = after if after is not None else "N/A"
        share = (after - before) * 100 // samples if None not in (before, after) and after >= before and samples > 0 else None
        out["per_" + reason] = share if share is not None and share <= 100 else "N/A"
        out["active_" + reason] = share > 0 if share is not None and share <= 100 else "N/A"
    for name in _NOT_KEPT:
        out["acc_" + name] = out["per_" + name] = out["active_" + name] = "N/A"
    for name in _NOT_KEPT_GRIDS:
        for prefix in ("acc_", "per_", "active_"):
            out[prefix + name] = [["N/A"] * 8 for _ in range(8)]
    return out


# hipstack's link types -> amdsmi's (7.x AmdSmiLinkType; 6.x's AmdSmiIoLinkType has the same 0-2).
_LINK_TYPES = {"xgmi": AmdSmiLinkType.AMDSMI_LINK_TYPE_XGMI, "pcie": AmdSmiLinkType.AMDSMI_LINK_TYPE_PCIE}


def _link(src, dst) -> Dict[str, hipstack.Reading]:
    """The readings of the link between the GPUs of two handles (by metric name)."""
    a, b = _amdsmi._checked(src), _amdsmi._checked(dst)
    if a.index == b.index:
        raise AmdSmiLibraryException(AMDSMI_STATUS_INVAL if a == b else AMDSMI_STATUS_NOT_SUPPORTED,
                                     f"GPU {a.index}: hipstack keeps links between GPUs, not within one")
    for link in _amdsmi._call(_amdsmi._open().links):
        if {link.source, link.target} == {a.index, b.index}:
            return {r.metric: r for r in link.readings if not r.instance}
    raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, f"no link known between GPU {a.index} and GPU {b.index}")


def amdsmi_topo_get_link_type(src, dst) -> Dict[str, Any]:
    """{"hops", "type"}: type 2 for XGMI, 1 for PCIe, 4 (unknown to amdsmi's enum) for another kind."""
    r = _link(src, dst)
    kind_metric = _amdsmi._metric("amdsmi_topo_get_link_type.type")
    hops_metric = _amdsmi._metric("amdsmi_topo_get_link_type.hops")
    kind, hops = r.get(kind_metric), r.get(hops_metric)
    if kind is None or not kind.ok:
        raise _amdsmi._missing(src, kind_metric, kind)
    if hops is None or not hops.ok:
        raise _amdsmi._missing(src, hops_metric, hops)
    return {"hops": int(hops.value), "type": int(_LINK_TYPES.get(kind.value, AmdSmiLinkType.AMDSMI_LINK_TYPE_UNKNOWN))}


def amdsmi_topo_get_link_weight(src, dst) -> int:
    """KFD's weight of the link (lower is closer)."""
    r = _link(src, dst)
    metric = _amdsmi._metric("amdsmi_topo_get_link_weight")
    weight = r.get(metric)
    if weight is None or not weight.ok:
        raise _amdsmi._missing(src, metric, weight)
    return int(weight.value)


# gpu_metrics' link states (hipstack's xgmi_link_status) -> amdsmi's letters; a link the table does not
# fill is "X" (disabled), as amdsmi shows 0xFFFF.
_LINK_LETTERS = {"up": "U", "down": "D"}
_MAX_XGMI_LINKS = 8  # AMDSMI_MAX_NUM_XGMI_LINKS


def amdsmi_get_gpu_xgmi_link_status(handle) -> Dict[str, Any]:
    """{"status": ["U" | "D" | "X", ...], "total_links"}: one letter per link up to total_links, which
    amdsmi takes as the node's AMD GPU count (at most 8); NOT_SUPPORTED when no link has a state
    (gpu_metrics before v1.7, a secondary partition); a state the kernel does not define is
    UNEXPECTED_DATA, as amdsmi answers it."""
    metric = _amdsmi._metric("amdsmi_get_gpu_xgmi_link_status.status")
    readings = {r.instance: r for r in _amdsmi._instances(handle, ("live",), metric)}
    gpus = sum(1 for d in _amdsmi._call(_amdsmi._open().devices) if d.vendor == "amd")
    total = min(gpus, _MAX_XGMI_LINKS)
    status = []
    for link in range(total):
        r = readings.get(str(link))
        if r is None:
            status.append("X")
        elif r.ok and r.value in _LINK_LETTERS:
            status.append(_LINK_LETTERS[r.value])
        else:
            raise AmdSmiLibraryException(AMDSMI_STATUS_UNEXPECTED_DATA, f"XGMI link {link}: {r.status}: {r.detail}")
    if all(letter == "X" for letter in status):
        raise AmdSmiLibraryException(AMDSMI_STATUS_NOT_SUPPORTED, "no XGMI link state (gpu_metrics v1.7+ gives them)")
    return {"status": status, "total_links": total}
