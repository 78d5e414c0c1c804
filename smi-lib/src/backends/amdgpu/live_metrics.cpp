// Live metrics of one amdgpu device. Each value comes from its best source, per metric, as the table
// "Source precedence" in docs/amdgpu-backend.md says (and why, per GPU family): mostly the hwmon or
// sysfs file rocm-smi and amd-smi read, then the firmware's gpu_metrics table, which also carries what
// no file has (HBM and VR temperatures, energy, per-XCC clocks, throttle status); current clocks and
// the PCIe link prefer gpu_metrics.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>

#include "gpu_metrics.hpp"
#include "sysfs_values.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

constexpr std::size_t kGpuMetricsMax = 64 * 1024;

using Opt = std::optional<double>;

std::string temp_input(const AmdGpu& gpu, const char* label) {
  const auto channel = gpu.temp_channel.find(label);
  if (channel == gpu.temp_channel.end()) return {};
  return fmt::format("{}/temp{}_input", gpu.hwmon_dir, channel->second);
}

std::string volt_input(const AmdGpu& gpu, const char* label) {
  const auto channel = gpu.volt_channel.find(label);
  if (channel == gpu.volt_channel.end()) return {};
  return fmt::format("{}/in{}_input", gpu.hwmon_dir, channel->second);
}

// The starred level of a pp_dpm_* table (the first, when a driver stars several). A read that fails
// sets `problem` and `error` (its errno); a table that does not parse, EINVAL.
std::optional<DpmLevel> starred_dpm_level(const FsView& fs, const std::string& path, std::string& problem, int& error) {
  const FileText text = fs.read_text(path);
  if (!text.ok()) {
    if (text.error != ENOENT) {
      problem = fs.host_path(path) + ": " + std::strerror(text.error);
      error = text.error;
    }
    return std::nullopt;
  }
  const DpmTable table = parse_dpm_levels(text.text);
  if (!table.error.empty()) {
    problem = fs.host_path(path) + ": " + table.error;
    error = EINVAL;
    return std::nullopt;
  }
  for (const DpmLevel& level : table.levels) {
    if (level.current) return level;
  }
  return std::nullopt;
}

// The level number as pp_dpm_* printed it: "S" for deep sleep, "1" for the current-clock middle line
// of a fine-grained "min / current * / max" table (parse_dpm_levels takes it out of the levels).
std::string printed_index(const DpmLevel& level) {
  if (level.index == -1) return "S";
  if (level.index == -2) return "1";
  return std::to_string(level.index);
}

// One current clock, from its best source (docs/amdgpu-backend.md, "Source precedence"):
//   1. gpu_metrics current clock: the firmware's clock now (what amd-smi reports);
//   2. hwmon freqN_input (Hz; sclk freq1, mclk freq2): the driver's sensor, read when asked;
//   3. the starred pp_dpm_* line: on fine-grained tables the line can be stale or the 0 of GFXOFF
//      ("1: 0Mhz *" on rx7600s/rx7700s while firmware reports 1200 MHz), and a level is only a level;
//   4. gpu_metrics average clock.
// The starred line's index is reported as dpm_level_current[clock] either way.
struct ClockSources {
  MetricId id;
  const char* name;        // "sclk": pp_dpm_<name>, dpm_level_current[<name>]
  Opt metrics_current;
  const char* hwmon_file;  // nullptr when hwmon has no such clock
  Opt metrics_average;
};

