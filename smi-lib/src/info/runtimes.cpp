// The vendor runtimes as a program would meet them (probe_runtimes), and NVIDIA GPUs as agents
// (CUDA driver API for the compute facts, NVML for identity and memory), merged by PCI address.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "../backends/nvml/nvml_backend.hpp"
#include "../parse.hpp"
#include "info_internal.hpp"
#include "vendor_api.hpp"

namespace hipstack::smi::detail::info {
namespace {

bool nvidia_driver_present(const FsView& fs) { return fs.exists("/sys/module/nvidia") || fs.exists("/dev/nvidiactl"); }
bool amdgpu_driver_present(const FsView& fs) { return fs.exists("/sys/module/amdgpu") || fs.exists("/sys/class/kfd/kfd"); }

// CUDA's 12040 -> "12.4"; HIP's 60241134 -> "6.2.41134".
std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }
std::string hip_version_text(int version) {
  return fmt::format("{}.{}.{}", version / 10000000, (version / 100000) % 100, version % 100000);
}

std::string uuid_text(const cuda::Uuid& uuid) {
  std::string hex;
  for (const unsigned char byte : uuid.bytes) hex += fmt::format("{:02x}", byte);
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20, 12));
}

std::string read_bus_id(int (*fn)(char*, int, int), int device) {
  std::array<char, 64> buffer{};
  if (fn == nullptr || fn(buffer.data(), static_cast<int>(buffer.size()), device) != 0) return {};
  return normalise_bdf(buffer.data());
}

std::string read_name(int (*fn)(char*, int, int), int device) {
  std::array<char, 256> buffer{};
  if (fn == nullptr || fn(buffer.data(), static_cast<int>(buffer.size()), device) != 0) return {};
  return buffer.data();
}

RuntimeProbe probe_hip() {
  RuntimeProbe probe;
  probe.runtime = "hip";
  const HipRuntime hip;
  if (!hip.loaded()) {
    probe.error = hip.reason();
    return probe;
  }
  probe.found = true;
  probe.library_path = hip.path();
  const hip::Api& api = hip.api();
  int version = 0;
  if (api.runtime_version != nullptr && api.runtime_version(&version) == 0) probe.version = hip_version_text(version);
  if (api.driver_version != nullptr && api.driver_version(&version) == 0) probe.driver_version = hip_version_text(version);
  int count = 0;
  if (const hip::Error code = api.device_count(&count); code != 0) {
    probe.error = "hipGetDeviceCount: " + hip.describe(code);
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    RuntimeProbe::Device device;
    device.index = i;
    device.name = read_name(api.device_name, i);
    device.bdf = read_bus_id(api.device_pci_bus_id, i);
    std::size_t bytes = 0;
    if (api.device_total_mem != nullptr && api.device_total_mem(&bytes, i) == 0) device.memory_bytes = bytes;
    (void)api.device_attribute(&device.compute_units, hip::kMultiprocessorCount, i);
    (void)api.device_attribute(&device.warp_size, hip::kWarpSize, i);
    probe.devices.push_back(std::move(device));
  }
  return probe;
}

RuntimeProbe probe_cuda(const FsView& fs) {
  RuntimeProbe probe;
  probe.runtime = "cuda";
  const CudaDriver cuda;
  probe.found = cuda.loaded();
  probe.library_path = cuda.path();
  if (const FileText version = fs.read_text("/sys/module/nvidia/version"); version.ok()) probe.driver_version = version.text;
  if (!cuda.ready()) {
    probe.error = cuda.reason();
    return probe;
  }
  const cuda::Api& api = cuda.api();
  int version = 0;
  if (api.driver_version != nullptr && api.driver_version(&version) == 0) probe.version = cuda_version_text(version);
  int count = 0;
  if (const cuda::Result code = api.device_count(&count); code != 0) {
    probe.error = "cuDeviceGetCount: " + cuda.describe(code);
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cuda::Device handle = 0;
    if (api.device_get(&handle, i) != 0) continue;
    RuntimeProbe::Device device;
    device.index = i;
    device.name = read_name(api.device_name, handle);
    device.bdf = read_bus_id(api.device_pci_bus_id, handle);
    std::size_t bytes = 0;
    if (api.device_total_mem != nullptr && api.device_total_mem(&bytes, handle) == 0) device.memory_bytes = bytes;
    device.compute_units = cuda.attribute(handle, cuda::kMultiprocessorCount);
    device.warp_size = cuda.attribute(handle, cuda::kWarpSize);
    device.isa = fmt::format("sm_{}{}", cuda.attribute(handle, cuda::kComputeCapabilityMajor),
                             cuda.attribute(handle, cuda::kComputeCapabilityMinor));
    probe.devices.push_back(std::move(device));
  }
  return probe;
}

