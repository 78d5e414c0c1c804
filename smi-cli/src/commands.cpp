// hipstack-smi's reading commands (commands.hpp): `list`, `static`, `metric`, `ras`, `topology` and
// `version`, in table, JSON and CSV (the others have rooms of their own).
#include "commands.hpp"
#include "nvidia_smi_fields.hpp"
#include "table_sample.hpp"
#include "table_values.hpp"
#include "text_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

namespace hipstack::cli {
namespace {

// Keeps only the readings of --metrics (all when none given).
std::vector<smi::Reading> filter(std::vector<smi::Reading> readings, const CommonOptions& options) {
  if (options.metrics.empty()) return readings;
  std::erase_if(readings, [&options](const smi::Reading& r) {
    const smi::MetricInfo* info = smi::find_metric(r.id);
    return info == nullptr ||
           std::find(options.metrics.begin(), options.metrics.end(), info->name) == options.metrics.end();
  });
  return readings;
}

// The metric, instance and value columns of a reading for tables.
std::string metric_label(const smi::Reading& r) {
  const smi::MetricInfo* info = smi::find_metric(r.id);
  std::string label(info != nullptr ? info->name : "?");
  if (!r.instance.empty()) label += fmt::format("[{}]", r.instance);
  return label;
}

// `metric -v`: what reading each metric costs on its own and what the whole sample costs, in
// microseconds: the fastest of three reads (a busy machine's noise counts least). Window metrics
// are left out (a look moves the window); blocking ones are timed only when asked for.
struct ReadCosts {
  double whole_us = 0;
  std::map<smi::MetricId, double> alone_us;
};

double fastest_read_us(const DeviceSource& system, std::uint32_t index, const smi::SampleOptions& what) {
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    (void)system.sample(index, what);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (i == 0 || us < best) best = us;
  }
  return best;
}

ReadCosts measure_costs(const DeviceSource& system, std::uint32_t index, smi::SampleOptions what,
                        const std::vector<smi::Reading>& readings) {
  ReadCosts costs;
  what.window = false;
  what.window_ms = 0;
  std::erase_if(what.metrics, [](smi::MetricId id) { return smi::find_metric(id)->cost == smi::Cost::window; });
  costs.whole_us = fastest_read_us(system, index, what);
  for (const smi::Reading& r : readings) {
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (info == nullptr || info->cost == smi::Cost::window || costs.alone_us.contains(r.id)) continue;
    if (info->cost == smi::Cost::blocking && !what.pcie_throughput) continue;
    smi::SampleOptions one = what;
    one.metrics = {r.id};
    costs.alone_us[r.id] = fastest_read_us(system, index, one);
  }
  return costs;
}

std::string cost_text(const ReadCosts* costs, smi::MetricId id) {
  const std::string_view cost = smi::cost_name(smi::find_metric(id)->cost);
  if (costs == nullptr) return {};
  const auto it = costs->alone_us.find(id);
  return it == costs->alone_us.end() ? fmt::format("{}", cost) : fmt::format("{:.0f} µs alone, {}", it->second, cost);
}

// One device's readings as a "metric value" table (not-supported rows only with --show-unsupported),
// values wrapped to the screen. Where every one is unsupported, one line saying so instead of an
// empty table ("RAS not available: REASON" for `ras`), the reason being the first reading's.
std::string readings_table(const std::vector<smi::Reading>& readings, const CommonOptions& options, std::string_view command,
                           const TableContext& context, const ReadCosts* costs = nullptr) {
  Table table({"METRIC", "VALUE"});
  table.fit(1, Table::Fit::wrap);
  const smi::Reading* first_unsupported = nullptr;
  for (const smi::Reading& r : readings) {
    if (!r.ok() && r.status == smi::Status::not_supported && !options.show_unsupported) {
      if (first_unsupported == nullptr) first_unsupported = &r;
      continue;
    }
    const std::optional<std::string> shown = table_value(r, readings, context, options.show_unsupported);
    if (!shown) continue;
    std::string value = *shown;
    if (r.status == smi::Status::error || r.status == smi::Status::unavailable) {
      value = fmt::format("{} ({})", smi::status_name(r.status), r.detail);
    } else if (options.verbose && !r.detail.empty()) {
      value += costs == nullptr ? fmt::format("  [{}]", r.detail) : fmt::format("  [{}; {}]", r.detail, cost_text(costs, r.id));
    } else if (costs != nullptr) {
      value += fmt::format("  [{}]", cost_text(costs, r.id));
    }
    table.add({metric_label(r), value});
  }
  if (table.empty()) {
    const std::string_view what = command == "ras" ? "RAS not available" : "Not available";
    const std::string why = first_unsupported != nullptr ? first_unsupported->detail : "no metric was read";
    return hanging_lines(fmt::format("{}: ", what),
                         why + (first_unsupported != nullptr ? " (--show-unsupported lists them)" : ""), 4, output_width());
  }
  return table.str(output_width());
}

// `ras` without -v: one row per RAS block with its correctable, uncorrectable and deferred counts
// (as amd-smi's and rocm-smi's RAS views), a line per block that could not be read saying why,
// then the device's other RAS facts (ECC totals, retired pages, threshold) as readings_table does.
std::string ras_table(const std::vector<smi::Reading>& readings, const CommonOptions& options, const TableContext& context) {
  using smi::MetricId;
  constexpr MetricId kCounts[] = {MetricId::ras_correctable, MetricId::ras_uncorrectable, MetricId::ras_deferred};
  const auto is_count = [&kCounts](const smi::Reading& r) {
    return !r.instance.empty() && std::find(std::begin(kCounts), std::end(kCounts), r.id) != std::end(kCounts);
  };
  std::vector<std::string> blocks;
  std::map<std::pair<MetricId, std::string>, const smi::Reading*> count;
  for (const smi::Reading& r : readings) {
    if (!is_count(r)) continue;
    if (std::find(blocks.begin(), blocks.end(), r.instance) == blocks.end()) blocks.push_back(r.instance);
    count[{r.id, r.instance}] = &r;
  }
  std::vector<smi::Reading> rest;
  for (const smi::Reading& r : readings) {
    if (!is_count(r)) rest.push_back(r);
  }
  if (blocks.empty()) return readings_table(readings, options, "ras", context);
  const std::size_t width = output_width();
  Table table({"BLOCK", "CE", "UE", "DE"});
  std::string why_not;
  for (const std::string& block : blocks) {
    std::vector<std::string> row = {block};
    std::vector<std::string> reasons;
    for (const MetricId id : kCounts) {
      const auto it = count.find({id, block});
      const smi::Reading* r = it == count.end() ? nullptr : it->second;
      // "-": the block has no such count (the driver keeps none); N/A: it has one that was not read.
      if (r == nullptr || r->status == smi::Status::not_supported) row.emplace_back("-");
      else row.push_back(r->ok() ? value_text(*r) : "N/A");
      if (r != nullptr && !r->ok() && r->status != smi::Status::not_supported &&
          std::find(reasons.begin(), reasons.end(), r->detail) == reasons.end()) {
        reasons.push_back(r->detail);
      }
    }
    table.add(std::move(row));
    for (const std::string& reason : reasons) why_not += hanging_lines(fmt::format("  {}: ", block), reason, 4, width);
  }
  std::string out = table.str(width);
  if (!why_not.empty()) out += "Not read:\n" + why_not;
  if (!rest.empty()) out += readings_table(rest, options, "ras", context);
  return out;
}

void csv_readings(std::string& out, const DeviceSource& source, std::uint32_t handle, const smi::DeviceSummary& device,
                  const std::vector<smi::Reading>& readings) {
  for (const smi::Reading& r : readings) {
    out += csv_reading_row(with_host(source, handle, {std::to_string(device.index), device.bdf}), r);
  }
}

// `metric -v --json`: the costs beside the values ("read_us" per metric, "sample_us" per device).
void add_costs_json(Json& device, const ReadCosts& costs) {
  device["sample_us"] = std::llround(costs.whole_us);
  for (auto& [name, entry] : device["metrics"].items()) {
    const smi::MetricInfo* info = smi::find_metric(name);
    if (info == nullptr) continue;
    entry["cost"] = std::string(smi::cost_name(info->cost));
    if (const auto it = costs.alone_us.find(info->id); it != costs.alone_us.end()) entry["read_us"] = std::llround(it->second);
  }
}

constexpr const char* kReadingsCsvHeader = "device,bdf,metric,instance,status,value,unit\n";


// `what` asking for the metrics named with -m, each read whatever its kind: `metric -m vram_total`
// answers as `static -m vram_total` does, rather than with an empty table.
smi::SampleOptions with_named_metrics(smi::SampleOptions what, const CommonOptions& options) {
  for (const std::string& name : options.metrics) ask_for(what, smi::find_metric(name)->id);  // the option's parser checked the name
  return what;
}

// Shared by `static` and `metric`: sample each selected device and render.
int run_sampled(const DeviceSource& system, const CommonOptions& options, std::string_view command,
                smi::SampleOptions what) {
  what = with_named_metrics(std::move(what), options);
  const auto selected = selected_devices(system, options);
  Json doc = document(command);
  doc["devices"] = Json::array();
  std::string csv = csv_header(system, kReadingsCsvHeader);
  std::string text;
  // A table's limits, windows and decoding facts come in the same sample as the values asked for,
  // and are shown only beside them.
  const SampleWithContext request = with_table_context(what, options.format == Format::table);
  auto sampled = system.sample_all(selected, request.options);
  std::vector<std::vector<smi::Reading>> shown, contexts;
  shown.reserve(sampled.size());
  contexts.reserve(sampled.size());
  for (auto& readings : sampled) {
    const auto context = std::stable_partition(readings.begin(), readings.end(),
                                               [&](const smi::Reading& r) { return request.asked(r.id); });
    contexts.emplace_back(std::make_move_iterator(context), std::make_move_iterator(readings.end()));
    readings.erase(context, readings.end());
    shown.push_back(filter(std::move(readings), options));
  }
  const auto listed = system.devices();
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    const auto& readings = shown[i];
    // After the sample: a GPU whose read just hung is named as faulted in its heading.
    const smi::DeviceSummary& device = listed.at(index);
    std::optional<ReadCosts> costs;
    if (command == "metric" && options.verbose && system.reads_devices() && device.fault.empty()) {
      costs = measure_costs(system, index, what, readings);
    }
    switch (options.format) {
      case Format::json: {
        Json d = device_json(system, index, device);
        d["metrics"] = readings_json(readings);
        if (costs) add_costs_json(d, *costs);
        // Live values answered by a daemon: how old its sample was (a fresh read has no age).
        if (const auto age = system.sample_age_s(index); age && command == "metric") d["sample_age_s"] = *age;
        doc["devices"].push_back(std::move(d));
        break;
      }
      case Format::csv: csv_readings(csv, system, index, device, readings); break;
      case Format::table: {
        TableContext context{device.vendor, std::move(contexts[i])};
        text += device_heading(system, index, device, device.uuid);
        text += command == "ras" && !options.verbose ? ras_table(readings, options, context)
                                                     : readings_table(readings, options, command, context, costs ? &*costs : nullptr);
        if (costs) text += fmt::format("(these metrics read together: {:.0f} µs; window looks not counted)\n", costs->whole_us);
        text += '\n';
        break;
      }
    }
  }
  if (options.format == Format::json) print_json(system, std::move(doc));
  else if (options.format == Format::csv) print(csv);
  else print(text);
  const auto after = system.devices();
  if (options.format != Format::table) std::fputs(fault_lines(system, after, selected).c_str(), stderr);
  return any_fault(after, selected) ? kExitReadFailure : kExitOk;
}

}  // namespace

