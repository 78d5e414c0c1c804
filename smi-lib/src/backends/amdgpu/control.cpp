// amdgpu controls: validates each request against what the driver offers (available modes, power
// cap range, overdrive range, profile table) and plans the sysfs writes. Reads only; the guarded
// path (../../control.cpp) checks privilege and state, writes, and waits.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "../../control.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

using Kind = ControlRequest::Kind;

constexpr std::array<std::string_view, 5> kComputeModes = {"SPX", "DPX", "TPX", "QPX", "CPX"};
constexpr std::array<std::string_view, 4> kMemoryModes = {"NPS1", "NPS2", "NPS4", "NPS8"};
// enum amd_dpm_forced_level (kgd_pp_interface.h); profile_exit is write-only.
constexpr std::array<std::string_view, 10> kPerfLevels = {
    "auto", "low", "high", "manual", "profile_standard", "profile_min_sclk", "profile_min_mclk",
    "profile_peak", "perf_determinism", "profile_exit"};

ControlPlan refuse(ControlPlan plan, RefusalReason reason, int error, std::string message) {
  plan.refusal = reason;
  plan.error_code = error;
  plan.message = std::move(message);
  return plan;
}

// A file the control depends on could not be read: absent means the driver offers no such control.
ControlPlan unreadable(ControlPlan plan, const FsView& fs, const std::string& path, int error, std::string_view what) {
  if (error == ENOENT) {
    return refuse(std::move(plan), RefusalReason::not_supported, ENOENT,
                  fmt::format("{} is not supported here: {} does not exist", what, fs.host_path(path)));
  }
  if (error == EPERM || error == EBUSY) {
    return refuse(std::move(plan), RefusalReason::reset_in_progress, error,
                  fmt::format("a GPU reset is in progress (the driver refuses to read {}: {}); retry when it ends",
                              fs.host_path(path), std::strerror(error)));
  }
  return refuse(std::move(plan), RefusalReason::driver_rejected, error,
                fmt::format("cannot read {}: {}", fs.host_path(path), std::strerror(error)));
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// SPX 1, DPX 2, TPX 3, QPX 4, CPX one per XCC.
int partitions_for(std::string_view mode, std::uint64_t total_xcc) {
  if (mode == "SPX") return 1;
  if (mode == "DPX") return 2;
  if (mode == "TPX") return 3;
  if (mode == "QPX") return 4;
  if (mode == "CPX") return static_cast<int>(total_xcc);
  return 0;
}

std::uint64_t total_xcc(const AmdGpu& gpu) {
  std::uint64_t total = 0;
  for (const KfdNode& node : gpu.kfd) total += node.get("num_xcc", 1);
  return total;
}

struct ProfileRow {
  int index = 0;
  std::string name;
  bool active = false;
};

// pp_power_profile_mode rows: "  N NAME :" or "  N NAME*:" (the '*' marks the active profile).
std::vector<ProfileRow> parse_profiles(std::string_view text) {
  std::vector<ProfileRow> rows;
  for (const std::string_view line : split_fields(text, '\n')) {  // lines, trimmed
    std::size_t n = 0;
    while (n < line.size() && line[n] >= '0' && line[n] <= '9') ++n;
    const std::size_t colon = line.find(':');
    if (n == 0 || colon == std::string_view::npos || colon < n) continue;
    ProfileRow row;
    row.index = static_cast<int>(parse_int(line.substr(0, n)).value_or(-1));
    for (const char c : line.substr(n, colon - n)) {
      if (c == '*') row.active = true;
      else if (c != ' ' && c != '\t' && c != '(' && c != ')') row.name += c;
    }
    if (row.index >= 0 && !row.name.empty() && row.name.find('(') == std::string::npos) rows.push_back(std::move(row));
  }
  return rows;
}

// OD_RANGE "SCLK:     500Mhz       2600Mhz" -> {500, 2600}.
std::optional<std::pair<double, double>> od_range(std::string_view text, std::string_view label) {
  const std::size_t range = text.find("OD_RANGE:");
  if (range == std::string_view::npos) return std::nullopt;
  const std::string key = std::string(label) + ":";
  const std::size_t at = text.find(key, range);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t end = text.find('\n', at);
  if (end == std::string_view::npos) end = text.size();
  std::vector<double> values;
  for (std::string_view field : split_fields(text.substr(at + key.size(), end - at - key.size()), ' ')) {
    std::size_t digits = 0;
    while (digits < field.size() && ((field[digits] >= '0' && field[digits] <= '9') || field[digits] == '.')) ++digits;
    if (const auto v = parse_real(field.substr(0, digits))) values.push_back(*v);
  }
  if (values.size() != 2) return std::nullopt;
  return std::make_pair(values[0], values[1]);
}

// Levels listed under a section ("OD_MCLK:") -> their numbers ("0", "1").
std::vector<int> od_levels(std::string_view text, std::string_view section) {
  std::vector<int> levels;
  std::size_t at = text.find(std::string(section) + ":");
  if (at == std::string_view::npos) return levels;
  at = text.find('\n', at);
  while (at != std::string_view::npos && at + 1 < text.size()) {
    const std::size_t end = text.find('\n', at + 1);
    const std::string_view line = text.substr(at + 1, (end == std::string_view::npos ? text.size() : end) - at - 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) break;
    const auto level = parse_int(line.substr(0, colon));
    if (!level) break;
    levels.push_back(static_cast<int>(*level));
    at = end;
  }
  return levels;
}

std::string watts_text(double microwatts) { return fmt::format("{:g} W", microwatts / 1e6); }

// Compute (SPX..CPX) and memory (NPS1..NPS8) partition modes: offered by the driver, and not the current one.
ControlPlan plan_partition(const FsView& fs, const std::string& dev, const ControlRequest& request, ControlPlan plan) {
  const bool compute = request.kind == Kind::compute_partition;
  const char* what = compute ? "compute" : "memory";
  const std::string mode = compute ? canonical_mode(request.text, kComputeModes) : canonical_mode(request.text, kMemoryModes);
  plan.action = fmt::format("{} partition -> {}", what, mode.empty() ? request.text : mode);
  if (mode.empty()) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("\"{}\" is not a {} partition mode ({})", request.text, what,
                              compute ? "SPX, DPX, TPX, QPX, CPX" : "NPS1, NPS2, NPS4, NPS8"));
  }
  const std::string available_path = dev + (compute ? "available_compute_partition" : "available_memory_partition");
  const std::string current_path = dev + (compute ? "current_compute_partition" : "current_memory_partition");
  const FileText available = fs.read_text(available_path);
  if (!available.ok()) return unreadable(std::move(plan), fs, available_path, available.error, fmt::format("{} partitioning", what));
  const FileText current = fs.read_text(current_path);
  if (!current.ok()) return unreadable(std::move(plan), fs, current_path, current.error, fmt::format("{} partitioning", what));
  plan.action = fmt::format("{} partition {} -> {}", what, current.text, mode);
  bool offered = false;
  for (const std::string_view m : split_fields(available.text, ',')) offered = offered || upper(m) == mode;
  if (!offered) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("{} is not available on this GPU (available: {}; {})", mode, available.text,
                              fs.host_path(available_path)));
  }
  if (upper(current.text) == mode) {
    if (compute) {
      plan.unchanged = fmt::format("already in {} {} mode", mode, what);
      return plan;
    }
    // The driver keeps an NPS request nobody can read back; writing the current mode replaces it.
    plan.action += " (replaces any pending request)";
  }
  plan.writes.push_back({current_path, mode, {}, false, 0});
  plan.needs_idle = true;
  if (compute) {
    plan.wait_settle = true;
  } else {
    plan.verify_path = current_path;
    plan.verify_value = mode;
    plan.pending_step = fmt::format(
        "reload the amdgpu driver to apply {} (stop every GPU process, then `modprobe -r amdgpu && modprobe amdgpu`, "
        "or reboot); `hipstack-smi partition` then shows it",
        mode);
  }
  return plan;
}

