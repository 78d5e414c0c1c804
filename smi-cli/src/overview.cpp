// hipstack-smi with no command: one screen for every GPU (docs/cli.md, "The default view"), like
// nvidia-smi's and rocm-smi's. A header, one row per GPU that fits 80 columns, then the processes.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <optional>
#include <set>

#include "commands.hpp"
#include "text_layout.hpp"
#include "units.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;

// What one row shows: values printed beside their catalogue limit, and values printed alone. The
// sample asks for these and those limits only (backends skip the rest).
constexpr MetricId kShownWithLimit[] = {MetricId::temperature_junction, MetricId::temperature_edge, MetricId::power_average,
                                        MetricId::power_current, MetricId::vram_used};
constexpr MetricId kShownAlone[] = {MetricId::gpu_busy,          MetricId::clock_sclk,       MetricId::clock_mclk,
                                    MetricId::compute_partition, MetricId::memory_partition, MetricId::mig_mode,
                                    MetricId::driver_name,       MetricId::driver_version};

std::vector<MetricId> overview_metrics() {
  std::vector<MetricId> metrics(std::begin(kShownAlone), std::end(kShownAlone));
  for (const MetricId value : kShownWithLimit) {
    metrics.push_back(value);
    const MetricId limit = smi::metric_limit(value).value().limit;  // kShownWithLimit: each has one
    if (std::find(metrics.begin(), metrics.end(), limit) == metrics.end()) metrics.push_back(limit);
  }
  return metrics;
}

// The value's catalogue limit (its critical temperature, its power cap, its total).
MetricId limit_of(MetricId value) { return smi::metric_limit(value).value().limit; }

// Engine busy of each process is measured over this window, all GPUs at once.
constexpr unsigned kProcessBusyWindowMs = 100;
constexpr std::size_t kScreenWidth = 80;

class Readings {
 public:
  explicit Readings(std::vector<smi::Reading> readings) : readings_(std::move(readings)) {}
  [[nodiscard]] std::optional<double> number(MetricId id) const {
    const smi::Reading* r = find(id);
    return r != nullptr ? r->number() : std::nullopt;
  }
  // Whether the GPU answered for id with an error (a failed read, or a value that cannot be true).
  [[nodiscard]] bool failed(MetricId id) const {
    return std::any_of(readings_.begin(), readings_.end(),
                       [id](const smi::Reading& r) { return r.id == id && r.instance.empty() && r.status == smi::Status::error; });
  }
  [[nodiscard]] std::string text(MetricId id) const {
    const smi::Reading* r = find(id);
    return r != nullptr && r->ok() ? value_text(*r) : std::string();
  }
  // The first of `ids` the GPU provides (junction before edge; average power before current).
  [[nodiscard]] std::optional<double> first(std::initializer_list<MetricId> ids) const {
    return number(first_id(ids));
  }
  [[nodiscard]] MetricId first_id(std::initializer_list<MetricId> ids) const {
    for (const MetricId id : ids) {
      if (find(id) != nullptr) return id;
    }
    return *ids.begin();
  }
  // The exact value for JSON (integers stay integers), null when not read.
  [[nodiscard]] Json json(MetricId id) const {
    const smi::Reading* r = find(id);
    if (r == nullptr) return nullptr;
    if (const auto* i = std::get_if<std::int64_t>(&r->value)) return *i;
    if (const auto* d = std::get_if<double>(&r->value)) return *d;
    return nullptr;
  }

 private:
  [[nodiscard]] const smi::Reading* find(MetricId id) const {
    const auto it = std::find_if(readings_.begin(), readings_.end(),
                                 [id](const smi::Reading& r) { return r.id == id && r.instance.empty() && r.ok(); });
    return it == readings_.end() ? nullptr : &*it;
  }
  std::vector<smi::Reading> readings_;
};

// "Instinct MI300X" rather than "AMD Instinct MI300X": the vendor is in the header.
std::string short_name(std::string name) {
  for (const std::string_view prefix : {"AMD ", "NVIDIA ", "Instinct ", "Radeon "}) {
    if (name.starts_with(prefix)) name.erase(0, prefix.size());
  }
  return name.empty() ? "N/A" : name;
}

std::string colour(const std::string& text, const char* code, bool on) {
  return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : text;
}

