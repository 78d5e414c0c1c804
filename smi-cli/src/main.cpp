// hipstack-smi: command line over libhipstack-smi. Argument parsing and dispatch only.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hipstack/smi.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

#include "commands.hpp"
#include "daemon_source.hpp"
#include "fleet_source.hpp"
#include "local_daemon.hpp"
#include "help_examples.hpp"
#include "job_command.hpp"
#include "nvidia_smi_compat.hpp"
#include "rocm_smi_compat.hpp"
#include "remote_source.hpp"
#include "suggest.hpp"

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

// A -m name: a catalogue metric, or a group (`-m temperature`) standing for its members. Each name
// is added once, in the order given; false for a name that is neither.
bool expand_metric(const std::string& name, std::vector<std::string>& out) {
  const auto add = [&out](std::string_view metric) {
    if (std::find(out.begin(), out.end(), metric) == out.end()) out.emplace_back(metric);
  };
  if (smi::find_metric(name) != nullptr) {
    add(name);
    return true;
  }
  const smi::MetricGroup* group = smi::find_metric_group(name);
  if (group == nullptr) return false;
  for (const smi::MetricId id : group->members) add(smi::find_metric(id)->name);
  return true;
}

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) out.push_back("--" + name);
  }
  return out;
}

// After a parse error: the word the user most likely mistyped, with the closest known ones
// ("unknown command \"metirc\". Did you mean metric?"); empty when the error is not about an
// unknown word (CLI11's own message is then the clearest).
std::string unknown_word_hint(const CLI::App& app, int argc, char** argv) {
  const CLI::App* command = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view token = argv[i];
    if (token == "--") break;
    if (token.starts_with("--")) {
      const std::string name(token.substr(0, token.find('=')));
      const CLI::Option* option = command != nullptr ? command->get_option_no_throw(name) : nullptr;
      if (option == nullptr) option = app.get_option_no_throw(name);
      if (option == nullptr) {
        std::vector<std::string> known = long_option_names(app);
        if (command != nullptr) {
          const auto own = long_option_names(*command);
          known.insert(known.end(), own.begin(), own.end());
        }
        return fmt::format("unknown option {}.{}", name, did_you_mean(closest_words(name, known)));
      }
      if (option->get_items_expected_min() > 0 && token.find('=') == std::string_view::npos) ++i;  // its value
      continue;
    }
    if (token.starts_with("-")) {
      const CLI::Option* option = command != nullptr ? command->get_option_no_throw(std::string(token.substr(0, 2))) : nullptr;
      if (option == nullptr) option = app.get_option_no_throw(std::string(token.substr(0, 2)));
      if (option != nullptr && option->get_items_expected_min() > 0 && token.size() == 2) ++i;
      continue;
    }
    if (command != nullptr) continue;  // an argument of the command (capture OUT)
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == token) command = sub;
    }
    if (command == nullptr) {
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
      return fmt::format("unknown command \"{}\".{} Commands: {}.", token, did_you_mean(closest_words(token, names)),
                         fmt::join(names, ", "));
    }
  }
  return {};
}

// Where the default view's data comes from: this machine by name, or the capture read instead.
std::string origin_of(const smi::OpenOptions& open) {
  if (!open.sysfs_root.empty()) return "capture " + open.sysfs_root;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "host (name unknown)";
  return std::string("host ") + name;
}

// `event` over several hosts holds one stream and one thread per host.
constexpr std::size_t kMaxEventHosts = 256;

// The commands that read through a DeviceSource, and so also work against a daemon (--host).
bool works_remotely(const std::string& command) {
  for (const char* name : {"", "list", "static", "metric", "query", "ras", "health", "partition"}) {
    if (command == name) return true;
  }
  return false;
}

// Whether this run asks for particular GPU files or a particular NVML (options or the environment):
// those are read directly, never answered by the node's daemon.
bool chooses_what_to_read(const smi::OpenOptions& open) {
  if (!open.sysfs_root.empty() || !open.procfs_root.empty()) return true;
  for (const char* variable : {"HIPSTACK_SYSFS_ROOT", "HIPSTACK_PROCFS_ROOT", "HIPSTACK_DEVFS_ROOT", "HIPSTACK_NVML_LIBRARY"}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') return true;
  }
  return false;
}

