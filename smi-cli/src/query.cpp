// hipstack-smi query: one row per GPU for any mix of identity, static and live metrics, for people
// (a table in human units) and for scripts (--csv --no-header --no-units; --json).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "commands.hpp"
#include "units.hpp"

namespace hipstack::cli {
namespace {

// The GPU's own fields, then the partition's (with --partitions), before the catalogue's metrics.
constexpr std::string_view kQueryFields[] = {"index", "vendor", "backend", "bdf", "uuid", "name",
                                             "partition_index", "partition_id", "partition_bdf"};

bool is_partition_field(std::string_view name) { return name.starts_with("partition_") && is_query_field(name); }

// A GPU's field, or its partition's (P is null in a row per GPU).
std::string field_text(const smi::DeviceSummary& d, const smi::Partition* p, std::string_view name) {
  if (name == "index") return std::to_string(d.index);
  if (name == "vendor") return d.vendor;
  if (name == "backend") return d.backend;
  if (name == "bdf") return d.bdf;
  if (name == "uuid") return d.uuid;
  if (name == "name") return d.name;
  if (p == nullptr) return "N/A";
  if (name == "partition_index") return std::to_string(p->index);
  if (name == "partition_id") return p->id;
  return p->bdf;  // partition_bdf
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

// One row of the output: a GPU, or one of its partitions.
struct Row {
  std::uint32_t device;
  const smi::Partition* partition;  // null in a row per GPU
};

// The rows of a query with what they show: each GPU's readings of the GPU-scope fields (read once
// for all its rows) and, with --partitions, its partitions, whose readings come with them.
struct Rows {
  std::map<std::uint32_t, std::vector<smi::Reading>> readings;
  std::map<std::uint32_t, std::vector<smi::Partition>> partitions;  // rows point into it: filled first
  std::vector<Row> rows;

  [[nodiscard]] const std::vector<smi::Reading>& readings_of(const Row& row, const smi::MetricInfo& info) const {
    return info.scope == smi::Scope::partition && row.partition != nullptr ? row.partition->readings
                                                                           : readings.at(row.device);
  }
};

Rows gather_rows(const DeviceSource& source, const CommonOptions& options, const QueryOptions& query,
                 const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected) {
  smi::SampleOptions what;
  what.identity = true;
  what.static_info = true;
  what.live = true;
  for (const std::string& name : options.metrics) {
    const smi::MetricInfo* info = smi::find_metric(name);
    if (info != nullptr && info->scope != smi::Scope::partition) what.metrics.push_back(info->id);
  }
  Rows out;
  auto sampled = what.metrics.empty() ? std::vector<std::vector<smi::Reading>>(selected.size()) : source.sample_all(selected, what);
  auto partitions = query.partitions ? source.partitions_all(selected) : std::vector<std::vector<smi::Partition>>{};
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    out.readings[index] = std::move(sampled[i]);
    if (query.partitions) out.partitions[index] = std::move(partitions[i]);
    else out.rows.push_back({index, nullptr});
  }
  for (const std::uint32_t index : query.partitions ? selected : std::vector<std::uint32_t>{}) {
    const std::vector<smi::Partition>& list = out.partitions[index];
    for (const smi::Partition& p : list) {
      if (partition_selected(devices.at(index), p, list, options)) out.rows.push_back({index, &p});
    }
  }
  return out;
}

// Columns in the order asked; an instanced metric gets one column per instance any row has.
std::vector<Column> columns_of(const CommonOptions& options, const Rows& data) {
  std::vector<Column> columns;
  for (const std::string& name : options.metrics) {
    const smi::MetricInfo* info = smi::find_metric(name);
    if (info == nullptr) {
      columns.push_back({name, nullptr, {}});
      continue;
    }
    std::vector<std::string> instances;
    for (const Row& row : data.rows) {
      for (const smi::Reading& r : data.readings_of(row, *info)) {
        if (r.id == info->id && std::find(instances.begin(), instances.end(), r.instance) == instances.end()) {
          instances.push_back(r.instance);
        }
      }
    }
    if (instances.empty()) instances.emplace_back();
    for (const std::string& instance : instances) columns.push_back({name, info, instance});
  }
  return columns;
}

}  // namespace

std::span<const std::string_view> query_fields() { return kQueryFields; }

bool is_query_field(std::string_view name) {
  return std::find(std::begin(kQueryFields), std::end(kQueryFields), name) != std::end(kQueryFields);
}

int run_query(const DeviceSource& source, const CommonOptions& options, const QueryOptions& query) {
  if (options.metrics.empty()) {
    std::fprintf(stderr, "hipstack-smi: query: give the fields with -m (%s; any catalogue metric or group)\n",
                 fmt::format("{}", fmt::join(query_fields(), ", ")).c_str());
    return kExitBadArguments;
  }
  for (const std::string& name : options.metrics) {
    if (is_partition_field(name) && !query.partitions) {
      std::fprintf(stderr, "hipstack-smi: query: %s is a partition's field: add --partitions\n", name.c_str());
      return kExitBadArguments;
    }
  }
  const auto devices = source.devices();
  const auto selected = selected_devices(source, options);
  const Rows data = gather_rows(source, options, query, devices, selected);
  const std::vector<Row>& rows = data.rows;
  const auto readings_of = [&data](const Row& row, const smi::MetricInfo& info) -> const std::vector<smi::Reading>& {
    return data.readings_of(row, info);
  };
  const std::vector<Column> columns = columns_of(options, data);

  const auto human = query.no_units ? value_text : value_with_unit;
  Json doc = document("query");
  const char* const list_key = query.partitions ? "partitions" : "devices";
  doc[list_key] = Json::array();
  std::vector<std::string> header;
  for (const Column& c : columns) header.push_back(c.title(!query.no_units && options.format == Format::csv));
  header = with_host_title(source, std::move(header), "host");
  Table table(header);
  std::string csv = query.no_header ? std::string() : csv_row(header);
  for (const Row& at : rows) {
    const smi::DeviceSummary& device = devices.at(at.device);
    std::vector<std::string> row, csv_fields;
    Json fields = Json::object();
    if (source.spans_hosts()) {
      const std::string host = source.host_of(at.device);
      row.push_back(host);
      csv_fields.push_back(host);
      fields["host"] = host;
    }
    for (const Column& c : columns) {
      if (c.metric == nullptr) {
        const std::string value = field_text(device, at.partition, c.field);
        row.push_back(value);
        csv_fields.push_back(value);
        if (c.field == "index") fields[c.field] = device.index;
        else if (c.field == "partition_index" && at.partition != nullptr) fields[c.field] = at.partition->index;
        else fields[c.field] = value;
        continue;
      }
      const smi::Reading* r = c.find(readings_of(at, *c.metric));
      row.push_back(r == nullptr ? "N/A" : human(*r));
      csv_fields.push_back(r == nullptr || !r->ok() ? "N/A" : raw_value_text(*r));
      fields[c.title(false)] = r == nullptr ? Json(nullptr) : reading_json(*r);
    }
    table.add(std::move(row));
    csv += csv_row(csv_fields);
    doc[list_key].push_back(std::move(fields));
  }
  if (options.format == Format::json) print_json(source, std::move(doc));
  else if (options.format == Format::csv) print(csv);
  else print(query.no_header ? table.str().substr(table.str().find('\n') + 1) : table.str());
  return finish_with_faults(source, selected);
}

}  // namespace hipstack::cli
