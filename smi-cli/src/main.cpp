// hipstack-smi: command line over libhipstack-smi. Argument parsing and dispatch only.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hipstack/smi.hpp>

#include <signal.h>
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
#include "source_commands.hpp"
#include "fleet_source.hpp"
#include "help_format.hpp"
#include "text_layout.hpp"
#include "local_daemon.hpp"
#include "command_table.hpp"
#include "errors_command.hpp"
#include "job_command.hpp"
#include "error_records_command.hpp"
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

// Whether a command's System shuts its vendor library down when it goes: a one-shot process leaves
// that to the kernel at exit, sooner than nvmlShutdown would (measured: 1.5-3 ms of a 33 ms cold run
// on an H100); one that runs on (`event`, `monitor`, `process -w`) shuts it down, and so do sanitizer
// builds, so that LeakSanitizer reports only real leaks.
bool vendor_shutdown_for(bool runs_on) {
#ifdef HIPSTACK_CLI_NORMAL_EXIT
  static_cast<void>(runs_on);
  return true;
#else
  return runs_on;
#endif
}

// `--nvidia-smi ...`: opened and ended as every other command.
int run_nvidia_smi(int argc, char** argv, int compat_flag) {
  NvidiaSmiRequest request;
  if (const auto refusal = parse_nvidia_smi_args(argc, argv, compat_flag, request)) return refuse_nvidia_smi(*refusal);
  if (!nvidia_smi_needs_gpus(request)) return run_nvidia_smi_help(request);
  if (request.loop) {
    // A loop ends on SIGINT or SIGTERM, taken with sigtimedwait between rounds: blocked here,
    // before any thread starts, so that every thread inherits the mask and none is killed.
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  }
  // As `metric`: the node's hipstack-smid answers from its latest samples, unless the request
  // reads processes, chooses its files or NVML, or says --direct.
  if (!request.direct && !chooses_what_to_read(request.open) && !nvidia_smi_reads_processes(request)) {
    std::string why_not;
    if (const auto daemon = connect_local_daemon(local_daemon_socket(), why_not)) {
      try {
        return exit_now(run_nvidia_smi_request(*daemon, nullptr, request));
      } catch (const smi::Error& e) {
        std::fprintf(stderr, "hipstack-smi: hipstack-smid at unix:%s failed: %s (--direct reads the GPUs)\n",
                     local_daemon_socket().c_str(), e.what());
        return exit_now(kExitReadFailure);
      }
    }
  }
  request.open.vendor_shutdown = vendor_shutdown_for(false);
  const std::optional<smi::System> system = open_within(request.open, LocalSource::kDefaultDeadline);
  if (!system) {
    std::fprintf(stderr, "hipstack-smi: finding the GPUs took longer than %lld ms: a read of the GPUs' files is stuck\n",
                 static_cast<long long>(LocalSource::kDefaultDeadline.count()));
    return exit_stuck(kExitReadFailure);
  }
  const LocalSource local(*system);
  const int code = run_nvidia_smi_request(local, &local, request);
  return local.any_stuck() ? exit_stuck(code) : exit_now(code);
}

// Everything the command line says, parsed: run() fills it, the steps below read it.
struct Invocation {
  smi::OpenOptions open;
  CommonOptions common;
  std::string command;  // "" for the default view
  std::vector<std::string> gpus, metrics;
  bool json = false, csv = false, direct = false;
  unsigned read_deadline_ms = static_cast<unsigned>(LocalSource::kDefaultDeadline.count());
  std::vector<std::string> hosts;
  std::string hostfile, tls_ca, tls_cert, tls_key;
  unsigned host_timeout_ms = 5000;
  bool rocm_smi_mode = false, nvidia_smi_mode = false;  // never set: run() took the command line already
  ProcessOptions process;
  QueryOptions query;
  bool topology_list = false;
  double watch_s = 1.0;
  long iterations = 0;
  double event_watch_s = 1.0;
  long event_looks = 0;
  bool event_paced = false;  // -w or -i given to event
  std::string health_policy;
  ControlChange change;
  std::string power_cap_text, clock_range_text, fan_text;
  bool markdown = false;
  std::string capture_dir;
  bool capture_processes = false;
  JobOptions job;
  ErrorListOptions errors;
  CperOptions cper;
};

// A command of command_table.cpp, its summary from there.
CLI::App* add_command(CLI::App& app, std::string_view name) {
  return app.add_subcommand(std::string(name), std::string(find_command(name)->summary));
}

