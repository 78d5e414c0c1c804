// Reads /sys/class/kfd/kfd/topology: nodes (CPU and GPU partitions), their io_links, caches and
// memory banks.
#include <algorithm>
#include <string>

#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

constexpr const char* kNodes = "/sys/class/kfd/kfd/topology/nodes";

std::int64_t prop_int(const KeyValues& kv, std::string_view key) {
  const auto text = find_value(kv, key);
  if (!text) return 0;
  return parse_int(*text).value_or(0);
}

// Calls fn with the parsed properties of every child of nodes/<node>/<folder>/ (io_links, caches, ...).
template <typename Fn>
void for_each_child(const FsView& fs, int node, std::string_view folder, Fn&& fn) {
  const std::string dir = std::string(kNodes) + "/" + std::to_string(node) + "/" + std::string(folder);
  for (const std::string& child : fs.list(dir)) {
    const FileText text = fs.read_text(dir + "/" + child + "/properties");
    if (text.ok()) fn(parse_key_values(text.text, ' '));
  }
}

}  // namespace

std::uint64_t KfdNode::prop(std::string_view key, std::uint64_t fallback) const {
  const auto text = find_value(properties, key);
  if (!text) return fallback;
  return parse_uint(*text).value_or(fallback);
}

KfdTopology read_kfd_topology(const FsView& fs) {
  KfdTopology topology;
  for (const std::string& entry : fs.list(kNodes)) {
    const auto number = parse_int(entry);
    if (!number || *number < 0) continue;
    const std::string dir = std::string(kNodes) + "/" + entry;
    const FileText props = fs.read_text(dir + "/properties");
    if (!props.ok()) {
      if (topology.error.empty()) topology.error = fs.host_path(dir + "/properties") + ": unreadable";
      continue;
    }
    KfdNode node;
    node.node = static_cast<int>(*number);
    node.properties = parse_key_values(props.text, ' ');
    if (const FileText gpu_id = fs.read_text(dir + "/gpu_id"); gpu_id.ok()) {
      node.gpu_id = parse_uint(gpu_id.text).value_or(0);
    }
    topology.nodes.push_back(std::move(node));
  }
  std::sort(topology.nodes.begin(), topology.nodes.end(),
            [](const KfdNode& a, const KfdNode& b) { return a.node < b.node; });
  return topology;
}

std::vector<KfdIoLink> read_io_links(const FsView& fs, int node) {
  std::vector<KfdIoLink> links;
  for_each_child(fs, node, "io_links", [&links](const KeyValues& kv) {
    links.push_back({static_cast<int>(prop_int(kv, "type")), static_cast<int>(prop_int(kv, "node_to")),
                     prop_int(kv, "weight"), prop_int(kv, "max_bandwidth")});
  });
  return links;
}

std::vector<KfdCache> read_caches(const FsView& fs, int node) {
  std::vector<KfdCache> caches;
  for_each_child(fs, node, "caches", [&caches](const KeyValues& kv) {
    caches.push_back({static_cast<int>(prop_int(kv, "level")), prop_int(kv, "size")});
  });
  return caches;
}

KfdMemory read_mem_banks(const FsView& fs, int node) {
  KfdMemory memory;
  for_each_child(fs, node, "mem_banks", [&memory](const KeyValues& kv) {
    memory.bytes += prop_int(kv, "size_in_bytes");
    memory.clock_max = std::max(memory.clock_max, prop_int(kv, "mem_clk_max"));
  });
  return memory;
}

}  // namespace hipstack::smi::detail::amdgpu