// Output that could not be written (a full disk, a closed pipe) is a failure, named on stderr: a
// script must not take a cut-short answer for a complete one. Checked once, where the process ends.
int check_output(int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    const int error = errno;
    std::fprintf(stderr, "hipstack-smi: cannot write the output: %s\n", error != 0 ? std::strerror(error) : "write error");
    return code == kExitOk ? kExitReadFailure : code;
  }
  return code;
}

// Ends at once, whatever the build: a thread blocked in a read must not see the System go.
[[noreturn]] int exit_stuck(int code) {
  code = check_output(code);
  std::fflush(stderr);
  std::_Exit(code);
}

// System::open within `deadline` (discovery reads sysfs, where a read can hang); nothing when it did
// not finish in time. Its thread is then left blocked: the caller ends with exit_stuck.
std::optional<smi::System> open_within(const smi::OpenOptions& options, std::chrono::milliseconds deadline) {
  auto task = std::make_shared<std::packaged_task<smi::System()>>([options] { return smi::System::open(options); });
  auto opened = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (opened.wait_for(deadline) != std::future_status::ready) return std::nullopt;
  return opened.get();  // rethrows smi::Error
}

// The end of a command that opened the System: output flushed, then the process ends without
// running destructors and exit handlers. The kernel releases the GPU handles either way, and the
// vendor libraries' exit-time clean-up (NVML, the CUDA driver) costs 1-2 ms of a 33 ms cold run on
// an H100 (bench/nvidia.py). Sanitizer builds return normally (main checks the output) so that
// LeakSanitizer checks the CLI.
int exit_now(int code) {
#ifndef HIPSTACK_CLI_NORMAL_EXIT
  code = check_output(code);
  std::fflush(stderr);
  std::_Exit(code);
#endif
  return code;
}

