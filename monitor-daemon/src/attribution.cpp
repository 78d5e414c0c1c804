// Whose work is on each GPU: the kubelet's answers and the processes' containers joined
// (attribution.hpp).
#include "attribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace hipstack::smid {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> integer_fact(const std::vector<smi::Reading>& readings, smi::MetricId id) {
  for (const smi::Reading& r : readings) {
    if (r.id != id || !r.ok()) continue;
    if (const auto* value = std::get_if<std::int64_t>(&r.value)) return *value;
  }
  return std::nullopt;
}

// A shared replica's ID names the device it shares: NVIDIA's "<id>::<n>", AMD's "<id>-slice-<n>".
std::string_view shared_device(std::string_view id) {
  if (const auto at = id.rfind("::"); at != std::string_view::npos && whole_number(id.substr(at + 2))) return id.substr(0, at);
  if (const auto at = id.rfind("-slice-"); at != std::string_view::npos && whole_number(id.substr(at + 7))) return id.substr(0, at);
  return id;
}

// A device-plugin style ID: a UUID (GPU or MIG), a partition id, a BDF, an amdgpu_xcp_N.
std::optional<Target> match_id(std::string_view raw, const std::vector<GpuKeys>& gpus) {
  const std::string_view id = shared_device(raw);
  const std::string wanted = lower(id);
  const std::string as_bdf = smi::normalise_bdf(id);
  for (const GpuKeys& gpu : gpus) {
    if (!gpu.uuid.empty() && wanted == lower(gpu.uuid)) return Target{gpu.index, std::nullopt};
    for (const GpuKeys::Partition& p : gpu.partitions) {
      if (wanted == lower(p.id) || (!p.platform_device.empty() && id == p.platform_device)) return Target{gpu.index, p.index};
    }
    // AMD's plugin names a partitioned GPU's PCI function for its first partition (the PCI device
    // is partition 0; the others are amdgpu_xcp_N platform devices), an unpartitioned one whole.
    if (!gpu.bdf.empty() && as_bdf == gpu.bdf) {
      return gpu.partitions.size() > 1 ? Target{gpu.index, gpu.partitions.front().index} : Target{gpu.index, std::nullopt};
    }
  }
  return std::nullopt;
}

// The target a render minor names: a GPU's own node or a partition's.
std::optional<Target> match_render_minor(std::int64_t minor, const std::vector<GpuKeys>& gpus) {
  for (const GpuKeys& gpu : gpus) {
    for (const GpuKeys::Partition& p : gpu.partitions) {
      if (p.render_minor == minor) return Target{gpu.index, gpu.partitions.size() > 1 ? std::optional(p.index) : std::nullopt};
    }
    if (gpu.render_minor == minor) return Target{gpu.index, std::nullopt};
  }
  return std::nullopt;
}

