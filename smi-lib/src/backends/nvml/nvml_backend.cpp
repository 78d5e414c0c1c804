// NVML backend object: discovery, summaries, MIG partitions, processes and topology.
#include "nvml_backend.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "../../process_owner.hpp"
#include "../../readings.hpp"
#include "../cpu_affinity.hpp"

namespace hipstack::smi::detail {
namespace nvml {
namespace {

constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

const char* pcie_path_name(int level) {
  switch (level) {
    case kTopologyInternal: return "board";
    case kTopologySingle: return "switch";
    case kTopologyMultiple: return "switches";
    case kTopologyHostBridge: return "host_bridge";
    case kTopologyNode: return "numa_node";
    case kTopologySystem: return "system";
    default: return nullptr;
  }
}

// Hops through the PCIe hierarchy that each common-ancestor level implies (nvidia-smi topo's
// PIX=1 switch, PXB=several, PHB=host bridge, NODE, SYS across sockets).
int pcie_hops(int level) { return level / 10 + 1; }

// A MIG device and its slot (the index nvmlDeviceGetMigDeviceHandleByIndex takes: slots may be empty).
struct MigDevice {
  unsigned slot = 0;
  Device handle = nullptr;
};

// MIG devices of one GPU (empty when MIG is off or not supported).
std::vector<MigDevice> mig_devices(const Api& api, Device device) {
  std::vector<MigDevice> out;
  unsigned current = 0;
  unsigned pending = 0;
  if (device == nullptr || api.mig_mode == nullptr || api.mig_mode(device, &current, &pending) != kSuccess || current == 0) return out;
  unsigned count = 0;
  if (api.max_mig_devices == nullptr || api.mig_device_by_index == nullptr ||
      api.max_mig_devices(device, &count) != kSuccess) {
    return out;
  }
  for (unsigned i = 0; i < count && i < 64; ++i) {
    Device mig = nullptr;
    if (api.mig_device_by_index(device, i, &mig) == kSuccess && mig != nullptr) out.push_back({i, mig});
  }
  return out;
}

struct NvlinkPeers {
  std::map<std::string, int> direct;  // peer BDF -> active links straight to it
  int to_switches = 0;                // active links to NVSwitches
};

// Where each active NVLink of one GPU goes.
NvlinkPeers nvlink_peers(const Api& api, Device device) {
  NvlinkPeers peers;
  if (device == nullptr || api.nvlink_state == nullptr || api.nvlink_remote_pci == nullptr) return peers;
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    EnableState active = 0;
    const Return state = api.nvlink_state(device, link, &active);
    if (state == kErrorInvalidArgument || state == kErrorNotSupported) break;
    if (state != kSuccess || active == 0) continue;
    int type = kNvlinkRemoteGpu;
    if (api.nvlink_remote_type != nullptr && api.nvlink_remote_type(device, link, &type) != kSuccess) continue;
    if (type == kNvlinkRemoteSwitch) {
      ++peers.to_switches;
      continue;
    }
    PciInfo remote{};
    if (type == kNvlinkRemoteGpu && api.nvlink_remote_pci(device, link, &remote) == kSuccess) {
      ++peers.direct[normalise_bdf(remote.busId)];
    }
  }
  return peers;
}

// The partitions' handles: the MIG devices, or the GPU itself as its one partition (MIG off; its
// slot is then no MIG slot).
std::vector<MigDevice> partition_handles(const Api& api, const NvidiaGpu& gpu) {
  if (gpu.handle == nullptr) return {};
  auto handles = mig_devices(api, gpu.handle);
  if (handles.empty()) handles.push_back({0, gpu.handle});
  return handles;
}

// A partition's index, BDF and id (its MIG device UUID, or "<gpu uuid>/<index>" where NVML gives
// none); UUID and UUID_CODE are what nvmlDeviceGetUUID answered.
Partition named_partition(const Api& api, const NvidiaGpu& gpu, Device handle, std::size_t index, std::string& uuid,
                          Return& uuid_code) {
  Partition p;
  p.index = static_cast<std::uint32_t>(index);
  p.bdf = gpu.bdf;
  uuid_code = api.uuid == nullptr ? kErrorFunctionNotFound : read_string(api.uuid, handle, kUuidSize, uuid);
  p.id = uuid_code == kSuccess ? uuid : fmt::format("{}/{}", gpu.uuid, index);
  return p;
}

}  // namespace

NvmlBackend::NvmlBackend(const FsView& fs, std::unique_ptr<Library> library, std::vector<NvidiaGpu> gpus)
    : fs_(fs), library_(std::move(library)), gpus_(std::move(gpus)) {
  for (const NvidiaGpu& gpu : gpus_) {
    const auto migs = mig_devices(library_->api(), gpu.handle);
    partition_counts_.push_back(migs.empty() ? 1u : static_cast<std::uint32_t>(migs.size()));
    gpm_.push_back(std::make_unique<GpmWindow>(gpm_calls_));
  }
  xids_ = std::make_unique<XidWatch>(*library_, gpus_);
}

DeviceSummary NvmlBackend::summary(std::size_t device) const {
  const NvidiaGpu& gpu = gpus_.at(device);
  DeviceSummary s;
  s.vendor = "nvidia";
  s.backend = "nvml";
  s.bdf = gpu.bdf;
  s.uuid = gpu.uuid;
  s.name = gpu.name;
  s.partition_count = partition_counts_.at(device);
  return s;
}

std::string NvmlBackend::fault(std::size_t device, const SampleOptions* before) const {
  const NvidiaGpu& gpu = gpus_.at(device);
  if (!gpu.fault.empty()) return gpu.fault;
  // NVML answers GPU_IS_LOST to every query of a GPU that fell off the bus, so a sample of a few
  // named live metrics (a poller's: one pynvml call) is not probed first: the probe would cost as
  // much as the read it guards, and each read, a query of the device, says itself that the GPU is
  // lost. Identity and static facts may come from what was read at open, XIDs from the event
  // drain: a sample naming any of those is probed.
  if (before != nullptr && !before->metrics.empty() && !before->identity && !before->static_info && !before->window &&
      std::none_of(before->metrics.begin(), before->metrics.end(), [](MetricId id) {
        return id == MetricId::xid_errors || id == MetricId::xid_last || id == MetricId::xid_last_time;
      })) {
    return {};
  }
  // Else the UUID, the cheapest query (the driver caches it).
  const Api& api = library_->api();
  std::string uuid;
  if (api.uuid != nullptr) {
    if (const Return code = read_string(api.uuid, gpu.handle, kUuidSize, uuid); code == kErrorGpuIsLost) {
      return "the GPU is lost (fallen off the bus): nvmlDeviceGetUUID: " + library_->describe(code);
    }
  }
  return {};
}

void NvmlBackend::sample(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const {
  const NvidiaGpu& gpu = gpus_.at(device);
  if (options.identity) read_identity(*library_, gpu, options, out);
  if (options.static_info) {
    read_static(*library_, gpu, options, out);
    const auto& wanted = options.metrics;
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), MetricId::cpu_affinity) != wanted.end()) {
      ReadingList list(out);  // the kernel's list for the PCI device, as for every vendor
      read_cpu_affinity(fs_, gpu.bdf.empty() ? std::string() : "/sys/bus/pci/devices/" + gpu.bdf + "/local_cpulist", list);
    }
  }
  if (options.live) {
    read_live(*library_, gpu, options, out);
    xids_->read(device, options, out);
    if (gpu.handle != nullptr && asked_for(options, MetricId::running_processes)) read_running_processes(gpu, out);
  }
  if (options.window && gpu.handle != nullptr) gpm_.at(device)->read(*library_, gpu, options, out);
}

