#include "render.hpp"

#include "units.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>

namespace hipstack::cli {

std::string Table::str() const {
  std::vector<std::size_t> widths(header_.size(), 0);
  auto measure = [&widths](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto emit = [&out, &widths](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string& cell = i < row.size() ? row[i] : std::string();
      line += cell;
      if (i + 1 < widths.size()) line.append(widths[i] - display_width(cell) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit(header_);
  for (const auto& row : rows_) emit(row);
  return out;
}

std::string value_text(const smi::Reading& reading) {
  if (!reading.ok()) return "N/A";
  if (const auto* i = std::get_if<std::int64_t>(&reading.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&reading.value)) {
    std::string text = fmt::format("{:.3f}", *d);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
  }
  if (const auto* s = std::get_if<std::string>(&reading.value)) return *s;
  return "N/A";
}

std::string raw_value_text(const smi::Reading& reading) {
  if (const auto* d = std::get_if<double>(&reading.value); d != nullptr && reading.ok()) return fmt::format("{}", *d);
  return value_text(reading);
}

std::string value_with_unit(const smi::Reading& reading) {
  const smi::MetricInfo* info = smi::find_metric(reading.id);
  const std::optional<double> number = reading.number();
  // Unitless numbers stay exact (counters beyond 2^53 must not round); quantities read as people read them.
  if (!reading.ok() || info == nullptr || !number || smi::unit_symbol(info->unit).empty()) return value_text(reading);
  return human_quantity(*number, info->unit);
}

namespace {

Json single_json(const smi::Reading& r, bool with_unit) {
  Json j;
  j["status"] = std::string(smi::status_name(r.status));
  if (r.ok()) {
    std::visit(
        [&j](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (!std::is_same_v<T, std::monostate>) j["value"] = v;
        },
        r.value);
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (with_unit && info != nullptr && info->unit != smi::Unit::none) j["unit"] = std::string(smi::unit_symbol(info->unit));
  } else if (r.status != smi::Status::not_supported) {
    if (r.error_code != 0) j["error"] = std::string(std::strerror(r.error_code));
    j["detail"] = r.detail;
  }
  return j;
}

}  // namespace

Json reading_json(const smi::Reading& reading) { return single_json(reading, true); }

Json readings_json(const std::vector<smi::Reading>& readings) {
  Json metrics = Json::object();
  for (const smi::Reading& r : readings) {
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (info == nullptr) continue;
    const std::string name(info->name);
    if (info->instance_label.empty()) {
      metrics[name] = single_json(r, true);
      continue;
    }
    // Instanced metric: one entry per instance; none at all is reported like a single value.
    if (r.instance.empty()) {
      if (!metrics.contains(name)) metrics[name] = single_json(r, false);
      continue;
    }
    Json& entry = metrics[name];
    if (!entry.contains("instances")) {
      entry = Json::object();
      if (info->unit != smi::Unit::none) entry["unit"] = std::string(smi::unit_symbol(info->unit));
      entry["instances"] = Json::object();
    }
    entry["instances"][r.instance] = single_json(r, false);
  }
  return metrics;
}

Json device_json(const smi::DeviceSummary& device) {
  Json j;
  j["index"] = device.index;
  j["vendor"] = device.vendor;
  j["backend"] = device.backend;
  j["bdf"] = device.bdf;
  j["uuid"] = device.uuid;
  j["name"] = device.name;
  j["partitions"] = device.partition_count;
  j["fault"] = device.fault.empty() ? Json(nullptr) : Json(device.fault);
  return j;
}

std::string device_heading(const smi::DeviceSummary& device, std::string_view extra) {
  std::string out = fmt::format("GPU {}  {}  {}", device.index, device.bdf.empty() ? "N/A" : device.bdf,
                                device.name.empty() ? "(name unreadable)" : device.name);
  if (!extra.empty()) out += fmt::format("  {}", extra);
  if (!device.fault.empty()) out += fmt::format("  CANNOT BE READ: {}", device.fault);
  return out + "\n";
}

std::string fault_lines(const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected) {
  std::string out;
  for (const std::uint32_t index : selected) {
    if (!devices.at(index).fault.empty()) out += fmt::format("GPU {} cannot be read: {}\n", devices[index].index, devices[index].fault);
  }
  return out;
}

bool any_fault(const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected) {
  return std::any_of(selected.begin(), selected.end(), [&](std::uint32_t i) { return !devices.at(i).fault.empty(); });
}

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

void print_json(const Json& doc) { print(doc.dump(2) + "\n"); }

Json document(std::string_view command) {
  Json j;
  j["schema"] = "hipstack-smi/v1";
  j["command"] = std::string(command);
  return j;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
  return out;
}

std::string csv_reading_row(std::vector<std::string> keys, const smi::Reading& reading, CsvInstance instance) {
  const smi::MetricInfo* info = smi::find_metric(reading.id);
  keys.emplace_back(info != nullptr ? info->name : "");
  if (instance == CsvInstance::with) keys.push_back(reading.instance);
  keys.emplace_back(smi::status_name(reading.status));
  keys.push_back(reading.ok() ? raw_value_text(reading) : "");
  keys.emplace_back(info != nullptr ? smi::unit_symbol(info->unit) : "");
  return csv_row(keys);
}

std::string local_clock(std::chrono::system_clock::time_point when, bool milliseconds) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  std::string text = fmt::format("{:%H:%M:%S}", local);
  if (milliseconds) {
    text += fmt::format(".{:03}", std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000);
  }
  return text;
}

std::string utc_iso(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", utc, ms);
}

}  // namespace hipstack::cli
