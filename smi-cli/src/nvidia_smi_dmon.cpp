// `hipstack-smi --nvidia-smi dmon`: nvidia-smi's scrolling device monitor, one line per GPU per
// round, in its column format (`# gpu    pwr  gtemp ...`, each column 7 wide, "-" where the GPU
// gives no value), its metric groups (-s pucvmet) and its date/time columns (-o DT).
#include "nvidia_smi_dmon.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "render.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;

// How a column's value is made from its reading.
enum class DmonForm {
  whole,       // rounded to the nearest integer
  truncated,   // the integer part (pwr: NVML's milliwatts divided down, as nvidia-smi prints them)
  mib,         // bytes as whole MiB (nvidia-smi's "MB")
  mb_per_s,    // bytes per second as whole MiB/s
  total,       // a count summed over its instances (amdgpu's RAS blocks)
  none,        // hipstack has no figure: always "-"
};

struct DmonColumn {
  char group;  // the -s letter
  std::string_view name, unit;
  std::initializer_list<MetricId> from;  // the first the GPU gives
  DmonForm form;
};

constexpr std::initializer_list<MetricId> kNoSource = {};
// nvidia-smi 580's columns in its order (captures/recorded/nvidia-smi-580-h100/dmon-s.txt).
const DmonColumn kColumns[] = {
    {'p', "pwr", "W", {MetricId::power_average, MetricId::power_current}, DmonForm::truncated},
    {'p', "gtemp", "C", {MetricId::temperature_junction, MetricId::temperature_edge}, DmonForm::whole},
    {'p', "mtemp", "C", {MetricId::temperature_memory}, DmonForm::whole},
    {'u', "sm", "%", {MetricId::gpu_busy}, DmonForm::whole},
    {'u', "mem", "%", {MetricId::memory_busy}, DmonForm::whole},
    {'u', "enc", "%", {MetricId::encoder_busy}, DmonForm::whole},
    {'u', "dec", "%", {MetricId::decoder_busy}, DmonForm::whole},
    {'u', "jpg", "%", kNoSource, DmonForm::none},  // JPEG engine use: not read
    {'u', "ofa", "%", kNoSource, DmonForm::none},  // optical-flow engine use: not read
    {'c', "mclk", "MHz", {MetricId::clock_mclk}, DmonForm::whole},
    {'c', "pclk", "MHz", {MetricId::clock_sclk}, DmonForm::whole},
    {'v', "pviol", "%", kNoSource, DmonForm::none},   // share of the round under a power cap: not sampled per round
    {'v', "tviol", "bool", kNoSource, DmonForm::none},  // thermal violation flag: not sampled per round
    {'m', "fb", "MB", {MetricId::vram_used}, DmonForm::mib},
    {'m', "bar1", "MB", {MetricId::bar1_used}, DmonForm::mib},
    {'m', "ccpm", "MB", kNoSource, DmonForm::none},  // confidential-computing protected memory: not read
    {'e', "sbecc", "errs", {MetricId::ecc_corrected_volatile, MetricId::ras_correctable}, DmonForm::total},
    {'e', "dbecc", "errs", {MetricId::ecc_uncorrected_volatile, MetricId::ras_uncorrectable}, DmonForm::total},
    {'e', "pci", "errs", {MetricId::pcie_replay_count}, DmonForm::whole},
    {'t', "rxpci", "MB/s", {MetricId::pcie_rx}, DmonForm::mb_per_s},
    {'t', "txpci", "MB/s", {MetricId::pcie_tx}, DmonForm::mb_per_s},
};

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

std::vector<const DmonColumn*> columns(std::string_view select) {
  std::vector<const DmonColumn*> out;
  for (const DmonColumn& c : kColumns) {
    if (select.find(c.group) != std::string_view::npos) out.push_back(&c);
  }
  return out;
}

std::string cell(const DmonColumn& column, const std::vector<smi::Reading>& readings) {
  if (column.form == DmonForm::none) return "-";
  for (const MetricId id : column.from) {
    double sum = 0;
    bool any = false;
    for (const smi::Reading& r : readings) {
      if (r.id != id || !r.ok() || !r.number()) continue;
      if (column.form != DmonForm::total && !r.instance.empty()) continue;
      sum += *r.number();
      any = true;
      if (column.form != DmonForm::total) break;
    }
    if (!any) continue;
    switch (column.form) {
      case DmonForm::truncated: return fmt::format("{:.0f}", std::trunc(sum));
      case DmonForm::mib:
      case DmonForm::mb_per_s: return fmt::format("{:.0f}", std::floor(sum / kBytesPerMiB));
      default: return fmt::format("{:.0f}", sum);
    }
  }
  return "-";
}

}  // namespace

std::optional<std::string> dmon_refusal(const DmonRequest& request) {
  // nvidia-smi 580's words (captures/recorded/nvidia-smi-580-h100/dmon-bad-select.txt, dmon-bad-option.txt).
  if (request.select.empty() || request.select.find_first_not_of("pucvmet") != std::string::npos) {
    return "Failed to find any metric to display\nFailed to process command line \n\n";
  }
  if (request.time_columns.find_first_not_of("DT") != std::string::npos) return "Error in parsing options\nFailed to process command line \n\n";
  return std::nullopt;
}

std::string dmon_header(const DmonRequest& request) {
  const bool date = request.time_columns.find('D') != std::string::npos;
  const bool time = request.time_columns.find('T') != std::string::npos;
  std::string names = date || time ? "#" : "";
  std::string units = names;
  if (date) {
    names += fmt::format("{:<12}", "Date");
    units += fmt::format("{:<12}", "YYYYMMDD");
  }
  if (time) {
    names += fmt::format("{:<12}", "Time");
    units += fmt::format("{:<12}", "HH:MM:SS");
  }
  names += names.empty() ? "# gpu" : fmt::format("{:>4}", "gpu");
  units += units.empty() ? "# Idx" : fmt::format("{:>4}", "Idx");
  for (const DmonColumn* c : columns(request.select)) {
    names += fmt::format(" {:>6}", c->name);
    units += fmt::format(" {:>6}", c->unit);
  }
  return fmt::format("{} \n{} \n", names, units);
}

std::vector<MetricId> dmon_metrics(const DmonRequest& request) {
  std::vector<MetricId> out;
  for (const DmonColumn* c : columns(request.select)) out.insert(out.end(), c->from.begin(), c->from.end());
  return out;
}

std::string dmon_line(const DmonRequest& request, std::uint32_t index, const std::vector<smi::Reading>& readings) {
  std::string line;
  if (!request.time_columns.empty()) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    const bool date = request.time_columns.find('D') != std::string::npos;
    const bool time = request.time_columns.find('T') != std::string::npos;
    line = fmt::format(" {}{}{:>4}", date ? fmt::format("{:%Y%m%d}    ", local) : std::string(),
                       time ? fmt::format("{:%H:%M:%S}    ", local) : std::string(), index);
  } else {
    line = fmt::format("{:>5}", index);
  }
  for (const DmonColumn* c : columns(request.select)) line += fmt::format(" {:>6}", cell(*c, readings));
  return line + " \n";
}

}  // namespace hipstack::cli
