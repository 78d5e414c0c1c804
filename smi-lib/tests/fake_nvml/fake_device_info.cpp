// Identity and mostly static device queries: names, PCI, memory, power limits, clocks, PCIe, modes, thermal.
#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>

#include "fake_state.hpp"

namespace fake_nvml {

using namespace detail;

namespace {
constexpr Return kErrorArgumentVersionMismatch = 25;
}  // namespace

// ---- Identity ----------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_name(Device device, char* buffer, unsigned length) {
  return string_query(device, "name", buffer, length);
}
extern "C" Return fake_nvml_impl_uuid(Device device, char* buffer, unsigned length) {
  return string_query(device, "uuid", buffer, length);
}
extern "C" Return fake_nvml_impl_serial(Device device, char* buffer, unsigned length) {
  return string_query(device, "serial", buffer, length);
}
extern "C" Return fake_nvml_impl_part_number(Device device, char* buffer, unsigned length) {
  return string_query(device, "part_number", buffer, length);
}
extern "C" Return fake_nvml_impl_vbios_version(Device device, char* buffer, unsigned length) {
  return string_query(device, "vbios_version", buffer, length);
}

extern "C" Return fake_nvml_impl_pci_info(Device device, PciInfo* pci) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!pci) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("pci_info");
  const std::string* bus_id = find(d, "pci.bus_id");
  if (!bus_id) return kErrorNotSupported;
  const BusId id = *parse_bus_id(*bus_id);
  *pci = PciInfo{};
  pci->domain = id.domain;
  pci->bus = id.bus;
  pci->device = id.device;
  pci->pciDeviceId = static_cast<unsigned>(uint_or(d, "pci.device_id", 0) << 16 | uint_or(d, "pci.vendor_id", 0));
  pci->pciSubSystemId = static_cast<unsigned>(uint_or(d, "pci.subsystem_id", 0));
  std::snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.%X", id.domain, id.bus, id.device, id.function);
  if (const std::string* legacy = find(d, "pci.bus_id_legacy"))
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", legacy->c_str());
  else
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", id.domain & 0xffffu, id.bus,
                  id.device, id.function);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_minor_number(Device device, unsigned* minor) {
  return uint_query(device, "minor_number", minor);
}

extern "C" Return fake_nvml_impl_compute_capability(Device device, int* major, int* minor) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!major || !minor) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("compute_capability");
  const std::string* v = find(d, "compute_capability");
  if (!v) return kErrorNotSupported;
  std::tie(*major, *minor) = *parse_compute_capability(*v);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_architecture(Device device, unsigned* arch) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!arch) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("architecture");
  const std::string* v = find(d, "architecture");
  if (!v) return kErrorNotSupported;
  *arch = *parse_architecture(*v);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_attributes(Device device, DeviceAttributes* a) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!a) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("attributes");
  if (!has_prefix(d->prefix + "attributes.")) return kErrorNotSupported;
  auto u32 = [&](const char* key) { return static_cast<unsigned>(uint_or(d, key, 0)); };
  *a = DeviceAttributes{};
  a->multiprocessorCount = u32("attributes.multiprocessor_count");
  a->sharedCopyEngineCount = u32("attributes.shared_copy_engine_count");
  a->sharedDecoderCount = u32("attributes.shared_decoder_count");
  a->sharedEncoderCount = u32("attributes.shared_encoder_count");
  a->sharedJpegCount = u32("attributes.shared_jpeg_count");
  a->sharedOfaCount = u32("attributes.shared_ofa_count");
  a->gpuInstanceSliceCount = u32("attributes.gpu_instance_slice_count");
  a->computeInstanceSliceCount = u32("attributes.compute_instance_slice_count");
  a->memorySizeMB = uint_or(d, "attributes.memory_size_mb", 0);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_numa_node(Device device, unsigned* node) {
  return uint_query(device, "numa_node", node);
}

// ---- Memory --------------------------------------------------------------------------------------

namespace {
struct MemoryFigures {
  unsigned long long total, reserved, used, free;
};
// memory.used is the allocated memory (v2 meaning); memory.free defaults to total - reserved - used.
bool memory_figures(const DeviceState* d, MemoryFigures& m) {
  if (!find(d, "memory.total")) return false;
  m.total = uint_or(d, "memory.total", 0, true);
  m.reserved = uint_or(d, "memory.reserved", 0, true);
  m.used = uint_or(d, "memory.used", 0, true);
  const unsigned long long taken = m.reserved + m.used;
  m.free = uint_or(d, "memory.free", taken > m.total ? 0 : m.total - taken, true);
  return true;
}
}  // namespace