void define_global_options(CLI::App& app, Invocation& in) {
  app.add_option("--sysfs-root", in.open.sysfs_root, "Read DIR in place of /sys (a recorded capture)")->type_name("DIR");
  app.add_option("--procfs-root", in.open.procfs_root, "Read DIR in place of /proc")->type_name("DIR");
  // One value per -g and -m (repeat or comma-separate): a following word is never taken as a device.
  app.add_option("-g,--gpu", in.gpus, "Devices by index, BDF or UUID, or all (repeat or comma-separate)")
      ->expected(1)->take_all()->allow_extra_args(false);
  app.add_option("-m,--metrics", in.metrics, "Only these metrics or groups (temperature, power, memory, clocks, ...; "
                                            "`hipstack-smi catalogue` lists both), comma-separated")
      ->expected(1)->take_all()->allow_extra_args(false);
  auto* json_flag = app.add_flag("--json", in.json, "Machine-readable JSON (schema hipstack-smi/v1)");
  app.add_flag("--csv", in.csv, "Machine-readable CSV")->excludes(json_flag);
  app.add_flag("-v,--verbose", in.common.verbose, "Say where each value came from and why backends are absent");
  app.add_flag("--show-unsupported", in.common.show_unsupported, "Also list metrics the device does not provide");
  app.add_option("--read-deadline-ms", in.read_deadline_ms,
                 "A GPU whose reads take longer is reported as stuck, the others still shown (every command that reads "
                 "GPUs; default 10000)")
      ->check(CLI::Range(100u, 3'600'000u));
  app.add_flag("--direct", in.direct,
               "Read the GPUs in this process, even where this node's hipstack-smid could answer (read-only commands "
               "ask it by default: docs/cli.md, \"Answers from the local daemon\")");
  app.add_option("--host", in.hosts,
                 "Ask hipstack-smid instead of this machine: unix:///run/hipstack/smid.sock or HOST:PORT; several "
                 "(comma-separate or repeat): one table with a HOST column, all asked at once")
      ->expected(1)->take_all()->allow_extra_args(false);
  app.add_option("--hostfile", in.hostfile, "Ask the hipstack-smid of every host in FILE (one HOST:PORT per line, # comments), "
                                            "as several --host")
      ->type_name("FILE");
  app.add_option("--host-timeout-ms", in.host_timeout_ms,
                 "With --host/--hostfile: each host's time for the whole command (connecting and every call draw on it; "
                 "default 5000); nothing is asked after 3 times this; over several hosts one that has not answered is "
                 "named, asked nothing more, and the exit code is 9")
      ->check(CLI::Range(100u, 600'000u));
  app.add_option("--tls-ca", in.tls_ca, "With --host HOST:PORT: CA (PEM) that signed the daemon's certificate; TLS on")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", in.tls_cert, "With --tls-ca: client certificate (PEM) for mutual TLS")->check(CLI::ExistingFile);
  app.add_option("--tls-key", in.tls_key, "With --tls-cert: its private key (PEM)")->check(CLI::ExistingFile);
  // Taken before parsing (run() below); here so that --help, the man page and completions name them.
  app.add_flag("--rocm-smi", in.rocm_smi_mode, "rocm-smi's options follow (--showtemp, --showuse, ...); alone: the default view")
      ->group("Compatibility (instead of a command)");
  app.add_flag("--nvidia-smi", in.nvidia_smi_mode,
               "nvidia-smi's command line follows: --query-gpu=FIELDS, --query-compute-apps=FIELDS, -L, --help-query-gpu; -i, -f, -l, -lms, --format=csv[,noheader][,nounits]")
      ->group("Compatibility (instead of a command)");
}

// -w/-i of a command that looks again and again (process, monitor, event).
void add_pacing(CLI::App* command, double& watch_s, long& looks, const char* watch_help, const char* looks_help) {
  command->add_option("-w,--watch", watch_s, watch_help)->check(CLI::Range(0.01, 3600.0));
  command->add_option("-i,--iterations", looks, looks_help)->check(CLI::Range(0L, 1000000000L));
}

void define_read_commands(CLI::App& app, Invocation& in) {
  add_command(app, "list");
  add_command(app, "static")->add_flag("--nfd", in.common.nfd,
                                       "The GPUs as Node Feature Discovery labels (NAME=VALUE lines of a local feature file)");
  auto* metric = add_command(app, "metric");
  metric->add_flag("--pcie-bw", in.common.pcie_throughput, "Also measure PCIe throughput (amdgpu: blocks 1 s)");
  metric->add_option("--window-ms", in.common.window_ms,
                     "Measure the activity metrics (SM, tensor, DRAM active, link rates) over MS; default 1000 "
                     "when -m names one")
      ->check(CLI::Range(10u, 600000u))
      ->each([&in](const std::string&) { in.common.window_asked = true; });
  auto* process = add_command(app, "process");
  process->add_option("--interval-ms", in.process.interval_ms, "Measure engine busy over this interval (ms)")
      ->check(CLI::Range(0u, 60000u));
  add_pacing(process, in.process.watch_s, in.process.iterations, "Watch: seconds between looks (default 1)",
             "Watch: stop after N looks (0: run until interrupted)");
  auto* query = add_command(app, "query");
  query->add_flag("--no-header", in.query.no_header, "No header line (table and CSV)");
  query->add_flag("--no-units", in.query.no_units, "Values without units; CSV header names without [unit]");
  query->add_flag("--partitions", in.query.partitions,
                  "One row per partition (compute partition, MIG instance): partition_index, partition_id, partition_bdf and "
                  "partition metrics; a GPU's metrics are its own");
  add_command(app, "topology")->add_flag("--list", in.topology_list, "Every GPU pair with its link facts (type, hops, weight, bandwidth)");
  add_pacing(add_command(app, "monitor"), in.watch_s, in.iterations, "Seconds between refreshes",
             "Stop after N refreshes (0: run until interrupted)");
  add_pacing(add_command(app, "event"), in.event_watch_s, in.event_looks, "Seconds between looks",
             "Stop after N looks (0: run until interrupted)");
  auto* health = add_command(app, "health");
  health->add_option("--config", in.health_policy, "Health thresholds file (key = value; docs/health.md)")
      ->check(CLI::ExistingFile);
  health->add_flag("--npd", in.common.npd,
                   "One line for Node Problem Detector's custom plugin (and the Slurm health check): exit 0 "
                   "healthy, 1 a GPU fails, 2 not every GPU could be checked");
  auto* ras = add_command(app, "ras");
  ras->add_flag("--cper", in.cper.ring, "The selected AMD GPUs' CPER error records, from the driver's ring (debugfs: root)");
  ras->add_option("--cper-file", in.cper.files, "Decode CPER records saved in FILE (a record, several, or the ring's file)")
      ->type_name("FILE")->expected(1)->take_all()->allow_extra_args(false);
  ras->add_option("--severity", in.cper.severities, "Only records of these severities: recoverable, fatal, corrected, informational")
      ->expected(1)->take_all()->allow_extra_args(false)->delimiter(',');
  ras->add_option("--since", in.cper.since,
                  "Only records from a duration back from now (30m, 12h, 7d), a UTC date or time, or @UNIX_SECONDS");
  ras->add_flag("--follow", in.cper.follow, "With --cper: print each new record as the driver writes it (-w, -i)");
  add_pacing(ras, in.cper.interval_s, in.cper.looks, "With --follow: seconds between looks (default 1)",
             "With --follow: stop after N looks (0: run until interrupted)");
  ras->add_flag("--xid-catalogue", in.cper.xid_catalogue, "NVIDIA's XID catalogue: each code's meaning and action (no GPU is read)");
  add_command(app, "bad-pages");
}

void define_change_commands(CLI::App& app, Invocation& in) {
  ControlChange& change = in.change;
  auto* partition = add_command(app, "partition");
  partition->add_option("--compute-mode", change.compute_mode, "Set the compute partition mode (SPX, DPX, TPX, QPX, CPX; any case)");
  partition->add_option("--memory-mode", change.memory_mode, "Request a memory partition mode (NPS1, NPS2, NPS4, NPS8; any case)");
  auto* set = add_command(app, "set");
  set->add_option("--power-cap", in.power_cap_text, "Power cap in watts (within power1_cap_min..max)");
  set->add_option("--perf-level", change.perf_level, "Performance level (auto, low, high, manual, profile_peak, ...)");
  set->add_option("--profile", change.profile, "Power profile by name or number (COMPUTE, VIDEO, 5, ...)");
  set->add_option("--clock-range", in.clock_range_text, "Clock range DOMAIN:MIN-MAX in MHz (sclk or mclk), e.g. sclk:500-2100");
  set->add_option("--fan", in.fan_text, "Fan: auto, or a manual speed in percent (0..100)");
  auto* reset = add_command(app, "reset");
  for (CLI::App* sub : {partition, set, reset}) {
    sub->add_flag("--dry-run", change.dry_run, "Print what would be written where; write nothing");
    sub->add_flag("--force", change.force, "Go ahead although processes use the GPU (the driver may still refuse)");
    sub->add_option("--settle-timeout-ms", change.settle_timeout_ms,
                    "How long to wait for the driver to re-create partitions (default 30000)")
        ->check(CLI::Range(0u, 600000u));
  }
}

void define_other_commands(CLI::App& app, Invocation& in) {
  add_command(app, "catalogue")->add_flag("--markdown", in.markdown, "As the Markdown table of docs/metrics.md");
  auto* capture = add_command(app, "capture");
  capture->add_option("OUT", in.capture_dir, "Empty folder to write OUT/sys (and OUT/proc) into")->required();
  capture->add_flag("--processes", in.capture_processes, "Also record GPU processes (KFD and DRM fdinfo)");
  capture->add_flag("--pcie-bw", in.common.pcie_throughput, "Also record pcie_bw (blocks 1 s per GPU)");
  auto* errors = add_command(app, "errors");
  errors->add_option("--since", in.errors.since, "Errors since: a duration back (30m, 12h, 7d), a UTC date or time, @UNIX_SECONDS (default 90d)");
  errors->add_option("--source", in.errors.source, "Only XIDs or only CPER records")->check(CLI::IsMember({"xid", "cper"}));
  errors->add_option("--limit", in.errors.limit, "At most this many errors (default 1000)")->check(CLI::Range(1u, 10000u));
  auto* job = add_command(app, "job");
  job->require_subcommand(1);
  auto* job_start = job->add_subcommand("start", "Start counting the -g GPUs' samples (every GPU when none) into job --id "
                                                 "(root or the daemon's admin group)");
  job_start->add_option("--id", in.job.id, "Job id: letters, digits and ._-+:@ (Slurm's SLURM_JOB_ID)")->required();
  job_start->add_option("--user", in.job.user, "Whose job (Slurm's SLURM_JOB_USER)");
  auto* job_stop = job->add_subcommand("stop", "Stop job --id and print its summary (root or the daemon's admin group)");
  job_stop->add_option("--id", in.job.id, "Job id")->required();
  auto* job_show = job->add_subcommand("show", "A job's use of each GPU: energy, power, busy, VRAM, throttling, errors, health");
  job_show->add_option("ID", in.job.id, "Job id")->required();
  auto* job_list = job->add_subcommand("list", "Jobs started since --since, newest first, with their energy and busy");
  job_list->add_option("--since", in.job.since,
                       "A duration back from now (30m, 12h, 7d; default 7d), a UTC date or time (2026-11-29, "
                       "2026-11-29T08:00:00Z) or @UNIX_SECONDS");
  job_list->add_option("--limit", in.job.limit, "At most this many jobs (default 100, at most 1000)")->check(CLI::Range(1u, 1000u));
  add_command(app, "version");
}

// Parses argv into `in`; an exit code when the command line was --help, --version or bad.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Another tool's habit first: "-L is nvidia-smi's: hipstack-smi list" helps more than "unknown -L".
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    const auto known = [&app](std::string_view command, std::string_view option) {
      const CLI::App* scope = &app;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == command) scope = sub;
      }
      // A short option's letter only ("-i3" is -i).
      const std::string name(option.starts_with("--") ? option : option.substr(0, 2));
      return scope->get_option_no_throw(name) != nullptr || app.get_option_no_throw(name) != nullptr;
    };
    if (const std::string habit = foreign_habit(args, known); !habit.empty()) {
      std::fprintf(stderr, "hipstack-smi: %s\n", habit.c_str());
      return kExitBadArguments;
    }
    if (const std::string hint = unknown_word_hint(app, argc, argv); !hint.empty()) {
      std::fprintf(stderr, "hipstack-smi: %s\n", hint.c_str());
      return kExitBadArguments;
    }
    app.exit(e);
    return kExitBadArguments;
  }
  return std::nullopt;
}

