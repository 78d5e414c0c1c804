// The CPUs closest to a GPU, from its PCI device's local_cpulist: the kernel's own fact, read the
// same way for every vendor (nvidia-smi topo's "CPU Affinity" is this list).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hipstack::smi::detail {

class FsView;
class ReadingList;

// "0-47,96-143" (ranges and numbers, comma-separated); nothing when TEXT is not such a list.
std::optional<std::string> parse_cpu_list(std::string_view text);

// Adds the cpu_affinity reading from PATH (a PCI device's local_cpulist; "" when the GPU has none).
void read_cpu_affinity(const FsView& fs, const std::string& path, ReadingList& list);

}  // namespace hipstack::smi::detail