// Returns true when the table had a starred level.
bool read_clock(SysfsValues& values, const AmdGpu& gpu, const ClockSources& c) {
  std::string problem;
  int error = 0;
  const std::string path = gpu.device_dir + "/pp_dpm_" + c.name;
  const std::optional<DpmLevel> starred = starred_dpm_level(values.fs(), path, problem, error);
  if (starred) {
    values.list().text(MetricId::dpm_level_current, printed_index(*starred), path, c.name);
    values.list().real(MetricId::dpm_clock_current, starred->mhz, path, c.name);
  }

  Opt hwmon;
  std::string hwmon_path;
  if (c.hwmon_file != nullptr && !gpu.hwmon_dir.empty()) {
    hwmon_path = gpu.hwmon_dir + "/" + c.hwmon_file;
    if (const FileText hz = values.fs().read_text(hwmon_path); hz.ok()) {
      if (const auto v = parse_real(hz.text)) hwmon = *v / 1e6;  // Hz per MHz: exact for whole Hz
    }
  }
  if (c.metrics_current) {
    values.list().real(c.id, *c.metrics_current, "gpu_metrics current clock");
  } else if (hwmon) {
    values.list().real(c.id, *hwmon, hwmon_path);
  } else if (starred) {
    values.list().real(c.id, starred->mhz, path);
  } else if (c.metrics_average) {
    values.list().real(c.id, *c.metrics_average, "gpu_metrics average clock");
  } else if (error == EINVAL) {
    values.list().malformed(c.id, problem);
  } else if (!problem.empty()) {
    values.list().failed(c.id, error, problem);
  } else {
    values.list().failed(c.id, ENOENT, values.fs().host_path(path) + ": absent or no starred level, and not in gpu_metrics");
  }
  return starred.has_value();
}

// The PCIe link as trained now, speed and width each from its best source (docs/amdgpu-backend.md):
//   1. gpu_metrics pcie_link_speed/width: the firmware's reading of the slot link;
//   2. the starred pp_dpm_pcie level (the driver stars every level equal to the link now, so any
//      starred line will do);
//   3. the PCI core's current_link_speed/width. On RDNA dGPUs these describe the link between the GPU
//      and the PCIe switch inside the card (rx9070xt: 32 GT/s while pp_dpm_pcie never exceeds 16;
//      rx6600: x16 on an x8 card), so they come last.
// Returns true when pp_dpm_pcie had a starred level (reported as dpm_level_current[pcie]).
bool read_pcie_link(SysfsValues& values, const AmdGpu& gpu, const GpuMetrics& gm) {
  ReadingList& list = values.list();
  const FsView& fs = values.fs();
  const std::string dev = gpu.device_dir + "/";
  std::optional<PcieLevel> starred;
  if (const FileText text = fs.read_text(dev + "pp_dpm_pcie"); text.ok()) {
    const PcieTable table = parse_pcie_levels(text.text);  // a malformed table is reported as pcie_level
    for (const PcieLevel& level : table.levels) {
      if (table.error.empty() && level.current && !starred) starred = level;
    }
  }
  if (starred) list.text(MetricId::dpm_level_current, std::to_string(starred->index), dev + "pp_dpm_pcie", "pcie");
  if (gm.pcie_link_speed && *gm.pcie_link_speed > 0) {
    list.real(MetricId::pcie_speed, *gm.pcie_link_speed, "gpu_metrics pcie_link_speed");
  } else if (starred) {
    list.real(MetricId::pcie_speed, starred->gts, dev + "pp_dpm_pcie");
  } else if (const FileText speed = fs.read_text(dev + "current_link_speed"); !speed.ok()) {
    list.failed(MetricId::pcie_speed, speed.error, fs.host_path(dev + "current_link_speed") + ": " + std::strerror(speed.error));
  } else if (const auto gts = parse_link_speed(speed.text)) {
    list.real(MetricId::pcie_speed, *gts, dev + "current_link_speed");
  } else {
    list.malformed(MetricId::pcie_speed, fs.host_path(dev + "current_link_speed") + ": \"" + speed.text + "\"");
  }
  if (gm.pcie_link_width && *gm.pcie_link_width > 0) {
    list.integer(MetricId::pcie_width, static_cast<std::int64_t>(*gm.pcie_link_width), "gpu_metrics pcie_link_width");
  } else if (starred) {
    list.integer(MetricId::pcie_width, starred->width, dev + "pp_dpm_pcie");
  } else {
    values.number(MetricId::pcie_width, dev + "current_link_width");
  }
  return starred.has_value();
}

