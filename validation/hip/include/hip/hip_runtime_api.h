// hip/hip_runtime_api.h: hipstack's HIP portability layer, host runtime API (docs/validation.md).
//
// Compiled by hipcc/clang for AMD GPUs (__HIP_PLATFORM_AMD__, or clang's HIP mode __HIP__), this header
// steps aside and includes the real AMD header found after it on the include path. Compiled by nvcc
// (__CUDACC__), or by a host compiler with __HIP_PLATFORM_NVIDIA__ defined, it declares hipstack's own
// mapping of the HIP runtime API onto the CUDA runtime. The mapping is C++ only.
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__) || defined(__HIP__)
#include_next <hip/hip_runtime_api.h>
#elif defined(__CUDACC__) || defined(__HIP_PLATFORM_NVIDIA__)
#include <hip/hipstack_nvidia/api_types.h>
#include <hip/hipstack_nvidia/api_functions.h>
#else
#error "hip_runtime_api.h: compile with hipcc (AMD), nvcc (NVIDIA), or define __HIP_PLATFORM_NVIDIA__ and link cudart"
#endif