std::vector<Partition> NvmlBackend::partition_names(std::size_t device) const {
  const NvidiaGpu& gpu = gpus_.at(device);
  const auto handles = partition_handles(library_->api(), gpu);
  std::vector<Partition> result;
  for (std::size_t i = 0; i < handles.size(); ++i) {
    std::string uuid;
    Return uuid_code = kSuccess;
    result.push_back(named_partition(library_->api(), gpu, handles[i].handle, i, uuid, uuid_code));
  }
  return result;
}

std::vector<Partition> NvmlBackend::partitions(std::size_t device) const {
  const NvidiaGpu& gpu = gpus_.at(device);
  const Api& api = library_->api();
  const auto migs = partition_handles(api, gpu);
  const bool whole_gpu = migs.size() == 1 && migs.front().handle == gpu.handle;
  std::vector<Partition> result;
  for (std::size_t i = 0; i < migs.size(); ++i) {
    const Device handle = migs[i].handle;
    std::string uuid;
    Return uuid_code = kSuccess;
    Partition p = named_partition(api, gpu, handle, i, uuid, uuid_code);
    ReadingList list(p.readings);
    auto report = [&](MetricId id, const char* function, Return code, std::int64_t value) {
      if (code == kSuccess) list.integer(id, value, function);
      else list.failed(id, errno_for(code), fmt::format("{}: {}", function, library_->describe(code)));
    };
    if (uuid_code == kSuccess) list.text(MetricId::partition_uuid, uuid, "nvmlDeviceGetUUID");
    else list.failed(MetricId::partition_uuid, errno_for(uuid_code), "nvmlDeviceGetUUID: " + library_->describe(uuid_code));
    // Each call is its own statement: its output must be written before the value is read.
    DeviceAttributes attributes{};
    const Return attributes_code = api.attributes == nullptr ? kErrorFunctionNotFound : api.attributes(handle, &attributes);
    report(MetricId::partition_compute_units, "nvmlDeviceGetAttributes", attributes_code, attributes.multiprocessorCount);
    Memory memory{};
    const Return memory_code = api.memory == nullptr ? kErrorFunctionNotFound : api.memory(handle, &memory);
    report(MetricId::partition_memory, "nvmlDeviceGetMemoryInfo", memory_code, static_cast<std::int64_t>(memory.total));
    report(MetricId::partition_memory_used, "nvmlDeviceGetMemoryInfo", memory_code, static_cast<std::int64_t>(memory.used));
    Bar1Memory bar1{};
    const Return bar1_code = api.bar1_memory == nullptr ? kErrorFunctionNotFound : api.bar1_memory(handle, &bar1);
    report(MetricId::partition_bar1_total, "nvmlDeviceGetBAR1MemoryInfo", bar1_code, static_cast<std::int64_t>(bar1.bar1Total));
    report(MetricId::partition_bar1_used, "nvmlDeviceGetBAR1MemoryInfo", bar1_code, static_cast<std::int64_t>(bar1.bar1Used));
    if (whole_gpu) {
      for (const MetricId id : {MetricId::partition_gpu_instance_id, MetricId::partition_compute_instance_id, MetricId::partition_slot,
                                MetricId::partition_name}) {
        list.failed(id, ENOENT, "MIG is off: the partition is the whole GPU");
      }
    } else {
      std::string name;
      const Return name_code = api.name == nullptr ? kErrorFunctionNotFound : read_string(api.name, handle, kNameSize, name);
      if (name_code == kSuccess) list.text(MetricId::partition_name, name, "nvmlDeviceGetName");
      else list.failed(MetricId::partition_name, errno_for(name_code), "nvmlDeviceGetName: " + library_->describe(name_code));
      list.integer(MetricId::partition_slot, migs[i].slot, "nvmlDeviceGetMigDeviceHandleByIndex");
      unsigned gi = 0;
      const Return gi_code = api.gpu_instance_id == nullptr ? kErrorFunctionNotFound : api.gpu_instance_id(handle, &gi);
      report(MetricId::partition_gpu_instance_id, "nvmlDeviceGetGpuInstanceId", gi_code, gi);
      unsigned ci = 0;
      const Return ci_code =
          api.compute_instance_id == nullptr ? kErrorFunctionNotFound : api.compute_instance_id(handle, &ci);
      report(MetricId::partition_compute_instance_id, "nvmlDeviceGetComputeInstanceId", ci_code, ci);
    }
    result.push_back(std::move(p));
  }
  return result;
}