extern "C" Return fake_nvml_impl_memory_v2(Device device, MemoryV2* memory) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!memory) return kErrorInvalidArgument;
  if (memory->version != kMemoryV2Version) return kErrorArgumentVersionMismatch;
  FAKE_NVML_SCRIPTED("memory_v2");
  MemoryFigures m{};
  if (!memory_figures(d, m)) return kErrorNotSupported;
  memory->total = m.total;
  memory->reserved = m.reserved;
  memory->free = m.free;
  memory->used = m.used;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_memory(Device device, Memory* memory) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!memory) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("memory");
  MemoryFigures m{};
  if (!memory_figures(d, m)) return kErrorNotSupported;
  memory->total = m.total;
  memory->free = m.free;
  // v1: what is not free, reservation included. NVML's docs call it reserved + allocated, but on an
  // H200 the first call answered used = total - free to the byte (docs/python.md, "On a real GPU"),
  // where the scripts' reserved and used, recorded in whole MiB, would be a MiB off.
  memory->used = m.total - m.free;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_bar1_memory(Device device, Bar1Memory* bar1) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!bar1) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("bar1_memory");
  if (!find(d, "bar1.total")) return kErrorNotSupported;
  bar1->bar1Total = uint_or(d, "bar1.total", 0, true);
  bar1->bar1Used = uint_or(d, "bar1.used", 0, true);
  bar1->bar1Free = uint_or(d, "bar1.free", bar1->bar1Used > bar1->bar1Total ? 0 : bar1->bar1Total - bar1->bar1Used, true);
  return kSuccess;
}

// ---- Power and clocks ------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_power_limit_constraints(Device device, unsigned* min, unsigned* max) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!min || !max) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("power_limit_constraints");
  if (!find(d, "power_limit.min") || !find(d, "power_limit.max")) return kErrorNotSupported;
  read_uint(d, "power_limit.min", min);
  read_uint(d, "power_limit.max", max);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_power_limit_default(Device device, unsigned* limit) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!limit) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("power_limit_default");
  return read_uint(d, "power_limit.default", limit);
}

extern "C" Return fake_nvml_impl_power_limit_enforced(Device device, unsigned* limit) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!limit) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("power_limit_enforced");
  return read_uint(d, "power_limit.enforced", limit);
}

namespace {
Return clock_query(Device device, const char* member, int type, unsigned* mhz) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* name = enum_name(kClockNames, type);
  if (!name || !mhz) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member, name);
  return read_uint(d, std::string(member) + "." + name, mhz);
}
}  // namespace

extern "C" Return fake_nvml_impl_max_clock(Device device, int type, unsigned* mhz) {
  return clock_query(device, "max_clock", type, mhz);
}
extern "C" Return fake_nvml_impl_clock(Device device, int type, unsigned* mhz) {
  return clock_query(device, "clock", type, mhz);
}

extern "C" Return fake_nvml_impl_power_usage(Device device, unsigned* mw) { return uint_query(device, "power_usage", mw); }

extern "C" Return fake_nvml_impl_total_energy(Device device, unsigned long long* mj) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!mj) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("total_energy");
  return read_uint(d, "total_energy", mj);
}

extern "C" Return fake_nvml_impl_performance_state(Device device, int* pstate) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!pstate) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("performance_state");
  const std::string* v = find(d, "performance_state");
  if (!v) return kErrorNotSupported;
  *pstate = *parse_pstate(*v);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_clock_event_reasons(Device device, unsigned long long* reasons) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!reasons) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("clock_event_reasons");
  const std::string* v = find(d, "clock_event_reasons");
  if (!v) return kErrorNotSupported;
  *reasons = *parse_event_reasons(*v);
  return kSuccess;
}

// nvmlDeviceGetViolationStatus: `violation.POLICY` nanoseconds; referenceTime is now, as NVML stamps it.
extern "C" Return fake_nvml_impl_violation_status(Device device, int policy, ViolationTime* time) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* name = enum_name(kViolationPolicyNames, policy);
  if (!name || !*name || !time) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("violation", name);
  unsigned long long ns = 0;
  if (const Return code = read_uint(d, std::string("violation.") + name, &ns); code != kSuccess) return code;
  time->violationTime = ns;
  time->referenceTime = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  return kSuccess;
}

