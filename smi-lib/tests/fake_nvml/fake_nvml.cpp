// A fake libnvidia-ml.so.1 for the tests of the NVML backend: every entry point hipstack loads
// (HIPSTACK_NVML_SYMBOLS in nvml_api.hpp), answering from the script named by
// HIPSTACK_FAKE_NVML_SCRIPT. README.md in this folder documents the script and the behaviour.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backends/nvml/nvml_api.hpp"
#include "exports.hpp"
#include "script.hpp"

// Device handles point at these: a physical device, or a MIG device (mig_slot >= 0) under its parent.
struct hipstack::smi::detail::nvml::nvmlDevice_st {
  unsigned index = 0;     // the physical device's index
  int mig_slot = -1;      // MIG slot under the parent; -1 for a physical device
  nvmlDevice_st* parent = nullptr;
  std::string prefix;     // key prefix: "0." or "0.mig.1."
  std::vector<nvmlDevice_st*> mig_slots;  // physical devices: max_mig_devices entries, nullptr where empty
};

namespace fake_nvml {

using namespace hipstack::smi::detail::nvml;
using DeviceState = nvmlDevice_st;

namespace {

constexpr Return kErrorArgumentVersionMismatch = 25;
constexpr int kTopologyInternalLevel = kTopologyInternal;

struct State {
  std::mutex mutex;
  unsigned refcount = 0;
  KeyMap keys;
  unsigned device_count = 0;
  std::vector<std::unique_ptr<DeviceState>> devices;  // physical devices, by index
  std::set<const DeviceState*> live;                  // every valid handle (physical and MIG)
  // Devices of earlier init/shutdown cycles are kept, never freed, so that a stale handle can never
  // compare equal to a new one.
  std::vector<std::unique_ptr<DeviceState>> retired;
};

State& state() {
  // Destroyed when the library is unloaded (dlclose), so LeakSanitizer sees nothing left behind;
  // the loader calls nvmlShutdown before that.
  static State s;
  return s;
}

const std::string* find(const std::string& key) {
  auto& keys = state().keys;
  auto it = keys.find(key);
  return it == keys.end() ? nullptr : &it->second.value;
}
const std::string* find(const DeviceState* d, std::string_view key) { return find(d->prefix + std::string(key)); }

bool has_prefix(const std::string& prefix) {
  auto& keys = state().keys;
  auto it = keys.lower_bound(prefix);
  return it != keys.end() && it->first.starts_with(prefix);
}

Return decode_return(const std::string* v) { return v ? *parse_return(*v) : kSuccess; }

// The scripted error of a device function, most specific first: N.member.sub.error, N.member.error,
// N.error, and for a MIG device its parent's N.error. 0 (SUCCESS) when none applies.
Return scripted_error(const DeviceState* d, std::string_view member, std::string_view sub = {}) {
  const std::string m(member);
  if (!sub.empty()) {
    if (const std::string* v = find(d, m + "." + std::string(sub) + ".error")) return decode_return(v);
  }
  if (const std::string* v = find(d, m + ".error")) return decode_return(v);
  if (const std::string* v = find(d, "error")) return decode_return(v);
  if (d->parent) return decode_return(find(d->parent, "error"));
  return kSuccess;
}

Return scripted_global_error(std::string_view member) { return decode_return(find(std::string(member) + ".error")); }

bool is_live(Device d) { return d != nullptr && state().live.contains(d); }

void release_devices(State& s) {
  for (auto& d : s.devices) {
    for (DeviceState* mig : d->mig_slots)
      if (mig) s.retired.emplace_back(mig);
    d->mig_slots.clear();
    s.retired.push_back(std::move(d));
  }
  s.devices.clear();
  s.live.clear();
}

void build_devices(State& s) {
  s.device_count = script_device_count(s.keys);
  for (unsigned i = 0; i < s.device_count; ++i) {
    auto d = std::make_unique<DeviceState>();
    d->index = i;
    d->prefix = std::to_string(i) + ".";
    if (const std::string* max = find(d.get(), "max_mig_devices")) {
      const auto slots = static_cast<unsigned>(*parse_uint(*max));
      d->mig_slots.assign(slots, nullptr);
      for (unsigned slot = 0; slot < slots; ++slot) {
        const std::string prefix = d->prefix + "mig." + std::to_string(slot) + ".";
        if (!has_prefix(prefix)) continue;  // an empty slot: NOT_FOUND
        auto* mig = new DeviceState;
        mig->index = i;
        mig->mig_slot = static_cast<int>(slot);
        mig->parent = d.get();
        mig->prefix = prefix;
        d->mig_slots[slot] = mig;
        s.live.insert(mig);
      }
    }
    s.live.insert(d.get());
    s.devices.push_back(std::move(d));
  }
}

// ---- Value readers: NOT_SUPPORTED when the script does not give the key ---------------------------

template <typename T>
Return read_uint(const DeviceState* d, std::string_view key, T* out, bool byte_units = false) {
  const std::string* v = find(d, key);
  if (!v) return kErrorNotSupported;
  *out = static_cast<T>(*parse_uint(*v, byte_units));
  return kSuccess;
}

unsigned long long uint_or(const DeviceState* d, std::string_view key, unsigned long long fallback,
                           bool byte_units = false) {
  const std::string* v = find(d, key);
  return v ? *parse_uint(*v, byte_units) : fallback;
}

bool bool_or(const DeviceState* d, std::string_view key, bool fallback) {
  const std::string* v = find(d, key);
  return v ? *parse_bool(*v) : fallback;
}

Return copy_string(const std::string& value, char* buffer, unsigned length) {
  if (value.size() + 1 > length) return kErrorInsufficientSize;
  std::memcpy(buffer, value.c_str(), value.size() + 1);
  return kSuccess;
}

// The common start of a device function: lock, initialized, valid handle.
#define FAKE_NVML_ENTER_DEVICE(device)                    \
  std::lock_guard<std::mutex> lock_(state().mutex);       \
  if (state().refcount == 0) return kErrorUninitialized;  \
  if (!is_live(device)) return kErrorInvalidArgument;     \
  const DeviceState* d = device

#define FAKE_NVML_ENTER_GLOBAL()                     \
  std::lock_guard<std::mutex> lock_(state().mutex);  \
  if (state().refcount == 0) return kErrorUninitialized

#define FAKE_NVML_SCRIPTED(...)                                     \
  do {                                                              \
    if (Return scripted_ = scripted_error(d, __VA_ARGS__)) return scripted_; \
  } while (0)

Return string_query(Device device, const char* member, char* buffer, unsigned length) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!buffer) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  const std::string* v = find(d, member);
  if (!v) return kErrorNotSupported;
  return copy_string(*v, buffer, length);
}