namespace {

using ProcessQuery = Return (*)(Device, unsigned*, nvml::ProcessInfo*);

// One of NVML's process lists: asks with room for 16, then for as many as it says (plus room for
// processes that start meanwhile).
Return query_processes(ProcessQuery query, Device device, std::vector<nvml::ProcessInfo>& infos) {
  infos.resize(16);
  unsigned count = static_cast<unsigned>(infos.size());
  Return code = query(device, &count, infos.data());
  for (int attempt = 0; code == kErrorInsufficientSize && attempt < 4; ++attempt) {
    infos.resize(count + 16);
    count = static_cast<unsigned>(infos.size());
    code = query(device, &count, infos.data());
  }
  infos.resize(code == kSuccess ? std::min<std::size_t>(count, infos.size()) : 0);
  return code;
}

}  // namespace

// Distinct PIDs over the compute and the graphics list; unknown (not 0) when neither answered.
void NvmlBackend::read_running_processes(const NvidiaGpu& gpu, std::vector<Reading>& out) const {
  const Api& api = library_->api();
  ReadingList list(out);
  std::set<unsigned> pids;
  Return failure = kErrorFunctionNotFound;
  bool answered = false;
  for (const ProcessQuery query : {api.compute_processes, api.graphics_processes}) {
    if (query == nullptr) continue;
    std::vector<nvml::ProcessInfo> infos;
    const Return code = query_processes(query, gpu.handle, infos);
    if (code != kSuccess) {
      failure = code;
      continue;
    }
    answered = true;
    for (const nvml::ProcessInfo& info : infos) pids.insert(info.pid);
  }
  if (!answered) {
    return list.failed(MetricId::running_processes, errno_for(failure),
                       "nvmlDeviceGetComputeRunningProcesses/GraphicsRunningProcesses: " + library_->describe(failure));
  }
  list.integer(MetricId::running_processes, static_cast<std::int64_t>(pids.size()),
               "nvmlDeviceGetComputeRunningProcesses_v3 and nvmlDeviceGetGraphicsRunningProcesses_v3");
}

