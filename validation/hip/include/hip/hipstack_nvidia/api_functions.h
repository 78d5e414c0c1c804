// hip/hipstack_nvidia/api_functions.h: HIP runtime calls on the CUDA runtime (NVIDIA).
//
// Included through <hip/hip_runtime_api.h>. Calls whose arguments match CUDA's one to one are listed
// once, with their HIP signature, in HIPSTACK_HIP_FUNCTIONS; the rest (where HIP and CUDA differ in
// arguments or semantics) are written out below it, each with the difference it bridges.
#pragma once

#include <hip/hipstack_nvidia/api_types.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

// X(HIP name, CUDA name, (HIP parameters), (arguments passed on)).
#define HIPSTACK_HIP_FUNCTIONS(X)                                                                             \
  /* devices */                                                                                               \
  X(hipGetDeviceCount, cudaGetDeviceCount, (int* count), (count))                                             \
  X(hipGetDevice, cudaGetDevice, (int* device), (device))                                                     \
  X(hipSetDevice, cudaSetDevice, (int device), (device))                                                      \
  X(hipDeviceSynchronize, cudaDeviceSynchronize, (), ())                                                      \
  X(hipDeviceReset, cudaDeviceReset, (), ())                                                                  \
  X(hipSetDeviceFlags, cudaSetDeviceFlags, (unsigned flags), (flags))                                         \
  X(hipGetDeviceFlags, cudaGetDeviceFlags, (unsigned* flags), (flags))                                        \
  X(hipDeviceGetAttribute, cudaDeviceGetAttribute, (int* value, hipDeviceAttribute_t attr, int device),       \
    (value, attr, device))                                                                                    \
  X(hipDeviceGetPCIBusId, cudaDeviceGetPCIBusId, (char* pci_bus_id, int len, int device),                     \
    (pci_bus_id, len, device))                                                                                \
  X(hipDeviceGetByPCIBusId, cudaDeviceGetByPCIBusId, (int* device, const char* pci_bus_id),                   \
    (device, pci_bus_id))                                                                                     \
  X(hipDeviceGetLimit, cudaDeviceGetLimit, (size_t* value, hipLimit_t limit), (value, limit))                 \
  X(hipDeviceSetLimit, cudaDeviceSetLimit, (hipLimit_t limit, size_t value), (limit, value))                  \
  X(hipDeviceGetCacheConfig, cudaDeviceGetCacheConfig, (hipFuncCache_t * config), (config))                   \
  X(hipDeviceSetCacheConfig, cudaDeviceSetCacheConfig, (hipFuncCache_t config), (config))                     \
  X(hipDeviceGetStreamPriorityRange, cudaDeviceGetStreamPriorityRange, (int* least, int* greatest),           \
    (least, greatest))                                                                                        \
  X(hipDriverGetVersion, cudaDriverGetVersion, (int* version), (version))                                     \
  X(hipRuntimeGetVersion, cudaRuntimeGetVersion, (int* version), (version))                                   \
  X(hipMemGetInfo, cudaMemGetInfo, (size_t* free, size_t* total), (free, total))                              \
  /* errors */                                                                                                \
  X(hipGetLastError, cudaGetLastError, (), ())                                                                \
  X(hipPeekAtLastError, cudaPeekAtLastError, (), ())                                                          \
  /* memory */                                                                                                \
  X(hipMalloc, cudaMalloc, (void** ptr, size_t size), (ptr, size))                                            \
  X(hipFree, cudaFree, (void* ptr), (ptr))                                                                    \
  X(hipMallocPitch, cudaMallocPitch, (void** ptr, size_t* pitch, size_t width, size_t height),                \
    (ptr, pitch, width, height))                                                                              \
  X(hipHostMalloc, cudaHostAlloc, (void** ptr, size_t size, unsigned flags), (ptr, size, flags))              \
  X(hipHostFree, cudaFreeHost, (void* ptr), (ptr))                                                            \
  X(hipHostRegister, cudaHostRegister, (void* ptr, size_t size, unsigned flags), (ptr, size, flags))          \
  X(hipHostUnregister, cudaHostUnregister, (void* ptr), (ptr))                                                \
  X(hipHostGetDevicePointer, cudaHostGetDevicePointer, (void** device_ptr, void* host_ptr, unsigned flags),   \
    (device_ptr, host_ptr, flags))                                                                            \
  X(hipHostGetFlags, cudaHostGetFlags, (unsigned* flags, void* host_ptr), (flags, host_ptr))                  \
  X(hipMallocManaged, cudaMallocManaged, (void** ptr, size_t size, unsigned flags = hipMemAttachGlobal),      \
    (ptr, size, flags))                                                                                       \
  X(hipMemset, cudaMemset, (void* dst, int value, size_t count), (dst, value, count))                         \
  X(hipMemsetAsync, cudaMemsetAsync, (void* dst, int value, size_t count, hipStream_t stream = nullptr),      \
    (dst, value, count, stream))                                                                              \
  X(hipMemset2D, cudaMemset2D, (void* dst, size_t pitch, int value, size_t width, size_t height),             \
    (dst, pitch, value, width, height))                                                                       \
  X(hipMemset2DAsync, cudaMemset2DAsync,                                                                      \
    (void* dst, size_t pitch, int value, size_t width, size_t height, hipStream_t stream = nullptr),          \
    (dst, pitch, value, width, height, stream))                                                               \
  X(hipMemcpy, cudaMemcpy, (void* dst, const void* src, size_t count, hipMemcpyKind kind),                    \
    (dst, src, count, kind))                                                                                  \
  X(hipMemcpyAsync, cudaMemcpyAsync,                                                                          \
    (void* dst, const void* src, size_t count, hipMemcpyKind kind, hipStream_t stream = nullptr),             \
    (dst, src, count, kind, stream))                                                                          \
  X(hipMemcpy2D, cudaMemcpy2D,                                                                                \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,                   \
     hipMemcpyKind kind),                                                                                     \
    (dst, dpitch, src, spitch, width, height, kind))                                                          \
  X(hipMemcpy2DAsync, cudaMemcpy2DAsync,                                                                      \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,                   \
     hipMemcpyKind kind, hipStream_t stream = nullptr),                                                       \
    (dst, dpitch, src, spitch, width, height, kind, stream))                                                  \
  /* peers */                                                                                                 \
  X(hipDeviceCanAccessPeer, cudaDeviceCanAccessPeer, (int* can_access, int device, int peer),                 \
    (can_access, device, peer))                                                                               \
  X(hipDeviceEnablePeerAccess, cudaDeviceEnablePeerAccess, (int peer, unsigned flags), (peer, flags))         \
  X(hipDeviceDisablePeerAccess, cudaDeviceDisablePeerAccess, (int peer), (peer))                              \
  X(hipMemcpyPeer, cudaMemcpyPeer, (void* dst, int dst_device, const void* src, int src_device, size_t count), \
    (dst, dst_device, src, src_device, count))                                                                \
  X(hipMemcpyPeerAsync, cudaMemcpyPeerAsync,                                                                  \
    (void* dst, int dst_device, const void* src, int src_device, size_t count, hipStream_t stream = nullptr), \
    (dst, dst_device, src, src_device, count, stream))                                                        \
  /* streams */                                                                                               \
  X(hipStreamCreate, cudaStreamCreate, (hipStream_t * stream), (stream))                                      \
  X(hipStreamCreateWithFlags, cudaStreamCreateWithFlags, (hipStream_t * stream, unsigned flags),              \
    (stream, flags))                                                                                          \
  X(hipStreamCreateWithPriority, cudaStreamCreateWithPriority,                                                \
    (hipStream_t * stream, unsigned flags, int priority), (stream, flags, priority))                          \
  X(hipStreamDestroy, cudaStreamDestroy, (hipStream_t stream), (stream))                                      \
  X(hipStreamSynchronize, cudaStreamSynchronize, (hipStream_t stream), (stream))                              \
  X(hipStreamQuery, cudaStreamQuery, (hipStream_t stream), (stream))                                          \
  X(hipStreamWaitEvent, cudaStreamWaitEvent, (hipStream_t stream, hipEvent_t event, unsigned flags = 0),      \
    (stream, event, flags))                                                                                   \
  X(hipStreamGetFlags, cudaStreamGetFlags, (hipStream_t stream, unsigned* flags), (stream, flags))            \
  X(hipStreamGetPriority, cudaStreamGetPriority, (hipStream_t stream, int* priority), (stream, priority))     \
  X(hipLaunchHostFunc, cudaLaunchHostFunc, (hipStream_t stream, hipHostFn_t fn, void* user_data),             \
    (stream, fn, user_data))                                                                                  \
  /* events */                                                                                                \
  X(hipEventCreate, cudaEventCreate, (hipEvent_t * event), (event))                                           \
  X(hipEventCreateWithFlags, cudaEventCreateWithFlags, (hipEvent_t * event, unsigned flags), (event, flags))  \
  X(hipEventRecord, cudaEventRecord, (hipEvent_t event, hipStream_t stream = nullptr), (event, stream))       \
  X(hipEventSynchronize, cudaEventSynchronize, (hipEvent_t event), (event))                                   \
  X(hipEventQuery, cudaEventQuery, (hipEvent_t event), (event))                                               \
  X(hipEventElapsedTime, cudaEventElapsedTime, (float* ms, hipEvent_t start, hipEvent_t stop),                \
    (ms, start, stop))                                                                                        \
  X(hipEventDestroy, cudaEventDestroy, (hipEvent_t event), (event))                                           \
  /* kernels, by address (the templates below take kernels themselves) */                                     \
  X(hipLaunchKernel, cudaLaunchKernel,                                                                        \
    (const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes, hipStream_t stream),      \
    (function, grid, block, args, shared_bytes, stream))                                                      \
  X(hipLaunchCooperativeKernel, cudaLaunchCooperativeKernel,                                                  \
    (const void* function, dim3 grid, dim3 block, void** args, unsigned shared_bytes, hipStream_t stream),    \
    (function, grid, block, args, shared_bytes, stream))                                                      \
  X(hipFuncGetAttributes, cudaFuncGetAttributes, (hipFuncAttributes * attributes, const void* function),     \
    (attributes, function))                                                                                   \
  X(hipFuncSetAttribute, cudaFuncSetAttribute, (const void* function, hipFuncAttribute attribute, int value), \
    (function, attribute, value))                                                                             \
  X(hipFuncSetCacheConfig, cudaFuncSetCacheConfig, (const void* function, hipFuncCache_t config),            \
    (function, config))                                                                                       \
  X(hipOccupancyMaxActiveBlocksPerMultiprocessor, cudaOccupancyMaxActiveBlocksPerMultiprocessor,              \
    (int* blocks, const void* function, int block_size, size_t dynamic_shared_bytes),                         \
    (blocks, function, block_size, dynamic_shared_bytes))                                                     \
  X(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,                                                    \
    cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,                                                   \
    (int* blocks, const void* function, int block_size, size_t dynamic_shared_bytes, unsigned flags),         \
    (blocks, function, block_size, dynamic_shared_bytes, flags))