// DRA: AMD's driver (gpu.amd.com) names a GPU or partition "gpu-<card>-<render minor>", NVIDIA's
// (gpu.nvidia.com) a GPU "gpu-<minor of /dev/nvidiaN>" and a MIG device
// "gpu-<minor>-mig-<profile>-<placement>" (not matched: its placement is not a MIG instance index);
// any driver's CDI device names end in "=<device>", which may be a UUID or a BDF.
Match match_dra(const HeldDevice& device, const std::vector<GpuKeys>& gpus) {
  const std::string_view name = device.id;
  const std::string_view numbers = name.starts_with("gpu-") ? name.substr(4) : std::string_view();
  if (device.resource == "gpu.amd.com") {
    const auto dash = numbers.find('-');
    if (dash != std::string_view::npos && whole_number(numbers.substr(0, dash))) {
      if (const auto minor = whole_number(numbers.substr(dash + 1))) {
        if (const auto target = match_render_minor(*minor, gpus)) return {target, ""};
      }
    }
  }
  if (device.resource == "gpu.nvidia.com") {
    if (const auto minor = whole_number(numbers)) {
      for (const GpuKeys& gpu : gpus) {
        if (gpu.device_minor == minor) return {Target{gpu.index, std::nullopt}, ""};
      }
    }
  }
  for (const std::string& cdi : device.cdi_devices) {
    const auto equals = cdi.rfind('=');
    if (equals == std::string::npos) continue;
    if (const auto target = match_id(std::string_view(cdi).substr(equals + 1), gpus)) return {target, ""};
  }
  if (device.resource == "gpu.nvidia.com" && name.find("-mig-") != std::string_view::npos) {
    return {std::nullopt, fmt::format("DRA device {} of driver {} (pool {}): a MIG device named by its placement, which "
                                      "hipstack does not match to a MIG instance",
                                      device.id, device.resource, device.pool)};
  }
  return {std::nullopt, fmt::format("DRA device {} of driver {} (pool {}): not a GPU or partition here by its name "
                                    "(AMD gpu-CARD-RENDER, NVIDIA gpu-MINOR) nor by a CDI device naming a UUID or BDF",
                                    device.id, device.resource, device.pool)};
}

}  // namespace

GpuKeys gpu_keys(const smi::DeviceSummary& device, const std::vector<smi::Reading>& facts,
                 const std::vector<smi::Partition>& partitions, const std::map<std::int64_t, std::string>& xcp_by_render_minor) {
  GpuKeys keys;
  keys.index = device.index;
  keys.uuid = device.uuid;
  keys.bdf = device.bdf.empty() ? std::string() : smi::normalise_bdf(device.bdf);
  keys.card = integer_fact(facts, smi::MetricId::drm_card);
  keys.render_minor = integer_fact(facts, smi::MetricId::drm_render_minor);
  keys.device_minor = integer_fact(facts, smi::MetricId::device_minor);
  for (const smi::Partition& p : partitions) {
    GpuKeys::Partition part{p.index, p.id, integer_fact(p.readings, smi::MetricId::partition_render_minor), ""};
    if (part.render_minor) {
      if (const auto xcp = xcp_by_render_minor.find(*part.render_minor); xcp != xcp_by_render_minor.end()) part.platform_device = xcp->second;
    }
    keys.partitions.push_back(std::move(part));
  }
  return keys;
}

std::map<std::int64_t, std::string> xcp_platform_devices(const std::string& sysfs_root) {
  std::map<std::int64_t, std::string> found;
  const std::string platform = (sysfs_root.empty() ? std::string("/sys") : sysfs_root) + "/devices/platform";
  for (const std::string& name : directory_entries(platform)) {
    if (!name.starts_with("amdgpu_xcp_") || !whole_number(std::string_view(name).substr(11))) continue;
    for (const std::string& node : directory_entries(fmt::format("{}/{}/drm", platform, name))) {
      if (!node.starts_with("renderD")) continue;
      if (const auto minor = whole_number(std::string_view(node).substr(7))) found.emplace(*minor, name);
    }
  }
  return found;
}

bool gpu_resource(const HeldDevice& device) {
  const std::string_view resource = device.resource;
  return resource.starts_with("amd.com/") || resource.starts_with("nvidia.com/") || resource == "gpu.amd.com" ||
         resource == "gpu.nvidia.com";
}

Match match_held_device(const HeldDevice& device, const std::vector<GpuKeys>& gpus) {
  if (!device.claim.empty()) return match_dra(device, gpus);
  if (const auto target = match_id(device.id, gpus)) return {target, ""};
  return {std::nullopt, fmt::format("device {} of {}: no GPU here has this UUID, MIG UUID, BDF or partition device", device.id,
                                    device.resource)};
}