// -m names into common.metrics (groups expanded; query's own fields kept); false after naming an unknown one.
bool resolve_metrics(Invocation& in) {
  CommonOptions& common = in.common;
  for (const std::string& name : split_list(in.metrics)) {
    if (in.command == "query" && is_query_field(name)) {
      if (std::find(common.metrics.begin(), common.metrics.end(), name) == common.metrics.end()) common.metrics.push_back(name);
      continue;
    }
    if (smi::find_metric(name) != nullptr) common.named_metrics.push_back(name);
    if (!expand_metric(name, common.metrics)) {
      std::vector<std::string> names;
      if (in.command == "query") names.assign(query_fields().begin(), query_fields().end());
      for (const smi::MetricGroup& group : smi::metric_groups()) names.emplace_back(group.name);
      for (const smi::MetricInfo& info : smi::catalogue()) names.emplace_back(info.name);
      std::fprintf(stderr, "hipstack-smi: unknown metric or group \"%s\".%s (`hipstack-smi catalogue` lists them all)\n",
                   name.c_str(), did_you_mean(closest_words(name, names, 6)).c_str());
      return false;
    }
  }
  return true;
}

// The values of set/partition/reset checked and converted; false after naming what is wrong.
bool resolve_change(Invocation& in) {
  ControlChange& change = in.change;
  change.reset = in.command == "reset";
  if (!in.power_cap_text.empty()) {
    try {
      std::size_t used = 0;
      change.power_cap_w = std::stod(in.power_cap_text, &used);
      if (used != in.power_cap_text.size()) throw std::invalid_argument(in.power_cap_text);
    } catch (const std::exception&) {
      std::fprintf(stderr, "hipstack-smi: --power-cap \"%s\": expected a number of watts\n", in.power_cap_text.c_str());
      return false;
    }
  }
  std::string error;
  if ((!in.clock_range_text.empty() && !(change.clock_range = parse_clock_range(in.clock_range_text, error))) ||
      (!in.fan_text.empty() && !(change.fan = parse_fan(in.fan_text, error)))) {
    std::fprintf(stderr, "hipstack-smi: %s\n", error.c_str());
    return false;
  }
  if (in.command == "set" && !change.any()) {
    std::fprintf(stderr, "hipstack-smi: set: give at least one of --power-cap, --perf-level, --profile, --clock-range, --fan\n");
    return false;
  }
  if (in.command == "partition" && !change.any() && (change.dry_run || change.force)) {
    std::fprintf(stderr, "hipstack-smi: partition: --dry-run and --force go with --compute-mode or --memory-mode\n");
    return false;
  }
  return true;
}