const char* verdict_colour(smi::Verdict verdict) {
  switch (verdict) {
    case smi::Verdict::pass: return "32";
    case smi::Verdict::warn: return "33";
    case smi::Verdict::fail: return "1;31";
    case smi::Verdict::unknown: return "2";
  }
  return "0";
}

struct GpuRow {
  std::vector<std::string> cells;  // without colour (widths are measured on these)
  smi::Verdict verdict = smi::Verdict::unknown;
  bool hot = false;        // within 5 °C of the sensor's critical limit
  bool unchecked = false;  // some of its health checks could not run
  Json json;
};

// `sampled` holds overview_metrics() of the device whose handle is `handle`.
GpuRow gpu_row(const DeviceSource& source, std::uint32_t handle, const smi::DeviceSummary& device,
               std::vector<smi::Reading> sampled, const smi::HealthReport& health) {
  const Readings r(std::move(sampled));
  GpuRow row;
  row.verdict = health.overall;

  std::string temp = "N/A";
  const bool junction = r.number(MetricId::temperature_junction).has_value();
  if (const auto t = r.first({MetricId::temperature_junction, MetricId::temperature_edge})) {
    temp = fmt::format("{:.0f}°C", *t);
    const auto critical = r.number(limit_of(junction ? MetricId::temperature_junction : MetricId::temperature_edge));
    row.hot = critical && *t >= *critical - 5;
  }
  const auto power = r.first({MetricId::power_average, MetricId::power_current});
  const auto cap = r.number(limit_of(MetricId::power_average));
  std::string power_text = "N/A";
  if (power && cap) power_text = fmt::format("{:.0f}/{:.0f} W", *power, *cap);
  else if (power) power_text = fmt::format("{:.0f} W", *power);
  const auto used = r.number(MetricId::vram_used);
  const auto total = r.number(limit_of(MetricId::vram_used));
  std::string vram = r.failed(MetricId::vram_used) ? "ERR" : "N/A";  // `metric -m vram_used` says why
  if (used && total && *total > 0) {
    const double gib = 1024.0 * 1024 * 1024;
    vram = fmt::format("{:.1f}/{:.1f} GiB {:.0f}%", *used / gib, *total / gib, 100 * *used / *total);
  } else if (used) {
    vram = human_bytes(*used);
  }
  const auto busy = r.number(MetricId::gpu_busy);
  const auto sclk = r.number(MetricId::clock_sclk);
  const auto mclk = r.number(MetricId::clock_mclk);
  const auto mhz = [](std::optional<double> v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); };
  std::string mode = r.text(MetricId::compute_partition);
  if (const std::string memory = r.text(MetricId::memory_partition); !memory.empty()) {
    mode += (mode.empty() ? "" : "/") + memory;
  }
  if (mode.empty() && r.text(MetricId::mig_mode) == "enabled") mode = "MIG";
  // A verdict over checks that did not all run says how many did not ("PASS 3?"): the legend under
  // the table, and `health -g N` names them.
  const std::size_t unchecked = smi::tally(health).unknown;
  row.unchecked = device.fault.empty() && unchecked > 0 && health.overall != smi::Verdict::unknown;
  const std::string verdict = !device.fault.empty() ? std::string("LOST")
                              : row.unchecked       ? fmt::format("{} {}?", smi::verdict_name(health.overall), unchecked)
                                                    : std::string(smi::verdict_name(health.overall));
  // Over several hosts the GPU is HOST/INDEX (one column, so the 80-column layout holds).
  row.cells = {source.spans_hosts() ? fmt::format("{}/{}", source.host_of(handle), device.index) : std::to_string(device.index),
               short_name(device.name),
               temp,
               power_text,
               vram,
               busy ? fmt::format("{:.0f}%", *busy) : "N/A",
               sclk || mclk ? fmt::format("{}/{}", mhz(sclk), mhz(mclk)) : "N/A",
               mode.empty() ? "-" : mode,
               verdict};
  row.json = device_json(source, handle, device);
  row.json["temperature_c"] = r.json(r.first_id({MetricId::temperature_junction, MetricId::temperature_edge}));
  row.json["power_w"] = r.json(r.first_id({MetricId::power_average, MetricId::power_current}));
  row.json["power_cap_w"] = r.json(MetricId::power_cap);
  row.json["vram_used_bytes"] = r.json(MetricId::vram_used);
  row.json["vram_total_bytes"] = r.json(MetricId::vram_total);
  row.json["gpu_busy_percent"] = r.json(MetricId::gpu_busy);
  row.json["clock_sclk_mhz"] = r.json(MetricId::clock_sclk);
  row.json["clock_mclk_mhz"] = r.json(MetricId::clock_mclk);
  row.json["compute_partition"] = r.text(MetricId::compute_partition);
  row.json["memory_partition"] = r.text(MetricId::memory_partition);
  row.json["health"] = std::string(smi::verdict_name(health.overall));
  const std::string driver_version = r.text(MetricId::driver_version);
  row.json["driver"] = r.text(MetricId::driver_name) + (driver_version.empty() ? "" : " " + driver_version);
  return row;
}