std::size_t cap_held(std::vector<ContainerDevices>& held) {
  std::size_t dropped = 0;
  for (std::size_t i = kMaxHeldContainers; i < held.size(); ++i) dropped += std::max<std::size_t>(held[i].devices.size(), 1);
  if (held.size() > kMaxHeldContainers) held.resize(kMaxHeldContainers);
  for (ContainerDevices& container : held) {
    if (container.devices.size() <= kMaxDevicesPerContainer) continue;
    dropped += container.devices.size() - kMaxDevicesPerContainer;
    container.devices.resize(kMaxDevicesPerContainer);
  }
  return dropped;
}

void match_holders(const std::vector<ContainerDevices>& held, const std::vector<GpuKeys>& gpus, Attribution& out) {
  for (const ContainerDevices& container : held) {
    for (const HeldDevice& device : container.devices) {
      const Match match = match_held_device(device, gpus);
      if (match.target) {
        out.holders.push_back({*match.target, container.pod, container.namespace_name, container.container, device.resource,
                               device.id, device.claim});
      } else if (gpu_resource(device)) {
        out.unmatched.push_back({container.pod, container.namespace_name, container.container, device, match.why_not});
      }
    }
  }
  // A shared GPU's replicas held by one container are one holding.
  std::sort(out.holders.begin(), out.holders.end(), [](const GpuHolder& a, const GpuHolder& b) {
    return std::tie(a.target.gpu, a.target.partition, a.namespace_name, a.pod, a.container, a.resource) <
           std::tie(b.target.gpu, b.target.partition, b.namespace_name, b.pod, b.container, b.resource);
  });
  out.holders.erase(std::unique(out.holders.begin(), out.holders.end(),
                                [](const GpuHolder& a, const GpuHolder& b) {
                                  return a.target == b.target && a.pod == b.pod && a.namespace_name == b.namespace_name &&
                                         a.container == b.container && a.resource == b.resource;
                                }),
                    out.holders.end());
}

std::vector<ContainerUse> container_use(std::uint32_t gpu, const std::vector<smi::ProcessInfo>& processes,
                                        const PodDirectory& directory) {
  std::map<std::string, ContainerUse> by_container;  // by container ID
  struct Sum {
    double value = 0;
    bool integer = true;
    int processes = 0;
  };
  std::map<std::string, std::map<std::pair<smi::MetricId, std::string>, Sum>> sums;
  for (const smi::ProcessInfo& process : processes) {
    const auto ref = parse_container_cgroup(process.cgroup);
    if (!ref) continue;
    auto [at, added] = by_container.try_emplace(ref->container_id);
    ContainerUse& use = at->second;
    if (added) {
      use.gpu = gpu;
      use.ref = *ref;
      use.name = directory.find(*ref);
    }
    use.pids.push_back(process.pid);
    for (const smi::Reading& r : process.readings) {
      const smi::MetricInfo* info = smi::find_metric(r.id);
      // Gauges with a unit add up across processes; identifiers (MIG instance ids) and counters
      // (which restart with each process) do not.
      if (info == nullptr || !r.ok() || info->kind != smi::Kind::live || info->type == smi::ValueType::text ||
          info->unit == smi::Unit::none) {
        continue;
      }
      const auto number = r.number();
      if (!number) continue;
      Sum& sum = sums[ref->container_id][{r.id, r.instance}];
      sum.value += *number;
      sum.integer = sum.integer && std::holds_alternative<std::int64_t>(r.value);
      ++sum.processes;
    }
  }
  std::vector<ContainerUse> out;
  for (auto& [id, use] : by_container) {
    for (const auto& [key, sum] : sums[id]) {
      smi::Reading r;
      r.id = key.first;
      r.instance = key.second;
      r.status = smi::Status::ok;
      if (sum.integer) r.value = static_cast<std::int64_t>(sum.value);
      else r.value = sum.value;
      r.detail = fmt::format("sum over {} of the container's {} process(es)", sum.processes, use.pids.size());
      use.readings.push_back(std::move(r));
    }
    out.push_back(std::move(use));
  }
  return out;
}

}  // namespace hipstack::smid