bool tls_options_consistent(const Invocation& in) {
  if (in.tls_cert.empty() == in.tls_key.empty() && (in.tls_cert.empty() || !in.tls_ca.empty())) return true;
  std::fprintf(stderr, "hipstack-smi: --tls-cert and --tls-key go together, and need --tls-ca\n");
  return false;
}

// Jobs and kept errors are the daemon's: asked of the node's own (its unix socket) unless --host
// names another.
int run_on_daemon(Invocation& in, char** argv) {
  std::string since_error;
  if ((in.job.action == "list" && !parse_since(in.job.since, std::chrono::system_clock::now(), since_error)) ||
      (in.command == "errors" && !parse_since(in.errors.since, std::chrono::system_clock::now(), since_error))) {
    std::fprintf(stderr, "hipstack-smi: %s\n", since_error.c_str());
    return kExitBadArguments;
  }
  if (in.command == "job" && in.job.action != "start" && !in.common.gpus.empty()) {
    std::fprintf(stderr, "hipstack-smi: job %s: -g goes with job start only\n", in.job.action.c_str());
    return kExitBadArguments;
  }
  const std::vector<std::string> hosts = in.hosts.empty() && in.hostfile.empty()
                                             ? std::vector<std::string>{"unix:" + local_daemon_socket()}
                                             : fleet_hosts(in.hosts, in.hostfile);
  if (hosts.size() != 1 || !in.hostfile.empty()) {
    std::fprintf(stderr, "hipstack-smi: %s asks one daemon: give one --host\n", in.command.c_str());
    return kExitBadArguments;
  }
  if (!tls_options_consistent(in)) return kExitBadArguments;
  const RemoteOptions remote{hosts.front(), in.tls_ca, in.tls_cert, in.tls_key, in.host_timeout_ms, {}};
  return run_on_host(remote, in.command, in.common, in.query, in.health_policy, in.job, in.errors, argv);
}

