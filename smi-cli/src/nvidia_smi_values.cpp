// A query field's value in nvidia-smi's form (nvidia_smi_fields.hpp), from hipstack's readings.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "commands.hpp"
#include "nvidia_smi_fields.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;
using Form = NvidiaSmiForm;

constexpr double kMiB = 1024.0 * 1024.0;

// NVML's clock-event reasons and the AMD MI300 (SMU 13.0.6) throttler reasons with the same
// meaning: the package power limit (ppt) is NVML's software power cap, PROCHOT its hardware
// slowdown, the firmware's thermal limits its software thermal slowdown.
struct ReasonMatch {
  std::string_view nvml;
  std::uint64_t nvml_bit;
  std::initializer_list<std::string_view> amd;
};
const ReasonMatch kReasonMatches[] = {
    {"sw_power_cap", 0x4, {"ppt"}},
    {"hw_slowdown", 0x8, {"prochot"}},
    {"sw_thermal_slowdown", 0x20, {"socket_thermal", "vr_thermal", "hbm_thermal"}},
};

const smi::Reading* find(const std::vector<smi::Reading>& readings, MetricId id, std::string_view instance = {}) {
  const auto it = std::find_if(readings.begin(), readings.end(),
                               [&](const smi::Reading& r) { return r.id == id && r.instance == instance && r.ok(); });
  return it == readings.end() ? nullptr : &*it;
}

std::string bus_id(const std::string& bdf) {
  // "0000:18:00.0" -> "00000000:18:00.0", upper-case hex as nvidia-smi prints it.
  std::string out = bdf.size() == 12 ? "0000" + bdf : bdf;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// One part of "DDDD:BB:DD.F" as a number; nullopt when the address has another shape.
std::optional<unsigned> bdf_part(const std::string& bdf, Form form) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(bdf.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) return std::nullopt;
  return form == Form::pci_domain ? domain : form == Form::pci_bus ? bus : device;
}

std::optional<unsigned long> hex_id(const smi::Reading* r) {
  if (r == nullptr) return std::nullopt;
  const std::string text = value_text(*r);
  char* end = nullptr;
  const unsigned long v = std::strtoul(text.c_str(), &end, 16);
  if (end == text.c_str() || *end != '\0' || v > 0xffff) return std::nullopt;
  return v;
}

std::optional<std::string> pcie_generation(double gts) {
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};  // per-lane GT/s of PCIe 1.0 to 6.0
  for (std::size_t g = 0; g < std::size(kRates); ++g) {
    if (std::fabs(gts - kRates[g]) < 0.01) return std::to_string(g + 1);
  }
  return std::nullopt;
}

// The NVML clock-event bits throttle_status stands for: NVIDIA's as they are; AMD MI300's
// reasons as the NVML bits of the same meaning; nullopt where the bits are not documented.
std::optional<std::uint64_t> nvml_reason_bits(const smi::DeviceSummary& device, const std::vector<smi::Reading>& readings,
                                              const smi::Reading& status) {
  const auto bits = status.number();
  if (!bits || *bits < 0) return std::nullopt;
  const auto raw = static_cast<std::uint64_t>(*bits);
  if (device.vendor == "nvidia") return raw;
  const smi::Reading* target = find(readings, MetricId::gfx_target);
  const auto reasons = smi::throttle_reasons(device.vendor, target ? value_text(*target) : "", raw);
  if (!reasons) return std::nullopt;
  std::uint64_t out = 0;
  for (const ReasonMatch& m : kReasonMatches) {
    for (const std::string_view amd : m.amd) {
      if (std::find(reasons->begin(), reasons->end(), amd) != reasons->end()) out |= m.nvml_bit;
    }
  }
  return out;
}

std::string reason_value(const NvidiaSmiField& field, const NvidiaSmiRow& row, const smi::Reading& status) {
  const auto bits = nvml_reason_bits(row.device, row.readings, status);
  if (!bits) return std::string(field.missing);
  if (field.form == Form::reason_mask) return fmt::format("0x{:016X}", *bits);
  if (row.device.vendor == "nvidia") {
    const auto names = smi::throttle_reasons("nvidia", "", *bits);
    return std::find(names->begin(), names->end(), field.instance) != names->end() ? "Active" : "Not Active";
  }
  for (const ReasonMatch& m : kReasonMatches) {
    if (m.nvml == field.instance) return (*bits & m.nvml_bit) != 0 ? "Active" : "Not Active";
  }
  return std::string(field.missing);  // a reason AMD's firmware does not report
}