// pcie_bw: "received sent max_payload_size" over the last second; the read itself takes a second.
void read_pcie_throughput(SysfsValues& values, const AmdGpu& gpu) {
  const std::string path = gpu.device_dir + "/pcie_bw";
  const FileText text = values.fs().read_text(path);
  if (!text.ok()) {
    values.list().failed(MetricId::pcie_rx, text.error, values.fs().host_path(path) + ": " + std::strerror(text.error));
    values.list().failed(MetricId::pcie_tx, text.error, values.fs().host_path(path) + ": " + std::strerror(text.error));
    return;
  }
  const auto fields = split_fields(text.text, ' ');
  std::uint64_t counts[3] = {};
  bool valid = fields.size() == 3;
  for (std::size_t i = 0; valid && i < 3; ++i) {
    const auto value = parse_uint(fields[i]);
    valid = value.has_value();
    counts[i] = value.value_or(0);
  }
  if (!valid) {
    const std::string problem = values.fs().host_path(path) + ": expected \"received sent payload\", got \"" + text.text + "\"";
    values.list().malformed(MetricId::pcie_rx, problem);
    values.list().malformed(MetricId::pcie_tx, problem);
    return;
  }
  // Counts are messages over the last second; each carries at most max_payload_size bytes.
  values.list().real(MetricId::pcie_rx, static_cast<double>(counts[0]) * static_cast<double>(counts[2]), path);
  values.list().real(MetricId::pcie_tx, static_cast<double>(counts[1]) * static_cast<double>(counts[2]), path);
}

// gpu_metrics counters that only the firmware keeps (v1.4+ on MI-series): violation residencies,
// PCIe error counters, XGMI traffic; and the XGMI links' states (v1.7+).
void read_counters(ReadingList& list, const GpuMetrics& gm) {
  auto counter = [&list](MetricId id, const std::optional<std::uint64_t>& value, const std::string& instance = {}) {
    if (value) list.integer(id, static_cast<std::int64_t>(*value), "gpu_metrics", instance);
  };
  counter(MetricId::violation_accumulation_count, gm.accumulation_counter);
  const std::pair<const char*, const std::optional<std::uint64_t>*> reasons[] = {
      {"prochot", &gm.prochot_residency_acc},
      {"ppt", &gm.ppt_residency_acc},
      {"socket_thermal", &gm.socket_thm_residency_acc},
      {"vr_thermal", &gm.vr_thm_residency_acc},
      {"hbm_thermal", &gm.hbm_thm_residency_acc}};
  for (const auto& [reason, value] : reasons) counter(MetricId::violation_residency, *value, reason);
  counter(MetricId::pcie_nak_sent_count, gm.pcie_nak_sent_count);
  counter(MetricId::pcie_nak_received_count, gm.pcie_nak_received_count);
  counter(MetricId::pcie_recovery_count, gm.pcie_l0_to_recovery_count);
  for (std::size_t i = 0; i < gm.xgmi_read_data.size(); ++i) {
    list.integer(MetricId::xgmi_read_data, static_cast<std::int64_t>(gm.xgmi_read_data[i]), "gpu_metrics", std::to_string(i));
  }
  for (std::size_t i = 0; i < gm.xgmi_write_data.size(); ++i) {
    list.integer(MetricId::xgmi_write_data, static_cast<std::int64_t>(gm.xgmi_write_data[i]), "gpu_metrics", std::to_string(i));
  }
  // amdgpu_xgmi_link_status: 0 inactive, 1 active, 2 not available; a link the table leaves unfilled
  // (NaN) is no link to report.
  for (std::size_t i = 0; i < gm.xgmi_link_status.size(); ++i) {
    const double state = gm.xgmi_link_status[i];
    const std::string link = std::to_string(i);
    if (std::isnan(state)) continue;
    if (state == 0 || state == 1) {
      list.text(MetricId::xgmi_link_status, state == 1 ? "up" : "down", "gpu_metrics", link);
    } else if (state == 2) {
      list.failed(MetricId::xgmi_link_status, ENODATA, "gpu_metrics: the firmware has no state for this link (2, n/a)", link);
    } else {
      list.failed(MetricId::xgmi_link_status, EPROTO, fmt::format("gpu_metrics: link state {} is none the kernel defines (0, 1, 2)", state), link);
    }
  }
}