Return uint_query(Device device, const char* member, unsigned* out) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!out) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  return read_uint(d, member, out);
}

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

const char* error_text(Return code) {
  switch (code) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 5: return "Already Initialized";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 8: return "Insufficient External Power";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 11: return "Interrupt Request Issue";
    case 12: return "NVML Shared Library Not Found";
    case 13: return "Function Not Found";
    case 14: return "Corrupted infoROM";
    case 15: return "GPU is lost";
    case 16: return "GPU requires reset";
    case 17: return "GPU access blocked by the operating system";
    case 18: return "Driver/library version mismatch";
    case 19: return "In use by another client";
    case 20: return "Insufficient Memory";
    case 21: return "No data";
    case 22: return "The requested vgpu operation is not available on target device, because ECC is enabled";
    case 23: return "Insufficient Resources";
    case 24: return "Frequency not supported";
    case 25: return "Argument version mismatch";
    case 26: return "Deprecated";
    case 27: return "Not Ready";
    case 28: return "GPU not found";
    case 29: return "Invalid state";
    case 30: return "Reset type not supported";
    default: return "Unknown Error";
  }
}

}  // namespace

// Declarations of every implementation, with the X-macro's signatures.
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_DECLARE_IMPL)

// ---- Library ---------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_init() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.refcount > 0) {
    ++s.refcount;
    return kSuccess;
  }
  const char* path = std::getenv("HIPSTACK_FAKE_NVML_SCRIPT");
  if (!path || !*path) return kErrorDriverNotLoaded;
  std::string error;
  switch (load_script(path, s.keys, error)) {
    case LoadResult::ok: break;
    case LoadResult::unreadable:
      std::fprintf(stderr, "fake libnvidia-ml: %s\n", error.c_str());
      return kErrorDriverNotLoaded;
    case LoadResult::invalid:
      std::fprintf(stderr, "fake libnvidia-ml: %s\n", error.c_str());
      s.keys.clear();
      return kErrorUnknown;
  }
  if (Return e = scripted_global_error("init")) {
    s.keys.clear();
    return e;
  }
  build_devices(s);
  s.refcount = 1;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_shutdown() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.refcount == 0) return kErrorUninitialized;
  const Return scripted = scripted_global_error("shutdown");
  if (--s.refcount == 0) {
    release_devices(s);
    s.keys.clear();
  }
  return scripted;
}