std::vector<smi::ProcessInfo> NvmlBackend::processes(std::size_t device, unsigned interval_ms) const {
  const NvidiaGpu& gpu = gpus_.at(device);
  const Api& api = library_->api();
  struct Seen {
    smi::ProcessInfo info;
    bool compute = false;
    bool graphics = false;
  };
  std::map<unsigned, Seen> by_pid;
  if (gpu.handle == nullptr) return {};
  const std::pair<Return (*)(Device, unsigned*, nvml::ProcessInfo*), bool> queries[] = {
      {api.compute_processes, true}, {api.graphics_processes, false}};
  for (const auto& [query, compute] : queries) {
    if (query == nullptr) continue;
    std::vector<nvml::ProcessInfo> infos;
    if (query_processes(query, gpu.handle, infos) != kSuccess) continue;
    for (std::size_t i = 0; i < infos.size(); ++i) {
      Seen& seen = by_pid[infos[i].pid];
      (compute ? seen.compute : seen.graphics) = true;
      ReadingList list(seen.info.readings);
      if (seen.info.readings.empty()) {
        seen.info.pid = static_cast<std::int32_t>(infos[i].pid);
        if (infos[i].usedGpuMemory == kValueNotAvailable) {
          list.failed(MetricId::process_vram, EACCES, "NVML: used memory not available (no permission or WDDM)");
        } else {
          list.integer(MetricId::process_vram, static_cast<std::int64_t>(infos[i].usedGpuMemory), "NVML process list");
        }
        if (infos[i].gpuInstanceId != kInvalidInstanceId) {
          list.integer(MetricId::process_gpu_instance_id, infos[i].gpuInstanceId, "NVML process list");
          list.integer(MetricId::process_compute_instance_id, infos[i].computeInstanceId, "NVML process list");
        } else {
          list.failed(MetricId::process_gpu_instance_id, ENOENT, "not in a MIG instance");
          list.failed(MetricId::process_compute_instance_id, ENOENT, "not in a MIG instance");
        }
      }
    }
  }
  std::map<unsigned, smi::ProcessInfo*> infos;
  for (auto& [pid, seen] : by_pid) infos.emplace(pid, &seen.info);
  if (!infos.empty()) add_process_use(gpu, device, interval_ms, infos);
  std::vector<smi::ProcessInfo> result;
  for (auto& [pid, seen] : by_pid) {
    ReadingList list(seen.info.readings);
    list.text(MetricId::process_type, seen.compute && seen.graphics ? "compute+graphics" : seen.compute ? "compute" : "graphics",
              "NVML process lists");
    describe_process(fs_, seen.info);
    result.push_back(std::move(seen.info));
  }
  return result;
}

