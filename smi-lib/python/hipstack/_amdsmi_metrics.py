"""amdsmi_get_gpu_metrics_info (hipstack.amdsmi): amdgpu's gpu_metrics as amdsmi 7.x's flat dict, each
key from the catalogue metric that read the same field, in amdsmi's units (degrees C, W, MHz, %,
0.1 GT/s for pcie_link_speed, KB for the XGMI counters, 10 ns for firmware_timestamp); "N/A" where
hipstack does not keep the field. A GPU without gpu_metrics (and a compute partition other than the
first, which has none) raises AMDSMI_STATUS_NOT_SUPPORTED, as amdsmi does."""
from typing import Any, Dict

from hipstack import amdsmi as _amdsmi

# amdsmi's key -> (catalogue metric, conversion). Keys hipstack has no field for are listed apart.
_FIELDS = {
    "temperature_edge": ("temperature_edge", int), "temperature_hotspot": ("temperature_junction", int),
    "temperature_mem": ("temperature_memory", int), "temperature_vrgfx": ("temperature_vr_gfx", int),
    "temperature_vrsoc": ("temperature_vr_soc", int), "temperature_vrmem": ("temperature_vr_mem", int),
    "average_gfx_activity": ("gpu_busy", round), "average_umc_activity": ("memory_busy", round),
    "average_mm_activity": ("media_busy", round), "average_socket_power": ("power_average", round),
    "current_gfxclk": ("clock_sclk", round), "current_socclk": ("clock_socclk", round),
    "current_uclk": ("clock_mclk", round), "current_vclk0": ("clock_vclk", round), "current_dclk0": ("clock_dclk", round),
    "throttle_status": ("throttle_status", bool),  # amdsmi 7.x gives the bit mask as a bool
    "current_fan_speed": ("fan_speed", round), "pcie_link_width": ("pcie_width", int),
    "pcie_link_speed": ("pcie_speed", lambda gts: round(gts * 10)), "gfx_activity_acc": ("gfx_activity_accumulated", round),
    "firmware_timestamp": ("firmware_timestamp", lambda s: round(s * 100_000_000)),
    "voltage_soc": ("voltage_soc", round), "voltage_gfx": ("voltage_gfx", round), "voltage_mem": ("voltage_memory", round),
    "current_socket_power": ("power_current", round), "xgmi_link_width": ("xgmi_link_width", int),
    "xgmi_link_speed": ("xgmi_link_speed", round), "pcie_bandwidth_inst": ("pcie_bandwidth", lambda b: round(b / 1e9)),
    "pcie_l0_to_recov_count_acc": ("pcie_recovery_count", int), "pcie_replay_count_acc": ("pcie_replay_count", int),
    "pcie_nak_sent_count_acc": ("pcie_nak_sent_count", int), "pcie_nak_rcvd_count_acc": ("pcie_nak_received_count", int),
    "accumulation_counter": ("violation_accumulation_count", int),
}
# Instanced metrics as amdsmi's fixed-length lists: key -> (metric, length, conversion).
_LISTS = {"temperature_hbm": ("temperature_hbm", 4, int), "xgmi_read_data_acc": ("xgmi_read_data", 8, lambda b: b // 1024),
          "xgmi_write_data_acc": ("xgmi_write_data", 8, lambda b: b // 1024),
          "current_gfxclks": ("clock_sclk_xcc", 8, round)}
_RESIDENCIES = {"prochot_residency_acc": "prochot", "ppt_residency_acc": "ppt", "socket_thm_residency_acc": "socket_thermal",
                "vr_thm_residency_acc": "vr_thermal", "hbm_thm_residency_acc": "hbm_thermal"}
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


def amdsmi_get_gpu_metrics_info(handle) -> Dict[str, Any]:
    metrics = ["gpu_metrics_version", *[m for m, _ in _FIELDS.values()], *[m for m, _, _ in _LISTS.values()],
               "violation_residency"]
    r = _amdsmi._readings(handle, ("live",), *metrics, instanced=True)
    version = r.get(("gpu_metrics_version", ""))
    if version is None or not version.ok:
        raise _amdsmi._missing(handle, "gpu_metrics_version", version)
    major, _, minor = str(version.value).partition(".")
    out: Dict[str, Any] = {"common_header.format_revision": int(major), "common_header.content_revision": int(minor or 0)}
    for key, (metric, convert) in _FIELDS.items():
        out[key] = _amdsmi._or_na(r.get((metric, "")), convert)
    for key, (metric, length, convert) in _LISTS.items():
        out[key] = [_amdsmi._or_na(r.get((metric, str(i))), convert) for i in range(length)]
    for key, instance in _RESIDENCIES.items():
        out[key] = _amdsmi._or_na(r.get(("violation_residency", instance)), int)
    for key in _NOT_KEPT:
        out[key] = "N/A"
    for key, length in _NOT_KEPT_LISTS.items():
        out[key] = ["N/A"] * length
    out["num_partition"] = _amdsmi._device(handle).partition_count
    for key, length in _XCP_STATS.items():
        out["xcp_stats." + key] = [["N/A"] * length for _ in range(8)]
    return out
