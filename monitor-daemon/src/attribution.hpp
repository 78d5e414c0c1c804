// Whose work is on each GPU (docs/deploy-kubernetes.md, "Which pod uses each GPU"): the devices the
// kubelet says each container holds, matched to GPUs and partitions, and the processes on each GPU
// grouped by the container their cgroup puts them in, with their use summed.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "container_identity.hpp"
#include "kubelet_client.hpp"

namespace hipstack::smid {

// What a GPU and its partitions are known by, in the forms device plugins and DRA drivers use.
struct GpuKeys {
  struct Partition {
    std::uint32_t index = 0;
    std::string id;   // MIG device UUID, or "<gpu uuid>/<index>"
    std::optional<std::int64_t> render_minor;
    std::string platform_device;  // amdgpu_xcp_N, the name AMD's device plugin gives a partition
  };
  std::uint32_t index = 0;
  std::string uuid;
  std::string bdf;  // normalised: 0000:03:00.0
  std::optional<std::int64_t> card, render_minor;
  std::optional<std::int64_t> device_minor;  // N of /dev/nvidiaN
  std::vector<Partition> partitions;
};

// The keys of one sampled device: its summary, identity readings and partitions.
GpuKeys gpu_keys(const smi::DeviceSummary& device, const std::vector<smi::Reading>& facts,
                 const std::vector<smi::Partition>& partitions, const std::map<std::int64_t, std::string>& xcp_by_render_minor);

// amdgpu_xcp_N platform devices by the render minor of their DRM node, read from
// SYSFS/devices/platform/amdgpu_xcp_*/drm/renderD* (names only).
std::map<std::int64_t, std::string> xcp_platform_devices(const std::string& sysfs_root);

struct Target {
  std::uint32_t gpu = 0;
  std::optional<std::uint32_t> partition;
  bool operator==(const Target&) const = default;
};

// The GPU or partition a held device names, or why none: an AMD device plugin BDF (the whole GPU,
// or partition 0 of a partitioned one) or amdgpu_xcp_N, an NVIDIA UUID or MIG UUID, a shared
// replica of either ("::N", "-slice-N"), a DRA device (AMD's gpu-CARD-RENDER, NVIDIA's gpu-MINOR;
// any driver's CDI name whose device part is a UUID or BDF).
struct Match {
  std::optional<Target> target;
  std::string why_not;  // when there is no target
};
Match match_held_device(const HeldDevice& device, const std::vector<GpuKeys>& gpus);

// Whether a held device is meant to be a GPU (its resource or DRA driver is AMD's or NVIDIA's):
// one that matches nothing is reported; other devices (NICs, ...) are not ours to judge.
bool gpu_resource(const HeldDevice& device);

// A container the kubelet says holds a GPU or partition.
struct GpuHolder {
  Target target;
  std::string pod, namespace_name, container;
  std::string resource;   // device plugin resource or DRA driver
  std::string device_id;  // as the kubelet gave it
  std::string claim;      // DRA: namespace/claim
};

struct UnmatchedDevice {
  std::string pod, namespace_name, container;
  HeldDevice device;
  std::string why;
};

// The processes of one container on one GPU, and their use summed.
struct ContainerUse {
  std::uint32_t gpu = 0;
  ContainerRef ref;
  std::optional<ContainerName> name;  // from the kubelet's log folders; nullopt when not there
  std::vector<std::int32_t> pids;
  // Each gauge PROCESS-scope number the processes report (VRAM, GTT, CU occupancy, queues, engine
  // busy per engine), summed over the processes that report it; `source` names how many did.
  std::vector<smi::Reading> readings;
};

struct Attribution {
  // When the watcher last looked (each timer look, whether or not it asked the kubelet); epoch: not yet.
  std::chrono::system_clock::time_point looked_at{};
  bool kubelet = false;        // the kubelet is asked (attribution on, or auto with its socket present)
  bool kubelet_ok = false;     // its last answer came
  std::string kubelet_error;   // why not
  std::chrono::system_clock::time_point kubelet_at{};  // when the holders were last read
  std::size_t kubelet_dropped = 0;  // container devices past the caps (kMaxHeldContainers...), not attributed
  std::vector<GpuHolder> holders;
  std::vector<UnmatchedDevice> unmatched;
  bool processes = false;      // processes were scanned
  std::chrono::system_clock::time_point processes_at{};
  std::vector<ContainerUse> containers;
  std::string directory_error;  // the kubelet's log folders could not be read: names unknown
};

// What the daemon takes from a kubelet's answer, whatever it lists (a node runs at most a few
// hundred pods; a hostile or broken kubelet may list 100k): the rest is counted, not kept.
inline constexpr std::size_t kMaxHeldContainers = 4096;
inline constexpr std::size_t kMaxDevicesPerContainer = 64;
// Trims `held` to the caps; returns the devices dropped (a container dropped counts its devices).
std::size_t cap_held(std::vector<ContainerDevices>& held);

// The holders of each GPU device the kubelet lists, and the devices that match no GPU.
void match_holders(const std::vector<ContainerDevices>& held, const std::vector<GpuKeys>& gpus, Attribution& out);

// The processes of one GPU grouped by container (host processes, outside any pod, left out).
std::vector<ContainerUse> container_use(std::uint32_t gpu, const std::vector<smi::ProcessInfo>& processes,
                                        const PodDirectory& directory);

}  // namespace hipstack::smid