// A power cap in watts, within the driver's power1_cap_min/_max.
ControlPlan plan_power_cap(const FsView& fs, const std::string& hwmon_dir, const std::string& dev,
                           const ControlRequest& request, ControlPlan plan) {
  plan.action = fmt::format("power cap -> {:g} W", request.value);
  const std::string cap = hwmon_dir + "/power1_cap";
  if (hwmon_dir.empty()) return unreadable(std::move(plan), fs, dev + "hwmon/hwmonN/power1_cap", ENOENT, "a power cap");
  // At least 1 W: a tiny positive number (1e-300) would round to a cap of 0 µW.
  if (!std::isfinite(request.value) || request.value < 1 || request.value > 1e6) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("{} W is not a power cap (a number of watts from 1 to 1000000)", request.value));
  }
  const FileText now = fs.read_text(cap);
  if (!now.ok()) return unreadable(std::move(plan), fs, cap, now.error, "a power cap");
  const auto microwatts = static_cast<std::int64_t>(std::llround(request.value * 1e6));
  const FileText min = fs.read_text(cap + "_min");
  const FileText max = fs.read_text(cap + "_max");
  const auto lo = min.ok() ? parse_int(min.text) : std::nullopt;
  const auto hi = max.ok() ? parse_int(max.text) : std::nullopt;
  if (lo && hi && (microwatts < *lo || microwatts > *hi)) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("{:g} W is outside the allowed range {}..{} ({}_min/_max)", request.value,
                              watts_text(static_cast<double>(*lo)), watts_text(static_cast<double>(*hi)), fs.host_path(cap)));
  }
  if (const auto old = parse_int(now.text)) plan.action = fmt::format("power cap {} -> {:g} W", watts_text(static_cast<double>(*old)), request.value);
  if (parse_int(now.text) == microwatts) {
    plan.unchanged = fmt::format("the power cap is already {:g} W", request.value);
    return plan;
  }
  plan.writes.push_back({cap, std::to_string(microwatts), {}, false, 0});
  return plan;
}

