// hipstack-smi subcommands. Each takes the DeviceSource it reads through (the local System, the
// node's daemon or a remote one; named `system`) and the parsed common options, writes its
// output to stdout and returns the process exit code (docs/cli.md lists them).
#pragma once

#include <hipstack/events.hpp>
#include <hipstack/smi.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "device_source.hpp"
#include "render.hpp"

namespace hipstack::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitReadFailure = 1,   // a device could not be read at all
  kExitBadArguments = 2,
  kExitNoSuchDevice = 3,
  // Changes (partition --compute-mode/--memory-mode, set, reset):
  kExitRefused = 4,    // refused: unsafe state (busy, reset, VF), not supported, or the driver said no
  kExitNeedsRoot = 5,  // not privileged (or the kernel said EACCES/EPERM); nothing was written
  kExitPending = 6,    // written; takes effect after the printed next step (NPS: driver reload)
  kExitFailed = 7,     // written, but the driver did not reach the new state (timed out, later write failed)
  // `health` (docs/cli.md): 1 unhealthy (a check failed, or a GPU cannot be read), 8 a GPU's
  // verdict is UNKNOWN (none of its checks could be evaluated).
  kExitUnhealthy = 1,
  kExitCannotCheck = 8,
  // --host with several hosts (or --hostfile): a host did not answer, or stopped answering; the
  // others' GPUs are shown. Takes precedence over every other code but 2 (docs/cli.md).
  kExitHostUnreachable = 9,
};

struct CommonOptions {
  Format format = Format::table;
  std::vector<std::string> gpus;        // -g selectors; empty = all devices
  std::vector<std::string> metrics;     // --metrics names, groups expanded; empty = all
  std::vector<std::string> named_metrics;  // those named one by one, not through a group
  bool show_unsupported = false;
  bool pcie_throughput = false;
  // WINDOW-kind metrics (`metric -m activity`, sm_active, ...): asked for when -m names one or
  // --window-ms is given; averages over window_ms.
  unsigned window_ms = 1000;
  bool window_asked = false;  // --window-ms given
  bool verbose = false;
  // health --npd: Node Problem Detector's custom-plugin contract (one line; exit 0 OK, 1 problem,
  // 2 unknown), which the Slurm health check uses too (docs/health.md, "Acting on health").
  bool npd = false;
  // static --nfd: Node Feature Discovery labels (node_labels.cpp).
  bool nfd = false;
};

// Resolves -g selectors (throws smi::Error for an unknown one); all devices when none given.
std::vector<std::uint32_t> selected_devices(const DeviceSource& source, const CommonOptions& options);
std::vector<std::uint32_t> selected_devices(const smi::System& system, const CommonOptions& options);
// Whether `partition` shows partition P of DEVICE: every partition, unless -g names partitions of it
// by their own BDF or id (`-g GPU-.../3`) and no selector names the device itself.
bool partition_selected(const smi::DeviceSummary& device, const smi::Partition& p,
                        const std::vector<smi::Partition>& partitions, const CommonOptions& options);
// The end of a command whose output lists the selected GPUs: a GPU that could not be read (a read
// that hung, a fault) is named on stderr and makes the exit code kExitReadFailure.
int finish_with_faults(const DeviceSource& system, const std::vector<std::uint32_t>& selected);

// How the outputs name a source's GPU (source_render.cpp): its host first when the source spans
// several (`--host a,b`: a "host" key, a HOST column, "host a  GPU 0 ..." headings); exactly as for
// one machine otherwise. `summary` is devices()[device], passed to spare a copy of the list.
Json device_json(const DeviceSource& source, std::uint32_t device, const smi::DeviceSummary& summary);
std::string device_heading(const DeviceSource& source, std::uint32_t device, const smi::DeviceSummary& summary,
                           std::string_view extra = {});
std::vector<std::string> with_host(const DeviceSource& source, std::uint32_t device, std::vector<std::string> cells);
std::vector<std::string> with_host_title(const DeviceSource& source, std::vector<std::string> header, std::string_view title);
std::string csv_header(const DeviceSource& source, std::string_view header);  // "host," first over several hosts
std::string fault_lines(const DeviceSource& source, const std::vector<smi::DeviceSummary>& devices,
                        const std::vector<std::uint32_t>& selected);
// Prints a JSON document; one over several hosts also says which answered ("hosts").
void print_json(const DeviceSource& source, Json doc);

// hipstack-smi with no command: a header, one row per GPU in 80 columns, then the processes (local
// only: `local` is null with --host). origin names where the data comes from ("host node1").
int run_overview(const DeviceSource& source, const LocalSource* local, const CommonOptions& options,
                 const std::string& origin);
