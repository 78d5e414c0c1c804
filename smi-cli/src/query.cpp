// hipstack-smi query: one row per GPU for any mix of identity, static and live metrics, for people
// (a table in human units) and for scripts (--csv --no-header --no-units; --json).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "commands.hpp"
#include "units.hpp"

namespace hipstack::cli {
namespace {

// The device's own fields, before the catalogue's metrics.
constexpr std::string_view kDeviceFields[] = {"index", "vendor", "backend", "bdf", "uuid", "name"};

bool is_device_field(std::string_view name) {
  return std::find(std::begin(kDeviceFields), std::end(kDeviceFields), name) != std::end(kDeviceFields);
}

std::string device_field(const smi::DeviceSummary& d, std::string_view name) {
  if (name == "index") return std::to_string(d.index);
  if (name == "vendor") return d.vendor;
  if (name == "backend") return d.backend;
  if (name == "bdf") return d.bdf;
  if (name == "uuid") return d.uuid;
  return d.name;
}

// One column: a device field, or a metric (with its instance for instanced metrics).
struct Column {
  std::string field;
  const smi::MetricInfo* metric = nullptr;
  std::string instance;

  [[nodiscard]] std::string title(bool units) const {
    std::string name = instance.empty() ? field : fmt::format("{}[{}]", field, instance);
    if (units && metric != nullptr && !smi::unit_symbol(metric->unit).empty()) {
      name += fmt::format(" [{}]", smi::unit_symbol(metric->unit));
    }
    return name;
  }
  [[nodiscard]] const smi::Reading* find(const std::vector<smi::Reading>& readings) const {
    const auto it = std::find_if(readings.begin(), readings.end(), [this](const smi::Reading& r) {
      return r.id == metric->id && r.instance == instance;
    });
    return it == readings.end() ? nullptr : &*it;
  }
};

}  // namespace

bool is_query_field(std::string_view name) { return is_device_field(name); }

int run_query(const DeviceSource& source, const CommonOptions& options, const QueryOptions& query) {
  if (options.metrics.empty()) {
    std::fprintf(stderr, "hipstack-smi: query: give the fields with -m (device fields: index, vendor, backend, bdf, uuid, "
                         "name; any catalogue metric or group)\n");
    return kExitBadArguments;
  }
  const auto devices = source.devices();
  const auto selected = selected_devices(source, options);
  smi::SampleOptions what;
  what.identity = true;
  what.static_info = true;
  what.live = true;
  for (const std::string& name : options.metrics) {
    if (const smi::MetricInfo* info = smi::find_metric(name)) what.metrics.push_back(info->id);
  }
  std::map<std::uint32_t, std::vector<smi::Reading>> readings;
  for (const std::uint32_t index : selected) readings[index] = what.metrics.empty() ? std::vector<smi::Reading>{}
                                                                                     : source.sample(index, what);
  // Columns in the order asked; an instanced metric gets one column per instance any GPU has.
  std::vector<Column> columns;
  for (const std::string& name : options.metrics) {
    const smi::MetricInfo* info = smi::find_metric(name);
    if (info == nullptr) {
      columns.push_back({name, nullptr, {}});
      continue;
    }
    std::vector<std::string> instances;
    for (const auto& [index, list] : readings) {
      for (const smi::Reading& r : list) {
        if (r.id == info->id && std::find(instances.begin(), instances.end(), r.instance) == instances.end()) {
          instances.push_back(r.instance);
        }
      }
    }
    if (instances.empty()) instances.emplace_back();
    for (const std::string& instance : instances) columns.push_back({name, info, instance});
  }

  const auto human = query.no_units ? value_text : value_with_unit;
  Json doc = document("query");
  doc["devices"] = Json::array();
  std::vector<std::string> header;
  for (const Column& c : columns) header.push_back(c.title(!query.no_units && options.format == Format::csv));
  Table table(header);
  std::string csv = query.no_header ? std::string() : csv_row(header);
  for (const std::uint32_t index : selected) {
    const smi::DeviceSummary& device = devices.at(index);
    std::vector<std::string> row, csv_fields;
    Json fields = Json::object();
    for (const Column& c : columns) {
      if (c.metric == nullptr) {
        const std::string value = device_field(device, c.field);
        row.push_back(value);
        csv_fields.push_back(value);
        fields[c.field] = c.field == "index" ? Json(device.index) : Json(value);
        continue;
      }
      const smi::Reading* r = c.find(readings[index]);
      row.push_back(r == nullptr ? "N/A" : human(*r));
      csv_fields.push_back(r == nullptr || !r->ok() ? "N/A" : value_text(*r));
      fields[c.title(false)] = r == nullptr ? Json(nullptr) : reading_json(*r);
    }
    table.add(std::move(row));
    csv += csv_row(csv_fields);
    doc["devices"].push_back(std::move(fields));
  }
  if (options.format == Format::json) print_json(doc);
  else if (options.format == Format::csv) print(csv);
  else print(query.no_header ? table.str().substr(table.str().find('\n') + 1) : table.str());
  return finish_with_faults(source, selected);
}

}  // namespace hipstack::cli