// power_dpm_force_performance_level: one of the driver's levels.
ControlPlan plan_performance_level(const FsView& fs, const std::string& dev, const ControlRequest& request, ControlPlan plan) {
  std::string level(request.text);
  for (char& c : level) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  plan.action = fmt::format("performance level -> {}", level);
  if (std::find(kPerfLevels.begin(), kPerfLevels.end(), level) == kPerfLevels.end()) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("\"{}\" is not a performance level (auto, low, high, manual, profile_standard, "
                              "profile_min_sclk, profile_min_mclk, profile_peak, perf_determinism, profile_exit)",
                              request.text));
  }
  const std::string path = dev + "power_dpm_force_performance_level";
  const FileText now = fs.read_text(path);
  if (!now.ok()) return unreadable(std::move(plan), fs, path, now.error, "setting the performance level");
  plan.action = fmt::format("performance level {} -> {}", now.text, level);
  if (now.text == level) {
    plan.unchanged = fmt::format("the performance level is already {}", level);
    return plan;
  }
  plan.writes.push_back({path, level, {}, false, 0});
  return plan;
}

// pp_power_profile_mode: a predefined profile of this GPU, by name or number.
ControlPlan plan_power_profile(const FsView& fs, const std::string& dev, const ControlRequest& request, ControlPlan plan) {
  plan.action = fmt::format("power profile -> {}", request.text);
  const std::string path = dev + "pp_power_profile_mode";
  const FileText now = fs.read_text(path);
  if (!now.ok()) return unreadable(std::move(plan), fs, path, now.error, "setting the power profile");
  const auto rows = parse_profiles(now.text);
  const ProfileRow* chosen = nullptr;
  const ProfileRow* active = nullptr;
  std::string names;
  for (const ProfileRow& row : rows) {
    if (row.active) active = &row;
    names += fmt::format("{}{} {}", names.empty() ? "" : ", ", row.index, row.name);
    if (upper(request.text) == row.name || parse_int(request.text) == row.index) chosen = &row;
  }
  if (chosen == nullptr) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("\"{}\" is not a power profile of this GPU ({})", request.text, names));
  }
  if (chosen->name == "CUSTOM") {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  "CUSTOM takes heuristic parameters that differ per ASIC; hipstack sets only the predefined profiles");
  }
  plan.action = fmt::format("power profile {} -> {}", active ? active->name : "unknown", chosen->name);
  if (active == chosen) {
    plan.unchanged = fmt::format("the power profile is already {}", chosen->name);
    return plan;
  }
  plan.writes.push_back({path, std::to_string(chosen->index), {}, false, 0});
  return plan;
}

