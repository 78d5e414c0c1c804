// hip/hipstack_nvidia/device.h: HIP's kernel-side names on CUDA (NVIDIA, nvcc only).
//
// Included through <hip/hip_runtime.h>. What HIP and CUDA spell the same way needs nothing here and
// is CUDA's own: __global__/__device__/__host__/__shared__/__constant__, threadIdx/blockIdx/blockDim/
// gridDim, dim3, __syncthreads, __threadfence*, atomicAdd/Sub/Exch/Min/Max/Inc/Dec/CAS/And/Or/Xor,
// __popc/__popcll/__clz/__ffs, clock64, and the device math library (sinf, expf, sqrt, fma, rsqrtf,
// __expf, __fdividef, ...), whose names and accuracy HIP documents as CUDA's.
//
// Warp operations. HIP's cross-lane calls take no lane mask: on AMD the wavefront is 64 lanes and masks
// are 64-bit. Here the warp is 32 lanes (warpSize == 32), so:
//   __shfl / __shfl_up / __shfl_down / __shfl_xor (var, lane|delta|mask, width = warpSize)
//       are CUDA's __shfl*_sync over the full warp (mask 0xffffffff), with HIP's width argument passed
//       on: the warp is split into segments of `width` lanes (a power of two, at most 32) and lanes
//       read within their own segment. All 32 lanes of the warp must make the call (as every lane of
//       the wavefront does under HIP on AMD in practice); calling from a divergent branch is undefined.
//   __ballot(pred)  returns a 64-bit mask, bit i set when lane i's predicate is non-zero; bits 32..63
//       are always 0 on NVIDIA. Code that counts lanes with __popcll(__ballot(...)) works on both.
//   __any / __all   as CUDA's __any_sync / __all_sync over the full warp.
//   __lane_id()     the lane within the warp (0..31).
#pragma once

#include <cuda_runtime.h>

#if !defined(__CUDACC__)
#error "hip/hipstack_nvidia/device.h needs nvcc"
#endif

// ---- Launch.
// hipLaunchKernelGGL(kernel, grid, block, dynamic shared bytes, stream, kernel arguments...).
#define hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
// Wraps a template kernel's name, whose commas would otherwise split the macro's arguments.
#define HIP_KERNEL_NAME(...) __VA_ARGS__
// Declares the kernel's dynamic shared memory (sized by the launch) as an array of `type`.
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];

// ---- Thread indexing (HIP's older spellings; threadIdx etc. are CUDA's own).
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

// ---- Warp operations (see the top of this file).
namespace hipstack_hip_detail {
inline constexpr unsigned full_warp = 0xffffffffu;
}

template <class T>
__device__ inline T __shfl(T var, int src_lane, int width = warpSize) {
  return __shfl_sync(hipstack_hip_detail::full_warp, var, src_lane, width);
}
template <class T>
__device__ inline T __shfl_up(T var, unsigned int delta, int width = warpSize) {
  return __shfl_up_sync(hipstack_hip_detail::full_warp, var, delta, width);
}
template <class T>
__device__ inline T __shfl_down(T var, unsigned int delta, int width = warpSize) {
  return __shfl_down_sync(hipstack_hip_detail::full_warp, var, delta, width);
}
template <class T>
__device__ inline T __shfl_xor(T var, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(hipstack_hip_detail::full_warp, var, lane_mask, width);
}

// CUDA still declares 32-bit, mask-less __ballot/__any/__all for old architectures (and for nvcc's host
// pass); these macros route every call to the 64-bit, HIP-shaped forms below instead.
namespace hipstack_hip_detail {
__device__ inline unsigned long long ballot(int predicate) {
  return static_cast<unsigned long long>(__ballot_sync(full_warp, predicate));
}
__device__ inline int any(int predicate) { return __any_sync(full_warp, predicate); }
__device__ inline int all(int predicate) { return __all_sync(full_warp, predicate); }
}  // namespace hipstack_hip_detail
#define __ballot(predicate) ::hipstack_hip_detail::ballot(predicate)
#define __any(predicate) ::hipstack_hip_detail::any(predicate)
#define __all(predicate) ::hipstack_hip_detail::all(predicate)

__device__ inline unsigned int __lane_id() {
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// ---- Atomics HIP adds beside CUDA's. HIP's unsafeAtomicAdd may use hardware float atomics that skip
// fine-grained-memory coherence on AMD; NVIDIA's atomicAdd is always the hardware atomic, so both
// spellings are atomicAdd.
template <class T>
__device__ inline T unsafeAtomicAdd(T* address, T value) {
  return atomicAdd(address, value);
}
template <class T>
__device__ inline T safeAtomicAdd(T* address, T value) {
  return atomicAdd(address, value);
}
