// The amdgpu backend object: device summaries, sampling dispatch, partitions and GPU-to-GPU links.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <queue>

#include "../../readings.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

struct Path {
  std::int64_t weight = std::numeric_limits<std::int64_t>::max();
  int hops = 0;
};

// Lightest path between KFD nodes over their io_links (rocm-smi's "weight" and "hops").
std::map<int, Path> shortest_paths(const std::map<int, std::vector<kfd::IoLink>>& graph, int from) {
  std::map<int, Path> best;
  best[from] = {0, 0};
  using Item = std::pair<std::int64_t, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  queue.emplace(0, from);
  while (!queue.empty()) {
    const auto [weight, node] = queue.top();
    queue.pop();
    if (weight > best[node].weight) continue;
    const auto edges = graph.find(node);
    if (edges == graph.end()) continue;
    for (const kfd::IoLink& link : edges->second) {
      if (link.node_to < 0) continue;
      const std::int64_t next = weight + static_cast<std::int64_t>(std::min<std::uint64_t>(link.weight, 1u << 30));
      Path& target = best[link.node_to];
      if (next < target.weight) {
        target = {next, best[node].hops + 1};
        queue.emplace(next, link.node_to);
      }
    }
  }
  return best;
}

std::optional<std::int64_t> numa_distance(const FsView& fs, const std::string& dev_a, const std::string& dev_b) {
  if (dev_a.empty() || dev_b.empty()) return std::nullopt;
  const FileText a = fs.read_text(dev_a + "/numa_node");
  const FileText b = fs.read_text(dev_b + "/numa_node");
  const auto node_a = a.ok() ? parse_int(a.text) : std::nullopt;
  const auto node_b = b.ok() ? parse_int(b.text) : std::nullopt;
  if (!node_a || !node_b || *node_a < 0 || *node_b < 0) return std::nullopt;
  const FileText distances = fs.read_text(fmt::format("/sys/devices/system/node/node{}/distance", *node_a));
  if (!distances.ok()) return std::nullopt;
  const auto fields = split_fields(distances.text, ' ');
  if (static_cast<std::size_t>(*node_b) >= fields.size()) return std::nullopt;
  return parse_int(fields[static_cast<std::size_t>(*node_b)]);
}

}  // namespace

AmdgpuBackend::AmdgpuBackend(const FsView& fs, KfdTopology topology, std::vector<AmdGpu> gpus)
    : fs_(fs), topology_(std::move(topology)), gpus_(std::move(gpus)) {
  std::vector<std::vector<std::uint64_t>> gpu_ids;
  for (const AmdGpu& gpu : gpus_) {
    auto& ids = gpu_ids.emplace_back();
    for (const KfdNode& node : gpu.kfd) {
      if (node.gpu_id != 0) ids.push_back(node.gpu_id);
    }
  }
  kfd_events_ = std::make_unique<KfdEventWatch>(fs_, std::move(gpu_ids));
}

DeviceSummary AmdgpuBackend::summary(std::size_t device) const {
  const AmdGpu& gpu = gpus_.at(device);
  DeviceSummary s;
  s.vendor = "amd";
  s.backend = "amdgpu";
  s.bdf = gpu.address.text();
  s.uuid = gpu.uuid;
  s.name = gpu.model.name;
  s.partition_count = static_cast<std::uint32_t>(gpu.kfd.size());
  return s;
}

std::string AmdgpuBackend::fault(std::size_t device, const SampleOptions* /*before*/) const {
  const AmdGpu& gpu = gpus_.at(device);
  // Unplugged, fallen off the bus, or the driver let go of it. A GPU known from the KFD topology
  // alone (no card) has no folder to lose. Probed before every sample: the reads of a gone GPU
  // find no file, which alone would read as "not supported".
  if (gpu.card >= 0 && !fs_.exists(gpu.device_dir)) return fs_.host_path(gpu.device_dir) + ": the device is gone";
  return {};
}