// --host / --hostfile: the command asked of one daemon or of a fleet.
int run_remote(const Invocation& in, char** argv) {
  const std::vector<std::string> hosts = fleet_hosts(in.hosts, in.hostfile);
  const bool several = hosts.size() > 1 || !in.hostfile.empty();
  const CommandInfo* info = find_command(in.command);
  if ((!info->remote && in.command != "event") || in.change.any()) {
    std::fprintf(stderr, "hipstack-smi: %s%s is not available with --host (%s are)\n", in.command.c_str(),
                 in.change.any() ? " with a change" : "", remote_command_names().c_str());
    return kExitBadArguments;
  }
  // The daemon looks at its own samples every 250 ms and streams what changed (docs/events.md).
  if (in.command == "event" && in.event_paced) {
    std::fprintf(stderr, "hipstack-smi: event with --host streams the daemon's events as they come: -w and -i do not apply\n");
    return kExitBadArguments;
  }
  // One stream and thread per host, all at once: bounded.
  if (in.command == "event" && hosts.size() > kMaxEventHosts) {
    std::fprintf(stderr, "hipstack-smi: event follows at most %zu hosts at once (%zu given)\n", kMaxEventHosts, hosts.size());
    return kExitBadArguments;
  }
  if (!in.open.sysfs_root.empty() || !in.open.procfs_root.empty()) {
    std::fprintf(stderr, "hipstack-smi: --host reads the daemon's GPUs: --sysfs-root and --procfs-root do not apply\n");
    return kExitBadArguments;
  }
  if (!tls_options_consistent(in)) return kExitBadArguments;
  RemoteOptions remote{hosts.front(), in.tls_ca, in.tls_cert, in.tls_key, in.host_timeout_ms, {}};
  if (several) remote.fleet = hosts;
  return run_on_host(remote, in.command, in.common, in.query, in.health_policy, in.job, in.errors, argv);
}