// One NVIDIA GPU from the CUDA driver API.
Agent cuda_agent(const CudaDriver& cuda, cuda::Device handle) {
  const cuda::Api& api = cuda.api();
  Agent agent;
  agent.kind = Agent::Kind::gpu;
  agent.vendor = "NVIDIA";
  agent.vendor_id = 0x10de;
  agent.source = "cuda";
  agent.name = agent.marketing_name = read_name(api.device_name, handle);
  agent.bdf = read_bus_id(api.device_pci_bus_id, handle);
  cuda::Uuid uuid{};
  if (api.device_uuid != nullptr && api.device_uuid(&uuid, handle) == 0) agent.uuid = uuid_text(uuid);
  agent.compute_capability_major = cuda.attribute(handle, cuda::kComputeCapabilityMajor);
  agent.compute_capability_minor = cuda.attribute(handle, cuda::kComputeCapabilityMinor);
  agent.isa = fmt::format("sm_{}{}", agent.compute_capability_major, agent.compute_capability_minor);
  agent.compute_units = cuda.attribute(handle, cuda::kMultiprocessorCount);
  agent.wavefront_size = cuda.attribute(handle, cuda::kWarpSize);
  agent.max_clock_mhz = cuda.attribute(handle, cuda::kClockRate) / 1000;
  agent.memory_clock_mhz = cuda.attribute(handle, cuda::kMemoryClockRate) / 1000;
  agent.max_threads_per_block = cuda.attribute(handle, cuda::kMaxThreadsPerBlock);
  agent.max_threads_per_cu = cuda.attribute(handle, cuda::kMaxThreadsPerMultiprocessor);
  agent.registers_per_cu = cuda.attribute(handle, cuda::kMaxRegistersPerMultiprocessor);
  agent.lds_bytes = static_cast<std::uint64_t>(cuda.attribute(handle, cuda::kMaxSharedMemoryPerMultiprocessor));
  std::size_t bytes = 0;
  if (api.device_total_mem != nullptr && api.device_total_mem(&bytes, handle) == 0) agent.local_memory_bytes = bytes;
  agent.pools.push_back({"device", agent.local_memory_bytes, cuda.attribute(handle, cuda::kGlobalMemoryBusWidth),
                         agent.memory_clock_mhz});
  if (const int l2 = cuda.attribute(handle, cuda::kL2CacheSize); l2 > 0) {
    agent.caches.push_back({2, static_cast<std::uint64_t>(l2), "unified", 0, 1});
  }
  return agent;
}

// NVML's view of one GPU, added to (or making) its agent: UUID, name, memory, PCI ids, clocks
// where CUDA did not give them.
void add_nvml(const nvml::Library& nvml, nvml::Device device, Agent& agent) {
  const nvml::Api& api = nvml.api();
  agent.kind = Agent::Kind::gpu;
  agent.vendor = "NVIDIA";
  agent.vendor_id = 0x10de;
  agent.source = agent.source.empty() ? "nvml" : agent.source + "+nvml";
  nvml::PciInfo pci{};
  if (api.pci_info != nullptr && api.pci_info(device, &pci) == nvml::kSuccess) {
    agent.bdf = normalise_bdf(pci.busId);
    agent.device_id = pci.pciDeviceId >> 16;
  }
  std::string text;
  if (api.uuid != nullptr && nvml::read_string(api.uuid, device, nvml::kUuidSize, text) == nvml::kSuccess) agent.uuid = text;
  if (api.name != nullptr && nvml::read_string(api.name, device, nvml::kNameSize, text) == nvml::kSuccess) {
    agent.marketing_name = text;
    if (agent.name.empty()) agent.name = text;
  }
  int major = 0, minor = 0;
  if (agent.isa.empty() && api.compute_capability != nullptr &&
      api.compute_capability(device, &major, &minor) == nvml::kSuccess) {
    agent.compute_capability_major = major;
    agent.compute_capability_minor = minor;
    agent.isa = fmt::format("sm_{}{}", major, minor);
  }
  nvml::DeviceAttributes attributes{};
  if (agent.compute_units == 0 && api.attributes != nullptr && api.attributes(device, &attributes) == nvml::kSuccess) {
    agent.compute_units = static_cast<int>(attributes.multiprocessorCount);
  }
  unsigned mhz = 0;
  if (agent.max_clock_mhz == 0 && api.max_clock != nullptr && api.max_clock(device, nvml::kClockSm, &mhz) == nvml::kSuccess) {
    agent.max_clock_mhz = static_cast<int>(mhz);
  }
  if (agent.memory_clock_mhz == 0 && api.max_clock != nullptr &&
      api.max_clock(device, nvml::kClockMem, &mhz) == nvml::kSuccess) {
    agent.memory_clock_mhz = static_cast<int>(mhz);
  }
  nvml::Memory memory{};
  if (agent.local_memory_bytes == 0 && api.memory != nullptr && api.memory(device, &memory) == nvml::kSuccess) {
    agent.local_memory_bytes = memory.total;
    agent.pools.push_back({"device", memory.total, 0, agent.memory_clock_mhz});
  }
  for (Agent::Pool& pool : agent.pools) {
    if (pool.max_clock_mhz == 0) pool.max_clock_mhz = agent.memory_clock_mhz;
  }
}

}  // namespace