// Overdrive clock ranges (pp_od_clk_voltage): within OD_RANGE, then committed with "c".
ControlPlan plan_clock_range(const FsView& fs, const std::string& dev, const ControlRequest& request, ControlPlan plan) {
  const bool gfx = request.clock == ClockDomain::graphics;
  plan.action = fmt::format("{} clock range -> {:g}..{:g} MHz", gfx ? "graphics" : "memory", request.value, request.value2);
  const std::string path = dev + "pp_od_clk_voltage";
  const FileText now = fs.read_text(path);
  if (!now.ok()) return unreadable(std::move(plan), fs, path, now.error, "setting clock ranges (overdrive)");
  const auto range = od_range(now.text, gfx ? "SCLK" : "MCLK");
  if (!range) {
    return refuse(std::move(plan), RefusalReason::not_supported, EOPNOTSUPP,
                  fmt::format("{} lists no {} range under OD_RANGE: the driver does not allow changing it",
                              fs.host_path(path), gfx ? "SCLK" : "MCLK"));
  }
  const double lo = request.value;
  const double hi = request.value2;
  if (!(lo <= hi) || lo < range->first || hi > range->second) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("{:g}..{:g} MHz is not within the driver's range {:g}..{:g} MHz (OD_RANGE in {})", lo, hi,
                              range->first, range->second, fs.host_path(path)));
  }
  const char letter = gfx ? 's' : 'm';
  const auto levels = od_levels(now.text, gfx ? "OD_SCLK" : "OD_MCLK");
  const bool has_min = std::find(levels.begin(), levels.end(), 0) != levels.end();
  if (has_min) plan.writes.push_back({path, fmt::format("{} 0 {}", letter, std::llround(lo)), {}, false, 0});
  else if (lo != range->first) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("this GPU sets only the maximum {} clock (no level 0 in {}); give the minimum as {:g}",
                              gfx ? "graphics" : "memory", fs.host_path(path), range->first));
  }
  plan.writes.push_back({path, fmt::format("{} 1 {}", letter, std::llround(hi)), {}, false, 0});
  plan.writes.push_back({path, "c", {}, false, 0});
  return plan;
}

// Fan control: automatic (pwm1_enable 2) or a manual duty cycle on the fan_pwm reading's scale.
ControlPlan plan_fan(const FsView& fs, const std::string& hwmon_dir, const std::string& dev,
                     const ControlRequest& request, ControlPlan plan) {
  plan.action = request.fan.automatic ? "fan -> automatic" : fmt::format("fan -> {:g}%", request.fan.percent);
  if (!request.fan.automatic && !(request.fan.percent >= 0 && request.fan.percent <= 100)) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("{:g}% is not a fan speed (0..100)", request.fan.percent));
  }
  const std::string enable = hwmon_dir + "/pwm1_enable";
  const FileText mode = hwmon_dir.empty() ? FileText{ENOENT, {}} : fs.read_text(enable);
  if (!mode.ok()) return unreadable(std::move(plan), fs, hwmon_dir.empty() ? dev + "hwmon/hwmonN/pwm1_enable" : enable,
                                    mode.error, "fan control");
  if (request.fan.automatic) {
    if (mode.text == "2") {
      plan.unchanged = "the fan is already under automatic control";
      return plan;
    }
    plan.writes.push_back({enable, "2", {}, false, 0});
    return plan;
  }
  const std::string pwm = hwmon_dir + "/pwm1";
  if (const FileText now = fs.read_text(pwm); !now.ok()) return unreadable(std::move(plan), fs, pwm, now.error, "manual fan speed");
  // The scale the fan_pwm reading uses, so a percentage read back is the one written.
  const FanScale scale = read_fan_scale(fs, hwmon_dir);
  const std::int64_t lo = scale.min;
  const std::int64_t hi = scale.max;
  const std::int64_t duty = scale.pwm(request.fan.percent);
  if (duty < lo || duty > hi) {
    return refuse(std::move(plan), RefusalReason::invalid_value, EINVAL,
                  fmt::format("{:g}% (pwm {}) is outside the driver's range pwm {}..{} ({}_min/_max)", request.fan.percent, duty,
                              lo, hi, fs.host_path(pwm)));
  }
  if (mode.text != "1") plan.writes.push_back({enable, "1", {}, false, 0});
  plan.writes.push_back({pwm, std::to_string(duty), {}, false, 0});
  return plan;
}

