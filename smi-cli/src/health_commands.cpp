// hipstack-smi health, ras, bad-pages and partition: the health engine's verdicts, the memory-error
// views and the partition view.
#include <fmt/format.h>
#include <hipstack/gpu_errors.hpp>

#include <cstdio>
#include <map>

#include "commands.hpp"
#include "text_layout.hpp"

namespace hipstack::cli {
namespace {

// Node Problem Detector's custom-plugin exit statuses (its plugin interface: 0 OK, 1 NonOK, other
// Unknown).
constexpr int kNpdOk = 0;
constexpr int kNpdProblem = 1;
constexpr int kNpdUnknown = 2;

// `health --npd`: one line, what matters first (NPD keeps max_output_length bytes of it; a Slurm
// drain reason is the same line). A GPU that fails names its failing checks; one that could not be
// checked at all is "not checked" (Unknown: never rounded to healthy); otherwise the node is healthy,
// with the GPUs that warn named.
int health_npd(const DeviceSource& system, const std::vector<std::uint32_t>& selected, const std::string& policy_file) {
  const auto devices = system.devices();
  const auto reports = system.health_all(selected, policy_file);
  std::vector<std::string> failing, unchecked, warning;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    const smi::HealthReport& report = reports[i];
    const std::string host = system.spans_hosts() ? system.host_of(index) + " " : std::string();
    const std::string gpu = fmt::format("{}GPU{} {}", host, devices[index].index, devices[index].bdf);
    if (report.overall == smi::Verdict::fail) {
      std::string checks;
      for (const smi::HealthFinding& f : report.findings) {
        if (f.verdict != smi::Verdict::fail) continue;
        // errors.recent names what its worst error calls for: "errors.recent=reboot_node".
        const auto action = smi::finding_action(f);
        checks += (checks.empty() ? " " : ",") + f.check + (action ? "=" + std::string(smi::error_action_name(*action)) : "");
      }
      failing.push_back(gpu + checks);
    } else if (report.overall == smi::Verdict::unknown) {
      unchecked.push_back(gpu + " not checked");
    } else if (report.overall == smi::Verdict::warn) {
      warning.push_back(fmt::format("{}GPU{}", host, devices[index].index));
    }
  }
  auto join = [](const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out;
  };
  if (!failing.empty()) {
    print("hipstack: " + join(failing) + (unchecked.empty() ? "" : "; " + join(unchecked)) + "\n");
    return kNpdProblem;
  }
  if (selected.empty()) {
    print("hipstack: no GPU found\n");
    return kNpdUnknown;
  }
  if (!unchecked.empty()) {
    print("hipstack: " + join(unchecked) + "\n");
    return kNpdUnknown;
  }
  std::string line = fmt::format("hipstack: {} GPU{} healthy", selected.size(), selected.size() == 1 ? "" : "s");
  if (!warning.empty()) {
    std::string warned;
    for (const std::string& w : warning) warned += (warned.empty() ? "" : ",") + w;
    line += fmt::format(" ({} warn)", warned);
  }
  print(line + "\n");
  return kNpdOk;
}

}  // namespace

