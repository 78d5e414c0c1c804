// One sysfs value made a reading, with gpu_metrics as the fallback source when the file is absent
// (sysfs_values.hpp).
#include "sysfs_values.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace hipstack::smi::detail::amdgpu {

void SysfsValues::emit_number(MetricId id, double value, std::string detail, const std::string& instance) {
  const MetricInfo* info = find_metric(id);
  if (info != nullptr && info->type == ValueType::integer) {
    list_.integer(id, static_cast<std::int64_t>(std::llround(value)), std::move(detail), instance);
  } else {
    list_.real(id, value, std::move(detail), instance);
  }
}

bool SysfsValues::number(MetricId id, const std::string& path, double per_unit, std::optional<double> fallback,
                         const char* fallback_source, const std::string& instance) {
  if (!wanted({id})) return false;
  if (path.empty()) {
    value_or_absent(id, fallback, fallback ? fallback_source : "no such file on this device", instance);
    return fallback.has_value();
  }
  const FileText file = fs_.read_text(path);
  if (!file.ok()) {
    if (file.error == ENOENT && fallback) {
      emit_number(id, *fallback, fallback_source, instance);
      return true;
    }
    list_.failed(id, file.error, fs_.host_path(path) + ": " + std::strerror(file.error), instance);
    return false;
  }
  // Integers are parsed exactly first: byte counts above 2^53 must not be rounded.
  if (const auto integer = parse_int(file.text); integer && per_unit == 1.0) {
    const MetricInfo* info = find_metric(id);
    if (info != nullptr && info->type == ValueType::integer) {
      list_.integer(id, *integer, path, instance);
      return true;
    }
  }
  const auto value = parse_real(file.text);
  if (!value) {
    list_.malformed(id, fs_.host_path(path) + ": not a number: \"" + file.text.substr(0, 64) + "\"", instance);
    return false;
  }
  emit_number(id, *value / per_unit, path, instance);
  return true;
}

bool SysfsValues::text(MetricId id, const std::string& path, const std::string& instance) {
  if (!wanted({id})) return false;
  const FileText file = fs_.read_text(path);
  if (!file.ok()) {
    list_.failed(id, file.error, fs_.host_path(path) + ": " + std::strerror(file.error), instance);
    return false;
  }
  if (file.text.empty()) {
    list_.failed(id, ENOENT, fs_.host_path(path) + ": empty", instance);
    return false;
  }
  list_.text(id, file.text, path, instance);
  return true;
}

void SysfsValues::value_or_absent(MetricId id, std::optional<double> value, const std::string& source,
                                  const std::string& instance) {
  if (!wanted({id})) return;
  if (value) {
    emit_number(id, *value, source, instance);
  } else {
    list_.failed(id, ENOENT, source + ": not provided", instance);
  }
}

std::int64_t FanScale::pwm(double percent) const {
  return min + std::llround(percent * static_cast<double>(max - min) / 100.0);
}

FanScale read_fan_scale(const FsView& fs, const std::string& hwmon_dir) {
  FanScale scale;
  const FileText lo = fs.read_text(hwmon_dir + "/pwm1_min");
  const FileText hi = fs.read_text(hwmon_dir + "/pwm1_max");
  const auto min = lo.ok() ? parse_int(lo.text) : std::optional<std::int64_t>(0);
  const auto max = hi.ok() ? parse_int(hi.text) : std::optional<std::int64_t>(255);
  if (min && max && *min >= 0 && *min < *max) {
    scale.min = *min;
    scale.max = *max;
  }
  return scale;
}

}  // namespace hipstack::smi::detail::amdgpu