// ---- PCIe ------------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_max_pcie_generation(Device device, unsigned* gen) {
  return uint_query(device, "max_pcie_generation", gen);
}
extern "C" Return fake_nvml_impl_max_pcie_width(Device device, unsigned* width) {
  return uint_query(device, "max_pcie_width", width);
}
extern "C" Return fake_nvml_impl_pcie_generation(Device device, unsigned* gen) {
  return uint_query(device, "pcie_generation", gen);
}
extern "C" Return fake_nvml_impl_pcie_width(Device device, unsigned* width) {
  return uint_query(device, "pcie_width", width);
}

extern "C" Return fake_nvml_impl_pcie_throughput(Device device, int counter, unsigned* kbps) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* name = enum_name(kPcieCounterNames, counter);
  if (!name || !kbps) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("pcie_throughput", name);
  return read_uint(d, std::string("pcie_throughput.") + name, kbps);
}

extern "C" Return fake_nvml_impl_pcie_replay_counter(Device device, unsigned* count) {
  return uint_query(device, "pcie_replay_counter", count);
}

// ---- Modes -----------------------------------------------------------------------------------------

namespace {
template <typename T>
Return mode_pair(Device device, const char* member, T* current, T* pending) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!current || !pending) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  const std::string* cur = find(d, std::string(member) + ".current");
  if (!cur) return kErrorNotSupported;
  const bool c = *parse_bool(*cur);
  *current = c ? 1 : 0;
  *pending = bool_or(d, std::string(member) + ".pending", c) ? 1 : 0;
  return kSuccess;
}

// An on/off state of the script (nvmlEnableState_t).
Return enable_state(Device device, const char* member, EnableState* out) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!out) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  const std::string* v = find(d, member);
  if (!v) return kErrorNotSupported;
  *out = *parse_bool(*v) ? 1 : 0;
  return kSuccess;
}
}  // namespace

extern "C" Return fake_nvml_impl_ecc_mode(Device device, EnableState* current, EnableState* pending) {
  return mode_pair(device, "ecc_mode", current, pending);
}
extern "C" Return fake_nvml_impl_mig_mode(Device device, unsigned* current, unsigned* pending) {
  return mode_pair(device, "mig_mode", current, pending);
}

extern "C" Return fake_nvml_impl_persistence_mode(Device device, EnableState* mode) {
  return enable_state(device, "persistence_mode", mode);
}
extern "C" Return fake_nvml_impl_display_active(Device device, EnableState* active) {
  return enable_state(device, "display_active", active);
}

extern "C" Return fake_nvml_impl_compute_mode(Device device, int* mode) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!mode) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("compute_mode");
  const std::string* v = find(d, "compute_mode");
  if (!v) return kErrorNotSupported;
  *mode = *parse_compute_mode(*v);
  return kSuccess;
}

// ---- Thermal -----------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_temperature(Device device, int sensor, unsigned* celsius) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (sensor != kTemperatureGpu || !celsius) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("temperature");
  return read_uint(d, "temperature", celsius);
}

extern "C" Return fake_nvml_impl_temperature_threshold(Device device, int type, unsigned* celsius) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* name = enum_name(kThresholdNames, type);
  if (!name || !celsius) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("temperature_threshold", name);
  return read_uint(d, std::string("temperature_threshold.") + name, celsius);
}

extern "C" Return fake_nvml_impl_fan_speed(Device device, unsigned* percent) {
  return uint_query(device, "fan_speed", percent);
}

// ---- Exports: one alias per NVML name the variant keeps, for the members this file defines ------------
#define FAKE_NVML_DEFINED_HERE_name FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_uuid FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_serial FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_part_number FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_vbios_version FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_pci_info FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_minor_number FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_compute_capability FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_architecture FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_attributes FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_numa_node FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_memory_v2 FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_memory FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_bar1_memory FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_power_limit_constraints FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_power_limit_default FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_power_limit_enforced FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_max_clock FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_clock FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_power_usage FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_total_energy FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_performance_state FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_clock_event_reasons FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_violation_status FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_max_pcie_generation FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_max_pcie_width FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_pcie_generation FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_pcie_width FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_pcie_throughput FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_pcie_replay_counter FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_ecc_mode FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_mig_mode FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_persistence_mode FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_display_active FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_compute_mode FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_temperature FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_temperature_threshold FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_fan_speed FAKE_NVML_PROBE()
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE)

}  // namespace fake_nvml