int finish_with_faults(const DeviceSource& system, const std::vector<std::uint32_t>& selected) {
  const auto after = system.devices();
  std::fputs(fault_lines(system, after, selected).c_str(), stderr);
  return any_fault(after, selected) ? kExitReadFailure : kExitOk;
}

std::vector<std::uint32_t> selected_devices(const smi::System& system, const CommonOptions& options) {
  return selected_devices(LocalSource(system), options);
}

bool partition_selected(const smi::DeviceSummary& device, const smi::Partition& p,
                        const std::vector<smi::Partition>& partitions, const CommonOptions& options) {
  bool names_partitions = false;
  for (const std::string& selector : options.gpus) {
    if (selector == "all" || selector == std::to_string(device.index) || smi::selector_names(selector, device.bdf, device.uuid)) {
      return true;  // the whole GPU was asked for
    }
    for (const smi::Partition& other : partitions) names_partitions |= smi::selector_names(selector, other.bdf, other.id);
  }
  if (!names_partitions) return true;  // selected by a form only the GPU has (rocminfo's GPU-<id>)
  return std::any_of(options.gpus.begin(), options.gpus.end(),
                     [&p](const std::string& selector) { return smi::selector_names(selector, p.bdf, p.id); });
}

std::vector<std::uint32_t> selected_devices(const DeviceSource& system, const CommonOptions& options) {
  std::vector<std::uint32_t> out;
  const bool all = options.gpus.empty() || std::find(options.gpus.begin(), options.gpus.end(), "all") != options.gpus.end();
  if (all) {
    const std::size_t count = system.devices().size();
    for (std::uint32_t handle = 0; handle < count; ++handle) out.push_back(handle);
    return out;
  }
  for (const std::string& selector : options.gpus) {
    for (const std::uint32_t handle : system.resolve_all(selector)) {
      if (std::find(out.begin(), out.end(), handle) == out.end()) out.push_back(handle);
    }
  }
  // Over several hosts: host after host, each host's GPUs in order (one machine keeps -g's order).
  if (system.spans_hosts()) std::sort(out.begin(), out.end());
  return out;
}