int run_health(const DeviceSource& system, const CommonOptions& options, const std::string& policy_file) {
  const auto devices = system.devices();
  const auto selected = selected_devices(system, options);
  if (options.npd) return health_npd(system, selected, policy_file);
  Json doc = document("health");
  doc["devices"] = Json::array();
  std::string csv = csv_header(system, "device,bdf,check,verdict,reading,threshold,message,remediation\n");
  std::string text;
  const std::size_t width = output_width();
  bool any_fail = false;
  bool any_unknown = false;
  const auto reports = system.health_all(selected, policy_file);
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    const smi::HealthReport& report = reports[i];
    const smi::DeviceSummary& device = devices[index];
    const smi::HealthTally counts = smi::tally(report);
    any_fail = any_fail || report.overall == smi::Verdict::fail;
    any_unknown = any_unknown || report.overall == smi::Verdict::unknown;
    Json d = device_json(system, index, device);
    d["overall"] = std::string(smi::verdict_name(report.overall));
    d["summary"] = smi::health_summary(report);
    d["not_checked"] = counts.not_checked;
    d["findings"] = Json::array();
    text += device_heading(system, index, device, smi::verdict_name(report.overall));
    Table table({"CHECK", "VERDICT", "READING", "THRESHOLD", "FINDING"});
    table.fit(3, Table::Fit::below).fit(4, Table::Fit::wrap);  // long thresholds go under the row with the finding
    std::string remedies;
    for (const smi::HealthFinding& f : report.findings) {
      d["findings"].push_back({{"check", f.check},
                               {"verdict", std::string(smi::verdict_name(f.verdict))},
                               {"reading", f.reading},
                               {"threshold", f.threshold},
                               {"message", f.message},
                               {"remediation", f.remediation}});
      csv += csv_row(with_host(system, index,
                               {std::to_string(device.index), device.bdf, f.check, std::string(smi::verdict_name(f.verdict)),
                                f.reading, f.threshold, f.message, f.remediation}));
      // People see what needs attention and the names of what could not be checked (the summary
      // line); -v shows every finding with its reason.
      if (f.verdict == smi::Verdict::pass && !options.verbose) continue;
      if (f.verdict == smi::Verdict::unknown && !options.verbose && f.check != "ras.unreadable") continue;
      table.add({f.check, std::string(smi::verdict_name(f.verdict)), f.reading, f.threshold, f.message});
      if (!f.remediation.empty() && f.verdict != smi::Verdict::pass) {
        remedies += hanging_lines(fmt::format("  {}: ", f.check), f.remediation, 4, width);
      }
    }
    text += hanging_lines("  ", smi::health_summary(report), 4, width);
    if (!table.empty()) text += table.str(width);
    if (!remedies.empty()) text += "What to do:\n" + remedies;
    text += '\n';
    doc["devices"].push_back(std::move(d));
  }
  if (options.format == Format::json) print_json(system, std::move(doc));
  else if (options.format == Format::csv) print(csv);
  else print(selected.empty() ? "No GPUs found.\n" : text);
  // 0 healthy (PASS or WARN), 1 a check failed or a GPU cannot be read, 8 a GPU could not be checked at all.
  if (any_fail) return kExitUnhealthy;
  return any_unknown || selected.empty() ? kExitCannotCheck : kExitOk;
}

int run_bad_pages(const LocalSource& system, const CommonOptions& options) {
  const auto selected = selected_devices(system, options);
  Json doc = document("bad-pages");
  doc["devices"] = Json::array();
  std::string csv = "device,bdf,frame,size,state\n";
  Table table({"GPU", "BDF", "FRAME", "SIZE", "STATE"});
  for (const std::uint32_t index : selected) {
    const auto found = system.bad_pages(index);
    const smi::DeviceSummary device = system.devices().at(index);  // after the read: names a GPU whose read hung
    Json d = device_json(device);
    d["bad_pages"] = Json::array();
    for (const smi::BadPage& page : found.value_or(std::vector<smi::BadPage>{})) {
      d["bad_pages"].push_back({{"frame", page.frame}, {"size", page.size}, {"state", page.state}});
      csv += csv_row({std::to_string(index), device.bdf, fmt::format("0x{:x}", page.frame), std::to_string(page.size), page.state});
      table.add({std::to_string(index), device.bdf, fmt::format("0x{:x}", page.frame), std::to_string(page.size), page.state});
    }
    doc["devices"].push_back(std::move(d));
  }
  if (options.format == Format::json) print_json(doc);
  else if (options.format == Format::csv) print(csv);
  else print(table.empty() ? "No retired or pending memory pages.\n" : table.str());
  return finish_with_faults(system, selected);
}

}  // namespace hipstack::cli

namespace hipstack::cli {

namespace {

// The partition modes of a GPU (the readings `partition` shows above its partitions).
smi::SampleOptions partition_modes() {
  using smi::MetricId;
  smi::SampleOptions modes;
  modes.static_info = true;
  modes.live = false;
  modes.metrics = {MetricId::compute_partition, MetricId::compute_partition_available, MetricId::memory_partition,
                   MetricId::memory_partition_available, MetricId::mig_mode};
  return modes;
}

}  // namespace

Json partition_json(const DeviceSource& system, const std::vector<std::uint32_t>& selected) {
  const auto devices = system.devices();
  // Every GPU's modes, then every GPU's partitions: a fleet asks each of them of all hosts at once.
  const auto modes = system.sample_all(selected, partition_modes());
  const auto partitions = system.partitions_all(selected);
  Json out = Json::array();
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    Json d = device_json(system, index, devices.at(index));
    d["modes"] = readings_json(modes[i]);
    d["partition_list"] = Json::array();
    for (const smi::Partition& p : partitions[i]) {
      d["partition_list"].push_back({{"index", p.index}, {"id", p.id}, {"bdf", p.bdf}, {"metrics", readings_json(p.readings)}});
    }
    out.push_back(std::move(d));
  }
  return out;
}

