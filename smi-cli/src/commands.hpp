// hipstack-smi subcommands. Each takes the opened System and the parsed common options, writes its
// output to stdout and returns the process exit code (docs/cli.md lists them).
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "render.hpp"

namespace hipstack::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitReadFailure = 1,   // a device could not be read at all
  kExitBadArguments = 2,
  kExitNoSuchDevice = 3,
  // `health` only (as issue and docs/cli.md define): 1 unhealthy, 2 could not check.
  kExitUnhealthy = 1,
  kExitCannotCheck = 2,
};

struct CommonOptions {
  Format format = Format::table;
  std::vector<std::string> gpus;        // -g selectors; empty = all devices
  std::vector<std::string> metrics;     // --metrics names; empty = all
  bool show_unsupported = false;
  bool pcie_throughput = false;
  bool verbose = false;
};

// Resolves -g selectors (throws smi::Error for an unknown one); all devices when none given.
std::vector<std::uint32_t> selected_devices(const smi::System& system, const CommonOptions& options);

int run_list(const smi::System& system, const CommonOptions& options);
int run_static(const smi::System& system, const CommonOptions& options);
int run_metric(const smi::System& system, const CommonOptions& options);
int run_process(const smi::System& system, const CommonOptions& options, unsigned interval_ms);
int run_topology(const smi::System& system, const CommonOptions& options);
int run_monitor(const smi::System& system, const CommonOptions& options, double interval_s, long iterations);
int run_health(const smi::System& system, const CommonOptions& options, const std::string& policy_file);
// RAS counts, retired pages and ECC totals as a sampled view (like `metric`, restricted to them).
int run_ras(const smi::System& system, const CommonOptions& options);
int run_bad_pages(const smi::System& system, const CommonOptions& options);
// Compute and memory partition modes and each partition's resources (read-only).
int run_partition(const smi::System& system, const CommonOptions& options);
int run_catalogue(const CommonOptions& options, bool markdown);
// Copies what the library reads from the live /sys (or --sysfs-root) into OUT/sys, flat.
int run_capture(const std::string& sysfs_root, const std::string& procfs_root, const std::string& out_dir,
                bool with_processes, bool pcie_bw);
int run_version(const smi::System* system, const CommonOptions& options);

}  // namespace hipstack::cli
