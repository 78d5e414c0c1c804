// Internal to the fake libnvidia-ml.so.1: device structures, library state, script lookups and entry-point macros.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
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

// GPM samples (nvmlGpmSampleAlloc): which device the last nvmlGpmSampleGet read, and when.
struct hipstack::smi::detail::nvml::nvmlGpmSample_st {
  const nvmlDevice_st* device = nullptr;  // null until nvmlGpmSampleGet fills it
  unsigned long long sequence = 0;        // order of the nvmlGpmSampleGet calls (1, 2, ...)
};

// Event sets (nvmlEventSetCreate): the devices registered for XID events, in registration order.
struct hipstack::smi::detail::nvml::nvmlEventSet_st {
  std::vector<const nvmlDevice_st*> registered;
};

namespace fake_nvml {

using namespace hipstack::smi::detail::nvml;
using DeviceState = nvmlDevice_st;

// Declarations of every implementation, with the X-macro's signatures.
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_DECLARE_IMPL)

// Shared by the implementation files; defined in fake_nvml.cpp unless a template.
namespace detail {

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
  // GPM samples allocated and not freed (they outlive init/shutdown cycles, as buffers of the caller).
  std::map<const nvmlGpmSample_st*, std::unique_ptr<nvmlGpmSample_st>> gpm_samples;
  unsigned long long gpm_sequence = 0;
  // Event sets, and each registered device's scripted XIDs: batches, the batch now delivered, and
  // how many of it were delivered.
  std::map<const nvmlEventSet_st*, std::unique_ptr<nvmlEventSet_st>> event_sets;
  struct XidQueue {
    std::vector<std::vector<unsigned long long>> batches;
    std::size_t batch = 0, delivered = 0;
  };
  std::map<const nvmlDevice_st*, XidQueue> xid_queues;
};

State& state();

const std::string* find(const std::string& key);
const std::string* find(const DeviceState* d, std::string_view key);
bool has_prefix(const std::string& prefix);

Return decode_return(const std::string* v);

// The scripted error of a device function, most specific first: N.member.sub.error, N.member.error,
// N.error, and for a MIG device its parent's N.error. 0 (SUCCESS) when none applies.
Return scripted_error(const DeviceState* d, std::string_view member, std::string_view sub = {});

bool is_live(Device d);

// ---- Value readers: NOT_SUPPORTED when the script does not give the key ---------------------------

template <typename T>
Return read_uint(const DeviceState* d, std::string_view key, T* out, bool byte_units = false) {
  const std::string* v = find(d, key);
  if (!v) return kErrorNotSupported;
  *out = static_cast<T>(*parse_uint(*v, byte_units));
  return kSuccess;
}

unsigned long long uint_or(const DeviceState* d, std::string_view key, unsigned long long fallback,
                           bool byte_units = false);
bool bool_or(const DeviceState* d, std::string_view key, bool fallback);

// NVML's buffer rule: INSUFFICIENT_SIZE (nothing written) when `length` < size + 1.
Return copy_string(const std::string& value, char* buffer, unsigned length);

template <size_t N>
const char* enum_name(const char* const (&names)[N], int value) {
  return value >= 0 && static_cast<size_t>(value) < N ? names[value] : nullptr;
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

Return string_query(Device device, const char* member, char* buffer, unsigned length);
Return uint_query(Device device, const char* member, unsigned* out);

}  // namespace detail

}  // namespace fake_nvml