int run_list(const DeviceSource& system, const CommonOptions& options) {
  const auto devices = system.devices();
  const auto selected = selected_devices(system, options);
  if (options.format == Format::json) {
    Json doc = document("list");
    doc["devices"] = Json::array();
    for (const auto index : selected) doc["devices"].push_back(device_json(system, index, devices[index]));
    print_json(system, std::move(doc));
  } else if (options.format == Format::csv) {
    std::string out = csv_header(system, "index,vendor,backend,bdf,uuid,name,partitions,fault\n");
    for (const auto index : selected) {
      const auto& d = devices[index];
      out += csv_row(with_host(system, index, {std::to_string(d.index), d.vendor, d.backend, d.bdf, d.uuid, d.name,
                                               std::to_string(d.partition_count), d.fault}));
    }
    print(out);
  } else {
    const std::vector<std::string> header = with_host_title(system, {"GPU", "VENDOR", "BDF", "UUID", "PARTITIONS", "NAME"}, "HOST");
    Table table(header);
    // The UUID gives way first (whole in --json and --csv, and on a screen wide enough), then the
    // name wraps.
    table.fit(static_cast<std::size_t>(std::find(header.begin(), header.end(), "UUID") - header.begin()), Table::Fit::cut_middle)
        .fit(header.size() - 1, Table::Fit::wrap);
    for (const auto index : selected) {
      const auto& d = devices[index];
      table.add(with_host(system, index,
                          {std::to_string(d.index), d.vendor, d.bdf.empty() ? "N/A" : d.bdf, d.uuid.empty() ? "N/A" : d.uuid,
                           std::to_string(d.partition_count), d.name.empty() ? "(name unreadable)" : d.name}));
    }
    if (table.empty()) print("No GPUs found.\n");
    else print(table.str(output_width()) + fault_lines(system, devices, selected));
  }
  // A GPU that cannot be read is listed, and the command says so by its exit code too.
  return any_fault(devices, selected) ? kExitReadFailure : kExitOk;
}

