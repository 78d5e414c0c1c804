// The CPUs closest to a GPU, from its PCI device's local_cpulist (cpu_affinity.hpp).
#include "cpu_affinity.hpp"

#include <cerrno>
#include <cstring>

#include "../fs_view.hpp"
#include "../readings.hpp"

namespace hipstack::smi::detail {

std::optional<std::string> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty() || text.size() > 4096) return std::nullopt;
  bool digit_before = false;  // a ',' or '-' must follow a number, and the list must end in one
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      digit_before = true;
    } else if ((c == ',' || c == '-') && digit_before) {
      digit_before = false;
    } else {
      return std::nullopt;
    }
  }
  if (!digit_before) return std::nullopt;
  return std::string(text);
}

void read_cpu_affinity(const FsView& fs, const std::string& path, ReadingList& list) {
  if (path.empty()) {
    list.failed(MetricId::cpu_affinity, ENOENT, "no PCI device");
    return;
  }
  const FileText cpus = fs.read_text(path);
  if (!cpus.ok()) {
    list.failed(MetricId::cpu_affinity, cpus.error, fs.host_path(path) + ": " + std::strerror(cpus.error));
  } else if (const auto parsed = parse_cpu_list(cpus.text)) {
    list.text(MetricId::cpu_affinity, *parsed, fs.host_path(path));
  } else {
    list.malformed(MetricId::cpu_affinity, fs.host_path(path) + ": not a CPU list");
  }
}

}  // namespace hipstack::smi::detail
