// `hipstack-smi --nvidia-smi -q [-d SECTION,...]`: nvidia-smi's query report, in its layout (labels
// padded to column 55, four spaces a level, "N/A" where there is no value), for the sections of -d
// (MEMORY, UTILIZATION, ECC, TEMPERATURE, POWER, CLOCK, PIDS, PERFORMANCE; recorded in
// captures/recorded/nvidia-smi-580-h100/q-d-all.txt). Each value line shows a --query-gpu field of
// the field table, so the report and the queries say the same thing.
#include "nvidia_smi_q.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "nvidia_smi_fields.hpp"
#include "render.hpp"

namespace hipstack::cli {
namespace {

// A report line: a heading (no field), a value (a --query-gpu field, shown with `suffix`; or one
// of the report's own fields below, for lines no query field has), or a line hipstack has no figure
// for (field "-": "N/A").
struct ReportLine {
  std::string_view section;  // -d name; "" for the identity block plain -q shows
  int depth;                 // levels under the GPU's line, four spaces each
  std::string_view label;
  std::string_view field;    // "" heading, "-" N/A, else a --query-gpu field
  std::string_view suffix = "";
  const NvidiaSmiField* own = nullptr;  // instead of `field`
};

using smi::MetricId;
using Form = NvidiaSmiForm;
// Lines of the report that no --query-gpu field shows.
const NvidiaSmiField kDisplayClock{"", "", "", Form::reason, {MetricId::throttle_status}, "display_clock_setting", ""};
const NvidiaSmiField kBar1Total{"", "", "MiB", Form::mib_down, {MetricId::bar1_total}, "", ""};
const NvidiaSmiField kBar1Used{"", "", "MiB", Form::mib_down, {MetricId::bar1_used}, "", ""};
const NvidiaSmiField kMaxVideo{"", "", "MHz", Form::whole, {MetricId::clock_video_max}, "", ""};

// In nvidia-smi's order (its report puts the sections in this order whatever -d's order).
const ReportLine kLines[] = {
    {"", 1, "Product Name", "name"},
    {"", 1, "Persistence Mode", "persistence_mode"},
    {"", 1, "MIG Mode", ""},
    {"", 2, "Current", "mig.mode.current"},
    {"", 2, "Pending", "mig.mode.pending"},
    {"", 1, "Serial Number", "serial"},
    {"", 1, "GPU UUID", "uuid"},
    {"", 1, "VBIOS Version", "vbios_version"},
    {"", 1, "PCI", ""},
    {"", 2, "Bus", "pci.bus"},
    {"", 2, "Device", "pci.device"},
    {"", 2, "Domain", "pci.domain"},
    {"", 2, "Device Id", "pci.device_id"},
    {"", 2, "Bus Id", "pci.bus_id"},
    {"", 2, "Sub System Id", "pci.sub_device_id"},
    {"", 2, "GPU Link Info", ""},
    {"", 3, "PCIe Generation", ""},
    {"", 4, "Max", "pcie.link.gen.max"},
    {"", 4, "Current", "pcie.link.gen.current"},
    {"", 3, "Link Width", ""},
    {"", 4, "Max", "pcie.link.width.max", "x"},
    {"", 4, "Current", "pcie.link.width.current", "x"},
    {"", 1, "Fan Speed", "fan.speed"},
    {"", 1, "Compute Mode", "compute_mode"},
    {"PERFORMANCE", 1, "Performance State", "pstate"},
    {"PERFORMANCE", 1, "Clocks Event Reasons", ""},
    {"PERFORMANCE", 2, "Idle", "clocks_event_reasons.gpu_idle"},
    {"PERFORMANCE", 2, "Applications Clocks Setting", "clocks_event_reasons.applications_clocks_setting"},
    {"PERFORMANCE", 2, "SW Power Cap", "clocks_event_reasons.sw_power_cap"},
    {"PERFORMANCE", 2, "HW Slowdown", "clocks_event_reasons.hw_slowdown"},
    {"PERFORMANCE", 3, "HW Thermal Slowdown", "clocks_event_reasons.hw_thermal_slowdown"},
    {"PERFORMANCE", 3, "HW Power Brake Slowdown", "clocks_event_reasons.hw_power_brake_slowdown"},
    {"PERFORMANCE", 2, "Sync Boost", "clocks_event_reasons.sync_boost"},
    {"PERFORMANCE", 2, "SW Thermal Slowdown", "clocks_event_reasons.sw_thermal_slowdown"},
    {"PERFORMANCE", 2, "Display Clock Setting", "+", "", &kDisplayClock},
    {"PERFORMANCE", 1, "Clocks Event Reasons Counters", ""},
    {"PERFORMANCE", 2, "SW Power Capping", "clocks_event_reasons_counters.sw_power_cap"},
    {"PERFORMANCE", 2, "Sync Boost", "clocks_event_reasons_counters.sync_boost"},
    {"PERFORMANCE", 2, "SW Thermal Slowdown", "clocks_event_reasons_counters.sw_thermal_slowdown"},
    {"PERFORMANCE", 2, "HW Thermal Slowdown", "clocks_event_reasons_counters.hw_thermal_slowdown"},
    {"PERFORMANCE", 2, "HW Power Braking", "clocks_event_reasons_counters.hw_power_brake_slowdown"},
    {"PERFORMANCE", 1, "Sparse Operation Mode", "-"},
    {"MEMORY", 1, "FB Memory Usage", ""},
    {"MEMORY", 2, "Total", "memory.total"},
    {"MEMORY", 2, "Reserved", "memory.reserved"},
    {"MEMORY", 2, "Used", "memory.used"},
    {"MEMORY", 2, "Free", "memory.free"},
    {"MEMORY", 1, "BAR1 Memory Usage", ""},
    {"MEMORY", 2, "Total", "+", "", &kBar1Total},
    {"MEMORY", 2, "Used", "+", "", &kBar1Used},
    {"MEMORY", 2, "Free", "-"},  // BAR1 free: not read
    {"MEMORY", 1, "Conf Compute Protected Memory Usage", ""},
    {"MEMORY", 2, "Total", "protected_memory.total"},
    {"MEMORY", 2, "Used", "protected_memory.used"},
    {"MEMORY", 2, "Free", "protected_memory.free"},
    {"UTILIZATION", 1, "Utilization", ""},
    {"UTILIZATION", 2, "GPU", "utilization.gpu"},
    {"UTILIZATION", 2, "Memory", "utilization.memory"},
    {"UTILIZATION", 2, "Encoder", "utilization.encoder"},
    {"UTILIZATION", 2, "Decoder", "utilization.decoder"},
    {"UTILIZATION", 2, "JPEG", "utilization.jpeg"},
    {"UTILIZATION", 2, "OFA", "utilization.ofa"},
    // NVML's sample buffers (nvmlDeviceGetSamples): not read (hipstack-smid keeps its own history).
    {"UTILIZATION", 1, "GPU Utilization Samples", ""},
    {"UTILIZATION", 2, "Duration", "-"},
    {"UTILIZATION", 2, "Number of Samples", "-"},
    {"UTILIZATION", 2, "Max", "-"},
    {"UTILIZATION", 2, "Min", "-"},
    {"UTILIZATION", 2, "Avg", "-"},
    {"UTILIZATION", 1, "Memory Utilization Samples", ""},
    {"UTILIZATION", 2, "Duration", "-"},
    {"UTILIZATION", 2, "Number of Samples", "-"},
    {"UTILIZATION", 2, "Max", "-"},
    {"UTILIZATION", 2, "Min", "-"},
    {"UTILIZATION", 2, "Avg", "-"},
    {"UTILIZATION", 1, "ENC Utilization Samples", ""},
    {"UTILIZATION", 2, "Duration", "-"},
    {"UTILIZATION", 2, "Number of Samples", "-"},
    {"UTILIZATION", 2, "Max", "-"},
    {"UTILIZATION", 2, "Min", "-"},
    {"UTILIZATION", 2, "Avg", "-"},
    {"UTILIZATION", 1, "DEC Utilization Samples", ""},
    {"UTILIZATION", 2, "Duration", "-"},
    {"UTILIZATION", 2, "Number of Samples", "-"},
    {"UTILIZATION", 2, "Max", "-"},
    {"UTILIZATION", 2, "Min", "-"},
    {"UTILIZATION", 2, "Avg", "-"},
    {"UTILIZATION", 1, "JPG Utilization Samples", ""},
    {"UTILIZATION", 2, "Duration", "-"},
    {"UTILIZATION", 2, "Number of Samples", "-"},
    {"UTILIZATION", 2, "Max", "-"},
    {"UTILIZATION", 2, "Min", "-"},
    {"UTILIZATION", 2, "Avg", "-"},
    {"UTILIZATION", 1, "OFA Utilization Samples", ""},
    {"UTILIZATION", 2, "Duration", "-"},
    {"UTILIZATION", 2, "Number of Samples", "-"},
    {"UTILIZATION", 2, "Max", "-"},
    {"UTILIZATION", 2, "Min", "-"},
    {"UTILIZATION", 2, "Avg", "-"},
    {"ECC", 1, "ECC Mode", ""},
    {"ECC", 2, "Current", "ecc.mode.current"},
    {"ECC", 2, "Pending", "ecc.mode.pending"},
    {"ECC", 1, "ECC Errors", ""},
    {"ECC", 2, "Volatile", ""},
    {"ECC", 3, "SRAM Correctable", "ecc.errors.corrected.volatile.sram"},
    {"ECC", 3, "SRAM Uncorrectable Parity", "ecc.errors.uncorrected.volatile.sram.parity"},
    {"ECC", 3, "SRAM Uncorrectable SEC-DED", "ecc.errors.uncorrected.volatile.sram.secded"},
    {"ECC", 3, "DRAM Correctable", "ecc.errors.corrected.volatile.dram"},
    {"ECC", 3, "DRAM Uncorrectable", "ecc.errors.uncorrected.volatile.dram"},
    {"ECC", 2, "Aggregate", ""},
    {"ECC", 3, "SRAM Correctable", "ecc.errors.corrected.aggregate.sram"},
    {"ECC", 3, "SRAM Uncorrectable Parity", "ecc.errors.uncorrected.aggregate.sram.parity"},
    {"ECC", 3, "SRAM Uncorrectable SEC-DED", "ecc.errors.uncorrected.aggregate.sram.secded"},
    {"ECC", 3, "DRAM Correctable", "ecc.errors.corrected.aggregate.dram"},
    {"ECC", 3, "DRAM Uncorrectable", "ecc.errors.uncorrected.aggregate.dram"},
    {"ECC", 3, "SRAM Threshold Exceeded", "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded"},
    {"ECC", 2, "Aggregate Uncorrectable SRAM Sources", ""},
    {"ECC", 3, "SRAM L2", "ecc.errors.uncorrected.aggregate.sram.l2"},
    {"ECC", 3, "SRAM SM", "ecc.errors.uncorrected.aggregate.sram.sm"},
    {"ECC", 3, "SRAM Microcontroller", "ecc.errors.uncorrected.aggregate.sram.mcu"},
    {"ECC", 3, "SRAM PCIE", "ecc.errors.uncorrected.aggregate.sram.pcie"},
    {"ECC", 3, "SRAM Other", "ecc.errors.uncorrected.aggregate.sram.other"},
    {"ECC", 2, "Channel Repair Pending", "-"},
    {"ECC", 2, "TPC Repair Pending", "-"},
    {"ECC", 2, "Unrepairable Memory", "-"},
    {"TEMPERATURE", 1, "Temperature", ""},
    {"TEMPERATURE", 2, "GPU Current Temp", "temperature.gpu", " C"},
    {"TEMPERATURE", 2, "GPU T.Limit Temp", "temperature.gpu.tlimit", " C"},
    {"TEMPERATURE", 2, "GPU Shutdown T.Limit Temp", "-"},
    {"TEMPERATURE", 2, "GPU Slowdown T.Limit Temp", "-"},
    {"TEMPERATURE", 2, "GPU Max Operating T.Limit Temp", "-"},
    {"TEMPERATURE", 2, "GPU Target Temperature", "-"},
    {"TEMPERATURE", 2, "Memory Current Temp", "temperature.memory", " C"},
    {"TEMPERATURE", 2, "Memory Max Operating T.Limit Temp", "-"},
    {"POWER", 1, "GPU Power Readings", ""},
    {"POWER", 2, "Average Power Draw", "power.draw.average"},
    {"POWER", 2, "Instantaneous Power Draw", "power.draw.instant"},
    {"POWER", 2, "Current Power Limit", "enforced.power.limit"},
    {"POWER", 2, "Requested Power Limit", "power.limit"},
    {"POWER", 2, "Default Power Limit", "power.default_limit"},
    {"POWER", 2, "Min Power Limit", "power.min_limit"},
    {"POWER", 2, "Max Power Limit", "power.max_limit"},
    {"POWER", 1, "Power Samples", ""},
    {"POWER", 2, "Duration", "-"},
    {"POWER", 2, "Number of Samples", "-"},
    {"POWER", 2, "Max", "-"},
    {"POWER", 2, "Min", "-"},
    {"POWER", 2, "Avg", "-"},
    {"POWER", 1, "GPU Memory Power Readings ", ""},  // nvidia-smi's heading ends with a space
    {"POWER", 2, "Average Power Draw", "-"},
    {"POWER", 2, "Instantaneous Power Draw", "-"},
    {"POWER", 1, "Module Power Readings", ""},
    {"POWER", 2, "Average Power Draw", "module.power.draw.average"},
    {"POWER", 2, "Instantaneous Power Draw", "module.power.draw.instant"},
    {"POWER", 2, "Current Power Limit", "module.enforced.power.limit"},
    {"POWER", 2, "Requested Power Limit", "module.power.limit"},
    {"POWER", 2, "Default Power Limit", "module.power.default_limit"},
    {"POWER", 2, "Min Power Limit", "module.power.min_limit"},
    {"POWER", 2, "Max Power Limit", "module.power.max_limit"},
    {"CLOCK", 1, "Clocks", ""},
    {"CLOCK", 2, "Graphics", "clocks.current.graphics"},
    {"CLOCK", 2, "SM", "clocks.current.sm"},
    {"CLOCK", 2, "Memory", "clocks.current.memory"},
    {"CLOCK", 2, "Video", "clocks.current.video"},
    {"CLOCK", 1, "Applications Clocks", ""},
    {"CLOCK", 2, "Graphics", "clocks.applications.graphics"},
    {"CLOCK", 2, "Memory", "clocks.applications.memory"},
    {"CLOCK", 1, "Default Applications Clocks", ""},
    {"CLOCK", 2, "Graphics", "clocks.default_applications.graphics"},
    {"CLOCK", 2, "Memory", "clocks.default_applications.memory"},
    {"CLOCK", 1, "Deferred Clocks", ""},
    {"CLOCK", 2, "Memory", "-"},
    {"CLOCK", 1, "Max Clocks", ""},
    {"CLOCK", 2, "Graphics", "clocks.max.graphics"},
    {"CLOCK", 2, "SM", "clocks.max.sm"},
    {"CLOCK", 2, "Memory", "clocks.max.memory"},
    {"CLOCK", 2, "Video", "+", "", &kMaxVideo},
    {"CLOCK", 1, "Max Customer Boost Clocks", ""},
    {"CLOCK", 2, "Graphics", "-"},
    {"CLOCK", 1, "SM Clock Samples", ""},
    {"CLOCK", 2, "Duration", "-"},
    {"CLOCK", 2, "Number of Samples", "-"},
    {"CLOCK", 2, "Max", "-"},
    {"CLOCK", 2, "Min", "-"},
    {"CLOCK", 2, "Avg", "-"},
    {"CLOCK", 1, "Memory Clock Samples", ""},
    {"CLOCK", 2, "Duration", "-"},
    {"CLOCK", 2, "Number of Samples", "-"},
    {"CLOCK", 2, "Max", "-"},
    {"CLOCK", 2, "Min", "-"},
    {"CLOCK", 2, "Avg", "-"},
    {"CLOCK", 1, "Clock Policy", ""},
    {"CLOCK", 2, "Auto Boost", "-"},
    {"CLOCK", 2, "Auto Boost Default", "-"},
};

constexpr std::string_view kSections[] = {"MEMORY", "UTILIZATION", "ECC",  "TEMPERATURE",
                                          "POWER",  "CLOCK",       "PIDS", "PERFORMANCE"};
constexpr std::size_t kLabelWidth = 55;         // the value's colon is in this column
constexpr std::size_t kProcessLabelWidth = 42;  // in the Processes block

std::string value_line(int depth, std::string_view label, std::string_view value, std::size_t width = kLabelWidth) {
  std::string text = std::string(static_cast<std::size_t>(depth) * 4, ' ') + std::string(label);
  if (text.size() < width) text.resize(width, ' ');
  return fmt::format("{}: {}\n", text, printable(value));
}

// Whether the report shows a line: the identity block only without -d, a section's lines when -d
// names it (or names nothing).
bool included(const NvidiaSmiReport& report, std::string_view section) {
  return section.empty() ? report.sections.empty() : nvidia_smi_report_shows(report, section);
}

const NvidiaSmiField& field_of(const ReportLine& line) {
  return line.own != nullptr ? *line.own : nvidia_smi_field(nvidia_smi_gpu_fields(), line.field);
}

// NVML's process type letter: C (compute), G (graphics), C+G; an AMD process is a compute process.
std::string_view process_type(const smi::ProcessInfo& p) {
  const auto it = std::find_if(p.readings.begin(), p.readings.end(),
                               [](const smi::Reading& r) { return r.id == MetricId::process_type && r.ok(); });
  const std::string type = it == p.readings.end() ? "compute" : value_text(*it);
  return type == "graphics" ? "G" : type == "compute+graphics" ? "C+G" : "C";
}

// A MIG instance id of the process (NVIDIA), "N/A" outside MIG.
std::string instance_id(const smi::ProcessInfo& p, MetricId id) {
  const auto it = std::find_if(p.readings.begin(), p.readings.end(), [id](const smi::Reading& r) { return r.id == id && r.ok(); });
  return it == p.readings.end() ? "N/A" : value_text(*it);
}

}  // namespace

bool nvidia_smi_report_shows(const NvidiaSmiReport& report, std::string_view section) {
  return report.sections.empty() || std::find(report.sections.begin(), report.sections.end(), section) != report.sections.end();
}

std::optional<std::string> nvidia_smi_report_refusal(const NvidiaSmiReport& report) {
  for (const std::string& s : report.sections) {
    if (std::find(std::begin(kSections), std::end(kSections), s) == std::end(kSections)) {
      return "Failed to parse --display/-d flags\n";  // nvidia-smi 580's words (q-bad-display.txt)
    }
  }
  return std::nullopt;
}

std::vector<smi::MetricId> nvidia_smi_report_metrics(const NvidiaSmiReport& report) {
  std::vector<smi::MetricId> out;
  for (const ReportLine& line : kLines) {
    if (line.field.empty() || line.field == "-" || !included(report, line.section)) continue;
    for (const smi::MetricId id : nvidia_smi_metrics(field_of(line))) out.push_back(id);
  }
  return out;
}

std::string nvidia_smi_report_header(std::string_view driver, std::string_view cuda, std::size_t count) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string out = "\n==============NVSMI LOG==============\n\n";
  out += value_line(0, "Timestamp", fmt::format("{:%a %b %e %H:%M:%S %Y}", local));
  out += value_line(0, "Driver Version", driver.empty() ? "N/A" : driver);
  out += value_line(0, "CUDA Version", cuda.empty() ? "N/A" : cuda);
  out += "\n" + value_line(0, "Attached GPUs", std::to_string(count));
  return out;
}