int run_partition(const DeviceSource& system, const CommonOptions& options) {
  using smi::MetricId;
  const auto devices = system.devices();
  Json doc = document("partition");
  doc["devices"] = Json::array();
  std::string csv = csv_header(system, "device,bdf,partition,id,metric,status,value,unit\n");
  std::string text;
  const std::size_t width = output_width();
  const std::vector<std::uint32_t> selected = selected_devices(system, options);
  const auto modes = system.sample_all(selected, partition_modes());
  const auto partitions = system.partitions_all(selected);
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const std::uint32_t index = selected[i];
    const smi::DeviceSummary& device = devices[index];
    const std::vector<smi::Reading>& mode_readings = modes[i];
    const std::vector<smi::Partition>& parts = partitions[i];
    Json d = device_json(system, index, device);
    d["modes"] = readings_json(mode_readings);
    d["partition_list"] = Json::array();
    auto mode = [&mode_readings](MetricId id) {
      for (const smi::Reading& r : mode_readings) {
        if (r.id == id) return value_text(r);
      }
      return std::string("N/A");
    };
    text += device_heading(system, index, device);
    if (device.vendor == "nvidia") {
      text += fmt::format("  MIG: {}\n", mode(MetricId::mig_mode));
    } else {
      text += hanging_lines("  ", fmt::format("compute: {} (available: {})", mode(MetricId::compute_partition),
                                              mode(MetricId::compute_partition_available)), 4, width);
      text += hanging_lines("  ", fmt::format("memory: {} (available: {})", mode(MetricId::memory_partition),
                                              mode(MetricId::memory_partition_available)), 4, width);
    }
    // GI and CI (NVIDIA MIG instances) only where a partition has them; the ID gives way (whole in
    // --json and --csv).
    const bool instances = std::any_of(parts.begin(), parts.end(), [](const smi::Partition& p) {
      return std::any_of(p.readings.begin(), p.readings.end(), [](const smi::Reading& r) {
        return r.ok() && (r.id == MetricId::partition_gpu_instance_id || r.id == MetricId::partition_compute_instance_id);
      });
    });
    std::vector<std::string> header = {"PARTITION", "ID", "BDF", "CUS", "XCCS", "MEMORY", "RENDER"};
    if (instances) header.insert(header.end(), {"GI", "CI"});
    Table table(header);
    table.fit(1, Table::Fit::cut_middle);
    for (const smi::Partition& p : parts) {
      if (!partition_selected(device, p, parts, options)) continue;
      d["partition_list"].push_back({{"index", p.index}, {"id", p.id}, {"bdf", p.bdf}, {"metrics", readings_json(p.readings)}});
      std::map<MetricId, std::string> cell;
      for (const smi::Reading& r : p.readings) {
        cell[r.id] = value_with_unit(r);
        csv += csv_reading_row(with_host(system, index, {std::to_string(device.index), device.bdf, std::to_string(p.index), p.id}),
                               r, CsvInstance::without);
      }
      std::vector<std::string> row = {std::to_string(p.index), p.id, p.bdf, cell[MetricId::partition_compute_units],
                                      cell[MetricId::partition_xccs], cell[MetricId::partition_memory],
                                      cell[MetricId::partition_render_minor]};
      if (instances) row.insert(row.end(), {cell[MetricId::partition_gpu_instance_id], cell[MetricId::partition_compute_instance_id]});
      table.add(std::move(row));
    }
    text += table.str(width) + "\n";
    doc["devices"].push_back(std::move(d));
  }
  if (options.format == Format::json) print_json(system, std::move(doc));
  else if (options.format == Format::csv) print(csv);
  else print(devices.empty() ? "No GPUs found.\n" : text);
  return kExitOk;
}

}  // namespace hipstack::cli