// The default view with its GPU rows from the node's daemon and its process list read here (the
// daemon does not serve processes): the GPUs are opened for that list (NVML's start-up stays), but
// their samples and health checks are the daemon's. Nothing (the view reads everything itself) when
// the GPUs cannot be opened here or are not the daemon's, PCI address by PCI address.
std::optional<int> run_overview_from_daemon(const DeviceSource& daemon, Invocation& in, const std::string& where) {
  in.open.vendor_shutdown = vendor_shutdown_for(false);
  const std::chrono::milliseconds deadline(in.read_deadline_ms);
  std::optional<smi::System> system;
  try {
    system = open_within(in.open, deadline);
  } catch (const smi::Error&) {
    return std::nullopt;  // the own read says why
  }
  if (!system) return std::nullopt;
  const LocalSource local(*system, deadline);
  const auto theirs = daemon.devices();
  const auto ours = local.devices();
  const bool same = theirs.size() == ours.size() &&
                    std::equal(theirs.begin(), theirs.end(), ours.begin(), [](const smi::DeviceSummary& a, const smi::DeviceSummary& b) {
                      return smi::normalise_bdf(a.bdf) == smi::normalise_bdf(b.bdf);
                    });
  if (!same) {
    if (in.common.verbose) std::fprintf(stderr, "hipstack-smi: %s lists other GPUs than this process finds: reading them itself\n", where.c_str());
    return std::nullopt;
  }
  const int code = run_source_command(daemon, &local, "", in.common, in.query, in.health_policy, where);
  return local.any_stuck() ? exit_stuck(code) : exit_now(code);
}

// The node's daemon answers read-only commands from its latest samples (no GPU opened, no NVML
// start-up), unless the command asks for something only a read of its own gives: files or an NVML
// of its choosing, a health policy, a PCIe or window measurement, the per-metric costs. The default
// view takes its GPU rows from the daemon and reads its process list itself. Nothing when the
// daemon does not answer.
std::optional<int> run_through_local_daemon(Invocation& in) {
  const CommonOptions& common = in.common;
  const bool needs_own_read = in.direct || chooses_what_to_read(in.open) || !in.health_policy.empty() || in.cper.any() ||
                              common.pcie_throughput || common.window_asked || (in.command == "metric" && common.verbose);
  if (!find_command(in.command)->remote || in.change.any() || needs_own_read) return std::nullopt;
  const std::string socket = local_daemon_socket();
  std::string why_not;
  if (const auto source = connect_local_daemon(socket, why_not)) {
    if (common.verbose) std::fprintf(stderr, "hipstack-smi: answered by hipstack-smid at unix:%s (--direct reads the GPUs)\n", socket.c_str());
    const std::string where = "hipstack-smid at unix:" + socket;
    if (in.command.empty()) return run_overview_from_daemon(*source, in, where);
    return run_through_daemon(*source, in.command, common, in.query, in.health_policy, where);
  }
  if (common.verbose) std::fprintf(stderr, "hipstack-smi: reading the GPUs itself: %s\n", why_not.c_str());
  return std::nullopt;
}

