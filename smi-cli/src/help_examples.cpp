#include "help_examples.hpp"

#include <hipstack/smi.hpp>

#include <array>
#include <utility>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

struct Examples {
  std::string_view command;
  std::array<std::string_view, 3> lines;  // "" when fewer
};

constexpr Examples kExamples[] = {
    {"", {"hipstack-smi                                   (every GPU on one screen)",
          "hipstack-smi query -m index,name,vram_used,power_current --csv",
          "hipstack-smi --nvidia-smi --query-gpu=index,memory.used --format=csv"}},
    {"list", {"hipstack-smi list", "hipstack-smi list --json", "hipstack-smi --host unix:///run/hipstack/smid.sock list"}},
    {"static", {"hipstack-smi static -g 0", "hipstack-smi static -m memory,power --json", ""}},
    {"metric", {"hipstack-smi metric -g 0 -m temperature", "hipstack-smi metric -m power,activity --csv",
                "hipstack-smi metric --pcie-bw -g 0000:05:00.0"}},
    {"process", {"hipstack-smi process", "hipstack-smi process --interval-ms 500 --json", ""}},
    {"query", {"hipstack-smi query -m index,name,vram_used,vram_total,power_current",
               "hipstack-smi query -m index,temperature --csv --no-header --no-units",
               "hipstack-smi query --partitions -m index,partition_index,partition_bdf,partition_memory"}},
    {"topology", {"hipstack-smi topology", "hipstack-smi topology --list", "hipstack-smi topology --json"}},
    {"monitor", {"hipstack-smi monitor", "hipstack-smi monitor -w 5 -i 12 --csv > node.csv", ""}},
    {"event", {"hipstack-smi event", "hipstack-smi event --json -w 2", ""}},
    {"health", {"hipstack-smi health", "hipstack-smi health -g 3 --json", "hipstack-smi --host node1:50051,node2:50051 health"}},
    {"ras", {"hipstack-smi ras", "hipstack-smi ras -g all --csv", ""}},
    {"bad-pages", {"hipstack-smi bad-pages", "hipstack-smi bad-pages -g 1 --json", ""}},
    {"partition", {"hipstack-smi partition", "sudo hipstack-smi partition -g 0 --compute-mode CPX --dry-run",
                   "sudo hipstack-smi partition -g all --memory-mode NPS4"}},
    {"set", {"sudo hipstack-smi set -g 0 --power-cap 600 --dry-run", "sudo hipstack-smi set -g all --perf-level auto",
             "sudo hipstack-smi set -g 1 --clock-range sclk:500-1800"}},
    {"reset", {"sudo hipstack-smi reset -g 2 --dry-run", "sudo hipstack-smi reset -g 2", ""}},
    {"catalogue", {"hipstack-smi catalogue", "hipstack-smi catalogue --json", ""}},
    {"capture", {"sudo hipstack-smi capture /tmp/node1", "sudo hipstack-smi capture /tmp/node1 --processes",
                 "hipstack-smi --sysfs-root /tmp/node1/sys"}},
    {"version", {"hipstack-smi version", "hipstack-smi version --json", ""}},
};

}  // namespace

std::string help_examples(std::string_view command) {
  for (const Examples& e : kExamples) {
    if (e.command != command) continue;
    std::string out = "Examples:";
    for (const std::string_view line : e.lines) {
      if (!line.empty()) (out += "\n  ") += line;
    }
    return out;
  }
  return {};
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