int run_static(const DeviceSource& system, const CommonOptions& options) {
  if (options.nfd) return run_node_labels(system, options);
  smi::SampleOptions what;
  what.identity = true;
  what.static_info = true;
  what.live = false;
  if (options.format != Format::json) return run_sampled(system, options, "static", what);
  // JSON also carries each device's partitions.
  const auto devices = system.devices();
  Json doc = document("static");
  doc["devices"] = Json::array();
  // Every GPU's readings, then every GPU's partitions: a fleet asks each of them of all hosts at once.
  const std::vector<std::uint32_t> selected = selected_devices(system, options);
  auto readings = system.sample_all(selected, with_named_metrics(what, options));
  const auto partitions = system.partitions_all(selected);
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    Json d = device_json(system, index, devices[index]);
    d["metrics"] = readings_json(filter(std::move(readings[i]), options));
    d["partition_list"] = Json::array();
    for (const smi::Partition& p : partitions[i]) {
      Json pj;
      pj["index"] = p.index;
      pj["id"] = p.id;
      pj["bdf"] = p.bdf;
      pj["metrics"] = readings_json(p.readings);
      d["partition_list"].push_back(std::move(pj));
    }
    doc["devices"].push_back(std::move(d));
  }
  print_json(system, std::move(doc));
  return kExitOk;
}

