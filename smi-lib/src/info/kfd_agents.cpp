// KFD topology -> agents, the way rocminfo describes them: one agent per node
// (/sys/class/kfd/kfd/topology/nodes/N), CPUs and GPUs (one GPU node per compute partition), with
// their memory banks, caches and io links. Every value comes from the node's files; what is absent
// stays 0 / empty, and what is malformed is named in Agent::problems.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "../backends/amdgpu/amdgpu.hpp"
#include "../kfd_topology.hpp"
#include "../parse.hpp"
#include "info_internal.hpp"

namespace hipstack::smi::detail::info {
namespace {

constexpr std::uint64_t kAmdVendor = 0x1002;

using kfd::Properties;

int as_int(std::uint64_t value) { return value > 0x7fffffffULL ? 0x7fffffff : static_cast<int>(value); }

// /proc/cpuinfo, one map per processor block.
std::vector<std::map<std::string, std::string>> read_cpuinfo(const FsView& fs) {
  std::vector<std::map<std::string, std::string>> cpus;
  const FileText text = fs.read_text("/proc/cpuinfo");
  if (!text.ok()) return cpus;
  std::map<std::string, std::string> current;
  for (const std::string_view line : split_fields(text.text, '\n')) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string key(trim_sysfs_text(line.substr(0, colon)));
    std::string value(trim_sysfs_text(line.substr(colon + 1)));
    if (key == "processor" && !current.empty()) cpus.push_back(std::move(current)), current.clear();
    current[std::move(key)] = std::move(value);
  }
  if (!current.empty()) cpus.push_back(std::move(current));
  return cpus;
}

std::string cpu_vendor(std::string_view vendor_id) {
  if (vendor_id == "AuthenticAMD") return "AMD";
  if (vendor_id == "GenuineIntel") return "Intel";
  return std::string(vendor_id);
}

// gpu: the discovered GPU whose KFD nodes include this one (nullptr past the backend's limit).
void fill_gpu(const FsView& fs, const Properties& p, const amdgpu::AmdGpu* gpu, Agent& agent) {
  const std::string file = fs.host_path(fmt::format("{}/{}/properties", kfd::kNodesDir, agent.node));
  for (const char* key : {"simd_per_cu", "wave_front_size", "location_id", "device_id"}) {
    if (!p.has(key)) agent.problems.push_back(fmt::format("{}: no {}", file, key));
  }
  agent.vendor_id = static_cast<std::uint32_t>(p.get("vendor_id", kAmdVendor));
  agent.vendor = agent.vendor_id == kAmdVendor ? "AMD" : fmt::format("PCI vendor 0x{:04x}", agent.vendor_id);
  agent.device_id = static_cast<std::uint32_t>(p.get("device_id"));
  agent.simds_per_cu = as_int(p.get("simd_per_cu"));
  const std::uint64_t simds = p.get("simd_count");
  if (agent.simds_per_cu > 0) {
    agent.compute_units = as_int(simds / static_cast<std::uint64_t>(agent.simds_per_cu));
  } else if (p.has("simd_per_cu")) {
    agent.problems.push_back(fmt::format("{}: simd_per_cu is 0: compute units unknown", file));
  }
  agent.wavefront_size = as_int(p.get("wave_front_size"));
  agent.max_waves_per_simd = as_int(p.get("max_waves_per_simd"));
  agent.max_clock_mhz = as_int(p.get("max_engine_clk_fcompute"));
  agent.domain = as_int(p.get("domain"));
  agent.location_id = p.get("location_id");
  agent.bdf = kfd::bdf_from_location(p.get("domain"), agent.location_id);
  agent.drm_render_minor = p.has("drm_render_minor") ? as_int(p.get("drm_render_minor")) : -1;
  agent.shader_engines = as_int(p.get("array_count"));
  agent.simd_arrays_per_engine = as_int(p.get("simd_arrays_per_engine"));
  agent.cu_per_simd_array = as_int(p.get("cu_per_simd_array"));
  agent.xcc_count = as_int(p.get("num_xcc"));
  agent.lds_bytes = p.get("lds_size_in_kb") * 1024;
  agent.local_memory_bytes = p.get("local_mem_size");
  agent.fw_version = as_int(p.get("fw_version"));
  agent.sdma_fw_version = as_int(p.get("sdma_fw_version"));
  agent.cp_queues = as_int(p.get("num_cp_queues"));
  agent.sdma_engines = as_int(p.get("num_sdma_engines"));
  agent.sdma_xgmi_engines = as_int(p.get("num_sdma_xgmi_engines"));
  agent.hive_id = p.get("hive_id");
  if (const std::uint64_t id = p.get("unique_id"); id != 0) {
    agent.unique_id = fmt::format("{:016x}", id);
    agent.uuid = "GPU-" + agent.unique_id;  // rocminfo's form
  }

  // Marketing name and, where the kernel publishes no gfx_target_version (older kernels), the ISA:
  // the library's discovery, which names the GPU everywhere (libdrm's amdgpu.ids by device id and
  // the card's PCI revision, else our table).
  if (gpu != nullptr) agent.marketing_name = gpu->model.name;
  const std::uint64_t gfx = p.get("gfx_target_version");
  agent.isa = gfx != 0 ? gfx_target_name(gfx) : gpu != nullptr ? gpu->model.gfx_target : std::string();
  agent.name = !agent.isa.empty() ? agent.isa : agent.marketing_name;
}

void fill_cpu(const Properties& p, const std::vector<std::map<std::string, std::string>>& cpuinfo, Agent& agent) {
  agent.cpu_cores = as_int(p.get("cpu_cores_count"));
  agent.cpu_core_id_base = as_int(p.get("cpu_core_id_base"));
  agent.max_clock_mhz = as_int(p.get("max_engine_clk_ccompute"));
  // The node's first core is the processor whose APIC id is cpu_core_id_base (libhsakmt's rule);
  // a single-socket /proc/cpuinfo without apicid lines names the one model.
  const std::map<std::string, std::string>* match = nullptr;
  for (const auto& cpu : cpuinfo) {
    const auto apic = cpu.find("apicid");
    if (apic != cpu.end() && parse_uint(apic->second) == static_cast<std::uint64_t>(agent.cpu_core_id_base)) {
      match = &cpu;
      break;
    }
  }
  if (match == nullptr && !cpuinfo.empty()) match = &cpuinfo.front();
  if (match != nullptr) {
    if (const auto it = match->find("model name"); it != match->end()) agent.name = agent.marketing_name = it->second;
    if (const auto it = match->find("vendor_id"); it != match->end()) agent.vendor = cpu_vendor(it->second);
  }
}

}  // namespace