#define HIPSTACK_HIP_X(hip, cuda, params, args) \
  inline hipError_t hip params { return static_cast<hipError_t>(cuda args); }
HIPSTACK_HIP_FUNCTIONS(HIPSTACK_HIP_X)
#undef HIPSTACK_HIP_X

// ---- Errors.
inline const char* hipGetErrorString(hipError_t error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }
inline const char* hipGetErrorName(hipError_t error) { return cudaGetErrorName(static_cast<cudaError_t>(error)); }

// ---- Device properties: cudaGetDeviceProperties for names, sizes and arrays; every int field through
// cudaDeviceGetAttribute (the table in api_types.h), which is how CUDA 13 reports clocks.
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device) {
  if (prop == nullptr) return hipErrorInvalidValue;
  cudaDeviceProp cuda{};
  if (cudaError_t e = cudaGetDeviceProperties(&cuda, device); e != cudaSuccess) return static_cast<hipError_t>(e);
  *prop = hipDeviceProp_t{};
  std::memcpy(prop->name, cuda.name, sizeof prop->name);
  prop->name[sizeof prop->name - 1] = '\0';
  prop->uuid = cuda.uuid;
  prop->totalGlobalMem = cuda.totalGlobalMem;
  prop->sharedMemPerBlock = cuda.sharedMemPerBlock;
  prop->sharedMemPerBlockOptin = cuda.sharedMemPerBlockOptin;
  prop->maxSharedMemoryPerMultiProcessor = cuda.sharedMemPerMultiprocessor;
  prop->totalConstMem = cuda.totalConstMem;
  prop->memPitch = cuda.memPitch;
  prop->textureAlignment = cuda.textureAlignment;
  for (int i = 0; i < 3; ++i) {
    prop->maxThreadsDim[i] = cuda.maxThreadsDim[i];
    prop->maxGridSize[i] = cuda.maxGridSize[i];
  }
#define HIPSTACK_HIP_P(hip, cuda_attr, field)                                              \
  if (cudaError_t e = cudaDeviceGetAttribute(&prop->field, cuda_attr, device); e != cudaSuccess) \
    return static_cast<hipError_t>(e);
#define HIPSTACK_HIP_A(hip, cuda_attr)
  HIPSTACK_HIP_DEVICE_ATTRIBUTES(HIPSTACK_HIP_P, HIPSTACK_HIP_A)
#undef HIPSTACK_HIP_P
#undef HIPSTACK_HIP_A
  std::snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "sm_%d%d", prop->major, prop->minor);
  return hipSuccess;
}

