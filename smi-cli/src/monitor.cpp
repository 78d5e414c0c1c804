// hipstack-smi monitor: one line per GPU and round, in the spirit of `nvidia-smi dmon`, for people (a
// table that fits 80 columns with the default set, a time column, short titles over a unit line) and
// for scripts (CSV with units in the header, JSON one document per line). docs/cli.md, "monitor".
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

#include "commands.hpp"
#include "units.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;

// The default columns and their short titles (a metric of this set keeps its title under -m). Of
// the default set, and of the members of a group given to -m, a column no selected GPU reports in the
// first round is left out (an MI300X has no edge sensor, no fan and no average power); a metric named
// on its own is always kept, so that a script gets the columns it asked for.
struct DefaultColumn {
  MetricId id;
  std::string_view title;
};
constexpr DefaultColumn kDefaultColumns[] = {
    {MetricId::temperature_edge, "edge"},  {MetricId::temperature_junction, "hotsp"},
    {MetricId::temperature_memory, "mtemp"}, {MetricId::power_average, "pavg"},
    {MetricId::power_current, "power"},    {MetricId::clock_sclk, "sclk"},
    {MetricId::clock_mclk, "mclk"},        {MetricId::gpu_busy, "busy"},
    {MetricId::memory_busy, "mbusy"},      {MetricId::vram_used, "vram"},
    {MetricId::fan_speed, "fan"}};

struct MonitorColumn {
  const smi::MetricInfo* metric;
  std::string instance;
  std::string title;  // table
  ColumnUnit unit;
  std::size_t width = 0;

  [[nodiscard]] const smi::Reading* find(const std::vector<smi::Reading>& readings) const {
    const auto it = std::find_if(readings.begin(), readings.end(), [this](const smi::Reading& r) {
      return r.id == metric->id && r.instance == instance;
    });
    return it == readings.end() ? nullptr : &*it;
  }
  [[nodiscard]] std::string cell(const smi::Reading* r) const {
    if (r == nullptr || !r->ok()) return "-";
    if (const std::optional<double> number = r->number()) return column_number(*number, unit);
    return value_text(*r);
  }
  [[nodiscard]] std::string csv_title() const {
    std::string name(metric->name);
    if (!instance.empty()) name += fmt::format("[{}]", instance);
    const std::string_view symbol = smi::unit_symbol(metric->unit);
    return symbol.empty() ? name : fmt::format("{} [{}]", name, symbol);
  }
};

// The columns for the first round's readings: -m names in their order (each instance of an
// instanced metric its own column), else the default set less what no GPU reports.
std::vector<MonitorColumn> choose_columns(const CommonOptions& options,
                                          const std::map<std::uint32_t, std::vector<smi::Reading>>& first) {
  const auto instances_of = [&first](MetricId id) {
    std::vector<std::string> found;
    for (const auto& [index, readings] : first) {
      for (const smi::Reading& r : readings) {
        if (r.id == id && std::find(found.begin(), found.end(), r.instance) == found.end()) found.push_back(r.instance);
      }
    }
    return found;
  };
  const auto reported = [&first](MetricId id) {
    return std::any_of(first.begin(), first.end(), [id](const auto& entry) {
      return std::any_of(entry.second.begin(), entry.second.end(),
                         [id](const smi::Reading& r) { return r.id == id && r.ok(); });
    });
  };
  const auto title_of = [](const smi::MetricInfo& info, const std::string& instance) {
    const auto it = std::find_if(std::begin(kDefaultColumns), std::end(kDefaultColumns),
                                 [&info](const DefaultColumn& d) { return d.id == info.id; });
    const std::string name = it != std::end(kDefaultColumns) ? std::string(it->title) : std::string(info.name);
    return instance.empty() ? name : fmt::format("{}[{}]", name, instance);
  };
  std::vector<MonitorColumn> columns;
  if (options.metrics.empty()) {
    for (const DefaultColumn& d : kDefaultColumns) {
      const smi::MetricInfo* info = smi::find_metric(d.id);
      if (reported(d.id)) columns.push_back({info, {}, title_of(*info, {}), column_unit(info->unit)});
    }
    return columns;
  }
  for (const std::string& name : options.metrics) {
    const smi::MetricInfo* info = smi::find_metric(name);
    if (info == nullptr) continue;  // main.cpp accepts only catalogue names and groups
    const bool named = std::find(options.named_metrics.begin(), options.named_metrics.end(), name) !=
                       options.named_metrics.end();
    if (!named && !reported(info->id)) continue;
    std::vector<std::string> instances = instances_of(info->id);
    if (instances.empty()) instances.emplace_back();
    for (const std::string& instance : instances) {
      columns.push_back({info, instance, title_of(*info, instance), column_unit(info->unit)});
    }
  }
  return columns;
}