std::vector<BadPage> NvmlBackend::bad_pages(std::size_t device) const {
  const Api& api = library_->api();
  std::vector<BadPage> result;
  if (gpus_.at(device).handle == nullptr) throw Error(Error::Code::read_failure, gpus_.at(device).fault);
  if (api.retired_pages == nullptr) return result;
  const std::pair<int, const char*> causes[] = {{kRetiredMultipleSbe, "retired_sbe"}, {kRetiredDbe, "retired_dbe"}};
  for (const auto& [cause, state] : causes) {
    unsigned count = 0;
    Return code = api.retired_pages(gpus_.at(device).handle, cause, &count, nullptr);
    if (code == kErrorNotSupported || code == kErrorFunctionNotFound) continue;
    if ((code != kSuccess && code != kErrorInsufficientSize) || count == 0) {
      if (code != kSuccess && code != kErrorInsufficientSize) {
        throw Error(Error::Code::read_failure, "nvmlDeviceGetRetiredPages: " + library_->describe(code));
      }
      continue;
    }
    std::vector<unsigned long long> addresses(count);
    code = api.retired_pages(gpus_.at(device).handle, cause, &count, addresses.data());
    if (code != kSuccess) throw Error(Error::Code::read_failure, "nvmlDeviceGetRetiredPages: " + library_->describe(code));
    for (unsigned i = 0; i < count && i < addresses.size(); ++i) result.push_back({addresses[i], 0, state});
  }
  return result;
}

std::vector<Link> NvmlBackend::links() const {
  const Api& api = library_->api();
  std::vector<NvlinkPeers> peers;
  for (const NvidiaGpu& gpu : gpus_) peers.push_back(nvlink_peers(api, gpu.handle));
  std::vector<Link> result;
  for (std::size_t a = 0; a < gpus_.size(); ++a) {
    for (std::size_t b = 0; b < gpus_.size(); ++b) {
      if (a == b) continue;
      Link link;
      link.from = static_cast<std::uint32_t>(a);
      link.to = static_cast<std::uint32_t>(b);
      ReadingList list(link.readings);
      int level = 0;
      const Return code = api.common_ancestor == nullptr ? kErrorFunctionNotFound
                          : gpus_[a].handle == nullptr || gpus_[b].handle == nullptr
                              ? kErrorInvalidArgument
                              : api.common_ancestor(gpus_[a].handle, gpus_[b].handle, &level);
      // NVLink: links straight to the peer, plus those through NVSwitches both GPUs reach (as
      // nvidia-smi topo counts NV<n> on NVSwitch systems).
      const auto direct = peers[a].direct.find(gpus_[b].bdf);
      const int nvlinks = (direct == peers[a].direct.end() ? 0 : direct->second) +
                          std::min(peers[a].to_switches, peers[b].to_switches);
      list.integer(MetricId::link_nvlink_count, nvlinks, "nvmlDeviceGetNvLinkRemotePciInfo / RemoteDeviceType");
      if (code == kSuccess && pcie_path_name(level) != nullptr) {
        const bool nvlink = nvlinks > 0;
        const bool through_switch = nvlink && direct == peers[a].direct.end();
        list.text(MetricId::link_type, nvlink ? "nvlink" : "pcie",
                  nvlink ? "NVLink state and far ends" : "nvmlDeviceGetTopologyCommonAncestor");
        list.text(MetricId::link_pcie_path, pcie_path_name(level), "nvmlDeviceGetTopologyCommonAncestor");
        list.integer(MetricId::link_hops, nvlink ? (through_switch ? 2 : 1) : pcie_hops(level),
                     nvlink ? "NVLink (2 through an NVSwitch)" : "nvmlDeviceGetTopologyCommonAncestor");
      } else {
        const std::string why = code == kSuccess ? fmt::format("nvmlDeviceGetTopologyCommonAncestor: unknown level {}", level)
                                                 : "nvmlDeviceGetTopologyCommonAncestor: " + library_->describe(code);
        const int error = code == kSuccess ? EINVAL : errno_for(code);
        for (const MetricId id : {MetricId::link_type, MetricId::link_pcie_path, MetricId::link_hops}) list.failed(id, error, why);
      }
      result.push_back(std::move(link));
    }
  }
  return result;
}

}  // namespace nvml

