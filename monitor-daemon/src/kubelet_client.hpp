// A client of the kubelet's pod-resources API (v1: List and Get, proto/kubelet/podresources/v1) on
// its unix socket: which devices each container of each pod on this node holds.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hipstack::smid {

// One device a container holds, as the kubelet names it.
struct HeldDevice {
  std::string resource;  // device plugin resource ("amd.com/gpu", "nvidia.com/mig-1g.10gb") or DRA driver ("gpu.nvidia.com")
  std::string id;        // device plugin device ID, or the DRA device name
  std::string claim;     // DRA: "namespace/claim"; "" for a device plugin's
  std::string pool;      // DRA pool
  std::vector<std::string> cdi_devices;  // DRA: fully qualified CDI names
  bool operator==(const HeldDevice&) const = default;
};

struct ContainerDevices {
  std::string pod;
  std::string namespace_name;
  std::string container;
  std::vector<HeldDevice> devices;
  bool operator==(const ContainerDevices&) const = default;
};

// A pod by its name and namespace.
struct PodName {
  std::string pod;
  std::string namespace_name;
};

// What Get answered for one pod: its containers that hold a device (nullopt: the kubelet does not
// know the pod), or why there is no answer.
struct PodAnswer {
  std::optional<std::vector<ContainerDevices>> found;
  std::string error;  // "" when the kubelet answered
};

// Answers are bounded (kMaxReplyBytes; the kubelet's own limit is the same 16 MiB) and each call
// has a deadline. Calls throw std::runtime_error naming the socket and the gRPC status.
class KubeletClient {
 public:
  static constexpr int kMaxReplyBytes = 16 << 20;

  KubeletClient(std::string socket_path, std::chrono::milliseconds deadline);
  ~KubeletClient();
  KubeletClient(const KubeletClient&) = delete;
  KubeletClient& operator=(const KubeletClient&) = delete;

  // Every container of every pod that holds a device (containers holding none are left out).
  [[nodiscard]] std::vector<ContainerDevices> list();
  // One pod's containers that hold a device; nullopt when the kubelet does not know the pod.
  // Throws std::runtime_error also when the kubelet does not offer Get (the KubeletPodResourcesGet
  // feature gate off); unimplemented() then says so.
  [[nodiscard]] std::optional<std::vector<ContainerDevices>> get(const std::string& pod, const std::string& namespace_name);
  // Get for each pod, all at once and within one deadline: a slow kubelet costs one deadline,
  // whatever the number of pods. One answer per pod, in order.
  [[nodiscard]] std::vector<PodAnswer> get_all(const std::vector<PodName>& pods);
  [[nodiscard]] bool unimplemented() const noexcept { return get_unimplemented_; }
  [[nodiscard]] const std::string& socket_path() const noexcept { return socket_path_; }

 private:
  struct Stub;
  std::string socket_path_;
  std::chrono::milliseconds deadline_;
  std::unique_ptr<Stub> stub_;
  bool get_unimplemented_ = false;
};

}  // namespace hipstack::smid
