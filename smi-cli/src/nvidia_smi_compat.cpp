// `hipstack-smi --nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`: the query that
// scripts written for NVIDIA nodes make, answered for every GPU hipstack sees, AMD included, with
// nvidia-smi's field names, header, separators and number forms (docs/nvidia-smi-compat.md).
#include "nvidia_smi_compat.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "suggest.hpp"

namespace hipstack::cli {

// How nvidia-smi prints a field's value.
enum class NvidiaSmiForm {
  text,         // as read
  whole,        // integer ("35")
  two_places,   // "69.97"
  mib,          // bytes as whole MiB, rounded up as nvidia-smi does (615.3 MiB reserved prints 616 on an H200)
  mib_free,     // vram_free; where the driver gives only total and used (amdgpu), total - used
  total,        // a count; an instanced one (amdgpu's RAS blocks) summed over its instances
  bus_id,       // "00000000:18:00.0"
  enabled,      // "Enabled" / "Disabled"
  pcie_gen,     // GT/s as the PCIe generation ("5")
  index,        // the device's index
  uuid,         // the device's UUID
  name,         // the device's marketing name
  count,        // how many GPUs
};

struct NvidiaSmiField {
  std::string_view name;
  std::string_view unit;              // nvidia-smi's header unit ("MiB"), empty for none
  std::initializer_list<smi::MetricId> from;  // the first the GPU provides
  NvidiaSmiForm form;
};

namespace {

using smi::MetricId;
using Form = NvidiaSmiForm;
using Field = NvidiaSmiField;

// nvidia-smi's names (nvidia-smi --help-query-gpu). `from` lists the catalogue metric(s) with the
// same meaning; on AMD the closest one (temperature.gpu: the junction sensor, as amd-smi's "hotspot").
constexpr std::initializer_list<MetricId> kNone = {};
const Field kNvidiaSmiFields[] = {
    {"index", "", kNone, Form::index},
    {"count", "", kNone, Form::count},
    {"name", "", kNone, Form::name},
    {"uuid", "", kNone, Form::uuid},
    {"serial", "", {MetricId::serial_number}, Form::text},
    {"pci.bus_id", "", {MetricId::bdf}, Form::bus_id},
    {"driver_version", "", {MetricId::driver_version}, Form::text},
    {"vbios_version", "", {MetricId::vbios_version}, Form::text},
    {"temperature.gpu", "", {MetricId::temperature_junction, MetricId::temperature_edge}, Form::whole},
    {"temperature.memory", "", {MetricId::temperature_memory}, Form::whole},
    {"power.draw", "W", {MetricId::power_average, MetricId::power_current}, Form::two_places},
    {"power.draw.average", "W", {MetricId::power_average}, Form::two_places},
    {"power.draw.instant", "W", {MetricId::power_current}, Form::two_places},
    {"power.limit", "W", {MetricId::power_cap}, Form::two_places},
    {"enforced.power.limit", "W", {MetricId::power_cap}, Form::two_places},
    {"power.default_limit", "W", {MetricId::power_cap_default}, Form::two_places},
    {"power.min_limit", "W", {MetricId::power_cap_min}, Form::two_places},
    {"power.max_limit", "W", {MetricId::power_cap_max}, Form::two_places},
    {"clocks.sm", "MHz", {MetricId::clock_sm, MetricId::clock_sclk}, Form::whole},
    {"clocks.gr", "MHz", {MetricId::clock_sclk}, Form::whole},
    {"clocks.mem", "MHz", {MetricId::clock_mclk}, Form::whole},
    {"clocks.video", "MHz", {MetricId::clock_video, MetricId::clock_vclk}, Form::whole},
    {"clocks.max.sm", "MHz", {MetricId::clock_sm_max, MetricId::clock_sclk_max}, Form::whole},
    {"clocks.max.mem", "MHz", {MetricId::clock_mclk_max}, Form::whole},
    {"utilization.gpu", "%", {MetricId::gpu_busy}, Form::whole},
    {"utilization.memory", "%", {MetricId::memory_busy}, Form::whole},
    {"memory.total", "MiB", {MetricId::vram_total}, Form::mib},
    {"memory.used", "MiB", {MetricId::vram_used}, Form::mib},
    {"memory.free", "MiB", {MetricId::vram_free}, Form::mib_free},
    {"memory.reserved", "MiB", {MetricId::vram_reserved}, Form::mib},
    {"fan.speed", "%", {MetricId::fan_pwm}, Form::whole},
    {"pstate", "", {MetricId::performance_state}, Form::text},
    {"pcie.link.gen.current", "", {MetricId::pcie_speed}, Form::pcie_gen},
    {"pcie.link.gen.max", "", {MetricId::pcie_speed_max}, Form::pcie_gen},
    {"pcie.link.width.current", "", {MetricId::pcie_width}, Form::whole},
    {"pcie.link.width.max", "", {MetricId::pcie_width_max}, Form::whole},
    {"persistence_mode", "", {MetricId::persistence_mode}, Form::enabled},
    {"mig.mode.current", "", {MetricId::mig_mode}, Form::enabled},
    {"ecc.mode.current", "", {MetricId::ecc_mode}, Form::enabled},
    // amdgpu counts errors per RAS block since the driver loaded: their sum is the volatile total.
    {"ecc.errors.corrected.volatile.total", "", {MetricId::ecc_corrected_volatile, MetricId::ras_correctable}, Form::total},
    {"ecc.errors.uncorrected.volatile.total", "", {MetricId::ecc_uncorrected_volatile, MetricId::ras_uncorrectable},
     Form::total},
    {"ecc.errors.corrected.aggregate.total", "", {MetricId::ecc_corrected_aggregate}, Form::whole},
    {"ecc.errors.uncorrected.aggregate.total", "", {MetricId::ecc_uncorrected_aggregate}, Form::whole},
};

const Field* find_field(std::string_view name) {
  const auto it = std::find_if(std::begin(kNvidiaSmiFields), std::end(kNvidiaSmiFields), [name](const Field& f) { return f.name == name; });
  return it == std::end(kNvidiaSmiFields) ? nullptr : &*it;
}

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item(text.substr(start, comma - start));
    std::erase_if(item, [](char c) { return c == ' '; });
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

// Parses argv; an error message when the request is not one we answer.
}  // namespace

std::optional<std::string> parse_nvidia_smi_args(int argc, char** argv, int compat_flag, NvidiaSmiRequest& request) {
  bool have_format = false;
  for (int i = 1; i < argc; ++i) {
    if (i == compat_flag) continue;
    const std::string_view arg = argv[i];
    // "--key=value" or "--key value"
    auto value_of = [&](std::string_view key) -> std::optional<std::string> {
      if (arg.starts_with(key) && arg.size() > key.size() && arg[key.size()] == '=') return std::string(arg.substr(key.size() + 1));
      if (arg == key && i + 1 < argc) return std::string(argv[++i]);
      return std::nullopt;
    };
    if (auto v = value_of("--query-gpu")) {
      for (const std::string& name : split(*v)) {
        const Field* field = find_field(name);
        if (field == nullptr) {
          std::vector<std::string> known;
          for (const Field& f : kNvidiaSmiFields) known.emplace_back(f.name);
          return fmt::format("field \"{}\" is not one hipstack answers.{}", name, did_you_mean(closest_words(name, known)));
        }
        request.fields.push_back(field);
      }
    } else if (auto f = value_of("--format")) {
      const auto parts = split(*f);
      if (parts.empty() || parts.front() != "csv") return "only --format=csv is supported (as nvidia-smi's queries)";
      for (std::size_t k = 1; k < parts.size(); ++k) {
        if (parts[k] == "noheader") request.header = false;
        else if (parts[k] == "nounits") request.units = false;
        else return fmt::format("unknown format option \"{}\" (noheader, nounits)", parts[k]);
      }
      have_format = true;
    } else if (auto ids = arg == "-i" ? value_of("-i") : value_of("--id")) {
      for (const std::string& id : split(*ids)) request.ids.push_back(id);
    } else if (auto root = value_of("--sysfs-root")) {
      request.open.sysfs_root = *root;
    } else if (auto proc = value_of("--procfs-root")) {
      request.open.procfs_root = *proc;
    } else {
      return fmt::format("unsupported argument \"{}\"", arg);
    }
  }
  if (request.fields.empty()) return "give --query-gpu=FIELD,...";
  if (!have_format) return "give --format=csv (nvidia-smi requires it with --query-gpu)";
  return std::nullopt;
}

namespace {

std::string bus_id(const std::string& bdf) {
  // "0000:18:00.0" -> "00000000:18:00.0", upper-case hex as nvidia-smi prints it.
  std::string out = bdf.size() == 12 ? "0000" + bdf : bdf;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string pcie_generation(double gts) {
  // Per-lane rates of PCIe 1.0 to 6.0.
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64};
  for (std::size_t g = 0; g < std::size(kRates); ++g) {
    if (std::fabs(gts - kRates[g]) < 0.01) return std::to_string(g + 1);
  }
  return "[N/A]";
}

std::string value(const Field& field, const smi::DeviceSummary& device, const std::vector<smi::Reading>& readings,
                  std::size_t count, bool units) {
  switch (field.form) {
    case Form::index: return std::to_string(device.index);
    case Form::count: return std::to_string(count);
    case Form::name: return device.name.empty() ? "[N/A]" : device.name;
    case Form::uuid: return device.uuid.empty() ? "[N/A]" : device.uuid;
    default: break;
  }
  const std::string unit = units && !field.unit.empty() ? fmt::format(" {}", field.unit) : std::string();
  const auto find = [&readings](MetricId id) -> const smi::Reading* {
    const auto it = std::find_if(readings.begin(), readings.end(),
                                 [id](const smi::Reading& r) { return r.id == id && r.instance.empty() && r.ok(); });
    return it == readings.end() ? nullptr : &*it;
  };
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
    return "[N/A]";
  }
  const smi::Reading* reading = nullptr;
  for (const MetricId id : field.from) {
    if ((reading = find(id)) != nullptr) break;
  }
  if (reading == nullptr && field.form == Form::mib_free) {
    const smi::Reading* total = find(MetricId::vram_total);
    const smi::Reading* used = find(MetricId::vram_used);
    if (total == nullptr || used == nullptr) return "[N/A]";
    const double free = std::max(0.0, *total->number() - *used->number());
    return fmt::format("{:.0f}{}", std::ceil(free / (1024.0 * 1024.0)), unit);
  }
  if (reading == nullptr) return "[N/A]";
  const std::optional<double> number = reading->number();
  switch (field.form) {
    case Form::text: return value_text(*reading);
    case Form::bus_id: return bus_id(value_text(*reading));
    case Form::enabled: return value_text(*reading) == "enabled" ? "Enabled" : "Disabled";
    case Form::pcie_gen: return number ? pcie_generation(*number) : "[N/A]";
    case Form::whole: return number ? fmt::format("{:.0f}{}", *number, unit) : "[N/A]";
    case Form::two_places: return number ? fmt::format("{:.2f}{}", *number, unit) : "[N/A]";
    case Form::mib:
    case Form::mib_free: return number ? fmt::format("{:.0f}{}", std::ceil(*number / (1024.0 * 1024.0)), unit) : "[N/A]";
    default: return "[N/A]";
  }
}

}  // namespace