std::vector<Agent> read_nvidia_agents(const FsView& fs, const OpenOptions& options) {
  std::vector<Agent> agents;
  std::map<std::string, std::size_t> by_bdf;
  // The CUDA driver only where the nvidia module is loaded: elsewhere it can only fail.
  if (nvidia_driver_present(fs)) {
    const CudaDriver cuda;
    int count = 0;
    if (cuda.ready() && cuda.api().device_count(&count) == 0) {
      for (int i = 0; i < count; ++i) {
        cuda::Device handle = 0;
        if (cuda.api().device_get(&handle, i) != 0) continue;
        agents.push_back(cuda_agent(cuda, handle));
      }
    }
  }
  if (options.enable_nvml) {
    const nvml::Library nvml(nvml_library_path(options), options.vendor_shutdown);
    unsigned count = 0;
    if (nvml.ready() && nvml.api().device_count(&count) == nvml::kSuccess) {
      // NVML numbers GPUs in PCI order (as nvidia-smi does); CUDA's default order is fastest first.
      std::vector<Agent> ordered;
      for (unsigned i = 0; i < count; ++i) {
        nvml::Device device = nullptr;
        if (nvml.api().device_by_index(i, &device) != nvml::kSuccess) continue;
        nvml::PciInfo pci{};
        std::string bdf;
        if (nvml.api().pci_info != nullptr && nvml.api().pci_info(device, &pci) == nvml::kSuccess) bdf = normalise_bdf(pci.busId);
        auto match = std::find_if(agents.begin(), agents.end(), [&bdf](const Agent& a) { return !bdf.empty() && a.bdf == bdf; });
        Agent agent;
        if (match != agents.end()) {
          agent = std::move(*match);
          agents.erase(match);
        }
        add_nvml(nvml, device, agent);
        ordered.push_back(std::move(agent));
      }
      for (Agent& rest : agents) ordered.push_back(std::move(rest));  // CUDA saw it, NVML did not
      agents = std::move(ordered);
    }
  }
  for (Agent& agent : agents) {
    if (const auto address = agent.bdf.size() == 12 ? agent.bdf : std::string(); !address.empty()) {
      agent.domain = static_cast<int>(parse_hex(address.substr(0, 4)).value_or(0));
      const std::uint64_t bus = parse_hex(address.substr(5, 2)).value_or(0);
      const std::uint64_t dev = parse_hex(address.substr(8, 2)).value_or(0);
      const std::uint64_t fn = parse_hex(address.substr(11, 1)).value_or(0);
      agent.location_id = bus << 8 | dev << 3 | fn;
    }
  }
  return agents;
}

}  // namespace hipstack::smi::detail::info

namespace hipstack::smi {

std::vector<RuntimeProbe> probe_runtimes(const OpenOptions& options) {
  using namespace detail::info;
  const Roots roots = resolve_roots(options);
  const detail::RootedFs fs(roots.sys, roots.proc, roots.dev);
  std::vector<RuntimeProbe> probes;
  for (const char* runtime : {"hip", "cuda"}) {
    const bool hip = std::string_view(runtime) == "hip";
    RuntimeProbe skipped;
    skipped.runtime = runtime;
    if (roots.capture) {
      // The capture describes another machine: loading this one's runtime would mix the two.
      skipped.skipped = "capture";
    } else if (hip && !amdgpu_driver_present(fs)) {
      skipped.skipped = "no amdgpu driver loaded";
    } else if (!hip && !nvidia_driver_present(fs)) {
      skipped.skipped = "no nvidia driver loaded";
    }
    if (!skipped.skipped.empty()) probes.push_back(std::move(skipped));
    else probes.push_back(hip ? probe_hip() : probe_cuda(fs));
  }
  return probes;
}

}  // namespace hipstack::smi