// `--nvidia-smi --query-gpu=... --format=csv`: opened and ended as every other command.
int run_nvidia_smi(int argc, char** argv, int compat_flag) {
  NvidiaSmiRequest request;
  if (const auto error = parse_nvidia_smi_args(argc, argv, compat_flag, request)) return nvidia_smi_usage(*error);
  request.open.vendor_shutdown = false;
#ifdef HIPSTACK_CLI_NORMAL_EXIT
  request.open.vendor_shutdown = true;
#endif
  const std::optional<smi::System> system = open_within(request.open, LocalSource::kDefaultDeadline);
  if (!system) {
    std::fprintf(stderr, "hipstack-smi: finding the GPUs took longer than %lld ms: a read of the GPUs' files is stuck\n",
                 static_cast<long long>(LocalSource::kDefaultDeadline.count()));
    return exit_stuck(kExitReadFailure);
  }
  const LocalSource local(*system);
  const int code = run_nvidia_smi_query(local, request);
  return local.any_stuck() ? exit_stuck(code) : exit_now(code);
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--nvidia-smi") return run_nvidia_smi(argc, argv, i);
  }
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--rocm-smi") continue;
    std::vector<std::string> default_view_args;
    const int code = run_rocm_smi_compat(argc, argv, i, default_view_args);
    if (code != kRocmSmiDefaultView) return code;
    // `--rocm-smi` alone: rocm-smi's own answer is its summary; ours is the default view.
    std::vector<char*> args = {argv[0]};
    for (std::string& arg : default_view_args) args.push_back(arg.data());
    args.push_back(nullptr);
    return run(static_cast<int>(args.size()) - 1, args.data());
  }

  CLI::App app{"hipstack-smi: GPU identity, telemetry and topology for AMD and NVIDIA GPUs"};
  app.fallthrough();
  app.require_subcommand(0, 1);  // none: the default view (overview.cpp)
  app.set_version_flag("--version", "hipstack-smi " + std::string(smi::library_version()), "Print the version and exit");
  smi::OpenOptions open;
  CommonOptions common;
  std::vector<std::string> gpus;
  std::vector<std::string> metrics;
  bool json = false;
  bool csv = false;
  app.add_option("--sysfs-root", open.sysfs_root, "Read DIR in place of /sys (a recorded capture)")->type_name("DIR");
  app.add_option("--procfs-root", open.procfs_root, "Read DIR in place of /proc")->type_name("DIR");
  // One value per -g and -m (repeat or comma-separate): a following word is never taken as a device.
  app.add_option("-g,--gpu", gpus, "Devices by index, BDF or UUID, or all (repeat or comma-separate)")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
  app.add_option("-m,--metrics", metrics, "Only these metrics or groups (temperature, power, memory, clocks, ...; "
                                         "`hipstack-smi catalogue` lists both), comma-separated")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
  auto* json_flag = app.add_flag("--json", json, "Machine-readable JSON (schema hipstack-smi/v1)");
  app.add_flag("--csv", csv, "Machine-readable CSV")->excludes(json_flag);
  app.add_flag("-v,--verbose", common.verbose, "Say where each value came from and why backends are absent");
  app.add_flag("--show-unsupported", common.show_unsupported, "Also list metrics the device does not provide");
  unsigned read_deadline_ms = static_cast<unsigned>(LocalSource::kDefaultDeadline.count());
  app.add_option("--read-deadline-ms", read_deadline_ms,
                 "A GPU whose reads take longer is reported as stuck, the others still shown (every command that reads "
                 "GPUs; default 10000)")
      ->check(CLI::Range(100u, 3'600'000u));
  bool direct = false;
  app.add_flag("--direct", direct,
               "Read the GPUs in this process, even where this node's hipstack-smid could answer (read-only commands "
               "ask it by default: docs/cli.md, \"Answers from the local daemon\")");
  std::vector<std::string> host_options;
  std::string hostfile, tls_ca, tls_cert, tls_key;
  app.add_option("--host", host_options,
                 "Ask hipstack-smid instead of this machine: unix:///run/hipstack/smid.sock or HOST:PORT; several "
                 "(comma-separate or repeat): one table with a HOST column, all asked at once")
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
  app.add_option("--hostfile", hostfile, "Ask the hipstack-smid of every host in FILE (one HOST:PORT per line, # comments), "
                                         "as several --host")
      ->type_name("FILE");
  unsigned host_timeout_ms = 5000;
  app.add_option("--host-timeout-ms", host_timeout_ms,
                 "With --host/--hostfile: how long a host has to answer each request (connecting, then each call; "
                 "default 5000); over several hosts one that has not is named, asked nothing more, and the exit code is 9")
      ->check(CLI::Range(100u, 600'000u));
  app.add_option("--tls-ca", tls_ca, "With --host HOST:PORT: CA (PEM) that signed the daemon's certificate; TLS on")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", tls_cert, "With --tls-ca: client certificate (PEM) for mutual TLS")->check(CLI::ExistingFile);
  app.add_option("--tls-key", tls_key, "With --tls-cert: its private key (PEM)")->check(CLI::ExistingFile);

  // Taken before parsing (run() above); here so that --help, the man page and completions name them.
  bool rocm_smi_mode = false, nvidia_smi_mode = false;  // never set: run() took the command line already
  app.add_flag("--rocm-smi", rocm_smi_mode, "rocm-smi's options follow (--showtemp, --showuse, ...); alone: the default view");
  app.add_flag("--nvidia-smi", nvidia_smi_mode,
               "nvidia-smi's query options follow: --query-gpu=FIELDS --format=csv[,noheader][,nounits]");

  app.add_subcommand("list", "List GPUs");
  auto* static_facts = app.add_subcommand("static", "Identity and static facts (IDs, firmware, memory sizes, limits, DPM levels)");
  static_facts->add_flag("--nfd", common.nfd,
                         "The GPUs as Node Feature Discovery labels (NAME=VALUE lines of a local feature file)");
  auto* metric = app.add_subcommand("metric", "Live metrics (temperatures, power, clocks, use, memory, PCIe)");
  metric->add_flag("--pcie-bw", common.pcie_throughput, "Also measure PCIe throughput (amdgpu: blocks 1 s)");
  metric->add_option("--window-ms", common.window_ms,
                     "Measure the activity metrics (SM, tensor, DRAM active, link rates) over MS; default 1000 "
                     "when -m names one")
      ->check(CLI::Range(10u, 600000u))
      ->each([&common](const std::string&) { common.window_asked = true; });
  auto* process = app.add_subcommand("process", "Processes using the GPUs");
  ProcessOptions process_options;
  process->add_option("--interval-ms", process_options.interval_ms, "Measure engine busy over this interval (ms)")
      ->check(CLI::Range(0u, 60000u));
  auto* process_watch = process->add_option("-w,--watch", process_options.watch_s, "Watch: seconds between looks (default 1)")
                            ->check(CLI::Range(0.01, 3600.0));
  auto* process_rounds = process->add_option("-i,--iterations", process_options.iterations,
                                             "Watch: stop after N looks (0: run until interrupted)")
                             ->check(CLI::Range(0L, 1000000000L));
  auto* query = app.add_subcommand("query", "One row per GPU of the -m fields: index, name, uuid, bdf, any metric or group");
  QueryOptions query_options;
  query->add_flag("--no-header", query_options.no_header, "No header line (table and CSV)");
  query->add_flag("--no-units", query_options.no_units, "Values without units; CSV header names without [unit]");
  query->add_flag("--partitions", query_options.partitions,
                  "One row per partition (compute partition, MIG instance): partition_index, partition_id, partition_bdf and "
                  "partition metrics; a GPU's metrics are its own");
  auto* topology = app.add_subcommand("topology", "Links between GPUs as a matrix (XGMI/NVLink/PCIe path, NUMA node)");
  bool topology_list = false;
  topology->add_flag("--list", topology_list, "Every GPU pair with its link facts (type, hops, weight, bandwidth)");
  auto* monitor = app.add_subcommand("monitor", "Refreshing view of the main live metrics");
  double watch_s = 1.0;
  long iterations = 0;
  monitor->add_option("-w,--watch", watch_s, "Seconds between refreshes")->check(CLI::Range(0.01, 3600.0));
  monitor->add_option("-i,--iterations", iterations, "Stop after N refreshes (0: run until interrupted)")
      ->check(CLI::Range(0L, 1000000000L));
  auto* event = app.add_subcommand("event", "Follow throttling, memory errors, bad pages, partition changes, resets and "
                                           "GPUs coming and going; one line (or JSON object) per event");
  double event_watch_s = 1.0;
  long event_looks = 0;
  event->add_option("-w,--watch", event_watch_s, "Seconds between looks")->check(CLI::Range(0.01, 3600.0));
  event->add_option("-i,--iterations", event_looks, "Stop after N looks (0: run until interrupted)")
      ->check(CLI::Range(0L, 1000000000L));
  auto* health = app.add_subcommand("health", "Health verdict per GPU with the findings behind it (exit 1 unhealthy)");
  std::string health_policy;
  health->add_option("--config", health_policy, "Health thresholds file (key = value; docs/health.md)")
      ->check(CLI::ExistingFile);
  health->add_flag("--npd", common.npd,
                   "One line for Node Problem Detector's custom plugin (and the Slurm health check): exit 0 "
                   "healthy, 1 a GPU fails, 2 not every GPU could be checked");
  app.add_subcommand("ras", "RAS error counts per block, ECC totals, retired pages and the bad page threshold");
  app.add_subcommand("bad-pages", "Retired and pending memory pages");
  auto* partition = app.add_subcommand(
      "partition", "Compute/memory partition modes and the partitions (MIG instances) of each GPU; with "
                   "--compute-mode/--memory-mode, change them (AMD only, root, -g required)");
  ControlChange change;
  std::string power_cap_text, clock_range_text, fan_text;
  partition->add_option("--compute-mode", change.compute_mode, "Set the compute partition mode (SPX, DPX, TPX, QPX, CPX; any case)");
  partition->add_option("--memory-mode", change.memory_mode, "Request a memory partition mode (NPS1, NPS2, NPS4, NPS8; any case)");
  auto* set = app.add_subcommand("set", "Change power cap, performance level, power profile, clock range or fan (root, -g required)");
  set->add_option("--power-cap", power_cap_text, "Power cap in watts (within power1_cap_min..max)");
  set->add_option("--perf-level", change.perf_level, "Performance level (auto, low, high, manual, profile_peak, ...)");
  set->add_option("--profile", change.profile, "Power profile by name or number (COMPUTE, VIDEO, 5, ...)");
  set->add_option("--clock-range", clock_range_text, "Clock range DOMAIN:MIN-MAX in MHz (sclk or mclk), e.g. sclk:500-2100");
  set->add_option("--fan", fan_text, "Fan: auto, or a manual speed in percent (0..100)");
  auto* reset = app.add_subcommand("reset", "Reset GPUs (PCI function reset; root, -g required, refuses while in use)");
  for (CLI::App* sub : {partition, set, reset}) {
    sub->add_flag("--dry-run", change.dry_run, "Print what would be written where; write nothing");
    sub->add_flag("--force", change.force, "Go ahead although processes use the GPU (the driver may still refuse)");
    sub->add_option("--settle-timeout-ms", change.settle_timeout_ms,
                    "How long to wait for the driver to re-create partitions (default 30000)")
        ->check(CLI::Range(0u, 600000u));
  }
  auto* catalogue = app.add_subcommand("catalogue", "The metric catalogue (ids, names, units, help)");
  bool markdown = false;
  catalogue->add_flag("--markdown", markdown, "As the Markdown table of docs/metrics.md");
  auto* capture = app.add_subcommand("capture", "Record the sysfs files hipstack reads into a folder");
  std::string capture_dir;
  bool capture_processes = false;
  capture->add_option("OUT", capture_dir, "Empty folder to write OUT/sys (and OUT/proc) into")->required();
  capture->add_flag("--processes", capture_processes, "Also record GPU processes (KFD and DRM fdinfo)");
  capture->add_flag("--pcie-bw", common.pcie_throughput, "Also record pcie_bw (blocks 1 s per GPU)");
  auto* job = app.add_subcommand("job", "Job accounting by hipstack-smid: start and stop a job (a batch system's prolog and "
                                       "epilog), show its use of each GPU, list jobs (docs/jobs.md)");
  job->require_subcommand(1);
  JobOptions job_options;
  auto* job_start = job->add_subcommand("start", "Start counting the -g GPUs' samples (every GPU when none) into job --id "
                                                 "(root or the daemon's admin group)");
  job_start->add_option("--id", job_options.id, "Job id: letters, digits and ._-+:@ (Slurm's SLURM_JOB_ID)")->required();
  job_start->add_option("--user", job_options.user, "Whose job (Slurm's SLURM_JOB_USER)");
  auto* job_stop = job->add_subcommand("stop", "Stop job --id and print its summary (root or the daemon's admin group)");
  job_stop->add_option("--id", job_options.id, "Job id")->required();
  auto* job_show = job->add_subcommand("show", "A job's use of each GPU: energy, power, busy, VRAM, throttling, errors, health");
  job_show->add_option("ID", job_options.id, "Job id")->required();
  auto* job_list = job->add_subcommand("list", "Jobs started since --since, newest first, with their energy and busy");
  job_list->add_option("--since", job_options.since,
                       "A duration back from now (30m, 12h, 7d; default 7d), a UTC date or time (2026-11-29, "
                       "2026-11-29T08:00:00Z) or @UNIX_SECONDS");
  job_list->add_option("--limit", job_options.limit, "At most this many jobs (default 100, at most 1000)")->check(CLI::Range(1u, 1000u));
  app.add_subcommand("version", "Library version and backends");
  app.footer(help_examples(""));
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) sub->footer(help_examples(sub->get_name()));

  if (const auto code = cli_docs::answer(argc, argv, app, smi_program_docs, smi::library_version())) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (const std::string hint = unknown_word_hint(app, argc, argv); !hint.empty()) {
      std::fprintf(stderr, "hipstack-smi: %s\n", hint.c_str());
      return kExitBadArguments;
    }
    app.exit(e);
    return kExitBadArguments;
  }
  common.format = json ? Format::json : csv ? Format::csv : Format::table;
  process_options.watch = process_watch->count() > 0 || process_rounds->count() > 0;
  common.gpus = split_list(gpus);
  const std::string command = app.get_subcommands().empty() ? std::string() : app.get_subcommands().front()->get_name();
  for (const std::string& name : split_list(metrics)) {
    if (command == "query" && is_query_field(name)) {
      if (std::find(common.metrics.begin(), common.metrics.end(), name) == common.metrics.end()) common.metrics.push_back(name);
      continue;
    }
    if (smi::find_metric(name) != nullptr) common.named_metrics.push_back(name);
    if (!expand_metric(name, common.metrics)) {
      std::vector<std::string> names;
      if (command == "query") names.assign(query_fields().begin(), query_fields().end());
      for (const smi::MetricGroup& group : smi::metric_groups()) names.emplace_back(group.name);
      for (const smi::MetricInfo& info : smi::catalogue()) names.emplace_back(info.name);
      std::fprintf(stderr, "hipstack-smi: unknown metric or group \"%s\".%s (`hipstack-smi catalogue` lists them all)\n",
                   name.c_str(), did_you_mean(closest_words(name, names, 6)).c_str());
      return kExitBadArguments;
    }
  }

  change.reset = command == "reset";
  if (!power_cap_text.empty()) {
    try {
      std::size_t used = 0;
      change.power_cap_w = std::stod(power_cap_text, &used);
      if (used != power_cap_text.size()) throw std::invalid_argument(power_cap_text);
    } catch (const std::exception&) {
      std::fprintf(stderr, "hipstack-smi: --power-cap \"%s\": expected a number of watts\n", power_cap_text.c_str());
      return kExitBadArguments;
    }
  }
  std::string parse_error;
  if (!clock_range_text.empty() && !(change.clock_range = parse_clock_range(clock_range_text, parse_error))) {
    std::fprintf(stderr, "hipstack-smi: %s\n", parse_error.c_str());
    return kExitBadArguments;
  }
  if (!fan_text.empty() && !(change.fan = parse_fan(fan_text, parse_error))) {
    std::fprintf(stderr, "hipstack-smi: %s\n", parse_error.c_str());
    return kExitBadArguments;
  }
  if (command == "set" && !change.any()) {
    std::fprintf(stderr, "hipstack-smi: set: give at least one of --power-cap, --perf-level, --profile, --clock-range, --fan\n");
    return kExitBadArguments;
  }
  if (command == "partition" && !change.any() && (change.dry_run || change.force)) {
    std::fprintf(stderr, "hipstack-smi: partition: --dry-run and --force go with --compute-mode or --memory-mode\n");
    return kExitBadArguments;
  }
  // Every change is logged to stderr as it is made (refusals too, with -v): who, what, where.
  open.audit = [&common](const smi::AuditRecord& r) {
    if (r.path.empty() && !common.verbose) return;
    std::fprintf(stderr, "hipstack-smi: audit: uid=%u pid=%d GPU %u %s: %s%s%s%s: %s\n", r.uid, r.pid, r.device, r.bdf.c_str(),
                 r.action.c_str(), r.path.empty() ? "" : ": write \"", r.path.empty() ? "" : (r.value + "\" to ").c_str(),
                 r.path.c_str(), r.result.c_str());
  };
  // Jobs are the daemon's: asked of the node's own (its unix socket) unless --host names another.
  if (command == "job") {
    job_options.action = job->get_subcommands().front()->get_name();
    std::string since_error;
    if (job_options.action == "list" && !parse_since(job_options.since, std::chrono::system_clock::now(), since_error)) {
      std::fprintf(stderr, "hipstack-smi: %s\n", since_error.c_str());
      return kExitBadArguments;
    }
    if (job_options.action != "start" && !common.gpus.empty()) {
      std::fprintf(stderr, "hipstack-smi: job %s: -g goes with job start only\n", job_options.action.c_str());
      return kExitBadArguments;
    }
    const std::vector<std::string> hosts =
        host_options.empty() && hostfile.empty() ? std::vector<std::string>{"unix:" + local_daemon_socket()} : fleet_hosts(host_options, hostfile);
    if (hosts.size() != 1 || !hostfile.empty()) {
      std::fprintf(stderr, "hipstack-smi: job asks one daemon: give one --host\n");
      return kExitBadArguments;
    }
    if (tls_cert.empty() != tls_key.empty() || (!tls_cert.empty() && tls_ca.empty())) {
      std::fprintf(stderr, "hipstack-smi: --tls-cert and --tls-key go together, and need --tls-ca\n");
      return kExitBadArguments;
    }
    const RemoteOptions remote{hosts.front(), tls_ca, tls_cert, tls_key, host_timeout_ms, {}};
    return run_on_host(remote, command, common, query_options, health_policy, job_options, argv);
  }
  if (!host_options.empty() || !hostfile.empty()) {
    const std::vector<std::string> hosts = fleet_hosts(host_options, hostfile);
    const bool several = hosts.size() > 1 || !hostfile.empty();
    if ((!works_remotely(command) && command != "event") || change.any()) {
      std::fprintf(stderr, "hipstack-smi: %s%s is not available with --host (list, static, metric, query, ras, health, "
                   "partition and event are)\n", command.c_str(), change.any() ? " with a change" : "");
      return kExitBadArguments;
    }
    // The daemon looks at its own samples every 250 ms and streams what changed (docs/events.md).
    if (command == "event" && (event->get_option("-w")->count() > 0 || event->get_option("-i")->count() > 0)) {
      std::fprintf(stderr, "hipstack-smi: event with --host streams the daemon's events as they come: -w and -i do not apply\n");
      return kExitBadArguments;
    }
    // One stream and thread per host, all at once: bounded.
    if (command == "event" && hosts.size() > kMaxEventHosts) {
      std::fprintf(stderr, "hipstack-smi: event follows at most %zu hosts at once (%zu given)\n", kMaxEventHosts, hosts.size());
      return kExitBadArguments;
    }
    if (!open.sysfs_root.empty() || !open.procfs_root.empty()) {
      std::fprintf(stderr, "hipstack-smi: --host reads the daemon's GPUs: --sysfs-root and --procfs-root do not apply\n");
      return kExitBadArguments;
    }
    if (tls_cert.empty() != tls_key.empty() || (!tls_cert.empty() && tls_ca.empty())) {
      std::fprintf(stderr, "hipstack-smi: --tls-cert and --tls-key go together, and need --tls-ca\n");
      return kExitBadArguments;
    }
    RemoteOptions remote{hosts.front(), tls_ca, tls_cert, tls_key, host_timeout_ms, {}};
    if (several) remote.fleet = hosts;
    return run_on_host(remote, command, common, query_options, health_policy, job_options, argv);
  }
  // The node's daemon answers read-only commands from its latest samples (no GPU opened, no NVML
  // start-up), unless the command asks for something only a read of its own gives: files or an NVML
  // of its choosing, a health policy, a PCIe or window measurement, the per-metric costs, or the
  // default view (its process list is read here: the daemon does not serve processes).
  const bool needs_own_read = direct || command.empty() || chooses_what_to_read(open) || !health_policy.empty() ||
                              common.pcie_throughput || common.window_asked || (command == "metric" && common.verbose);
  if (works_remotely(command) && !change.any() && !needs_own_read) {
    const std::string socket = local_daemon_socket();
    std::string why_not;
    if (const auto source = connect_local_daemon(socket, why_not)) {
      if (common.verbose) std::fprintf(stderr, "hipstack-smi: answered by hipstack-smid at unix:%s (--direct reads the GPUs)\n", socket.c_str());
      return run_through_daemon(*source, command, common, query_options, health_policy, "hipstack-smid at unix:" + socket);
    }
    if (common.verbose) std::fprintf(stderr, "hipstack-smi: reading the GPUs itself: %s\n", why_not.c_str());
  }
  if (command == "catalogue") return run_catalogue(common, markdown);
  if (command == "event") return run_event(open, common, event_watch_s, event_looks);
  if (command == "capture") {
    return run_capture(open.sysfs_root, open.procfs_root, capture_dir, capture_processes, common.pcie_throughput);
  }
  // A one-shot process: the kernel releases NVML's handles at exit, sooner than nvmlShutdown would
  // (measured: 1.5-3 ms of a 33 ms cold run on an H100). `event`, `monitor` and `process -w` run on and keep it.