int run_metric(const DeviceSource& system, const CommonOptions& options) {
  smi::SampleOptions what;
  what.live = true;
  what.pcie_throughput = options.pcie_throughput;
  what.window = options.window_asked || std::any_of(options.metrics.begin(), options.metrics.end(), [](const std::string& name) {
                  return smi::find_metric(name)->kind == smi::Kind::window;
                });
  if (what.window) {
    smi::SampleOptions asked = what;  // run_sampled adds -m's metrics to `what` itself
    for (const std::string& name : options.metrics) asked.metrics.push_back(smi::find_metric(name)->id);
    system.open_windows(selected_devices(system, options), asked, options.window_ms);
  }
  return run_sampled(system, options, "metric", what);
}

int run_ras(const DeviceSource& system, const CommonOptions& options) {
  smi::SampleOptions what;
  what.static_info = true;
  for (const smi::MetricId id :
       {smi::MetricId::ras_correctable, smi::MetricId::ras_uncorrectable, smi::MetricId::ras_deferred,
        smi::MetricId::ecc_corrected_volatile, smi::MetricId::ecc_uncorrected_volatile,
        smi::MetricId::ecc_corrected_aggregate, smi::MetricId::ecc_uncorrected_aggregate, smi::MetricId::bad_pages_reserved,
        smi::MetricId::bad_pages_pending, smi::MetricId::bad_pages_failed, smi::MetricId::bad_page_threshold,
        smi::MetricId::retired_pages, smi::MetricId::remapped_rows, smi::MetricId::remapped_rows_pending,
        smi::MetricId::remapped_rows_failed}) {
    what.metrics.push_back(id);
  }
  return run_sampled(system, options, "ras", what);
}