BackendProbe probe_nvml(const FsView& fs, const std::string& library_path, bool shutdown) {
  BackendProbe probe;
  auto library = std::make_unique<nvml::Library>(library_path, shutdown);
  if (!library->ready()) {
    probe.reason = library->reason();
    return probe;
  }
  const nvml::Api& api = library->api();
  unsigned count = 0;
  if (const nvml::Return code = api.device_count(&count); code != nvml::kSuccess) {
    probe.reason = "nvmlDeviceGetCount: " + library->describe(code);
    return probe;
  }
  std::vector<nvml::NvidiaGpu> gpus;
  std::vector<std::string> skipped;
  const unsigned listed = std::min<unsigned>(count, kMaxDevicesPerBackend);
  for (unsigned i = 0; i < listed; ++i) {
    nvml::NvidiaGpu gpu;
    if (const nvml::Return code = api.device_by_index(i, &gpu.handle); code != nvml::kSuccess) {
      // A lost or inaccessible GPU stays listed, as unreadable, so every command shows it; the
      // others still work.
      gpu.handle = nullptr;
      gpu.fault = fmt::format("NVML gives no handle for GPU {}: nvmlDeviceGetHandleByIndex: {}", i, library->describe(code));
      skipped.push_back(fmt::format("GPU {}: {}", i, library->describe(code)));
      gpus.push_back(std::move(gpu));
      continue;
    }
    nvml::PciInfo pci{};
    if (api.pci_info != nullptr && api.pci_info(gpu.handle, &pci) == nvml::kSuccess) gpu.bdf = normalise_bdf(pci.busId);
    if (api.uuid != nullptr) (void)nvml::read_string(api.uuid, gpu.handle, nvml::kUuidSize, gpu.uuid);
    // No name is made up for a GPU that does not answer: its fault says why.
    if (api.name != nullptr) (void)nvml::read_string(api.name, gpu.handle, nvml::kNameSize, gpu.name);
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) {
    probe.reason = "NVML found no NVIDIA GPU";
    return probe;
  }
  probe.reason = fmt::format("{} GPU(s) through {}", gpus.size(), library->path());
  if (!skipped.empty()) probe.reason += fmt::format("; without a handle: {}", fmt::join(skipped, "; "));
  if (listed < count) probe.reason += fmt::format("; {} more left out: at most {} GPUs per backend", count - listed, kMaxDevicesPerBackend);
  probe.backend = std::make_unique<nvml::NvmlBackend>(fs, std::move(library), std::move(gpus));
  return probe;
}

}  // namespace hipstack::smi::detail
