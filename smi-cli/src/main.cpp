// hipstack-smi: command line over libhipstack-smi. Argument parsing and dispatch only.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <hipstack/smi.hpp>

#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "rocm_smi_compat.hpp"

namespace {

using namespace hipstack;
using namespace hipstack::cli;

std::vector<std::string> split_list(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    std::size_t pos = 0;
    while (pos <= value.size()) {
      std::size_t end = value.find(',', pos);
      if (end == std::string::npos) end = value.size();
      if (end > pos) out.push_back(value.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  return out;
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--rocm-smi") return run_rocm_smi_compat(argc, argv, i);
  }

  CLI::App app{"hipstack-smi: GPU identity, telemetry and topology for AMD and NVIDIA GPUs"};
  app.fallthrough();
  app.require_subcommand(1);
  smi::OpenOptions open;
  CommonOptions common;
  std::vector<std::string> gpus;
  std::vector<std::string> metrics;
  bool json = false;
  bool csv = false;
  app.add_option("--sysfs-root", open.sysfs_root, "Read DIR in place of /sys (a recorded capture)");
  app.add_option("--procfs-root", open.procfs_root, "Read DIR in place of /proc");
  app.add_option("-g,--gpu", gpus, "Devices by index, BDF or UUID (repeat or comma-separate)");
  app.add_option("-m,--metrics", metrics, "Only these metrics (catalogue names, comma-separated)");
  auto* json_flag = app.add_flag("--json", json, "Machine-readable JSON (schema hipstack-smi/v1)");
  app.add_flag("--csv", csv, "Machine-readable CSV")->excludes(json_flag);
  app.add_flag("-v,--verbose", common.verbose, "Say where each value came from and why backends are absent");
  app.add_flag("--show-unsupported", common.show_unsupported, "Also list metrics the device does not provide");

  app.add_subcommand("list", "List GPUs");
  app.add_subcommand("static", "Identity and static facts (IDs, firmware, memory sizes, limits, DPM levels)");
  auto* metric = app.add_subcommand("metric", "Live metrics (temperatures, power, clocks, use, memory, PCIe)");
  metric->add_flag("--pcie-bw", common.pcie_throughput, "Also measure PCIe throughput (amdgpu: blocks 1 s)");
  auto* process = app.add_subcommand("process", "Processes using the GPUs");
  unsigned interval_ms = 0;
  process->add_option("--interval-ms", interval_ms, "Measure engine busy over this interval (ms)")
      ->check(CLI::Range(0u, 60000u));
  app.add_subcommand("topology", "Links between GPUs (XGMI/PCIe, hops, weight, NUMA)");
  auto* monitor = app.add_subcommand("monitor", "Refreshing view of the main live metrics");
  double watch_s = 1.0;
  long iterations = 0;
  monitor->add_option("-w,--watch", watch_s, "Seconds between refreshes")->check(CLI::Range(0.01, 3600.0));
  monitor->add_option("-i,--iterations", iterations, "Stop after N refreshes (0: run until interrupted)")
      ->check(CLI::Range(0L, 1000000000L));
  auto* health = app.add_subcommand("health", "Health verdict per GPU with the findings behind it (exit 1 unhealthy)");
  std::string health_policy;
  health->add_option("--config", health_policy, "Health thresholds file (key = value; docs/health.md)")
      ->check(CLI::ExistingFile);
  app.add_subcommand("ras", "RAS error counts per block, ECC totals, retired pages and the bad page threshold");
  app.add_subcommand("bad-pages", "Retired and pending memory pages");
  app.add_subcommand("partition", "Compute/memory partition modes and the partitions (MIG instances) of each GPU");
  auto* catalogue = app.add_subcommand("catalogue", "The metric catalogue (ids, names, units, help)");
  bool markdown = false;
  catalogue->add_flag("--markdown", markdown, "As the Markdown table of docs/metrics.md");
  auto* capture = app.add_subcommand("capture", "Record the sysfs files hipstack reads into a folder");
  std::string capture_dir;
  bool capture_processes = false;
  capture->add_option("OUT", capture_dir, "Empty folder to write OUT/sys (and OUT/proc) into")->required();
  capture->add_flag("--processes", capture_processes, "Also record GPU processes (KFD and DRM fdinfo)");
  capture->add_flag("--pcie-bw", common.pcie_throughput, "Also record pcie_bw (blocks 1 s per GPU)");
  app.add_subcommand("version", "Library version and backends");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadArguments;
  }
  common.format = json ? Format::json : csv ? Format::csv : Format::table;
  common.gpus = split_list(gpus);
  common.metrics = split_list(metrics);
  for (const std::string& name : common.metrics) {
    if (smi::find_metric(name) == nullptr) {
      std::fprintf(stderr, "hipstack-smi: unknown metric \"%s\" (docs/metrics.md lists them)\n", name.c_str());
      return kExitBadArguments;
    }
  }

  const std::string command = app.get_subcommands().front()->get_name();
  if (command == "catalogue") return run_catalogue(common, markdown);
  if (command == "capture") {
    return run_capture(open.sysfs_root, open.procfs_root, capture_dir, capture_processes, common.pcie_throughput);
  }
  std::optional<smi::System> system;
  try {
    system.emplace(smi::System::open(open));
  } catch (const smi::Error& e) {
    if (command == "version") return run_version(nullptr, common);
    throw;
  }
  if (common.verbose) {
    for (const smi::BackendStatus& b : system->backends()) {
      std::fprintf(stderr, "backend %s: %s (%s)\n", b.name.c_str(), b.present ? "present" : "absent", b.reason.c_str());
    }
  }
  if (command == "list") return run_list(*system, common);
  if (command == "static") return run_static(*system, common);
  if (command == "metric") return run_metric(*system, common);
  if (command == "process") return run_process(*system, common, interval_ms);
  if (command == "topology") return run_topology(*system, common);
  if (command == "monitor") return run_monitor(*system, common, watch_s, iterations);
  if (command == "health") return run_health(*system, common, health_policy);
  if (command == "ras") return run_ras(*system, common);
  if (command == "bad-pages") return run_bad_pages(*system, common);
  if (command == "partition") return run_partition(*system, common);
  return run_version(&*system, common);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const smi::Error& e) {
    std::fprintf(stderr, "hipstack-smi: %s\n", e.what());
    switch (e.code()) {
      case smi::Error::Code::no_such_device: return kExitNoSuchDevice;
      case smi::Error::Code::invalid_argument: return kExitBadArguments;
      case smi::Error::Code::read_failure: return kExitReadFailure;
    }
    return kExitReadFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipstack-smi: %s\n", e.what());
    return kExitReadFailure;
  }
}