namespace {

// One cell of the topology matrix, in the spirit of `nvidia-smi topo -m`: the closest way between
// the two GPUs. Legend in kTopologyLegend.
std::string matrix_cell(const std::map<smi::MetricId, const smi::Reading*>& cell) {
  const auto text = [&cell](smi::MetricId id) {
    const auto it = cell.find(id);
    return it != cell.end() && it->second->ok() ? value_text(*it->second) : std::string();
  };
  const std::string nvlinks = text(smi::MetricId::link_nvlink_count);
  if (!nvlinks.empty() && nvlinks != "0") return "NV" + nvlinks;
  const std::string type = text(smi::MetricId::link_type);
  const std::string hops = text(smi::MetricId::link_hops);
  if (type == "xgmi") return hops.empty() || hops == "1" ? "XGMI" : "XGMI" + hops;
  static const std::map<std::string, std::string> kPath = {{"board", "BRD"},       {"switch", "PIX"},
                                                            {"switches", "PXB"},    {"host_bridge", "PHB"},
                                                            {"numa_node", "NODE"}, {"system", "SYS"}};
  if (const auto it = kPath.find(text(smi::MetricId::link_pcie_path)); it != kPath.end()) return it->second;
  if (type == "pcie") return hops.empty() ? "PCIE" : "PCIE" + hops;
  return "?";
}

constexpr std::pair<const char*, const char*> kTopologyLegend[] = {
    {"X", "the GPU itself"},
    {"NV#", "joined by # active NVLinks (directly or through NVSwitches)"},
    {"XGMI", "a direct XGMI link (XGMI# : # hops over XGMI)"},
    {"BRD", "PCIe, on the same board"},
    {"PIX", "PCIe, through one PCIe switch"},
    {"PXB", "PCIe, through several PCIe switches, not a host bridge"},
    {"PHB", "PCIe, through the host bridge of one CPU"},
    {"NODE", "PCIe, between host bridges of one NUMA node"},
    {"SYS", "PCIe and the CPUs' interconnect (across NUMA nodes)"},
    {"PCIE#", "PCIe, # hops in the KFD topology (the driver gives no path)"},
    {"?", "the link could not be read"},
};

// Where each GPU sits among the CPUs: its NUMA node and the CPUs closest to it.
std::vector<smi::Reading> affinity(const LocalSource& system, std::uint32_t device) {
  smi::SampleOptions what;
  what.static_info = true;
  what.live = false;
  what.metrics = {smi::MetricId::numa_node, smi::MetricId::cpu_affinity};
  return system.sample(device, what);
}

std::string affinity_text(const std::vector<smi::Reading>& facts, smi::MetricId id) {
  for (const smi::Reading& r : facts) {
    if (r.id == id && r.ok()) return value_text(r);
  }
  return "N/A";
}

std::string topology_matrix(const LocalSource& system, const std::vector<std::uint32_t>& selected,
                            const std::vector<smi::Link>& links) {
  std::vector<std::string> header = {""};
  for (const std::uint32_t i : selected) header.push_back(fmt::format("GPU{}", i));
  header.emplace_back("NUMA");
  header.emplace_back("CPU AFFINITY");
  Table table(header);
  table.fit(header.size() - 1, Table::Fit::wrap);  // many GPUs: the CPU list goes under its row
  std::set<std::string> used;
  for (const std::uint32_t from : selected) {
    std::vector<std::string> row = {fmt::format("GPU{}", from)};
    for (const std::uint32_t to : selected) {
      std::string cell = "X";
      if (from != to) {
        cell = "?";
        for (const smi::Link& link : links) {
          if (link.from != from || link.to != to) continue;
          std::map<smi::MetricId, const smi::Reading*> readings;
          for (const smi::Reading& r : link.readings) readings[r.id] = &r;
          cell = matrix_cell(readings);
        }
      }
      used.insert(cell.starts_with("NV") ? "NV#" : cell.starts_with("XGMI") ? "XGMI" : cell.starts_with("PCIE") ? "PCIE#" : cell);
      row.push_back(cell);
    }
    const auto facts = affinity(system, from);
    row.push_back(affinity_text(facts, smi::MetricId::numa_node));
    row.push_back(affinity_text(facts, smi::MetricId::cpu_affinity));
    table.add(std::move(row));
  }
  std::string out = table.str(output_width()) + "\nLegend:\n";
  for (const auto& [code, meaning] : kTopologyLegend) {
    if (used.contains(code)) out += fmt::format("  {:<6}{}\n", code, meaning);
  }
  return out + "Columns:\n  NUMA          the NUMA node closest to the GPU (numa_node; -1: none)\n"
               "  CPU AFFINITY  the CPUs closest to the GPU (cpu_affinity: local_cpulist)\n"
               "`topology --list`: every pair's facts.\n";
}

}  // namespace