void AmdgpuBackend::sample(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const {
  const AmdGpu& gpu = gpus_.at(device);
  if (options.identity) read_identity(fs_, gpu, out);
  if (options.static_info) read_static(fs_, gpu, out);
  if (options.live) read_live(fs_, gpu, options, out);
  if (options.live && asked_for(options, MetricId::running_processes)) read_running_processes(device, out);
  if (options.live && asked_for(options, MetricId::kfd_events)) kfd_events_->read(device, out);
  if (options.window) read_window(device, options, out);
}

std::vector<Partition> AmdgpuBackend::partition_names(std::size_t device) const {
  const AmdGpu& gpu = gpus_.at(device);
  std::vector<Partition> result;
  for (std::size_t i = 0; i < gpu.kfd.size(); ++i) {
    const KfdNode& node = gpu.kfd[i];  // its properties were read at discovery
    Partition p;
    p.index = static_cast<std::uint32_t>(i);
    p.id = fmt::format("{}/{}", gpu.uuid, i);
    const std::uint64_t location = node.get("location_id");
    p.bdf = PciAddress{static_cast<std::uint32_t>(node.get("domain")), static_cast<std::uint32_t>(location >> 8),
                       static_cast<std::uint32_t>((location >> 3) & 0x1f), static_cast<std::uint32_t>(location & 7)}
                .text();
    result.push_back(std::move(p));
  }
  return result;
}

std::vector<Partition> AmdgpuBackend::partitions(std::size_t device) const {
  const AmdGpu& gpu = gpus_.at(device);
  std::vector<Partition> result = partition_names(device);
  for (Partition& p : result) {
    const KfdNode& node = gpu.kfd[p.index];
    ReadingList list(p.readings);
    const std::string source = fmt::format("KFD node {}", node.id);
    if (node.get("simd_per_cu") > 0) {
      list.integer(MetricId::partition_compute_units,
                   static_cast<std::int64_t>(node.get("simd_count") / node.get("simd_per_cu")), source);
    } else {
      list.failed(MetricId::partition_compute_units, ENOENT, source + ": no simd_per_cu");
    }
    list.integer(MetricId::partition_xccs, static_cast<std::int64_t>(node.get("num_xcc", 1)), source);
    if (const KfdMemory memory = read_mem_banks(fs_, node.id); memory.bytes > 0) {
      list.integer(MetricId::partition_memory, memory.bytes, source + " mem_banks");
    } else {
      list.failed(MetricId::partition_memory, ENOENT, source + ": no mem_banks");
    }
    if (node.gpu_id != 0) list.integer(MetricId::partition_kfd_gpu_id, static_cast<std::int64_t>(node.gpu_id), source);
    else list.failed(MetricId::partition_kfd_gpu_id, ENOENT, source + ": no gpu_id");
    if (node.properties.has("drm_render_minor")) {
      list.integer(MetricId::partition_render_minor, static_cast<std::int64_t>(node.get("drm_render_minor")), source);
    } else {
      list.failed(MetricId::partition_render_minor, ENOENT, source + ": no drm_render_minor");
    }
  }
  return result;
}

std::vector<BadPage> AmdgpuBackend::bad_pages(std::size_t device) const {
  std::string error;
  auto pages = read_bad_pages(fs_, gpus_.at(device), error);
  if (!error.empty()) throw Error(Error::Code::read_failure, error);
  return pages;
}

std::vector<Link> AmdgpuBackend::links() const {
  std::map<int, std::vector<kfd::IoLink>> graph;
  std::vector<std::string> problems;  // a malformed io_link is left out: its link reads "no path"
  for (const KfdNode& node : topology_.nodes) graph[node.id] = kfd::read_io_links(fs_, node.id, problems);
  std::vector<Link> result;
  for (std::size_t a = 0; a < gpus_.size(); ++a) {
    if (gpus_[a].kfd.empty()) continue;
    const int from = gpus_[a].kfd.front().id;
    const auto paths = shortest_paths(graph, from);
    for (std::size_t b = 0; b < gpus_.size(); ++b) {
      if (a == b || gpus_[b].kfd.empty()) continue;
      const int to = gpus_[b].kfd.front().id;
      Link link;
      link.from = static_cast<std::uint32_t>(a);
      link.to = static_cast<std::uint32_t>(b);
      ReadingList list(link.readings);
      const kfd::IoLink* direct = nullptr;
      for (const kfd::IoLink& io : graph[from]) {
        if (io.node_to == to) direct = &io;
      }
      const auto path = paths.find(to);
      const std::string source = fmt::format("KFD io_links of node {}", from);
      if (direct != nullptr) {
        list.text(MetricId::link_type, kfd::link_type_name(direct->type), source);
      } else if (path != paths.end()) {
        list.text(MetricId::link_type, "pcie", source + " (through the CPU)");
      } else {
        list.failed(MetricId::link_type, ENOENT, source + ": no path");
      }
      if (path != paths.end()) {
        list.integer(MetricId::link_hops, path->second.hops, source);
        list.integer(MetricId::link_weight, path->second.weight, source);
      } else {
        list.failed(MetricId::link_hops, ENOENT, source + ": no path");
        list.failed(MetricId::link_weight, ENOENT, source + ": no path");
      }
      if (direct != nullptr && direct->max_bandwidth > 0) {
        list.real(MetricId::link_bandwidth_max, static_cast<double>(direct->max_bandwidth) * 1e6, source + " (MB/s)");
      } else {
        list.failed(MetricId::link_bandwidth_max, ENOENT, source + ": no direct link bandwidth");
      }
      if (const auto distance = numa_distance(fs_, gpus_[a].device_dir, gpus_[b].device_dir)) {
        list.integer(MetricId::link_numa_distance, *distance, "/sys/devices/system/node");
      } else {
        list.failed(MetricId::link_numa_distance, ENOENT, "numa_node or node distance absent");
      }
      result.push_back(std::move(link));
    }
  }
  return result;
}

}  // namespace hipstack::smi::detail::amdgpu