// A PCI function reset through the device's reset file.
ControlPlan plan_reset(const FsView& fs, const std::string& dev, ControlPlan plan) {
  plan.action = "GPU reset (PCI function reset)";
  const std::string path = dev + "reset";
  if (!fs.exists(path)) {
    return unreadable(std::move(plan), fs, path, ENOENT, "a GPU reset (the PCI core offers no reset method for it)");
  }
  plan.writes.push_back({path, "1", {}, false, 0});
  plan.needs_idle = true;
  return plan;
}

}  // namespace

ControlPlan AmdgpuBackend::plan_control(std::size_t device, const ControlRequest& request) const {
  const AmdGpu& gpu = gpus_.at(device);
  ControlPlan plan;
  const std::string dev = gpu.device_dir + "/";
  plan.reset_probe = dev + "power_dpm_force_performance_level";
  if (gpu.device_dir.empty()) {
    // A GPU seen only in the KFD topology (a container without /sys/class/drm): no attributes to write.
    plan.action = "change";
    return refuse(std::move(plan), RefusalReason::not_supported, ENOENT,
                  "is known only from the KFD topology (no /sys/class/drm card): it cannot be changed from here");
  }
  plan.virtual_function = fs_.exists(dev + "physfn");

  switch (request.kind) {
    case Kind::compute_partition:
    case Kind::memory_partition: return plan_partition(fs_, dev, request, std::move(plan));
    case Kind::power_cap: return plan_power_cap(fs_, gpu.hwmon_dir, dev, request, std::move(plan));
    case Kind::performance_level: return plan_performance_level(fs_, dev, request, std::move(plan));
    case Kind::power_profile: return plan_power_profile(fs_, dev, request, std::move(plan));
    case Kind::clock_range: return plan_clock_range(fs_, dev, request, std::move(plan));
    case Kind::fan: return plan_fan(fs_, gpu.hwmon_dir, dev, request, std::move(plan));
    case Kind::reset: return plan_reset(fs_, dev, std::move(plan));
  }
  return refuse(std::move(plan), RefusalReason::not_supported, EOPNOTSUPP, "unknown control");
}

bool AmdgpuBackend::control_settled(std::size_t device, const ControlRequest& request) const {
  if (request.kind != Kind::compute_partition) return true;
  const AmdGpu& gpu = gpus_.at(device);
  const std::string mode = canonical_mode(request.text, kComputeModes);
  const FileText current = fs_.read_text(gpu.device_dir + "/current_compute_partition");
  if (!current.ok() || upper(current.text) != mode) return false;
  const std::uint64_t xcc = total_xcc(gpu);
  const int wanted = partitions_for(mode, xcc);
  const KfdTopology topology = kfd::read_topology(fs_);
  int found = 0;
  std::uint64_t found_xcc = 0;
  for (const KfdNode& node : topology.nodes) {
    if (!node.is_gpu() || node.gpu_id == 0) continue;
    const std::uint64_t location = node.get("location_id");
    if (node.get("domain") != gpu.address.domain || (location >> 8) != gpu.address.bus ||
        ((location >> 3) & 0x1f) != gpu.address.device) {
      continue;
    }
    ++found;
    found_xcc += node.get("num_xcc", 1);
  }
  return found == wanted && found_xcc == xcc;
}

}  // namespace hipstack::smi::detail::amdgpu