// Rows of the terminal when stdout is one (the header is printed again before it scrolls away);
// 0 when stdout is a file or a pipe (the header is printed once).
unsigned terminal_rows() {
  if (::isatty(STDOUT_FILENO) != 1) return 0;
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) return size.ws_row;
  return 24;
}

// The table: "time gpu title..." over "unit" lines, then right-aligned cells. Widths grow (and the
// header is printed again) when a value is wider than any before it.
class MonitorTable {
 public:
  MonitorTable(std::vector<MonitorColumn>& columns, std::size_t time_width) : columns_(columns), time_width_(time_width) {
    for (MonitorColumn& c : columns_) c.width = std::max({c.width, display_width(c.title), display_width(c.unit.symbol)});
  }
  // True when a cell was wider than its column (the columns grew).
  bool fit(const std::vector<std::string>& cells) {
    bool grew = false;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (display_width(cells[i]) > columns_[i].width) {
        columns_[i].width = display_width(cells[i]);
        grew = true;
      }
    }
    return grew;
  }
  [[nodiscard]] std::string header() const {
    std::string titles = fmt::format("{:>{}} {:>3}", "time", time_width_, "gpu");
    std::string units = fmt::format("{:>{}} {:>3}", "", time_width_, "");
    for (const MonitorColumn& c : columns_) {
      titles += " " + pad(c.title, c.width);
      units += " " + pad(std::string(c.unit.symbol), c.width);
    }
    return trim(titles) + "\n" + trim(units) + "\n";
  }
  [[nodiscard]] std::string row(const std::string& time, std::uint32_t gpu, const std::vector<std::string>& cells) const {
    std::string line = fmt::format("{:>{}} {:>3}", time, time_width_, gpu);
    for (std::size_t i = 0; i < cells.size(); ++i) line += " " + pad(cells[i], columns_[i].width);
    return line + "\n";
  }

 private:
  static std::string pad(const std::string& text, std::size_t width) {
    const std::size_t shown = display_width(text);
    return shown >= width ? text : std::string(width - shown, ' ') + text;
  }
  static std::string trim(std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  }
  std::vector<MonitorColumn>& columns_;
  std::size_t time_width_;
};

using ReadingsByGpu = std::map<std::uint32_t, std::vector<smi::Reading>>;

// What each refresh reads: the columns shown (the default ones, or -m's), with the limits and
// window metrics they name.
smi::SampleOptions monitor_sample_options(const CommonOptions& options) {
  smi::SampleOptions what;
  what.live = true;
  if (options.format != Format::json || !options.metrics.empty()) {
    if (options.metrics.empty()) {
      for (const DefaultColumn& d : kDefaultColumns) what.metrics.push_back(d.id);
    } else {
      for (const std::string& name : options.metrics) {
        if (const smi::MetricInfo* info = smi::find_metric(name)) what.metrics.push_back(info->id);
      }
    }
  }
  // Limits (power_cap, temperature_junction_critical) may sit beside the values they bound.
  what.static_info = std::any_of(what.metrics.begin(), what.metrics.end(), [](MetricId id) {
    return smi::find_metric(id)->kind == smi::Kind::static_info;
  });
  // Activity over a window (sm_active, ...): each refresh ends one window and starts the next, so
  // the first refresh shows them unavailable and every later one the average since the one before.
  what.window = std::any_of(what.metrics.begin(), what.metrics.end(), [](MetricId id) {
    return smi::find_metric(id)->kind == smi::Kind::window;
  });
  return what;
}

