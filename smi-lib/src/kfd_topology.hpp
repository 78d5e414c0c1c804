// The KFD topology (/sys/class/kfd/kfd/topology/nodes/N): the one reader behind both the amdgpu
// backend's view (GPU nodes, one per compute partition; io_links for links()) and hipstack-info's
// agents (CPU and GPU nodes as rocminfo shows them).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fs_view.hpp"

namespace hipstack::smi::detail::kfd {

inline constexpr const char* kNodesDir = "/sys/class/kfd/kfd/topology/nodes";

// HSA_IOLINKTYPE_* values the code acts on.
inline constexpr std::uint64_t kIoLinkPcie = 2;
inline constexpr std::uint64_t kIoLinkXgmi = 11;

// A properties file: "key value" lines, every value an unsigned decimal. Lines that do not parse
// are named in problems ("<file>: line 3: simd_count has value 'x', not a number").
struct Properties {
  std::map<std::string, std::uint64_t, std::less<>> values;
  [[nodiscard]] std::uint64_t get(std::string_view key, std::uint64_t fallback = 0) const;
  [[nodiscard]] bool has(std::string_view key) const { return values.find(key) != values.end(); }
};
Properties parse_properties(std::string_view text, const std::string& file, std::vector<std::string>& problems);

struct Node {
  int id = 0;                       // N of nodes/N
  std::uint64_t gpu_id = 0;         // nodes/N/gpu_id; 0 for CPUs
  std::string name;                 // nodes/N/name, "" when absent
  Properties properties;
  std::vector<std::string> problems;  // malformed lines of the properties file

  [[nodiscard]] std::uint64_t get(std::string_view key, std::uint64_t fallback = 0) const {
    return properties.get(key, fallback);
  }
  [[nodiscard]] bool is_gpu() const { return get("simd_count") > 0; }
  [[nodiscard]] std::uint64_t domain() const { return get("domain"); }
  [[nodiscard]] std::uint64_t location_id() const { return get("location_id"); }  // bus << 8 | device << 3 | function
  [[nodiscard]] std::string dir() const;
};

struct Topology {
  std::vector<Node> nodes;          // in node order
  std::vector<std::string> errors;  // nodes left out: unreadable, empty or not a node's properties
};

// Every node's own files (properties, gpu_id, name). Children (mem_banks, caches, io_links) are read
// on demand: an MI300X node has hundreds of them and most questions need none.
Topology read_topology(const FsView& fs);

// The children of nodes/<node>/<folder> (mem_banks, caches, io_links) in numeric order, each parsed;
// unreadable or malformed ones are named in problems.
std::vector<Properties> read_children(const FsView& fs, int node, std::string_view folder,
                                      std::vector<std::string>& problems);

struct IoLink {
  std::uint64_t type = 0;           // HSA_IOLINKTYPE_*: 2 PCIe, 11 XGMI
  int node_to = -1;
  std::uint64_t weight = 0;
  std::uint64_t min_bandwidth = 0, max_bandwidth = 0;  // MB/s as the KFD reports them
};
std::vector<IoLink> read_io_links(const FsView& fs, int node, std::vector<std::string>& problems);

// One naming for every output: "pcie", "xgmi", "hypertransport", "qpi", else "type N".
std::string link_type_name(std::uint64_t type);
// mem_banks heap_type (HSA_HEAPTYPE_*): "system", "vram_public", ..., else "heap N".
std::string heap_name(std::uint64_t heap_type);
// caches type bits (HSA_CACHE_TYPE_*): "data", "instruction", "unified" (both), "other".
std::string cache_type_name(std::uint64_t bits);

// "0000:c1:00.0" from a node's domain and location_id.
std::string bdf_from_location(std::uint64_t domain, std::uint64_t location_id);

}  // namespace hipstack::smi::detail::kfd
