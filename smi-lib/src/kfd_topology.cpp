// The KFD topology (/sys/class/kfd/kfd/topology/nodes/N) parsed into nodes and links
// (kfd_topology.hpp).
#include "kfd_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "parse.hpp"

namespace hipstack::smi::detail::kfd {
namespace {

constexpr std::uint64_t kMaxNode = 0xffff;
constexpr std::uint64_t kCacheData = 1, kCacheInstruction = 2;  // HSA_CACHE_TYPE_* bits

// Numbered entries of a folder ("0", "1", ... "10"), in numeric order.
std::vector<std::pair<std::uint64_t, std::string>> numbered(const FsView& fs, const std::string& dir) {
  std::vector<std::pair<std::uint64_t, std::string>> entries;
  for (const std::string& entry : fs.list(dir)) {
    if (const auto n = parse_uint(entry); n && *n <= kMaxNode) entries.emplace_back(*n, entry);
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

std::uint64_t Properties::get(std::string_view key, std::uint64_t fallback) const {
  const auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

Properties parse_properties(std::string_view text, const std::string& file, std::vector<std::string>& problems) {
  Properties p;
  std::size_t number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim_sysfs_text(text.substr(pos, end - pos));
    pos = end + 1;
    ++number;
    if (line.empty()) continue;
    const std::size_t space = line.find_first_of(" \t");
    if (space == std::string_view::npos) {
      problems.push_back(fmt::format("{}: line {}: '{}' has no value", file, number, line));
      continue;
    }
    const std::string_view key = line.substr(0, space);
    const std::string_view value = trim_sysfs_text(line.substr(space));
    if (key == "sibling_map") continue;  // caches: a CPU/CU bit list, the one value that is not a number
    const auto parsed = parse_uint(value);
    if (!parsed) {
      problems.push_back(fmt::format("{}: line {}: {} has value '{}', not a number", file, number, key, value));
      continue;
    }
    p.values[std::string(key)] = *parsed;
  }
  return p;
}

std::string Node::dir() const { return fmt::format("{}/{}", kNodesDir, id); }

Topology read_topology(const FsView& fs) {
  Topology topology;
  for (const auto& [number, entry] : numbered(fs, kNodesDir)) {
    Node node;
    node.id = static_cast<int>(number);
    const std::string file = node.dir() + "/properties";
    const FileText text = fs.read_text(file);
    if (!text.ok() || text.text.empty()) {
      topology.errors.push_back(fmt::format("{}: {}", fs.host_path(file), text.ok() ? "empty" : std::strerror(text.error)));
      continue;
    }
    node.properties = parse_properties(text.text, fs.host_path(file), node.problems);
    if (!node.properties.has("simd_count") || !node.properties.has("cpu_cores_count")) {
      topology.errors.push_back(fmt::format(
          "{}: no simd_count or cpu_cores_count: not a KFD node's properties (truncated?)", fs.host_path(file)));
      continue;
    }
    if (const FileText id = fs.read_text(node.dir() + "/gpu_id"); id.ok()) node.gpu_id = parse_uint(id.text).value_or(0);
    if (const FileText name = fs.read_text(node.dir() + "/name"); name.ok()) node.name = name.text;
    topology.nodes.push_back(std::move(node));
  }
  return topology;
}

std::vector<Properties> read_children(const FsView& fs, int node, std::string_view folder,
                                      std::vector<std::string>& problems) {
  const std::string dir = fmt::format("{}/{}/{}", kNodesDir, node, folder);
  std::vector<Properties> out;
  for (const auto& [number, entry] : numbered(fs, dir)) {
    const std::string file = dir + "/" + entry + "/properties";
    const FileText text = fs.read_text(file);
    if (!text.ok()) {
      problems.push_back(fmt::format("{}: cannot read ({})", fs.host_path(file), std::strerror(text.error)));
      continue;
    }
    out.push_back(parse_properties(text.text, fs.host_path(file), problems));
  }
  return out;
}

std::vector<IoLink> read_io_links(const FsView& fs, int node, std::vector<std::string>& problems) {
  std::vector<IoLink> links;
  for (const Properties& p : read_children(fs, node, "io_links", problems)) {
    const std::uint64_t to = p.get("node_to", kMaxNode + 1);
    links.push_back({p.get("type"), to <= kMaxNode ? static_cast<int>(to) : -1, p.get("weight"),
                     p.get("min_bandwidth"), p.get("max_bandwidth")});
  }
  return links;
}

std::string link_type_name(std::uint64_t type) {
  switch (type) {  // HSA_IOLINKTYPE_*
    case 1: return "hypertransport";
    case kIoLinkPcie: return "pcie";
    case 5: return "qpi";
    case kIoLinkXgmi: return "xgmi";
    default: return fmt::format("type {}", type);
  }
}

std::string heap_name(std::uint64_t heap_type) {
  switch (heap_type) {  // HSA_HEAPTYPE_*
    case 0: return "system";
    case 1: return "vram_public";
    case 2: return "vram_private";
    case 3: return "gds";
    case 4: return "lds";
    case 5: return "scratch";
    default: return fmt::format("heap {}", heap_type);
  }
}

std::string cache_type_name(std::uint64_t bits) {
  const bool data = (bits & kCacheData) != 0;
  const bool instruction = (bits & kCacheInstruction) != 0;
  if (data && instruction) return "unified";
  if (data) return "data";
  if (instruction) return "instruction";
  return "other";
}

std::string bdf_from_location(std::uint64_t domain, std::uint64_t location_id) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain & 0xffff, (location_id >> 8) & 0xff, (location_id >> 3) & 0x1f,
                     location_id & 7);
}

}  // namespace hipstack::smi::detail::kfd