int nvidia_smi_usage(const std::string& what) {
  std::fprintf(stderr, "hipstack-smi --nvidia-smi: %s\nsupported: --query-gpu=FIELD,... --format=csv[,noheader][,nounits] "
                       "[-i|--id=INDEX,...] [--sysfs-root DIR] [--procfs-root DIR] (docs/nvidia-smi-compat.md)\n",
               what.c_str());
  return kExitBadArguments;
}

int run_nvidia_smi_query(const LocalSource& source, const NvidiaSmiRequest& request) {
  CommonOptions options;
  options.gpus = request.ids;
  const auto selected = selected_devices(source, options);
  const auto devices = source.devices();
  smi::SampleOptions what;
  what.identity = true;
  what.static_info = true;
  what.live = true;
  for (const Field* f : request.fields) {
    what.metrics.insert(what.metrics.end(), f->from.begin(), f->from.end());
    if (f->form == Form::mib_free) what.metrics.insert(what.metrics.end(), {MetricId::vram_total, MetricId::vram_used});
  }
  std::string out;
  if (request.header) {
    std::vector<std::string> names;
    for (const Field* f : request.fields) {
      names.push_back(request.units && !f->unit.empty() ? fmt::format("{} [{}]", f->name, f->unit) : std::string(f->name));
    }
    out += fmt::format("{}\n", fmt::join(names, ", "));
  }
  for (const std::uint32_t index : selected) {
    const auto readings = what.metrics.empty() ? std::vector<smi::Reading>{} : source.sample(index, what);
    std::vector<std::string> cells;
    for (const Field* f : request.fields) cells.push_back(value(*f, devices.at(index), readings, devices.size(), request.units));
    out += fmt::format("{}\n", fmt::join(cells, ", "));
  }
  print(out);
  return finish_with_faults(source, selected);
}

}  // namespace hipstack::cli
