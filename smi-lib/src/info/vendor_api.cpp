// The CUDA driver API and HIP runtime entry points hipstack-info calls, loaded at run time
// (vendor_api.hpp).
#include "vendor_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)
#include <link.h>

#include <cstdlib>
#include <initializer_list>

#include "../dl_symbols.hpp"

namespace hipstack::smi::detail::info {
namespace {

std::vector<std::string> with_override(const char* variable, std::vector<std::string> defaults) {
  if (const char* given = std::getenv(variable); given != nullptr && *given != '\0') return {given};
  return defaults;
}

}  // namespace

Loaded load_library(const std::vector<std::string>& candidates) {
  Loaded out;
  std::vector<std::string> failures;
  for (const std::string& candidate : candidates) {
    void* handle = ::dlopen(candidate.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const std::string error = take_dl_error();
      failures.push_back(!error.empty() ? error : candidate + ": unknown error");
      continue;
    }
    out.handle = handle;
    out.path = candidate;
    // The file the loader picked (a soname resolves through the search path).
    link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && *map->l_name != '\0') {
      out.path = map->l_name;
    }
    return out;
  }
  out.error = fmt::format("{}", fmt::join(failures, "; "));
  return out;
}

CudaDriver::CudaDriver() {
  lib_ = load_library(with_override("HIPSTACK_CUDA_LIBRARY", {"libcuda.so.1"}));
  if (lib_.handle == nullptr) {
    reason_ = "cannot load the CUDA driver library: " + lib_.error;
    return;
  }
  resolve_symbol(lib_.handle, api_.init, {"cuInit"});
  resolve_symbol(lib_.handle, api_.driver_version, {"cuDriverGetVersion"});
  resolve_symbol(lib_.handle, api_.device_count, {"cuDeviceGetCount"});
  resolve_symbol(lib_.handle, api_.device_get, {"cuDeviceGet"});
  resolve_symbol(lib_.handle, api_.device_name, {"cuDeviceGetName"});
  resolve_symbol(lib_.handle, api_.device_pci_bus_id, {"cuDeviceGetPCIBusId"});
  resolve_symbol(lib_.handle, api_.device_total_mem, {"cuDeviceTotalMem_v2"});
  resolve_symbol(lib_.handle, api_.device_attribute, {"cuDeviceGetAttribute"});
  resolve_symbol(lib_.handle, api_.device_uuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"});
  resolve_symbol(lib_.handle, api_.error_name, {"cuGetErrorName"});
  resolve_symbol(lib_.handle, api_.error_string, {"cuGetErrorString"});
  if (api_.init == nullptr || api_.device_count == nullptr || api_.device_get == nullptr ||
      api_.device_attribute == nullptr) {
    reason_ = fmt::format("{} lacks cuInit, cuDeviceGetCount, cuDeviceGet or cuDeviceGetAttribute", lib_.path);
    return;
  }
  if (const cuda::Result code = api_.init(0); code != 0) {
    reason_ = "cuInit: " + describe(code);
    return;
  }
  ready_ = true;
}

std::string CudaDriver::describe(cuda::Result code) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.error_name != nullptr) (void)api_.error_name(code, &name);
  if (api_.error_string != nullptr) (void)api_.error_string(code, &text);
  return fmt::format("{} ({})", name != nullptr ? name : fmt::format("CUresult {}", code),
                     text != nullptr ? text : "no description");
}

int CudaDriver::attribute(cuda::Device device, int attribute) const {
  int value = 0;
  if (api_.device_attribute(&value, attribute, device) != 0) return 0;
  return value;
}

HipRuntime::HipRuntime() {
  lib_ = load_library(with_override("HIPSTACK_HIP_LIBRARY",
                                    {"libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so.6",
                                     "/opt/rocm/lib/libamdhip64.so.5"}));
  if (lib_.handle == nullptr) {
    lib_.error = "cannot load the HIP runtime: " + lib_.error;
    return;
  }
  resolve_symbol(lib_.handle, api_.runtime_version, {"hipRuntimeGetVersion"});
  resolve_symbol(lib_.handle, api_.driver_version, {"hipDriverGetVersion"});
  resolve_symbol(lib_.handle, api_.device_count, {"hipGetDeviceCount"});
  resolve_symbol(lib_.handle, api_.device_name, {"hipDeviceGetName"});
  resolve_symbol(lib_.handle, api_.device_pci_bus_id, {"hipDeviceGetPCIBusId"});
  resolve_symbol(lib_.handle, api_.device_total_mem, {"hipDeviceTotalMem"});
  resolve_symbol(lib_.handle, api_.device_attribute, {"hipDeviceGetAttribute"});
  resolve_symbol(lib_.handle, api_.error_name, {"hipGetErrorName"});
  resolve_symbol(lib_.handle, api_.error_string, {"hipGetErrorString"});
  if (api_.device_count == nullptr || api_.device_attribute == nullptr) {
    lib_.error = fmt::format("{} lacks hipGetDeviceCount or hipDeviceGetAttribute", lib_.path);
    return;
  }
  ready_ = true;
}

std::string HipRuntime::describe(hip::Error code) const {
  const char* name = api_.error_name != nullptr ? api_.error_name(code) : nullptr;
  const char* text = api_.error_string != nullptr ? api_.error_string(code) : nullptr;
  return fmt::format("{} ({})", name != nullptr ? name : fmt::format("hipError_t {}", code),
                     text != nullptr ? text : "no description");
}

}  // namespace hipstack::smi::detail::info