// The value of an ok reading already in `out`, if any.
Opt reported(const std::vector<Reading>& out, MetricId id) {
  for (const Reading& r : out) {
    if (r.id == id && r.ok()) return r.number();
  }
  return std::nullopt;
}

// energy_accumulator counts from SMU start-up; some firmware (RDNA3 dGPUs: lact/rx7600s, rx7800xt)
// leaves it at 0. A counter that reads 0 while the GPU draws power has never run: not supported,
// never a valid 0 J. (A counter that stopped at another value cannot be told apart in one sample.)
// A table that could not be read says why (EIO is an error, not "not supported").
void read_energy(ReadingList& list, const GpuMetricsRead& table, const std::vector<Reading>& out) {
  const GpuMetrics& gm = table.metrics;
  if (!table.ok && table.error_code != ENOENT) {
    list.failed(MetricId::energy_consumed, table.error_code, table.problem);
    return;
  }
  if (!gm.energy_accumulator) {
    list.failed(MetricId::energy_consumed, ENOENT, "gpu_metrics: energy_accumulator not provided");
    return;
  }
  double watts = 0;
  for (const Opt& w : {gm.average_socket_power, gm.current_socket_power, reported(out, MetricId::power_average),
                       reported(out, MetricId::power_current)}) {
    if (w && *w > watts) watts = *w;
  }
  if (*gm.energy_accumulator == 0 && watts > 0) {
    list.failed(MetricId::energy_consumed, ENOENT,
                fmt::format("gpu_metrics: energy_accumulator is 0 while the GPU draws {:g} W: the firmware does "
                            "not count energy on this GPU", watts));
    return;
  }
  list.real(MetricId::energy_consumed, *gm.energy_accumulator, "gpu_metrics");
}

}  // namespace

GpuMetricsRead read_gpu_metrics(const FsView& fs, const AmdGpu& gpu) {
  GpuMetricsRead out;
  if (gpu.device_dir.empty()) {
    out.error_code = ENOENT;
    out.problem = "no DRM card";
    return out;
  }
  const std::string dev = gpu.device_dir + "/";
  const FileBytes blob = fs.read_bytes(dev + "gpu_metrics", kGpuMetricsMax);
  if (!blob.ok()) {
    out.error_code = blob.error;
    out.problem = fs.host_path(dev + "gpu_metrics") + ": " + std::strerror(blob.error);
    return out;
  }
  // APU tables decode per ASIC (SMU IP version or device id, SMU firmware version): their units
  // differ by family. The firmware version is read only for a table that uses it (not a dGPU's).
  GpuMetricsSource source;
  source.mp1 = gpu.mp1;
  source.pci_device_id = gpu.device_id;
  if (gpu_metrics_uses_firmware_version(blob.bytes)) {
    if (const FileText fw = fs.read_text(dev + "fw_version/smc_fw_version"); fw.ok()) {
      if (const auto version = parse_hex(fw.text); version && *version <= 0xffffffffu) {
        source.smc_fw_version = static_cast<std::uint32_t>(*version);
      }
    }
  }
  GpuMetricsDecode decoded = decode_gpu_metrics(blob.bytes, source);
  if (!decoded.ok) {
    out.error_code = EINVAL;
    out.problem = fs.host_path(dev + "gpu_metrics") + ": " + decoded.error;
    return out;
  }
  out.ok = true;
  out.metrics = std::move(decoded.metrics);
  return out;
}