std::string monitor_json(std::chrono::system_clock::time_point now, const std::vector<std::uint32_t>& selected,
                         const std::vector<smi::DeviceSummary>& devices, ReadingsByGpu& readings) {
  Json doc = document("monitor");
  doc["time"] = std::chrono::duration<double>(now.time_since_epoch()).count();
  doc["devices"] = Json::array();
  for (const std::uint32_t index : selected) {
    Json d;
    d["index"] = index;
    d["fault"] = devices[index].fault.empty() ? Json(nullptr) : Json(devices[index].fault);
    d["metrics"] = readings_json(readings[index]);
    doc["devices"].push_back(std::move(d));
  }
  return doc.dump() + "\n";
}

std::string monitor_csv(long round, std::chrono::system_clock::time_point now, const std::vector<MonitorColumn>& columns,
                        const std::vector<std::uint32_t>& selected, const std::vector<smi::DeviceSummary>& devices,
                        ReadingsByGpu& readings) {
  std::string out;
  if (round == 0) {
    std::vector<std::string> header = {"time", "index", "bdf"};
    for (const MonitorColumn& c : columns) header.push_back(c.csv_title());
    header.emplace_back("fault");
    out += csv_row(header);
  }
  for (const std::uint32_t index : selected) {
    std::vector<std::string> fields = {utc_iso(now), std::to_string(index), devices[index].bdf};
    for (const MonitorColumn& c : columns) {
      const smi::Reading* r = c.find(readings[index]);
      fields.push_back(r == nullptr || !r->ok() ? std::string() : raw_value_text(*r));
    }
    fields.push_back(devices[index].fault);
    out += csv_row(fields);
  }
  return out;
}

}  // namespace

int run_monitor(const DeviceSource& system, const CommonOptions& options, double interval_s, long iterations) {
  const auto selected = selected_devices(system, options);
  const smi::SampleOptions what = monitor_sample_options(options);
  const bool milliseconds = interval_s < 1.0;
  const unsigned rows = options.format == Format::table ? terminal_rows() : 0;
  std::vector<MonitorColumn> columns;
  std::optional<MonitorTable> table;
  unsigned lines_since_header = 0;
  std::string last_faults;
  bool faulted = false;
  const auto start = std::chrono::steady_clock::now();
  for (long round = 0; iterations <= 0 || round < iterations; ++round) {
    if (round > 0) std::this_thread::sleep_until(start + std::chrono::duration<double>(interval_s * static_cast<double>(round)));
    const auto now = std::chrono::system_clock::now();
    ReadingsByGpu readings;
    for (const std::uint32_t index : selected) readings[index] = system.sample(index, what);
    const auto devices = system.devices();  // after the reads: names a GPU whose read hung
    faulted = faulted || any_fault(devices, selected);
    const std::string faults = fault_lines(devices, selected);

    if (options.format == Format::json) {
      print(monitor_json(now, selected, devices, readings));
    } else {
      if (round == 0) {
        columns = choose_columns(options, readings);
        table.emplace(columns, milliseconds ? 12 : 8);
      }
      std::string out;
      if (options.format == Format::csv) {
        out += monitor_csv(round, now, columns, selected, devices, readings);
      } else {
        std::vector<std::vector<std::string>> cells;
        bool grew = false;
        for (const std::uint32_t index : selected) {
          std::vector<std::string>& row = cells.emplace_back();
          for (const MonitorColumn& c : columns) row.push_back(c.cell(c.find(readings[index])));
          grew = table->fit(row) || grew;
        }
        const bool scrolled = rows != 0 && lines_since_header + selected.size() + 2 > rows;
        if (round == 0 || grew || scrolled) {
          out += table->header();
          lines_since_header = 2;
        }
        const std::string time = local_clock(now, milliseconds);
        for (std::size_t i = 0; i < selected.size(); ++i) out += table->row(time, selected[i], cells[i]);
        lines_since_header += static_cast<unsigned>(selected.size());
        if (faults != last_faults) {  // a fault is named when it appears, not on every round
          out += faults;
          lines_since_header += static_cast<unsigned>(std::count(faults.begin(), faults.end(), '\n'));
        }
      }
      print(out);
    }
    if (options.format != Format::table && faults != last_faults) std::fputs(faults.c_str(), stderr);
    last_faults = faults;
    std::fflush(stdout);
  }
  return faulted ? kExitReadFailure : kExitOk;
}

}  // namespace hipstack::cli
