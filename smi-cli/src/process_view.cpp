// hipstack-smi process: the processes using each GPU, once or watched (-w/-i, in the spirit of
// `nvidia-smi pmon`), with their command line and the partition or MIG instance they run in.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <thread>

#include "commands.hpp"
#include "text_layout.hpp"
#include "units.hpp"

namespace hipstack::cli {
namespace {

// Where in the GPU the process runs: AMD partitions ("3", "0,1") or the MIG instance ("GI 1/CI 0").
std::string place(const std::map<smi::MetricId, const smi::Reading*>& cell) {
  const auto text = [&cell](smi::MetricId id) {
    const auto it = cell.find(id);
    return it != cell.end() && it->second->ok() ? value_text(*it->second) : std::string();
  };
  if (const std::string parts = text(smi::MetricId::process_partitions); !parts.empty()) return parts;
  const std::string gi = text(smi::MetricId::process_gpu_instance_id);
  if (!gi.empty()) return fmt::format("GI {}/CI {}", gi, text(smi::MetricId::process_compute_instance_id));
  return "-";
}

// One look at every selected GPU, in the command's format. A single look has no time column; a
// watched one has it in the table (local), CSV (UTC, ISO 8601) and JSON (Unix seconds).
struct Look {
  std::string out;
  bool any_process = false;
};

Look look(const LocalSource& system, const CommonOptions& options, const std::vector<std::uint32_t>& selected,
          const ProcessOptions& process, std::chrono::system_clock::time_point now, bool first) {
  Look result;
  const bool timed = process.watch;
  Json doc = document("process");
  if (timed) doc["time"] = std::chrono::duration<double>(now.time_since_epoch()).count();
  doc["devices"] = Json::array();
  std::string csv = !timed || first ? std::string(timed ? "time," : "") +
                                          "device,bdf,pid,name,user,command_line,metric,instance,status,value,unit\n"
                                    : std::string();
  std::vector<std::string> header = {"GPU", "PID", "USER", "NAME", "PART", "VRAM", "GTT", "CU", "QUEUES", "ENGINES", "COMMAND"};
  if (timed) header.insert(header.begin(), "TIME");
  Table table(header);
  // The command line is cut to the screen (whole in --json and --csv); on a narrow screen it goes
  // under its row, with the engines' busy shares where the row is still too wide.
  table.fit(header.size() - 2, Table::Fit::below).fit(header.size() - 1, Table::Fit::cut_end);
  for (const std::uint32_t index : selected) {
    const auto found = system.processes(index, first ? process.interval_ms : 0);
    const smi::DeviceSummary device = system.devices().at(index);  // after the scan: names a GPU whose read hung
    Json d = device_json(device);
    d["processes"] = Json::array();
    for (const smi::ProcessInfo& p : found.value_or(std::vector<smi::ProcessInfo>{})) {
      result.any_process = true;
      Json pj;
      pj["pid"] = p.pid;
      pj["name"] = p.name;
      pj["user"] = p.user;
      pj["command_line"] = p.command_line;
      pj["cgroup"] = p.cgroup;
      pj["metrics"] = readings_json(p.readings);
      d["processes"].push_back(std::move(pj));
      std::map<smi::MetricId, const smi::Reading*> cell;
      std::string engines;
      for (const smi::Reading& r : p.readings) {
        std::vector<std::string> keys = {std::to_string(device.index), device.bdf, std::to_string(p.pid), p.name, p.user,
                                         p.command_line};
        if (timed) keys.insert(keys.begin(), utc_iso(now));
        csv += csv_reading_row(std::move(keys), r);
        if (r.id == smi::MetricId::process_engine_busy && r.ok()) {
          engines += fmt::format("{}{}={}%", engines.empty() ? "" : " ", r.instance, value_text(r));
        } else {
          cell[r.id] = &r;
        }
      }
      const auto shown = [&cell](smi::MetricId id) {
        const auto it = cell.find(id);
        return it == cell.end() ? std::string("N/A") : value_with_unit(*it->second);
      };
      std::vector<std::string> row = {std::to_string(device.index),
                                      std::to_string(p.pid),
                                      p.user,
                                      p.name,
                                      place(cell),
                                      shown(smi::MetricId::process_vram),
                                      shown(smi::MetricId::process_gtt),
                                      shown(smi::MetricId::process_cu_occupancy),
                                      shown(smi::MetricId::process_queues),
                                      engines.empty() ? "N/A" : engines,
                                      p.command_line.empty() ? "-" : p.command_line};
      if (timed) row.insert(row.begin(), local_clock(now, false));
      table.add(std::move(row));
    }
    doc["devices"].push_back(std::move(d));
  }
  if (options.format == Format::json) {
    result.out = timed ? doc.dump() + "\n" : doc.dump(2) + "\n";
  } else if (options.format == Format::csv) {
    result.out = csv;
  } else if (table.empty()) {
    result.out = timed ? fmt::format("{}  no GPU processes\n", local_clock(now, false)) : "No GPU processes found.\n";
  } else {
    result.out = table.str(output_width());
  }
  return result;
}

}  // namespace

int run_process(const LocalSource& system, const CommonOptions& options, const ProcessOptions& process) {
  const auto selected = selected_devices(system, options);
  const auto start = std::chrono::steady_clock::now();
  std::string last_faults;
  bool faulted = false;
  for (long round = 0; round == 0 || (process.watch && (process.iterations <= 0 || round < process.iterations)); ++round) {
    if (round > 0) {
      std::this_thread::sleep_until(start + std::chrono::duration<double>(process.watch_s * static_cast<double>(round)));
    }
    const Look result = look(system, options, selected, process, std::chrono::system_clock::now(), round == 0);
    print(result.out + (process.watch && options.format == Format::table && round + 1 != process.iterations ? "\n" : ""));
    std::fflush(stdout);
    const auto devices = system.devices();
    faulted = faulted || any_fault(devices, selected);
    const std::string faults = fault_lines(devices, selected);
    if (faults != last_faults) std::fputs(faults.c_str(), stderr);  // named when it appears
    last_faults = faults;
  }
  return faulted ? kExitReadFailure : kExitOk;
}

}  // namespace hipstack::cli
