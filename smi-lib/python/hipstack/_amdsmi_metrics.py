"""amdsmi_get_gpu_metrics_info (hipstack.amdsmi): amdgpu's gpu_metrics as amdsmi 7.x's flat dict, each
key from the catalogue metric that read the same field, in amdsmi's units (degrees C, W, MHz, %,
0.1 GT/s for pcie_link_speed, KB for the XGMI counters, 10 ns for firmware_timestamp); "N/A" where
hipstack does not keep the field. A GPU without gpu_metrics (and a compute partition other than the
first, which has none) raises AMDSMI_STATUS_NOT_SUPPORTED, as amdsmi does."""
from typing import Any, Dict

import hipstack
from hipstack import amdsmi as _amdsmi

# amdsmi's key -> its conversion; the metric of each is the table's (amdsmi_get_gpu_metrics_info.KEY,
# docs/foreign-names.md). Keys hipstack has no field for are listed apart.
_FIELDS = {
    "temperature_edge": int, "temperature_hotspot": int, "temperature_mem": int, "temperature_vrgfx": int,
    "temperature_vrsoc": int, "temperature_vrmem": int, "average_gfx_activity": round, "average_umc_activity": round,
    "average_mm_activity": round, "average_socket_power": round, "current_gfxclk": round, "current_socclk": round,
    "current_uclk": round, "current_vclk0": round, "current_dclk0": round,
    "throttle_status": bool,  # amdsmi 7.x gives the bit mask as a bool
    "current_fan_speed": round, "pcie_link_width": int, "pcie_link_speed": lambda gts: round(gts * 10),
    "gfx_activity_acc": round, "firmware_timestamp": lambda s: round(s * 100_000_000),
    "voltage_soc": round, "voltage_gfx": round, "voltage_mem": round, "current_socket_power": round,
    "xgmi_link_width": int, "xgmi_link_speed": round, "pcie_bandwidth_inst": lambda b: round(b / 1e9),
    "pcie_l0_to_recov_count_acc": int, "pcie_replay_count_acc": int, "pcie_nak_sent_count_acc": int,
    "pcie_nak_rcvd_count_acc": int, "accumulation_counter": int,
}
# Instanced metrics as amdsmi's fixed-length lists: key -> (length, conversion).
_LISTS = {"temperature_hbm": (4, int), "xgmi_read_data_acc": (8, lambda b: b // 1024),
          "xgmi_write_data_acc": (8, lambda b: b // 1024), "current_gfxclks": (8, round)}
# Keys of one instance of a metric (the table's instance column): amdsmi's residency counters.
_RESIDENCIES = ("prochot_residency_acc", "ppt_residency_acc", "socket_thm_residency_acc", "vr_thm_residency_acc",
                "hbm_thm_residency_acc")
_PREFIX = "amdsmi_get_gpu_metrics_info."
_VERSION = "amdsmi_get_gpu_metrics_info.common_header.format_revision"
_NOT_KEPT = ["common_header.structure_size", "energy_accumulator", "system_clock_counter", "average_gfxclk_frequency",
             "average_socclk_frequency", "average_uclk_frequency", "average_vclk0_frequency", "average_dclk0_frequency",
             "average_vclk1_frequency", "average_dclk1_frequency", "current_vclk1", "current_dclk1", "mem_activity_acc",
             "indep_throttle_status", "gfxclk_lock_status", "pcie_bandwidth_acc", "pcie_replay_rover_count_acc",
             "pcie_lc_perf_other_end_recovery", "vram_max_bandwidth"]
_NOT_KEPT_LISTS = {"vcn_activity": 4, "current_socclks": 4, "current_vclk0s": 4, "current_dclk0s": 4, "jpeg_activity": 32,
                   "xgmi_link_status": 8}
_XCP_STATS = {"gfx_busy_inst": 8, "jpeg_busy": 40, "vcn_busy": 4, "gfx_busy_acc": 8, "gfx_below_host_limit_acc": 8,
              "gfx_below_host_limit_ppt_acc": 8, "gfx_below_host_limit_thm_acc": 8, "gfx_low_utilization_acc": 8,
              "gfx_below_host_limit_total_acc": 8}


_sources = None  # the table's rows for the keys above, read on the first call


def _table():
    """(version metric, {key: (metric, convert)}, {key: (metric, length, convert)}, {key: (metric, instance)})."""
    global _sources
    if _sources is None:
        rows = hipstack.foreign_table("amdsmi")
        one = lambda key: _amdsmi._metric(_PREFIX + key)  # noqa: E731
        _sources = (_amdsmi._metric(_VERSION), {key: (one(key), convert) for key, convert in _FIELDS.items()},
                    {key: (one(key), length, convert) for key, (length, convert) in _LISTS.items()},
                    {key: (one(key), rows[_PREFIX + key].instance) for key in _RESIDENCIES})
    return _sources


def amdsmi_get_gpu_metrics_info(handle) -> Dict[str, Any]:
    version_metric, fields, lists, residencies = _table()
    metrics = dict.fromkeys([version_metric, *[m for m, _ in fields.values()], *[m for m, _, _ in lists.values()],
                             *[m for m, _ in residencies.values()]])
    r = _amdsmi._readings(handle, ("live",), *metrics, instanced=True)
    version = r.get((version_metric, ""))
    if version is None or not version.ok:
        raise _amdsmi._missing(handle, version_metric, version)
    major, _, minor = str(version.value).partition(".")
    out: Dict[str, Any] = {"common_header.format_revision": int(major), "common_header.content_revision": int(minor or 0)}
    for key, (metric, convert) in fields.items():
        out[key] = _amdsmi._or_na(r.get((metric, "")), convert)
    for key, (metric, length, convert) in lists.items():
        out[key] = [_amdsmi._or_na(r.get((metric, str(i))), convert) for i in range(length)]
    for key, (metric, instance) in residencies.items():
        out[key] = _amdsmi._or_na(r.get((metric, instance)), int)
    for key in _NOT_KEPT:
        out[key] = "N/A"
    for key, length in _NOT_KEPT_LISTS.items():
        out[key] = ["N/A"] * length
    out["num_partition"] = _amdsmi._device(handle).partition_count
    for key, length in _XCP_STATS.items():
        out["xcp_stats." + key] = [["N/A"] * length for _ in range(8)]
    return out