namespace {

void read_temperatures(SysfsValues& values, const AmdGpu& gpu, const GpuMetrics& gm) {
  ReadingList& list = values.list();
  values.number(MetricId::temperature_edge, temp_input(gpu, "edge"), kMilliPerUnit, gm.temperature_edge);
  values.number(MetricId::temperature_junction, temp_input(gpu, "junction"), kMilliPerUnit, gm.temperature_hotspot);
  values.number(MetricId::temperature_memory, temp_input(gpu, "mem"), kMilliPerUnit, gm.temperature_mem);
  for (std::size_t i = 0; i < gm.temperature_hbm.size(); ++i) {
    list.real(MetricId::temperature_hbm, gm.temperature_hbm[i], "gpu_metrics", std::to_string(i));
  }
  if (gm.temperature_hbm.empty()) list.failed(MetricId::temperature_hbm, ENOENT, "gpu_metrics: no HBM temperatures");
  values.value_or_absent(MetricId::temperature_vr_gfx, gm.temperature_vrgfx, "gpu_metrics");
  values.value_or_absent(MetricId::temperature_vr_soc, gm.temperature_vrsoc, "gpu_metrics");
  values.value_or_absent(MetricId::temperature_vr_mem, gm.temperature_vrmem, "gpu_metrics");
}

// The current clocks (sysfs pp_dpm_*, hwmon, gpu_metrics); true when a pp_dpm_* table starred a level.
bool read_clocks(SysfsValues& values, const AmdGpu& gpu, const GpuMetrics& gm) {
  ReadingList& list = values.list();
  const bool has_card = !gpu.device_dir.empty();
  bool any_starred = false;  // any pp_dpm_* table (clocks, pcie) with a starred level
  if (has_card) {
    const ClockSources clocks[] = {
        {MetricId::clock_sclk, "sclk", gm.current_gfxclk, "freq1_input", gm.average_gfxclk},
        {MetricId::clock_mclk, "mclk", gm.current_uclk, "freq2_input", gm.average_uclk},
        {MetricId::clock_fclk, "fclk", gm.current_fclk, nullptr, gm.average_fclk},
        {MetricId::clock_socclk, "socclk", gm.current_socclk, nullptr, gm.average_socclk},
        {MetricId::clock_vclk, "vclk", gm.current_vclk0, nullptr, gm.average_vclk0},
        {MetricId::clock_dclk, "dclk", gm.current_dclk0, nullptr, gm.average_dclk0},
        {MetricId::clock_dcefclk, "dcefclk", gm.current_dcefclk, nullptr, std::nullopt}};
    for (const ClockSources& clock : clocks) {
      if (values.wanted({clock.id, MetricId::dpm_level_current, MetricId::dpm_clock_current})) any_starred = read_clock(values, gpu, clock) || any_starred;
    }
  } else {
    for (const MetricId id : {MetricId::clock_sclk, MetricId::clock_mclk, MetricId::clock_fclk, MetricId::clock_socclk,
                              MetricId::clock_vclk, MetricId::clock_dclk, MetricId::clock_dcefclk,
                              MetricId::dpm_level_current, MetricId::dpm_clock_current}) {
      list.failed(id, ENOENT, "no DRM card");
    }
  }
  for (std::size_t i = 0; i < gm.current_gfxclk_per_xcc.size(); ++i) {
    list.real(MetricId::clock_sclk_xcc, gm.current_gfxclk_per_xcc[i], "gpu_metrics", std::to_string(i));
  }
  if (gm.current_gfxclk_per_xcc.empty()) list.failed(MetricId::clock_sclk_xcc, ENOENT, "gpu_metrics: no per-XCC clocks");
  if (has_card && !any_starred && values.wanted({MetricId::dpm_clock_current})) {
    list.failed(MetricId::dpm_clock_current, ENOENT, "no pp_dpm_* clock table has a starred level");
  }
  return any_starred;
}

void read_fan(SysfsValues& values, const AmdGpu& gpu, const GpuMetrics& gm) {
  if (!values.wanted({MetricId::fan_speed, MetricId::fan_pwm, MetricId::fan_pwm_level})) return;
  ReadingList& list = values.list();
  const FsView& fs = values.fs();
  const std::string hw = gpu.hwmon_dir.empty() ? std::string() : gpu.hwmon_dir + "/";
  auto hw_file = [&hw](const char* name) { return hw.empty() ? std::string() : hw + name; };
  values.number(MetricId::fan_speed, hw_file("fan1_input"), 1.0, gm.fan_speed_rpm);
  // One read of pwm1 for both: the raw duty (fan_pwm_level, what rocm-smi prints as the level) and
  // the same duty as a share of the pwm1_min..pwm1_max scale (fan_pwm).
  constexpr MetricId kPwm[] = {MetricId::fan_pwm, MetricId::fan_pwm_level};
  if (hw.empty()) {
    for (const MetricId id : kPwm) list.failed(id, ENOENT, "no hwmon");
  } else if (const FileText pwm = fs.read_text(hw + "pwm1"); !pwm.ok()) {
    for (const MetricId id : kPwm) list.failed(id, pwm.error, fs.host_path(hw + "pwm1") + ": " + std::strerror(pwm.error));
  } else if (const std::int64_t duty = parse_int(pwm.text).value_or(-1); duty >= 0) {
    list.real(MetricId::fan_pwm, read_fan_scale(fs, gpu.hwmon_dir).percent(static_cast<double>(duty)), hw + "pwm1");
    list.integer(MetricId::fan_pwm_level, duty, hw + "pwm1");
  } else {
    // Negative or not a number: hwmon's pwm1 is 0..pwm1_max.
    for (const MetricId id : kPwm) {
      list.malformed(id, fs.host_path(hw + "pwm1") + ": not a duty value: \"" + pwm.text.substr(0, 64) + "\"");
    }
  }
}

// The PCIe link now, its replays and throughput (on request), and the XGMI link.
void read_links(SysfsValues& values, const AmdGpu& gpu, const GpuMetrics& gm, const SampleOptions& options, bool any_starred) {
  ReadingList& list = values.list();
  const bool has_card = !gpu.device_dir.empty();
  const std::string dev = has_card ? gpu.device_dir + "/" : std::string();
  auto dev_file = [&dev](const char* name) { return dev.empty() ? std::string() : dev + name; };
  if (has_card) {
    if (values.wanted({MetricId::pcie_speed, MetricId::pcie_width, MetricId::dpm_level_current})) {
      any_starred = read_pcie_link(values, gpu, gm) || any_starred;
    }
    if (!any_starred) list.failed(MetricId::dpm_level_current, ENOENT, "no pp_dpm_* table has a starred level");
  } else {
    list.failed(MetricId::pcie_speed, ENOENT, "no DRM card");
    list.failed(MetricId::pcie_width, ENOENT, "no DRM card");
  }
  values.number(MetricId::pcie_replay_count, dev_file("pcie_replay_count"), 1.0, gm.pcie_replay_count);
  if (values.wanted({MetricId::pcie_rx, MetricId::pcie_tx})) {
    if (options.pcie_throughput && has_card) {
      read_pcie_throughput(values, gpu);
    } else {
      const char* why = has_card ? "opt-in: the pcie_bw read blocks one second" : "no DRM card";
      list.failed(MetricId::pcie_rx, ENOENT, why);
      list.failed(MetricId::pcie_tx, ENOENT, why);
    }
  }
  values.value_or_absent(MetricId::pcie_bandwidth, gm.pcie_bandwidth_inst, "gpu_metrics");
  values.value_or_absent(MetricId::xgmi_link_speed, gm.xgmi_link_speed, "gpu_metrics");
  values.value_or_absent(MetricId::xgmi_link_width, gm.xgmi_link_width, "gpu_metrics");
}

// The performance level and the active power profile.
void read_power_settings(SysfsValues& values, const AmdGpu& gpu) {
  if (!values.wanted({MetricId::performance_level, MetricId::power_profile})) return;
  ReadingList& list = values.list();
  const FsView& fs = values.fs();
  const bool has_card = !gpu.device_dir.empty();
  const std::string dev = has_card ? gpu.device_dir + "/" : std::string();
  if (!has_card) {
    list.failed(MetricId::performance_level, ENOENT, "no DRM card");
    list.failed(MetricId::power_profile, ENOENT, "no DRM card");
    return;
  }
  values.text(MetricId::performance_level, dev + "power_dpm_force_performance_level");
  if (const FileText profiles = fs.read_text(dev + "pp_power_profile_mode"); !profiles.ok()) {
    list.failed(MetricId::power_profile, profiles.error,
                fs.host_path(dev + "pp_power_profile_mode") + ": " + std::strerror(profiles.error));
  } else if (auto active = parse_active_power_profile(profiles.text)) {
    list.text(MetricId::power_profile, std::move(*active), dev + "pp_power_profile_mode");
  } else {
    list.malformed(MetricId::power_profile, fs.host_path(dev + "pp_power_profile_mode") + ": no active profile marked");
  }
}

}  // namespace