int run_topology(const LocalSource& system, const CommonOptions& options, bool as_list) {
  const auto selected = selected_devices(system, options);
  auto chosen = [&selected](std::uint32_t i) { return std::find(selected.begin(), selected.end(), i) != selected.end(); };
  const auto found = system.links();
  if (!found) {
    std::fprintf(stderr, "hipstack-smi: topology: %s\n", system.stuck_fault(LocalSource::kNode).c_str());
    return kExitReadFailure;
  }
  const std::vector<smi::Link>& links = *found;
  Json doc = document("topology");
  if (options.format == Format::json) {
    doc["gpus"] = Json::array();
    for (const std::uint32_t index : selected) {
      doc["gpus"].push_back({{"index", index}, {"metrics", readings_json(affinity(system, index))}});
    }
  }
  doc["links"] = Json::array();
  std::string csv = "from,to,metric,status,value,unit\n";
  Table table({"FROM", "TO", "TYPE", "HOPS", "WEIGHT", "NVLINKS", "PCIE PATH", "BANDWIDTH", "NUMA DISTANCE"});
  for (const smi::Link& link : links) {
    if (!chosen(link.from) || !chosen(link.to)) continue;
    Json lj;
    lj["from"] = link.from;
    lj["to"] = link.to;
    lj["metrics"] = readings_json(link.readings);
    doc["links"].push_back(std::move(lj));
    std::map<smi::MetricId, std::string> cell;
    for (const smi::Reading& r : link.readings) {
      csv += csv_reading_row({std::to_string(link.from), std::to_string(link.to)}, r, CsvInstance::without);
      cell[r.id] = value_with_unit(r);
    }
    table.add({std::to_string(link.from), std::to_string(link.to), cell[smi::MetricId::link_type],
               cell[smi::MetricId::link_hops], cell[smi::MetricId::link_weight],
               cell[smi::MetricId::link_nvlink_count], cell[smi::MetricId::link_pcie_path],
               cell[smi::MetricId::link_bandwidth_max], cell[smi::MetricId::link_numa_distance]});
  }
  if (options.format == Format::json) print_json(doc);
  else if (options.format == Format::csv) print(csv);
  else if (!as_list && !selected.empty()) print(topology_matrix(system, selected, links));
  else if (table.empty()) print("No links between GPUs.\n");
  else print(table.str());
  return kExitOk;
}

int run_version(const smi::System* system, const CommonOptions& options) {
  Json doc = document("version");
  doc["version"] = std::string(smi::library_version());
  if (system != nullptr) {
    doc["backends"] = Json::array();
    for (const smi::BackendStatus& b : system->backends()) {
      doc["backends"].push_back({{"name", b.name}, {"present", b.present}, {"reason", b.reason}});
    }
  }
  if (options.format == Format::json) {
    print_json(doc);
  } else if (options.format == Format::csv) {
    std::string out = "component,version\n" + csv_row({"hipstack-smi", std::string(smi::library_version())});
    print(out);
  } else {
    std::string out = fmt::format("hipstack-smi {}\n", smi::library_version());
    if (system != nullptr) {
      for (const smi::BackendStatus& b : system->backends()) {
        out += hanging_lines(fmt::format("  backend {}: ", b.name), fmt::format("{} ({})", b.present ? "present" : "absent", b.reason),
                             4, output_width());
      }
    }
    print(out);
  }
  return kExitOk;
}

}  // namespace hipstack::cli