extern "C" const char* fake_nvml_impl_error_string(Return code) { return error_text(code); }

extern "C" Return fake_nvml_impl_device_count(unsigned* count) {
  FAKE_NVML_ENTER_GLOBAL();
  if (!count) return kErrorInvalidArgument;
  if (Return e = scripted_global_error("device_count")) return e;
  *count = state().device_count;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_device_by_index(unsigned index, Device* device) {
  FAKE_NVML_ENTER_GLOBAL();
  State& s = state();
  if (!device || index >= s.devices.size()) return kErrorInvalidArgument;
  DeviceState* d = s.devices[index].get();
  if (Return e = decode_return(find(d, "device_by_index.error"))) return e;
  *device = d;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_driver_version(char* version, unsigned length) {
  FAKE_NVML_ENTER_GLOBAL();
  if (!version) return kErrorInvalidArgument;
  if (Return e = scripted_global_error("driver_version")) return e;
  const std::string* v = find("driver_version");
  if (!v) return kErrorNotSupported;
  return copy_string(*v, version, length);
}

extern "C" Return fake_nvml_impl_cuda_version(int* version) {
  FAKE_NVML_ENTER_GLOBAL();
  if (!version) return kErrorInvalidArgument;
  if (Return e = scripted_global_error("cuda_version")) return e;
  const std::string* v = find("cuda_version");
  if (!v) return kErrorNotSupported;
  *version = *parse_cuda_version(*v);
  return kSuccess;
}

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
  memory->used = m.used + m.reserved;  // v1: reserved and allocated together
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
template <size_t N>
const char* enum_name(const char* const (&names)[N], int value) {
  return value >= 0 && static_cast<size_t>(value) < N ? names[value] : nullptr;
}

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
}  // namespace

extern "C" Return fake_nvml_impl_ecc_mode(Device device, EnableState* current, EnableState* pending) {
  return mode_pair(device, "ecc_mode", current, pending);
}
extern "C" Return fake_nvml_impl_mig_mode(Device device, unsigned* current, unsigned* pending) {
  return mode_pair(device, "mig_mode", current, pending);
}

extern "C" Return fake_nvml_impl_persistence_mode(Device device, EnableState* mode) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!mode) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("persistence_mode");
  const std::string* v = find(d, "persistence_mode");
  if (!v) return kErrorNotSupported;
  *mode = *parse_bool(*v) ? 1 : 0;
  return kSuccess;
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

extern "C" Return fake_nvml_impl_field_values(Device device, int count, FieldValue* values) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (count < 0 || (count > 0 && !values)) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("field_values");
  const long long now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  for (int i = 0; i < count; ++i) {
    FieldValue& f = values[i];
    const std::string key = "field." + std::to_string(f.fieldId);
    f.timestamp = now_us;
    f.latencyUsec = 0;
    f.value = Value{};
    if (Return e = decode_return(find(d, key + ".error"))) {
      f.nvmlReturn = e;
      continue;
    }
    const std::string* v = find(d, key);
    if (!v) {
      f.nvmlReturn = kErrorNotSupported;
      continue;
    }
    const std::string* type = find(d, key + ".type");
    f.valueType = type ? *parse_value_type(*type) : 1;
    f.value = *parse_field_value(*v, f.valueType);
    f.nvmlReturn = kSuccess;
  }
  return kSuccess;
}

// ---- Activity ----------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_utilization(Device device, Utilization* u) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!u) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("utilization");
  if (!find(d, "utilization.gpu")) return kErrorNotSupported;
  u->gpu = static_cast<unsigned>(uint_or(d, "utilization.gpu", 0));
  u->memory = static_cast<unsigned>(uint_or(d, "utilization.memory", 0));
  return kSuccess;
}