void read_live(const FsView& fs, const AmdGpu& gpu, const SampleOptions& options, std::vector<Reading>& out) {
  // Only the files the asked metrics need (a poller's one-metric sample reads a few, not ~30:
  // gpu_metrics is read whatever is asked); energy is judged against the power drawn.
  AskedFor wanted(options);
  if (wanted({MetricId::energy_consumed})) {
    wanted.add(MetricId::power_average);
    wanted.add(MetricId::power_current);
  }
  SysfsValues values(fs, out, &wanted);
  ReadingList& list = values.list();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  auto dev_file = [&dev](const char* name) { return dev.empty() ? std::string() : dev + name; };
  const std::string hw = gpu.hwmon_dir.empty() ? std::string() : gpu.hwmon_dir + "/";
  auto hw_file = [&hw](const char* name) { return hw.empty() ? std::string() : hw + name; };

  GpuMetricsRead table = read_gpu_metrics(fs, gpu);
  const GpuMetrics& gm = table.metrics;
  if (table.ok) {
    list.text(MetricId::gpu_metrics_version, fmt::format("{}.{}", gm.format_revision, gm.content_revision),
              dev + "gpu_metrics");
  } else {
    list.failed(MetricId::gpu_metrics_version, table.error_code, table.problem);
  }
  read_temperatures(values, gpu, gm);
  values.number(MetricId::power_average, hw_file("power1_average"), kMicroPerUnit, gm.average_socket_power);
  values.number(MetricId::power_current, hw_file("power1_input"), kMicroPerUnit, gm.current_socket_power);
  read_energy(list, table, out);
  const bool any_starred = read_clocks(values, gpu, gm);
  values.number(MetricId::gpu_busy, dev_file("gpu_busy_percent"), 1.0, gm.average_gfx_activity);
  values.number(MetricId::memory_busy, dev_file("mem_busy_percent"), 1.0, gm.average_umc_activity);
  values.number(MetricId::media_busy, dev_file("vcn_busy_percent"), 1.0, gm.average_mm_activity);
  values.number(MetricId::vram_used, dev_file("mem_info_vram_used"));
  values.number(MetricId::vram_visible_used, dev_file("mem_info_vis_vram_used"));
  values.number(MetricId::gtt_used, dev_file("mem_info_gtt_used"));
  read_fan(values, gpu, gm);
  values.number(MetricId::voltage_gfx, volt_input(gpu, "vddgfx"), 1.0, gm.voltage_gfx);
  values.value_or_absent(MetricId::voltage_soc, gm.voltage_soc, "gpu_metrics");
  values.value_or_absent(MetricId::voltage_memory, gm.voltage_mem, "gpu_metrics");
  values.number(MetricId::voltage_northbridge, volt_input(gpu, "vddnb"));
  read_links(values, gpu, gm, options, any_starred);
  if (gm.throttle_status) {
    list.integer(MetricId::throttle_status, static_cast<std::int64_t>(*gm.throttle_status), "gpu_metrics");
  } else {
    list.failed(MetricId::throttle_status, ENOENT, table.problem.empty() ? "gpu_metrics: not provided" : table.problem);
  }
  values.value_or_absent(MetricId::gfx_activity_accumulated, gm.gfx_activity_acc, "gpu_metrics");
  read_counters(list, gm);
  if (values.wanted({MetricId::ras_correctable, MetricId::ras_uncorrectable, MetricId::ras_deferred,
                     MetricId::ecc_corrected_volatile, MetricId::ecc_uncorrected_volatile, MetricId::bad_pages_reserved,
                     MetricId::bad_pages_pending, MetricId::bad_pages_failed, MetricId::bad_page_threshold})) {
    read_ras(fs, gpu, out);
  }
  values.value_or_absent(MetricId::firmware_timestamp, gm.firmware_timestamp, "gpu_metrics");
  read_power_settings(values, gpu);
}

}  // namespace hipstack::smi::detail::amdgpu