// ---- HIP's typed allocation overloads (the same three as HIP's own headers have).
template <class T>
inline hipError_t hipHostMalloc(T** ptr, size_t size, unsigned flags = hipHostMallocDefault) {
  return hipHostMalloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
inline hipError_t hipMalloc(T** ptr, size_t size) {
  return hipMalloc(reinterpret_cast<void**>(ptr), size);
}
template <class T>
inline hipError_t hipMallocManaged(T** ptr, size_t size, unsigned flags = hipMemAttachGlobal) {
  return hipMallocManaged(reinterpret_cast<void**>(ptr), size, flags);
}

// ---- Managed memory. HIP names a processor by device number (hipCpuDeviceId for the host); CUDA 13
// takes a cudaMemLocation and a flags word instead, CUDA 12 and older take the device number.
namespace hipstack_hip_detail {
#if CUDART_VERSION >= 13000
inline cudaMemLocation location_of(int device) {
  cudaMemLocation location{};
  if (device == cudaCpuDeviceId) {
    location.type = cudaMemLocationTypeHost;
    location.id = 0;
  } else {
    location.type = cudaMemLocationTypeDevice;
    location.id = device;
  }
  return location;
}
#endif
}  // namespace hipstack_hip_detail

inline hipError_t hipMemPrefetchAsync(const void* ptr, size_t count, int device, hipStream_t stream = nullptr) {
#if CUDART_VERSION >= 13000
  return static_cast<hipError_t>(
      cudaMemPrefetchAsync(ptr, count, hipstack_hip_detail::location_of(device), 0, stream));
#else
  return static_cast<hipError_t>(cudaMemPrefetchAsync(ptr, count, device, stream));
#endif
}

inline hipError_t hipMemAdvise(const void* ptr, size_t count, hipMemoryAdvise advice, int device) {
#if CUDART_VERSION >= 13000
  return static_cast<hipError_t>(cudaMemAdvise(ptr, count, advice, hipstack_hip_detail::location_of(device)));
#else
  return static_cast<hipError_t>(cudaMemAdvise(ptr, count, advice, device));
#endif
}

// ---- Symbols. HIP_SYMBOL(x) names a __device__ or __constant__ variable; on NVIDIA the variable itself is
// passed and CUDA's templates take its address.
#define HIP_SYMBOL(symbol) symbol
template <class T>
inline hipError_t hipMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                    hipMemcpyKind kind = hipMemcpyHostToDevice) {
  return static_cast<hipError_t>(cudaMemcpyToSymbol(symbol, src, count, offset, kind));
}
template <class T>
inline hipError_t hipMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                      hipMemcpyKind kind = hipMemcpyDeviceToHost) {
  return static_cast<hipError_t>(cudaMemcpyFromSymbol(dst, symbol, count, offset, kind));
}
template <class T>
inline hipError_t hipMemcpyToSymbolAsync(const T& symbol, const void* src, size_t count, size_t offset,
                                         hipMemcpyKind kind, hipStream_t stream = nullptr) {
  return static_cast<hipError_t>(cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, stream));
}
template <class T>
inline hipError_t hipMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset,
                                           hipMemcpyKind kind, hipStream_t stream = nullptr) {
  return static_cast<hipError_t>(cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, stream));
}
template <class T>
inline hipError_t hipGetSymbolAddress(void** ptr, const T& symbol) {
  return static_cast<hipError_t>(cudaGetSymbolAddress(ptr, symbol));
}
template <class T>
inline hipError_t hipGetSymbolSize(size_t* size, const T& symbol) {
  return static_cast<hipError_t>(cudaGetSymbolSize(size, symbol));
}

// ---- Kernels passed as functions rather than addresses (HIP's C++ overloads).
template <class F>
inline hipError_t hipFuncGetAttributes(hipFuncAttributes* attributes, F* function) {
  return hipFuncGetAttributes(attributes, reinterpret_cast<const void*>(function));
}
template <class F>
inline hipError_t hipFuncSetAttribute(F* function, hipFuncAttribute attribute, int value) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(function), attribute, value);
}
template <class F>
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, F* function, int block_size,
                                                               size_t dynamic_shared_bytes) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(function), block_size,
                                                      dynamic_shared_bytes);
}
// The block size that maximises occupancy, and the grid that fills the device at that size.
template <class F>
inline hipError_t hipOccupancyMaxPotentialBlockSize(int* grid_size, int* block_size, F function,
                                                    size_t dynamic_shared_bytes = 0, int block_size_limit = 0) {
  return static_cast<hipError_t>(
      cudaOccupancyMaxPotentialBlockSize(grid_size, block_size, function, dynamic_shared_bytes, block_size_limit));
}
