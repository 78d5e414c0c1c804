// hip/hip_runtime.h: hipstack's HIP portability layer, runtime API plus device side (docs/validation.md).
//
// AMD (hipcc/clang: __HIP_PLATFORM_AMD__ or __HIP__): the real AMD header found after this one on the
// include path is used unchanged. NVIDIA (nvcc): hipstack's mapping onto the CUDA runtime and CUDA's
// device intrinsics (hipstack_nvidia/api_*.h for the host API, hipstack_nvidia/device.h for kernels).
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__) || defined(__HIP__)
#include_next <hip/hip_runtime.h>
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#include <hip/hip_runtime_api.h>
#include <hip/hipstack_nvidia/device.h>
#elif defined(__HIP_PLATFORM_NVIDIA__)
// A host compiler on the NVIDIA platform: the runtime API only (kernels need nvcc).
#include <hip/hip_runtime_api.h>
#else
#error "hip_runtime.h: compile with hipcc (AMD), nvcc (NVIDIA), or define __HIP_PLATFORM_NVIDIA__ and link cudart"
#endif
