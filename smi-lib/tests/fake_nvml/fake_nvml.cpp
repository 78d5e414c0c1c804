// A fake libnvidia-ml.so.1 for the tests of the NVML backend: every entry point hipstack loads
// (HIPSTACK_NVML_SYMBOLS in nvml_api.hpp), answering from the script named by
// HIPSTACK_FAKE_NVML_SCRIPT. README.md in this folder documents the script and the behaviour.
// This file: init and shutdown, error strings, device count and handles (MIG included), and the shared
// helpers of fake_state.hpp; the other fake_*.cpp files implement the device queries, one role each.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "fake_state.hpp"

namespace fake_nvml {

using namespace detail;

// ---- Shared helpers (fake_state.hpp) -----------------------------------------------------------------

namespace detail {

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

Return scripted_error(const DeviceState* d, std::string_view member, std::string_view sub) {
  const std::string m(member);
  if (!sub.empty()) {
    if (const std::string* v = find(d, m + "." + std::string(sub) + ".error")) return decode_return(v);
  }
  if (const std::string* v = find(d, m + ".error")) return decode_return(v);
  if (const std::string* v = find(d, "error")) return decode_return(v);
  if (d->parent) return decode_return(find(d->parent, "error"));
  return kSuccess;
}

bool is_live(Device d) { return d != nullptr && state().live.contains(d); }

unsigned long long uint_or(const DeviceState* d, std::string_view key, unsigned long long fallback,
                           bool byte_units) {
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

}  // namespace detail

namespace {

Return scripted_global_error(std::string_view member) { return decode_return(find(std::string(member) + ".error")); }

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

// nvmlInitWithFlags, which the backend does not load but NVIDIA's pynvml calls for nvmlInit (so
// Debian's python3-pynvml runs on the fake as an oracle for hipstack.pynvml): NVML's flags only
// relax what a GPU-less init may do, which the fake's script decides, so they are not looked at. The
// full variant only: the old one plays a driver with only the oldest names.
#if FAKE_NVML_VARIANT == FAKE_NVML_VARIANT_FULL
extern "C" __attribute__((visibility("default"))) Return nvmlInitWithFlags(unsigned /*flags*/) {
  return fake_nvml_impl_init();
}
#endif

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
  // With MIG off every slot is empty, past the GPU's count too (an H100's NVML 580.159.04 answered
  // NOT_FOUND for slots 0-7 with a count of 0); with it on, a slot past the count is refused.
  if (!bool_or(d, "mig_mode.current", false)) return kErrorNotFound;
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

// ---- Exports: one alias per NVML name the variant keeps, for the members this file defines ------------
#define FAKE_NVML_DEFINED_HERE_init FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_shutdown FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_error_string FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_device_count FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_device_by_index FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_driver_version FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_cuda_version FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_max_mig_devices FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_mig_device_by_index FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_gpu_instance_id FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_compute_instance_id FAKE_NVML_PROBE()
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE)

// Every member is exported by exactly one implementation file, or the library does not link.
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_REQUIRE_EXPORTED)

}  // namespace fake_nvml
