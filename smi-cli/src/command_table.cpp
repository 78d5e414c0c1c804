// hipstack-smi's commands, declared once: names, summaries, examples and which a daemon answers
// (command_table.hpp).
#include "command_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hipstack/smi.hpp>

#include <vector>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

constexpr CommandInfo kCommands[] = {
    {"", "",
     true,
     {"hipstack-smi                                   (every GPU on one screen)", "hipstack-smi query -m index,name,vram_used,power_current --csv", "hipstack-smi --nvidia-smi --query-gpu=index,memory.used --format=csv"}},
    {"list", "List GPUs",
     true,
     {"hipstack-smi list", "hipstack-smi list --json", "hipstack-smi --host unix:///run/hipstack/smid.sock list"}},
    {"static", "Identity and static facts (IDs, firmware, memory sizes, limits, DPM levels)",
     true,
     {"hipstack-smi static -g 0", "hipstack-smi static -m memory,power --json", ""}},
    {"metric", "Live metrics (temperatures, power, clocks, use, memory, PCIe)",
     true,
     {"hipstack-smi metric -g 0 -m temperature", "hipstack-smi metric -m power,activity --csv", "hipstack-smi metric --pcie-bw -g 0000:05:00.0"}},
    {"process", "Processes using the GPUs",
     false,
     {"hipstack-smi process", "hipstack-smi process --interval-ms 500 --json", ""}},
    {"query", "One row per GPU of the -m fields: index, name, uuid, bdf, any metric or group",
     true,
     {"hipstack-smi query -m index,name,vram_used,vram_total,power_current", "hipstack-smi query -m index,temperature --csv --no-header --no-units", "hipstack-smi query --partitions -m index,partition_index,partition_bdf,partition_memory"}},
    {"topology", "Links between GPUs as a matrix (XGMI/NVLink/PCIe path, NUMA node)",
     false,
     {"hipstack-smi topology", "hipstack-smi topology --list", "hipstack-smi topology --json"}},
    {"monitor", "Refreshing view of the main live metrics",
     false,
     {"hipstack-smi monitor", "hipstack-smi monitor -w 5 -i 12 --csv > node.csv", ""}},
    {"event", "Follow throttling, memory errors, bad pages, partition changes, resets and GPUs coming and going; one line (or JSON object) per event",
     false,
     {"hipstack-smi event", "hipstack-smi event --json -w 2", ""}},
    {"health", "Health verdict per GPU with the findings behind it (exit 1 unhealthy)",
     true,
     {"hipstack-smi health", "hipstack-smi health -g 3 --json", "hipstack-smi --host node1:50051,node2:50051 health"}},
    {"ras", "RAS error counts per block, ECC totals, retired pages and the bad page threshold",
     true,
     {"hipstack-smi ras", "hipstack-smi ras -g all --csv", ""}},
    {"bad-pages", "Retired and pending memory pages",
     false,
     {"hipstack-smi bad-pages", "hipstack-smi bad-pages -g 1 --json", ""}},
    {"partition", "Compute/memory partition modes and the partitions (MIG instances) of each GPU; with --compute-mode/--memory-mode, change them (AMD only, root, -g required)",
     true,
     {"hipstack-smi partition", "sudo hipstack-smi partition -g 0 --compute-mode CPX --dry-run", "sudo hipstack-smi partition -g all --memory-mode NPS4"}},
    {"set", "Change power cap, performance level, power profile, clock range or fan (root, -g required)",
     false,
     {"sudo hipstack-smi set -g 0 --power-cap 600 --dry-run", "sudo hipstack-smi set -g all --perf-level auto", "sudo hipstack-smi set -g 1 --clock-range sclk:500-1800"}},
    {"reset", "Reset GPUs (PCI function reset; root, -g required, refuses while in use)",
     false,
     {"sudo hipstack-smi reset -g 2 --dry-run", "sudo hipstack-smi reset -g 2", ""}},
    {"catalogue", "The metric catalogue (ids, names, units, help)",
     false,
     {"hipstack-smi catalogue", "hipstack-smi catalogue --json", ""}},
    {"capture", "Record the sysfs files hipstack reads into a folder",
     false,
     {"sudo hipstack-smi capture /tmp/node1", "sudo hipstack-smi capture /tmp/node1 --processes", "hipstack-smi --sysfs-root /tmp/node1/sys"}},
    {"job", "Job accounting by hipstack-smid: start and stop a job (a batch system's prolog and epilog), show its use of each GPU, list jobs (docs/jobs.md)",
     false,
     {"", "", ""}},
    {"errors", "The GPUs' errors hipstack-smid keeps: each XID and CPER record with the action it calls for, by GPU (docs/errors.md)",
     false,
     {"hipstack-smi errors", "hipstack-smi errors --since 24h --source xid", "hipstack-smi errors --json -g 0"}},
    {"version", "Library version; with -v each backend, probed: present or why not",
     false,
     {"hipstack-smi version", "hipstack-smi version -v", "hipstack-smi version --json"}},
};

}  // namespace

