#include "help_examples.hpp"

#include <array>
#include <utility>

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
               "hipstack-smi query -m index,temperature --csv --no-header --no-units", ""}},
    {"topology", {"hipstack-smi topology", "hipstack-smi topology --list", "hipstack-smi topology --json"}},
    {"monitor", {"hipstack-smi monitor", "hipstack-smi monitor -w 5 -i 12 --csv > node.csv", ""}},
    {"event", {"hipstack-smi event", "hipstack-smi event --json -w 2", ""}},
    {"health", {"hipstack-smi health", "hipstack-smi health -g 3 --json", "hipstack-smi health --config /etc/hipstack/health.conf"}},
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

}  // namespace hipstack::cli