std::vector<Agent> read_kfd_agents(const FsView& fs, std::vector<std::string>& errors) {
  kfd::Topology topology = kfd::read_topology(fs);
  errors.insert(errors.end(), topology.errors.begin(), topology.errors.end());
  if (topology.nodes.empty()) return {};

  const auto cpuinfo = read_cpuinfo(fs);
  const amdgpu::Discovery discovered = amdgpu::discover_gpus(fs, topology);
  std::map<int, const amdgpu::AmdGpu*> gpu_of_node;
  for (const amdgpu::AmdGpu& gpu : discovered.gpus) {
    for (const kfd::Node& node : gpu.kfd) gpu_of_node.emplace(node.id, &gpu);
  }
  std::vector<Agent> agents;
  for (kfd::Node& node : topology.nodes) {
    Agent agent;
    agent.node = node.id;
    agent.source = "kfd";
    agent.gpu_id = node.gpu_id;
    agent.problems = std::move(node.problems);
    const Properties& p = node.properties;
    agent.kind = node.is_gpu() ? Agent::Kind::gpu : Agent::Kind::cpu;
    if (agent.kind == Agent::Kind::gpu) {
      const auto gpu = gpu_of_node.find(node.id);
      fill_gpu(fs, p, gpu != gpu_of_node.end() ? gpu->second : nullptr, agent);
    } else {
      fill_cpu(p, cpuinfo, agent);
    }
    if (agent.name.empty()) agent.name = node.name;

    for (const Properties& bank : kfd::read_children(fs, node.id, "mem_banks", agent.problems)) {
      Agent::Pool pool;
      pool.kind = kfd::heap_name(bank.get("heap_type"));
      pool.bytes = bank.get("size_in_bytes");
      pool.width_bits = as_int(bank.get("width"));
      pool.max_clock_mhz = as_int(bank.get("mem_clk_max"));
      agent.memory_clock_mhz = std::max(agent.memory_clock_mhz, pool.max_clock_mhz);
      agent.pools.push_back(std::move(pool));
    }
    // A GPU lists one cache per CU (or CU group): rocminfo shows one size per level; we keep each
    // distinct (level, type, size, line) once with its count.
    std::map<std::tuple<int, std::string, std::uint64_t, int>, int> caches;
    for (const Properties& cache : kfd::read_children(fs, node.id, "caches", agent.problems)) {
      ++caches[{as_int(cache.get("level")), kfd::cache_type_name(cache.get("type")), cache.get("size") * 1024,
                as_int(cache.get("cache_line_size"))}];
    }
    for (const auto& [key, count] : caches) {
      agent.caches.push_back({std::get<0>(key), std::get<2>(key), std::get<1>(key), std::get<3>(key), count});
    }
    for (const kfd::IoLink& link : kfd::read_io_links(fs, node.id, agent.problems)) {
      agent.links.push_back({link.node_to, kfd::link_type_name(link.type), as_int(link.weight), link.min_bandwidth,
                             link.max_bandwidth});
    }
    agents.push_back(std::move(agent));
  }

  // Compute partitions: the GPU nodes of one PCI slot (domain, bus, device), in location_id order.
  std::map<std::string, std::vector<Agent*>> slots;
  for (Agent& agent : agents) {
    if (agent.kind == Agent::Kind::gpu) slots[agent.bdf.substr(0, agent.bdf.size() - 1)].push_back(&agent);
  }
  for (auto& [slot, members] : slots) {
    std::sort(members.begin(), members.end(), [](const Agent* a, const Agent* b) { return a->location_id < b->location_id; });
    for (std::size_t i = 0; i < members.size(); ++i) {
      members[i]->partition_count = static_cast<int>(members.size());
      members[i]->partition_index = members.size() > 1 ? static_cast<int>(i) : -1;
    }
  }
  return agents;
}

}  // namespace hipstack::smi::detail::info