const CommandInfo* find_command(std::string_view name) {
  for (const CommandInfo& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::string remote_command_names() {
  std::vector<std::string_view> names;
  for (const CommandInfo& command : kCommands) {
    if (command.remote && !command.name.empty()) names.push_back(command.name);
  }
  names.push_back("event");  // streamed from the daemon's own event watch (docs/events.md)
  return fmt::format("{} and {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

std::string help_examples(std::string_view name) {
  const CommandInfo* command = find_command(name);
  if (command == nullptr || command->examples[0].empty()) return {};
  std::string out = "Examples:";
  for (const std::string_view line : command->examples) {
    if (!line.empty()) (out += "\n  ") += line;
  }
  return out;
}

cli_docs::ProgramDocs smi_program_docs() {
  cli_docs::ProgramDocs docs;
  docs.name = "hipstack-smi";
  docs.section = 1;
  docs.description =
      "hipstack-smi shows and changes the state of AMD GPUs (amdgpu: sysfs, hwmon, gpu_metrics, KFD) and NVIDIA "
      "GPUs (NVML, loaded at run time). Without a command it prints one screen: every GPU with its temperature, "
      "power, memory, use and clocks, then the processes using them.\n\n"
      "Every value comes from the source that holds the fact; a value a GPU does not report is said to be "
      "unsupported, never shown as 0. Tables use human units; --json and --csv keep raw numbers in the units "
      "of the metric catalogue (hipstack-smi catalogue). With --host, the read commands ask a hipstack-smid "
      "instead of this machine. --rocm-smi and --nvidia-smi accept the options of those tools "
      "(docs/rocm-smi-compat.md, docs/nvidia-smi-compat.md).";
  docs.exit_status = {
      {"0", "success"},
      {"1", "a GPU could not be read, a read failed, or the output could not be written; health: a GPU is unhealthy"},
      {"2", "bad arguments (the closest known command, option or metric is named)"},
      {"3", "no such device: -g matched nothing, or no GPU was found (each backend's reason on stderr)"},
      {"4", "a change was refused (unsafe state, not supported, or the driver said no)"},
      {"5", "a change needs root; nothing was written"},
      {"6", "a change was written and takes effect after the printed next step"},
      {"7", "a change was written but the driver did not reach the new state"},
      {"8", "health: a GPU's verdict is UNKNOWN (none of its checks could be evaluated)"},
      {"9", "several hosts (--host a,b or --hostfile): a host did not answer or stopped answering; the others' GPUs "
            "are shown"},
  };
  docs.see_also = {"hipstack-info(1)", "hipstack-validate(1)", "hipstack-smid(8)", "nvidia-smi(1)", "rocm-smi(1)"};
  std::vector<std::string> metrics(query_fields().begin(), query_fields().end());
  for (const smi::MetricGroup& group : smi::metric_groups()) metrics.emplace_back(group.name);
  for (const smi::MetricInfo& metric : smi::catalogue()) metrics.emplace_back(metric.name);
  docs.value_words["--metrics"] = metrics;
  docs.comma_lists = {"--metrics", "--gpu"};
  docs.value_words["--gpu"] = {"all"};  // indexes, BDFs and UUIDs are the machine's
  docs.value_words["--compute-mode"] = {"SPX", "DPX", "TPX", "QPX", "CPX"};
  docs.value_words["--memory-mode"] = {"NPS1", "NPS2", "NPS4", "NPS8"};
  docs.value_words["--perf-level"] = {"auto", "low", "high", "manual", "profile_standard", "profile_min_sclk",
                                      "profile_min_mclk", "profile_peak"};
  return docs;
}

}  // namespace hipstack::cli