// No GPU at all: every command that reads GPUs says why, naming each backend's reason (no driver,
// nothing under --sysfs-root, no permission), and exits 3, so that a script never takes an empty
// table for a healthy node.
int no_gpus(const smi::System& system) {
  std::string why = "hipstack-smi: no GPUs found:\n";
  for (const smi::BackendStatus& b : system.backends()) {
    why += hanging_lines(fmt::format("  {}: ", b.name), b.present ? "loaded, but it lists no GPU" : b.reason, 4, output_width());
  }
  std::fputs(why.c_str(), stderr);
  return exit_now(kExitNoSuchDevice);
}

// ras's error records (error_records_command.hpp): the XID catalogue and saved CPER files read no
// GPU; --cper reads this machine's GPUs (run_local). Nothing for the plain ras table; 2 for options
// that do not go together.
std::optional<int> run_error_records(const Invocation& in) {
  const CperOptions& cper = in.cper;
  const bool paced = cper.paced;
  const auto refuse = [](const char* why) {
    std::fprintf(stderr, "hipstack-smi: ras: %s\n", why);
    return std::optional<int>(kExitBadArguments);
  };
  if (!cper.any()) {
    if (!cper.severities.empty() || !cper.since.empty() || cper.follow || paced) {
      return refuse("--severity, --since, --follow, -w and -i go with --cper or --cper-file");
    }
    return std::nullopt;
  }
  if (cper.xid_catalogue && (cper.ring || !cper.files.empty() || !cper.severities.empty() || !cper.since.empty())) {
    return refuse("--xid-catalogue lists the catalogue: it takes no --cper, --cper-file, --severity or --since");
  }
  if (cper.ring && !cper.files.empty()) return refuse("--cper reads the GPUs, --cper-file a file: one at a time");
  if ((cper.follow || paced) && !cper.ring) return refuse("--follow, -w and -i go with --cper");
  if (paced && !cper.follow) return refuse("-w and -i pace --follow");
  if (cper.xid_catalogue) return run_xid_catalogue(in.common);
  if (!cper.files.empty()) return run_cper_files(cper, in.common);
  if (!in.hosts.empty() || !in.hostfile.empty()) return refuse("--cper reads the CPER rings of this machine's GPUs: not with --host");
  return std::nullopt;  // --cper: run_local
}

// A command on this machine's GPUs.
int run_local(Invocation& in) {
  const std::string& command = in.command;
  in.open.vendor_shutdown =
      vendor_shutdown_for(command == "event" || command == "monitor" || (command == "process" && in.process.watch));
  const std::chrono::milliseconds read_deadline(in.read_deadline_ms);
  std::optional<smi::System> system;
  try {
    system = open_within(in.open, read_deadline);
  } catch (const smi::Error& e) {
    if (command == "version") return run_version(nullptr, in.common);
    throw;
  }
  if (!system) {
    std::fprintf(stderr, "hipstack-smi: finding the GPUs took longer than %u ms: a read of the GPUs' files is stuck "
                         "(a hung driver? see dmesg)\n", in.read_deadline_ms);
    return exit_stuck(kExitReadFailure);
  }
  if (in.common.verbose && command != "version") {  // version -v prints them on stdout
    for (const smi::BackendStatus& b : system->backends()) {
      const std::string line = hanging_lines(fmt::format("backend {}: ", b.name),
                                             fmt::format("{} ({})", b.present ? "present" : "absent", b.reason), 2, output_width());
      std::fputs(line.c_str(), stderr);
    }
  }
  if (system->devices().empty() && command != "version" && command != "event") return no_gpus(*system);
  const LocalSource local(*system, read_deadline);
  const auto dispatch = [&]() -> int {
    const CommonOptions& common = in.common;
    if (command == "process") return run_process(local, common, in.process);
    if (command == "topology") return run_topology(local, common, in.topology_list);
    if (command == "monitor") return run_monitor(local, common, in.watch_s, in.iterations);
    if (command == "bad-pages") return run_bad_pages(local, common);
    if (command == "ras" && in.cper.ring) return run_cper_rings(local, in.cper, common);
    if (in.change.any() || command == "set" || command == "reset") return run_control(*system, common, command, in.change);
    if (command == "version") return run_version(&*system, common);
    return run_source_command(local, &local, command, common, in.query, in.health_policy, origin_of(in.open));
  };
  const int code = dispatch();
  // A thread may still sit in a stuck read and use the System: end without destroying it.
  return local.any_stuck() ? exit_stuck(code) : exit_now(code);
}

