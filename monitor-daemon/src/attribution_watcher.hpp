// Keeps the attribution (attribution.hpp) current on its own thread: every attribution_interval it
// lists the kubelet's pod resources, reads the kubelet's log folders and scans each GPU's
// processes; between those, a change it is told of (inotify) is applied at once: a pod folder
// created is one Get for that pod, a pod folder removed drops the pod, the kubelet's socket
// re-created is a new List. Readers take the latest immutable Attribution; they never wait on the
// kubelet or on /proc.
#pragma once

#include <hipstack/smi.hpp>

#include <memory>
#include <vector>

#include "attribution.hpp"
#include "config.hpp"

namespace hipstack::smid {

struct DeviceState;

class AttributionWatcher {
 public:
  // Starts the thread. devices: the sampler's, for their latest snapshots (identity, partitions).
  AttributionWatcher(std::shared_ptr<const smi::System> system, std::vector<std::shared_ptr<DeviceState>> devices,
                     const Config& config);
  // Tells the thread to stop and leaves it: a kubelet call or a /proc read in progress ends on its
  // own (each is bounded) without holding up a reload.
  ~AttributionWatcher();
  AttributionWatcher(const AttributionWatcher&) = delete;
  AttributionWatcher& operator=(const AttributionWatcher&) = delete;

  [[nodiscard]] std::shared_ptr<const Attribution> latest() const;

  struct Shared;  // the latest attribution and the stop signal, held by the watcher and its thread

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace hipstack::smid