namespace {
Return codec_query(Device device, const char* member, unsigned* percent, unsigned* period_us) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!percent || !period_us) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  if (Return r = read_uint(d, member, percent)) return r;
  *period_us = static_cast<unsigned>(uint_or(d, std::string(member) + ".period_us", 1000000));
  return kSuccess;
}
}  // namespace

extern "C" Return fake_nvml_impl_encoder_utilization(Device device, unsigned* percent, unsigned* period_us) {
  return codec_query(device, "encoder_utilization", percent, period_us);
}
extern "C" Return fake_nvml_impl_decoder_utilization(Device device, unsigned* percent, unsigned* period_us) {
  return codec_query(device, "decoder_utilization", percent, period_us);
}

// ---- ECC and memory health ---------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_total_ecc_errors(Device device, int type, int counter, unsigned long long* count) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* type_name = enum_name(kEccTypeNames, type);
  const char* counter_name = enum_name(kEccCounterNames, counter);
  if (!type_name || !counter_name || !count) return kErrorInvalidArgument;
  const std::string sub = std::string(type_name) + "." + counter_name;
  FAKE_NVML_SCRIPTED("total_ecc_errors", sub);
  return read_uint(d, "total_ecc_errors." + sub, count);
}

extern "C" Return fake_nvml_impl_retired_pages(Device device, int cause, unsigned* count, unsigned long long* addresses) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* name = enum_name(kRetirementCauseNames, cause);
  if (!name || !count) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("retired_pages", name);
  const std::string* v = find(d, std::string("retired_pages.") + name);
  if (!v) return kErrorNotSupported;
  const std::vector<unsigned long long> pages = *parse_addresses(*v);
  const auto n = static_cast<unsigned>(pages.size());
  if (*count < n) {
    *count = n;
    return kErrorInsufficientSize;
  }
  if (n > 0 && !addresses) return kErrorInvalidArgument;
  for (unsigned i = 0; i < n; ++i) addresses[i] = pages[i];
  *count = n;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_remapped_rows(Device device, unsigned* corrected, unsigned* uncorrected,
                                                unsigned* pending, unsigned* failed) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!corrected || !uncorrected || !pending || !failed) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("remapped_rows");
  if (!find(d, "remapped_rows.correctable")) return kErrorNotSupported;
  *corrected = static_cast<unsigned>(uint_or(d, "remapped_rows.correctable", 0));
  *uncorrected = static_cast<unsigned>(uint_or(d, "remapped_rows.uncorrectable", 0));
  *pending = bool_or(d, "remapped_rows.pending", false) ? 1 : 0;
  *failed = bool_or(d, "remapped_rows.failure", false) ? 1 : 0;
  return kSuccess;
}

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

extern "C" Return fake_nvml_impl_compute_processes(Device device, unsigned* count, ProcessInfo* infos) {
  return process_query(device, "compute_processes", count, infos);
}
extern "C" Return fake_nvml_impl_graphics_processes(Device device, unsigned* count, ProcessInfo* infos) {
  return process_query(device, "graphics_processes", count, infos);
}

// ---- MIG -------------------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_max_mig_devices(Device device, unsigned* count) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!count || d->mig_slot >= 0) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("max_mig_devices");
  return read_uint(d, "max_mig_devices", count);
}

extern "C" Return fake_nvml_impl_mig_device_by_index(Device device, unsigned index, Device* mig) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!mig || d->mig_slot >= 0) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("mig_device_by_index", std::to_string(index));
  if (!find(d, "max_mig_devices")) return kErrorNotSupported;
  if (index >= d->mig_slots.size()) return kErrorInvalidArgument;
  if (!d->mig_slots[index]) return kErrorNotFound;
  *mig = d->mig_slots[index];
  return kSuccess;
}

namespace {
Return instance_id(Device device, const char* member, unsigned* id) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!id || d->mig_slot < 0) return kErrorInvalidArgument;  // a physical device has no instance ids
  FAKE_NVML_SCRIPTED(member);
  return read_uint(d, member, id);
}
}  // namespace

extern "C" Return fake_nvml_impl_gpu_instance_id(Device device, unsigned* id) {
  return instance_id(device, "gpu_instance_id", id);
}
extern "C" Return fake_nvml_impl_compute_instance_id(Device device, unsigned* id) {
  return instance_id(device, "compute_instance_id", id);
}

// ---- Exports: one alias per NVML name the variant keeps ---------------------------------------------
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_NAMES)

}  // namespace fake_nvml