// Lays out the GPU rows in kScreenWidth columns: one space between columns, the name cut to what is left.
std::string gpu_table(std::vector<GpuRow>& rows, bool colour_on, bool hosts) {
  std::vector<std::string> header = {hosts ? "HOST/GPU" : "GPU", "NAME", "TEMP", "POWER/CAP", "VRAM USED/TOTAL", "BUSY", "SCLK/MCLK",
                                     "MODE", "HEALTH"};
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = display_width(header[i]);
  for (const GpuRow& row : rows) {
    for (std::size_t i = 0; i < row.cells.size(); ++i) widths[i] = std::max(widths[i], display_width(row.cells[i]));
  }
  std::size_t others = widths.size() - 1;  // the gaps
  for (std::size_t i = 0; i < widths.size(); ++i) others += i == 1 ? 0 : widths[i];
  const std::size_t name_room = kScreenWidth > others + 6 ? kScreenWidth - others : 6;
  if (widths[1] > name_room) {
    widths[1] = name_room;
    for (GpuRow& row : rows) {
      row.cells[1] = cut_end(row.cells[1], name_room);  // whole characters, not bytes
    }
  }
  const auto line = [&widths](const std::vector<std::string>& cells, const std::vector<std::string>& shown) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out += shown[i];
      if (i + 1 < cells.size()) out.append(widths[i] - display_width(cells[i]) + 1, ' ');
    }
    return out + "\n";
  };
  std::string out = line(header, header);
  for (const GpuRow& row : rows) {
    std::vector<std::string> shown = row.cells;
    shown[2] = colour(shown[2], "1;31", colour_on && row.hot);
    shown[8] = colour(shown[8], verdict_colour(row.verdict), colour_on);
    out += line(row.cells, shown);
  }
  return out;
}

// A header line within kScreenWidth: a long one (a capture's path) keeps its end, where the names are.
std::string fit_line(const std::string& text) {
  if (display_width(text) <= kScreenWidth) return text;
  const std::size_t space = text.find(' ');
  const std::string head = space == std::string::npos ? std::string() : text.substr(0, space + 1);
  const std::size_t keep = kScreenWidth - display_width(head) - 1;  // 1 for the ellipsis
  std::size_t start = text.size() - keep;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;  // whole characters
  return head + "…" + text.substr(start);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", utc);
}

using GpuProcesses = std::vector<std::pair<std::uint32_t, smi::ProcessInfo>>;

// The selected GPUs' processes (local only: the daemon does not serve them), every GPU's scan at once.
GpuProcesses scan_processes(const LocalSource* local, const std::vector<std::uint32_t>& selected) {
  GpuProcesses processes;
  if (local == nullptr) return processes;
  std::vector<std::future<std::optional<std::vector<smi::ProcessInfo>>>> scans;
  for (const std::uint32_t index : selected) {
    scans.push_back(std::async(std::launch::async, [local, index] { return local->processes(index, kProcessBusyWindowMs); }));
  }
  for (std::size_t i = 0; i < scans.size(); ++i) {
    for (smi::ProcessInfo& p : scans[i].get().value_or(std::vector<smi::ProcessInfo>{})) {
      processes.emplace_back(selected[i], std::move(p));
    }
  }
  return processes;
}

// The processes as the view's table: GPU, PID, user, name, VRAM and the busier engine.
std::string process_table(const GpuProcesses& processes) {
  Table table({"GPU", "PID", "USER", "NAME", "VRAM", "BUSY"});
  for (const auto& [gpu, p] : processes) {
    std::string vram = "N/A", busy = "N/A";
    double busiest = 0;
    for (const smi::Reading& reading : p.readings) {
      if (reading.id == MetricId::process_vram && reading.ok()) vram = value_with_unit(reading);
      // The busier of the graphics and compute engines (the drm-engine-* names of fdinfo).
      if (reading.id == MetricId::process_engine_busy && reading.ok() &&
          (reading.instance == "compute" || reading.instance == "gfx")) {
        const double share = reading.number().value_or(0);
        if (busy == "N/A" || share > busiest) busy = value_with_unit(reading);
        busiest = std::max(busiest, share);
      }
    }
    table.add({std::to_string(gpu), std::to_string(p.pid), p.user, p.name.substr(0, 24), vram, busy});
  }
  return table.str();
}

}  // namespace