std::string nvidia_smi_report_gpu(const NvidiaSmiReport& report, const NvidiaSmiRow& row,
                                  const std::optional<std::vector<smi::ProcessInfo>>& processes) {
  std::string out;
  for (const ReportLine& line : kLines) {
    if (!included(report, line.section)) continue;
    if (line.field.empty()) {
      out += std::string(static_cast<std::size_t>(line.depth) * 4, ' ') + std::string(line.label) + "\n";
      continue;
    }
    std::string value = "N/A";
    if (line.field != "-") {
      value = nvidia_smi_value(field_of(line), row, true);
      value = value == "[N/A]" || value == "N/A" || value.empty() ? "N/A" : value + std::string(line.suffix);
    }
    out += value_line(line.depth, line.label, value);
  }
  if (nvidia_smi_report_shows(report, "PIDS")) {
    if (!processes) {
      out += value_line(1, "Processes", "N/A");
    } else if (processes->empty()) {
      out += value_line(1, "Processes", "None");
    } else {
      out += "    Processes\n";
      const NvidiaSmiField& used = nvidia_smi_field(nvidia_smi_app_fields(), "used_gpu_memory");
      for (const smi::ProcessInfo& p : *processes) {
        const std::string memory = nvidia_smi_value(used, NvidiaSmiRow{row.device, p.readings, row.count, row.timestamp}, true);
        out += value_line(2, "GPU instance ID", instance_id(p, MetricId::process_gpu_instance_id), kProcessLabelWidth);
        out += value_line(2, "Compute instance ID", instance_id(p, MetricId::process_compute_instance_id), kProcessLabelWidth);
        out += value_line(2, "Process ID", std::to_string(p.pid), kProcessLabelWidth);
        out += value_line(3, "Type", process_type(p), kProcessLabelWidth);
        const std::string name = nvidia_smi_program(p);
        out += value_line(3, "Name", name.empty() ? "N/A" : name, kProcessLabelWidth);
        out += value_line(3, "Used GPU Memory", memory == "[N/A]" ? "N/A" : memory, kProcessLabelWidth);
      }
    }
  }
  return out + "\n";
}

}  // namespace hipstack::cli
