// The few entry points of the CUDA driver API (libcuda.so.1) and the HIP runtime (libamdhip64.so)
// that hipstack-info calls, declared by us from the vendors' API references (no vendor header is
// needed to build), and a loader for each. Everything called here only reads: device counts, names,
// PCI addresses, attributes, versions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hipstack::smi::detail::info {

// ---- CUDA driver API (cuda.h, CUDA 12/13) ----
namespace cuda {
using Result = int;   // CUresult; 0 = CUDA_SUCCESS
using Device = int;   // CUdevice
struct Uuid {         // CUuuid
  unsigned char bytes[16];
};
// CUdevice_attribute values.
constexpr int kMaxThreadsPerBlock = 1;
constexpr int kMaxSharedMemoryPerBlock = 8;
constexpr int kWarpSize = 10;
constexpr int kClockRate = 13;                 // kHz (deprecated in CUDA 12, may be refused)
constexpr int kMultiprocessorCount = 16;
constexpr int kMemoryClockRate = 36;           // kHz
constexpr int kGlobalMemoryBusWidth = 37;      // bits
constexpr int kL2CacheSize = 38;               // bytes
constexpr int kMaxThreadsPerMultiprocessor = 39;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kMaxSharedMemoryPerMultiprocessor = 81;
constexpr int kMaxRegistersPerMultiprocessor = 82;

struct Api {
  Result (*init)(unsigned) = nullptr;                           // cuInit
  Result (*driver_version)(int*) = nullptr;                     // cuDriverGetVersion
  Result (*device_count)(int*) = nullptr;                       // cuDeviceGetCount
  Result (*device_get)(Device*, int) = nullptr;                 // cuDeviceGet
  Result (*device_name)(char*, int, Device) = nullptr;          // cuDeviceGetName
  Result (*device_pci_bus_id)(char*, int, Device) = nullptr;    // cuDeviceGetPCIBusId
  Result (*device_total_mem)(std::size_t*, Device) = nullptr;   // cuDeviceTotalMem_v2
  Result (*device_attribute)(int*, int, Device) = nullptr;      // cuDeviceGetAttribute
  Result (*device_uuid)(Uuid*, Device) = nullptr;               // cuDeviceGetUuid_v2, cuDeviceGetUuid
  Result (*error_name)(Result, const char**) = nullptr;         // cuGetErrorName
  Result (*error_string)(Result, const char**) = nullptr;       // cuGetErrorString
};
}  // namespace cuda

// ---- HIP runtime (hip_runtime_api.h, HIP 5 and 6) ----
namespace hip {
using Error = int;    // hipError_t; 0 = hipSuccess
// hipDeviceAttribute_t values (unchanged from HIP 5.0 to 6.x).
constexpr int kClockRate = 5;                  // kHz
constexpr int kMultiprocessorCount = 63;
constexpr int kWarpSize = 87;

struct Api {
  Error (*runtime_version)(int*) = nullptr;                     // hipRuntimeGetVersion
  Error (*driver_version)(int*) = nullptr;                      // hipDriverGetVersion
  Error (*device_count)(int*) = nullptr;                        // hipGetDeviceCount
  Error (*device_name)(char*, int, int) = nullptr;              // hipDeviceGetName
  Error (*device_pci_bus_id)(char*, int, int) = nullptr;        // hipDeviceGetPCIBusId
  Error (*device_total_mem)(std::size_t*, int) = nullptr;       // hipDeviceTotalMem
  Error (*device_attribute)(int*, int, int) = nullptr;          // hipDeviceGetAttribute
  const char* (*error_name)(Error) = nullptr;                   // hipGetErrorName
  const char* (*error_string)(Error) = nullptr;                 // hipGetErrorString
};
}  // namespace hip

// A vendor library opened with dlopen; kept loaded for the process (RTLD_NODELETE: neither runtime
// is made to be unloaded).
struct Loaded {
  void* handle = nullptr;
  std::string path;    // the file the loader found
  std::string error;   // why none of the candidates loaded
};
// Tries each candidate in order (sonames searched the usual way, or absolute paths).
Loaded load_library(const std::vector<std::string>& candidates);

// libcuda.so.1 (or $HIPSTACK_CUDA_LIBRARY) with cuInit done. ready() false: reason() says why
// (loaded() tells a missing library from a failed initialisation).
class CudaDriver {
 public:
  CudaDriver();
  [[nodiscard]] bool loaded() const noexcept { return !lib_.path.empty(); }
  [[nodiscard]] bool ready() const noexcept { return ready_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] const std::string& path() const noexcept { return lib_.path; }
  [[nodiscard]] const cuda::Api& api() const noexcept { return api_; }
  [[nodiscard]] std::string describe(cuda::Result code) const;  // "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
  [[nodiscard]] int attribute(cuda::Device device, int attribute) const;  // 0 when refused

 private:
  Loaded lib_;
  cuda::Api api_;
  bool ready_ = false;
  std::string reason_;
};

// libamdhip64.so.6 / .so.5 (or $HIPSTACK_HIP_LIBRARY), then /opt/rocm/lib. No call is made here.
class HipRuntime {
 public:
  HipRuntime();
  [[nodiscard]] bool loaded() const noexcept { return ready_; }
  [[nodiscard]] const std::string& reason() const noexcept { return lib_.error; }
  [[nodiscard]] const std::string& path() const noexcept { return lib_.path; }
  [[nodiscard]] const hip::Api& api() const noexcept { return api_; }
  [[nodiscard]] std::string describe(hip::Error code) const;

 private:
  Loaded lib_;
  hip::Api api_;
  bool ready_ = false;
};

}  // namespace hipstack::smi::detail::info
