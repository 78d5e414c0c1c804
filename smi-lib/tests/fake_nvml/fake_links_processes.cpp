// NVLink state and far ends, the topology common ancestor of two devices, and running processes.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "fake_state.hpp"

namespace fake_nvml {

using namespace detail;

namespace {
constexpr int kTopologyInternalLevel = kTopologyInternal;
}  // namespace

// ---- NVLink and topology -------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_nvlink_state(Device device, unsigned link, EnableState* active) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!active || link >= kNvlinkMaxLinks) return kErrorInvalidArgument;
  const std::string sub = std::to_string(link);
  FAKE_NVML_SCRIPTED("nvlink_state", sub);
  const std::string* links = find(d, "nvlink.count");
  if (!links) return kErrorNotSupported;  // no NVLink on this device
  if (link >= *parse_uint(*links)) {
    const std::string* beyond = find(d, "nvlink.beyond_count_error");
    return beyond ? *parse_return(*beyond) : kErrorInvalidArgument;
  }
  const std::string* v = find(d, "nvlink." + sub);
  if (!v) return kErrorNotSupported;
  *active = *parse_bool(*v) ? 1 : 0;
  return kSuccess;
}

// The far end of one link: `N.nvlink.L.remote` (a PCI bus id) and `N.nvlink.L.remote_type`
// (gpu, switch, ibmnpu; gpu when not given).
const std::string* remote_of(const DeviceState* d, unsigned link, Return& code) {
  const std::string* links = find(d, "nvlink.count");
  if (!links) {
    code = kErrorNotSupported;
    return nullptr;
  }
  if (link >= *parse_uint(*links)) {
    code = kErrorInvalidArgument;
    return nullptr;
  }
  const std::string* remote = find(d, "nvlink." + std::to_string(link) + ".remote");
  code = remote ? kSuccess : kErrorNotSupported;
  return remote;
}

extern "C" Return fake_nvml_impl_nvlink_remote_pci(Device device, unsigned link, PciInfo* pci) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!pci || link >= kNvlinkMaxLinks) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("nvlink_remote_pci", std::to_string(link));
  Return code = kSuccess;
  const std::string* remote = remote_of(d, link, code);
  if (!remote) return code;
  const BusId id = *parse_bus_id(*remote);
  *pci = PciInfo{};
  pci->domain = id.domain;
  pci->bus = id.bus;
  pci->device = id.device;
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.%X", id.domain, id.bus, id.device, id.function);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", id.domain & 0xffffu, id.bus,
                id.device, id.function);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_nvlink_remote_type(Device device, unsigned link, int* type) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!type || link >= kNvlinkMaxLinks) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("nvlink_remote_type", std::to_string(link));
  Return code = kSuccess;
  if (!remote_of(d, link, code)) return code;
  const std::string* kind = find(d, "nvlink." + std::to_string(link) + ".remote_type");
  const std::string name = kind ? *kind : "gpu";
  *type = name == "switch" ? kNvlinkRemoteSwitch : name == "ibmnpu" ? 1 : name == "gpu" ? kNvlinkRemoteGpu : 0xff;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_common_ancestor(Device device1, Device device2, int* level) {
  FAKE_NVML_ENTER_DEVICE(device1);
  if (!is_live(device2) || !level) return kErrorInvalidArgument;
  const DeviceState* peer = device2;
  FAKE_NVML_SCRIPTED("common_ancestor", peer->mig_slot < 0 ? std::to_string(peer->index) : std::string());
  if (d->mig_slot >= 0 || peer->mig_slot >= 0) return kErrorNotSupported;
  if (d == peer) {
    *level = kTopologyInternalLevel;
    return kSuccess;
  }
  const std::string a = std::to_string(d->index), b = std::to_string(peer->index);
  const std::string* v = find(a + ".topology." + b);
  if (!v) v = find(b + ".topology." + a);
  if (v) {
    *level = *parse_topology_level(*v);
    return kSuccess;
  }
  const std::string* la = find(a + ".topology");
  const std::string* lb = find(b + ".topology");
  if (!la && !lb) return kErrorNotSupported;
  const int x = la ? *parse_topology_level(*la) : 0, y = lb ? *parse_topology_level(*lb) : 0;
  *level = x > y ? x : y;  // the farther of the two devices' defaults
  return kSuccess;
}

// ---- Processes -----------------------------------------------------------------------------------------

namespace {
Return process_query(Device device, const char* member, unsigned* count, ProcessInfo* infos) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!count) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  const std::string* v = find(d, member);
  if (!v) return kErrorNotSupported;
  const std::vector<ProcessInfo> list = *parse_processes(*v);
  const auto n = static_cast<unsigned>(list.size());
  if (*count < n) {
    *count = n;
    return kErrorInsufficientSize;
  }
  if (n > 0 && !infos) return kErrorInvalidArgument;
  for (unsigned i = 0; i < n; ++i) infos[i] = list[i];
  *count = n;
  return kSuccess;
}
}  // namespace

extern "C" Return fake_nvml_impl_compute_processes(Device device, unsigned* count, ProcessInfo* infos) {
  return process_query(device, "compute_processes", count, infos);
}
extern "C" Return fake_nvml_impl_graphics_processes(Device device, unsigned* count, ProcessInfo* infos) {
  return process_query(device, "graphics_processes", count, infos);
}

// Every listed process has one sample, taken now: a look always finds it newer than the last one.
extern "C" Return fake_nvml_impl_process_utilization(Device device, ProcessUtilizationSample* samples, unsigned* count,
                                                      unsigned long long last_seen) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!count) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("process_utilization");
  const std::string* v = find(d, "process_utilization");
  if (!v) return kErrorNotSupported;
  const auto now = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  std::vector<ProcessUtilizationSample> list = *parse_process_utilization(*v);
  for (ProcessUtilizationSample& s : list) s.timeStamp = now;
  if (now <= last_seen || list.empty()) return kErrorNotFound;
  const auto n = static_cast<unsigned>(list.size());
  if (!samples || *count < n) {
    *count = n;
    return kErrorInsufficientSize;
  }
  for (unsigned i = 0; i < n; ++i) samples[i] = list[i];
  *count = n;
  return kSuccess;
}

// ---- Exports: one alias per NVML name the variant keeps, for the members this file defines ------------
#define FAKE_NVML_DEFINED_HERE_nvlink_state FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_nvlink_remote_pci FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_nvlink_remote_type FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_common_ancestor FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_compute_processes FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_graphics_processes FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_process_utilization FAKE_NVML_PROBE()
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE)

}  // namespace fake_nvml