#ifdef HIPSTACK_CLI_NORMAL_EXIT
  open.vendor_shutdown = true;  // sanitizer builds clean up, so LeakSanitizer reports only real leaks
#else
  open.vendor_shutdown = command == "event" || command == "monitor" || (command == "process" && process_options.watch);
#endif
  const std::chrono::milliseconds read_deadline(read_deadline_ms);
  std::optional<smi::System> system;
  try {
    system = open_within(open, read_deadline);
  } catch (const smi::Error& e) {
    if (command == "version") return run_version(nullptr, common);
    throw;
  }
  if (!system) {
    std::fprintf(stderr, "hipstack-smi: finding the GPUs took longer than %u ms: a read of the GPUs' files is stuck "
                         "(a hung driver? see dmesg)\n", read_deadline_ms);
    return exit_stuck(kExitReadFailure);
  }
  if (common.verbose) {
    for (const smi::BackendStatus& b : system->backends()) {
      std::fprintf(stderr, "backend %s: %s (%s)\n", b.name.c_str(), b.present ? "present" : "absent", b.reason.c_str());
    }
  }
  // No GPU at all: every command that reads GPUs says why, naming each backend's reason (no
  // driver, nothing under --sysfs-root, no permission), and exits 3, so that a script never takes
  // an empty table for a healthy node. `version` answers, and `event` waits for GPUs to appear.
  if (system->devices().empty() && command != "version" && command != "event") {
    std::string why;
    for (const smi::BackendStatus& b : system->backends()) {
      why += fmt::format("\n  {}: {}", b.name, b.present ? "loaded, but it lists no GPU" : b.reason);
    }
    std::fprintf(stderr, "hipstack-smi: no GPUs found:%s\n", why.c_str());
    return exit_now(kExitNoSuchDevice);
  }
  const LocalSource local(*system, read_deadline);
  const auto dispatch = [&]() -> int {
    if (command.empty()) return run_overview(local, &local, common, origin_of(open));
    if (command == "list") return run_list(local, common);
    if (command == "static") return run_static(local, common);
    if (command == "metric") return run_metric(local, common);
    if (command == "query") return run_query(local, common, query_options);
    if (command == "process") return run_process(local, common, process_options);
    if (command == "topology") return run_topology(local, common, topology_list);
    if (command == "monitor") return run_monitor(local, common, watch_s, iterations);
    if (command == "health") return run_health(local, common, health_policy);
    if (command == "ras") return run_ras(local, common);
    if (command == "bad-pages") return run_bad_pages(local, common);
    if (command == "partition" && change.any()) return run_control(*system, common, command, change);
    if (command == "partition") return run_partition(local, common);
    if (command == "set" || command == "reset") return run_control(*system, common, command, change);
    return run_version(&*system, common);
  };
  const int code = dispatch();
  // A thread may still sit in a stuck read and use the System: end without destroying it.
  return local.any_stuck() ? exit_stuck(code) : exit_now(code);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return check_output(run(argc, argv));
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