// Whether the program was started by the name `name` (a link or an alternative of that name).
bool started_as(const char* argv0, std::string_view name) {
  const std::string_view path = argv0 != nullptr ? argv0 : "";
  const std::size_t slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1) == name;
}

int run(int argc, char** argv) {
  // Installed as nvidia-smi (the opt-in hipstack-nvidia-smi package's alternative): the whole
  // command line is nvidia-smi's, so `--nvidia-smi` itself is as unknown as nvidia-smi finds it.
  if (argc > 0 && started_as(argv[0], "nvidia-smi")) return run_nvidia_smi(argc, argv, -1);
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
  Invocation in;
  define_global_options(app, in);
  define_read_commands(app, in);
  define_change_commands(app, in);
  define_other_commands(app, in);
  app.footer(help_examples(""));
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) sub->footer(help_examples(sub->get_name()));
  cli_docs::format_help(app, std::filesystem::path(argv[0]).filename().string());
  if (const auto code = cli_docs::answer(argc, argv, app, smi_program_docs, smi::library_version())) return *code;
  if (const auto code = parse_command_line(app, argc, argv)) return *code;

  CLI::App* chosen = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
  in.command = chosen == nullptr ? std::string() : chosen->get_name();
  in.common.format = in.json ? Format::json : in.csv ? Format::csv : Format::table;
  in.common.gpus = split_list(in.gpus);
  if (in.command == "process") in.process.watch = chosen->get_option("-w")->count() > 0 || chosen->get_option("-i")->count() > 0;
  if (in.command == "event") in.event_paced = chosen->get_option("-w")->count() > 0 || chosen->get_option("-i")->count() > 0;
  if (in.command == "ras") in.cper.paced = chosen->get_option("-w")->count() > 0 || chosen->get_option("-i")->count() > 0;
  if (in.command == "job") in.job.action = chosen->get_subcommands().front()->get_name();
  if (!resolve_metrics(in) || !resolve_change(in)) return kExitBadArguments;
  // Every change is logged to stderr as it is made (refusals too, with -v): who, what, where.
  in.open.audit = [&common = in.common](const smi::AuditRecord& r) {
    if (r.path.empty() && !common.verbose) return;
    std::fprintf(stderr, "hipstack-smi: audit: uid=%u pid=%d GPU %u %s: %s%s%s%s: %s\n", r.uid, r.pid, r.device, r.bdf.c_str(),
                 r.action.c_str(), r.path.empty() ? "" : ": write \"", r.path.empty() ? "" : (r.value + "\" to ").c_str(),
                 r.path.c_str(), r.result.c_str());
  };
  if (in.command == "job" || in.command == "errors") return run_on_daemon(in, argv);
  if (in.command == "ras") {
    if (const auto code = run_error_records(in)) return *code;
  }
  // `version` reads nothing: the backends are probed (libraries loaded, drivers asked) only with -v.
  if (in.command == "version" && !in.common.verbose && in.hosts.empty() && in.hostfile.empty()) {
    return run_version(nullptr, in.common);
  }
  if (!in.hosts.empty() || !in.hostfile.empty()) return run_remote(in, argv);
  if (const auto code = run_through_local_daemon(in)) return *code;
  if (in.command == "catalogue") return run_catalogue(in.common, in.markdown);
  if (in.command == "event") return run_event(in.open, in.common, in.event_watch_s, in.event_looks);
  if (in.command == "capture") {
    return run_capture(in.open.sysfs_root, in.open.procfs_root, in.capture_dir, in.capture_processes, in.common.pcie_throughput);
  }
  return run_local(in);
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