std::string compute_mode(const std::string& mode) {
  if (mode == "default") return "Default";
  if (mode == "exclusive_thread") return "Exclusive_Thread";
  if (mode == "prohibited") return "Prohibited";
  if (mode == "exclusive_process") return "Exclusive_Process";
  return mode;
}

}  // namespace

std::string nvidia_smi_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  return fmt::format("{:%Y/%m/%d %H:%M:%S}.{:03d}", local, static_cast<int>(ms));
}

std::vector<MetricId> nvidia_smi_metrics(const NvidiaSmiField& field) {
  std::vector<MetricId> out(field.from.begin(), field.from.end());
  if (field.form == Form::mib_free) out.insert(out.end(), {MetricId::vram_total, MetricId::vram_used});
  if (field.form == Form::reason || field.form == Form::reason_mask) out.push_back(MetricId::gfx_target);
  return out;
}

std::string nvidia_smi_value(const NvidiaSmiField& field, const NvidiaSmiRow& row, bool units) {
  const std::string missing(field.missing);
  switch (field.form) {
    case Form::none: return missing;
    case Form::timestamp: return std::string(row.timestamp);
    case Form::index: return std::to_string(row.device.index);
    case Form::count: return std::to_string(row.count);
    case Form::name: return row.device.name.empty() ? missing : row.device.name;
    case Form::uuid: return row.device.uuid.empty() ? missing : row.device.uuid;
    default: break;
  }
  const std::string unit = units && !field.unit.empty() ? fmt::format(" {}", field.unit) : std::string();
  const auto& readings = row.readings;
  if (field.form == Form::total) {
    for (const MetricId id : field.from) {
      double sum = 0;
      bool any = false;
      for (const smi::Reading& r : readings) {
        if (r.id != id || !r.ok() || !r.number()) continue;
        sum += *r.number();
        any = true;
      }
      if (any) return fmt::format("{:.0f}", sum);
    }
    return missing;
  }
  if (field.form == Form::pci_ids) {
    const auto device = hex_id(find(readings, *field.from.begin()));
    const auto vendor = hex_id(find(readings, *(field.from.begin() + 1)));
    return device && vendor ? fmt::format("0x{:04X}{:04X}", *device, *vendor) : missing;
  }
  const smi::Reading* reading = nullptr;
  for (const MetricId id : field.from) {
    if ((reading = find(readings, id, field.form == Form::reason ? std::string_view() : field.instance)) != nullptr) break;
  }
  if (reading == nullptr && field.form == Form::mib_free) {
    const smi::Reading* total = find(readings, MetricId::vram_total);
    const smi::Reading* used = find(readings, MetricId::vram_used);
    if (total == nullptr || used == nullptr || !total->number() || !used->number()) return missing;
    const double free = std::max(0.0, *total->number() - *used->number());
    return fmt::format("{:.0f}{}", std::ceil(free / kMiB), unit);
  }
  if (reading == nullptr) return missing;
  const std::optional<double> number = reading->number();
  switch (field.form) {
    case Form::text: return value_text(*reading);
    case Form::bus_id: return bus_id(value_text(*reading));
    case Form::pci_domain:
    case Form::pci_bus:
    case Form::pci_device: {
      const auto part = bdf_part(value_text(*reading), field.form);
      if (!part) return missing;
      return field.form == Form::pci_domain ? fmt::format("0x{:04X}", *part) : fmt::format("0x{:02X}", *part);
    }
    case Form::enabled: return value_text(*reading) == "enabled" ? "Enabled" : "Disabled";
    case Form::yes_no: return number ? (*number != 0 ? "Yes" : "No") : missing;
    case Form::compute_mode: return compute_mode(value_text(*reading));
    case Form::pcie_gen: return number ? pcie_generation(*number).value_or(missing) : missing;
    case Form::reason:
    case Form::reason_mask: return reason_value(field, row, *reading);
    case Form::whole: return number ? fmt::format("{:.0f}{}", *number, unit) : missing;
    case Form::two_places: return number ? fmt::format("{:.2f}{}", *number, unit) : missing;
    case Form::mib:
    case Form::mib_free: return number ? fmt::format("{:.0f}{}", std::ceil(*number / kMiB), unit) : missing;
    case Form::mib_down: return number ? fmt::format("{:.0f}{}", std::floor(*number / kMiB), unit) : missing;
    default: return missing;
  }
}

}  // namespace hipstack::cli