struct QueryOptions {
  bool no_header = false;   // CSV and table: no header line
  bool no_units = false;    // table: values without units; CSV header: names without "[unit]"
  bool partitions = false;  // one row per partition (compute partition, MIG instance) instead of per GPU
};
// `query -m FIELDS`: one row per GPU (or partition); fields are query fields (query_fields()),
// metrics or groups.
int run_query(const DeviceSource& source, const CommonOptions& options, const QueryOptions& query);
// The fields query knows besides the catalogue: the GPU's (index, vendor, backend, bdf, uuid, name)
// and, with --partitions, the partition's (partition_index, partition_id, partition_bdf).
std::span<const std::string_view> query_fields();
bool is_query_field(std::string_view name);
int run_list(const DeviceSource& system, const CommonOptions& options);
int run_static(const DeviceSource& system, const CommonOptions& options);
int run_metric(const DeviceSource& system, const CommonOptions& options);
struct ProcessOptions {
  unsigned interval_ms = 0;  // engine busy measured over this interval (0: since the previous look)
  bool watch = false;        // -w or -i given: a look every watch_s seconds
  double watch_s = 1.0;
  long iterations = 0;       // 0: until interrupted
};
int run_process(const LocalSource& system, const CommonOptions& options, const ProcessOptions& process);
// A matrix of the closest link between each pair of GPUs with a legend; as_list: every pair's facts.
int run_topology(const LocalSource& system, const CommonOptions& options, bool as_list);
int run_monitor(const DeviceSource& system, const CommonOptions& options, double interval_s, long iterations);
int run_health(const DeviceSource& system, const CommonOptions& options, const std::string& policy_file);
// static --nfd: `NAME=VALUE` lines of a Node Feature Discovery local feature file (--json: a map).
int run_node_labels(const DeviceSource& system, const CommonOptions& options);
// RAS counts, retired pages and ECC totals as a sampled view (like `metric`, restricted to them).
int run_ras(const DeviceSource& system, const CommonOptions& options);
int run_bad_pages(const LocalSource& system, const CommonOptions& options);
// Compute and memory partition modes and each partition's resources (read-only).
int run_partition(const DeviceSource& system, const CommonOptions& options);
// Partition modes and partitions of the given devices, as in `partition --json`.
Json partition_json(const DeviceSource& system, const std::vector<std::uint32_t>& devices);

struct ClockRange {
  smi::ClockDomain domain = smi::ClockDomain::graphics;
  double min_mhz = 0;
  double max_mhz = 0;
};
// What one invocation asks to change; every field set is applied to every -g device in this order.
struct ControlChange {
  std::string compute_mode;
  std::string memory_mode;
  std::optional<double> power_cap_w;
  std::string perf_level;
  std::string profile;
  std::optional<ClockRange> clock_range;
  std::optional<smi::FanSetting> fan;
  bool reset = false;
  bool dry_run = false;
  bool force = false;
  unsigned settle_timeout_ms = 30000;
  [[nodiscard]] bool any() const {
    return !compute_mode.empty() || !memory_mode.empty() || power_cap_w || !perf_level.empty() || !profile.empty() ||
           clock_range || fan || reset;
  }
};
// -g selection for changes: required ("all" for every device); throws smi::Error(invalid_argument).
std::vector<std::uint32_t> target_devices(const smi::System& system, const CommonOptions& options);
int run_control(smi::System& system, const CommonOptions& options, const std::string& command, const ControlChange& change);
std::optional<ClockRange> parse_clock_range(const std::string& text, std::string& error);
std::optional<smi::FanSetting> parse_fan(const std::string& text, std::string& error);
int run_catalogue(const CommonOptions& options, bool markdown);
// Prints one line (or JSON object) per change seen between looks every interval_s seconds;
// `looks` looks in all (0: until interrupted). Re-opens the System at each look.
int run_event(const smi::OpenOptions& open, const CommonOptions& options, double interval_s, long looks);
// One event as `event` prints it (a line, a JSON object or a CSV row), found at `when`; the CSV
// header first. hipstack-smi-remote prints a daemon's WatchEvents with these.
// `host` (several hosts' streams, `--host a,b event`): named first on each event, as the other
// commands name it (a "host" key, a host column, "host H  " before the line).
// Before the first event, tables get one line on stderr saying what is watched, `watched` saying
// how ("every 1 s", "through hipstack-smid at HOST"): a quiet screen then reads as waiting, not as
// a hang. JSON gets nothing (a stream of objects), CSV its header.
void print_event_header(const CommonOptions& options, std::string_view watched, bool hosts = false);
void print_event(const smi::Event& e, const CommonOptions& options, std::chrono::system_clock::time_point when,
                 std::string_view host = {});
// Copies what the library reads from the live /sys (or --sysfs-root) into OUT/sys, flat.
int run_capture(const std::string& sysfs_root, const std::string& procfs_root, const std::string& out_dir,
                bool with_processes, bool pcie_bw);
int run_version(const smi::System* system, const CommonOptions& options);

}  // namespace hipstack::cli