int run_overview(const DeviceSource& source, const LocalSource* local, const CommonOptions& options,
                 const std::string& origin) {
  const auto devices = source.devices();
  const auto selected = selected_devices(source, options);
  smi::SampleOptions what;
  what.identity = true;
  what.static_info = true;
  what.live = true;
  what.metrics = overview_metrics();
  auto sampled = source.sample_all(selected, what);
  const auto reports = source.health_all(selected, "");
  std::vector<GpuRow> rows;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    rows.push_back(gpu_row(source, selected[i], devices.at(selected[i]), std::move(sampled[i]), reports[i]));
  }

  const auto processes = scan_processes(local, selected);

  std::set<std::string> drivers;  // "amdgpu 6.8.5" for the header, once each
  for (const GpuRow& row : rows) {
    if (const std::string driver = row.json["driver"].get<std::string>(); !driver.empty()) drivers.insert(driver);
  }
  if (options.format == Format::json) {
    Json doc = document("overview");
    doc["origin"] = origin;
    doc["library_version"] = std::string(smi::library_version());
    doc["devices"] = Json::array();
    for (GpuRow& row : rows) doc["devices"].push_back(std::move(row.json));
    doc["processes"] = Json::array();
    for (const auto& [gpu, p] : processes) {
      doc["processes"].push_back({{"device", gpu}, {"pid", p.pid}, {"name", p.name}, {"user", p.user},
                                  {"metrics", readings_json(p.readings)}});
    }
    print_json(source, std::move(doc));
    return finish_with_faults(source, selected);
  }
  if (options.format == Format::csv) {
    std::string csv = csv_header(source, "device,bdf,name,temperature_c,power_w,power_cap_w,vram_used_bytes,vram_total_bytes,"
                                         "gpu_busy_percent,clock_sclk_mhz,clock_mclk_mhz,compute_partition,memory_partition,"
                                         "health\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Json& j = rows[i].json;
      const auto num = [&j](const char* key) { return j[key].is_null() ? std::string() : j[key].dump(); };
      csv += csv_row(with_host(source, selected[i], {std::to_string(j["index"].get<std::uint32_t>()), j["bdf"].get<std::string>(), j["name"].get<std::string>(),
                      num("temperature_c"), num("power_w"), num("power_cap_w"), num("vram_used_bytes"),
                      num("vram_total_bytes"), num("gpu_busy_percent"), num("clock_sclk_mhz"), num("clock_mclk_mhz"),
                      j["compute_partition"].get<std::string>(), j["memory_partition"].get<std::string>(),
                      j["health"].get<std::string>()}));
    }
    print(csv);
    return finish_with_faults(source, selected);
  }

  const bool colour_on = isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  std::string driver_text;
  for (const std::string& driver : drivers) driver_text += (driver_text.empty() ? "" : ", ") + driver;
  std::string out = fmt::format("hipstack-smi {}  {}\n{}\n{}\n", smi::library_version(), utc_now(), fit_line(origin),
                                driver_text.empty() ? "" : fit_line("driver " + driver_text) + "\n");
  if (rows.empty()) {
    print(out);
    std::fprintf(stderr, "hipstack-smi: no GPUs found%s (`hipstack-smi list -v` says which backends are absent and why)\n",
                 options.gpus.empty() ? "" : " among those selected");
    return kExitNoSuchDevice;
  }
  out += gpu_table(rows, colour_on, source.spans_hosts());
  if (std::any_of(rows.begin(), rows.end(), [](const GpuRow& row) { return row.unchecked; })) {
    out += "\nN?: N health checks did not run on that GPU (hipstack-smi health -g GPU)\n";
  }
  out += '\n';
  if (local == nullptr) {
    out += "Processes: not available with --host.\n";
  } else if (processes.empty()) {
    out += "No GPU processes found.\n";
  } else {
    out += process_table(processes);
  }
  print(out);
  return finish_with_faults(source, selected);
}

}  // namespace hipstack::cli
