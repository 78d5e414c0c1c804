// hip/hipstack_nvidia/api_types.h: HIP types, constants and error codes on the CUDA runtime (NVIDIA).
//
// Included through <hip/hip_runtime_api.h>; not meant to be included directly. Every list here is one
// X-macro table: the HIP name beside the CUDA name it stands for, and the declarations are generated.
//
// Numeric values are CUDA's: hipError_t, hipMemcpyKind, hipDeviceAttribute_t and the flag constants take
// the values of the CUDA enumerators they map to, so code must compare with the names (hipSuccess,
// hipErrorNotReady, ...), never with AMD's numbers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
// Set when hipstack's NVIDIA mapping (not the AMD runtime) is in use.
#define HIPSTACK_HIP_NVIDIA 1

#if defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

// ---- Error codes: X(HIP name, CUDA name). Several HIP names may share one CUDA code.
#define HIPSTACK_HIP_ERRORS(X)                                                  \
  X(hipSuccess, cudaSuccess)                                                    \
  X(hipErrorInvalidValue, cudaErrorInvalidValue)                                \
  X(hipErrorOutOfMemory, cudaErrorMemoryAllocation)                             \
  X(hipErrorMemoryAllocation, cudaErrorMemoryAllocation)                        \
  X(hipErrorNotInitialized, cudaErrorInitializationError)                       \
  X(hipErrorInitializationError, cudaErrorInitializationError)                  \
  X(hipErrorDeinitialized, cudaErrorCudartUnloading)                            \
  X(hipErrorInvalidConfiguration, cudaErrorInvalidConfiguration)                \
  X(hipErrorInvalidPitchValue, cudaErrorInvalidPitchValue)                      \
  X(hipErrorInvalidSymbol, cudaErrorInvalidSymbol)                              \
  X(hipErrorInvalidDevicePointer, cudaErrorInvalidDevicePointer)                \
  X(hipErrorInvalidMemcpyDirection, cudaErrorInvalidMemcpyDirection)            \
  X(hipErrorInsufficientDriver, cudaErrorInsufficientDriver)                    \
  X(hipErrorMissingConfiguration, cudaErrorMissingConfiguration)                \
  X(hipErrorNoDevice, cudaErrorNoDevice)                                        \
  X(hipErrorInvalidDevice, cudaErrorInvalidDevice)                              \
  X(hipErrorInvalidImage, cudaErrorInvalidKernelImage)                          \
  X(hipErrorInvalidContext, cudaErrorDeviceUninitialized)                       \
  X(hipErrorInvalidHandle, cudaErrorInvalidResourceHandle)                      \
  X(hipErrorInvalidResourceHandle, cudaErrorInvalidResourceHandle)              \
  X(hipErrorNotFound, cudaErrorSymbolNotFound)                                  \
  X(hipErrorNotReady, cudaErrorNotReady)                                        \
  X(hipErrorIllegalAddress, cudaErrorIllegalAddress)                            \
  X(hipErrorLaunchOutOfResources, cudaErrorLaunchOutOfResources)                \
  X(hipErrorLaunchTimeOut, cudaErrorLaunchTimeout)                              \
  X(hipErrorLaunchFailure, cudaErrorLaunchFailure)                              \
  X(hipErrorCooperativeLaunchTooLarge, cudaErrorCooperativeLaunchTooLarge)      \
  X(hipErrorPeerAccessAlreadyEnabled, cudaErrorPeerAccessAlreadyEnabled)        \
  X(hipErrorPeerAccessNotEnabled, cudaErrorPeerAccessNotEnabled)                \
  X(hipErrorPeerAccessUnsupported, cudaErrorPeerAccessUnsupported)              \
  X(hipErrorHostMemoryAlreadyRegistered, cudaErrorHostMemoryAlreadyRegistered)  \
  X(hipErrorHostMemoryNotRegistered, cudaErrorHostMemoryNotRegistered)          \
  X(hipErrorInvalidDeviceFunction, cudaErrorInvalidDeviceFunction)              \
  X(hipErrorNoBinaryForGpu, cudaErrorNoKernelImageForDevice)                    \
  X(hipErrorNotSupported, cudaErrorNotSupported)                                \
  X(hipErrorAssert, cudaErrorAssert)                                            \
  X(hipErrorContextIsDestroyed, cudaErrorContextIsDestroyed)                    \
  X(hipErrorECCNotCorrectable, cudaErrorECCUncorrectable)                       \
  X(hipErrorOperatingSystem, cudaErrorOperatingSystem)                          \
  X(hipErrorSetOnActiveProcess, cudaErrorSetOnActiveProcess)                    \
  X(hipErrorUnknown, cudaErrorUnknown)

// A fixed underlying type: every cudaError_t value, listed here or not, is a valid hipError_t.
// [[nodiscard]] as on AMD, where ignoring a returned hipError_t warns.
enum [[nodiscard]] hipError_t : int {
#define HIPSTACK_HIP_X(hip, cuda) hip = cuda,
  HIPSTACK_HIP_ERRORS(HIPSTACK_HIP_X)
#undef HIPSTACK_HIP_X
};

// ---- Types that are CUDA's under another name: X(HIP name, CUDA type).
#define HIPSTACK_HIP_TYPES(X)                       \
  X(hipStream_t, cudaStream_t)                      \
  X(hipEvent_t, cudaEvent_t)                        \
  X(hipMemcpyKind, enum cudaMemcpyKind)             \
  X(hipFuncCache_t, enum cudaFuncCache)             \
  X(hipLimit_t, enum cudaLimit)                     \
  X(hipFuncAttributes, struct cudaFuncAttributes)   \
  X(hipFuncAttribute, enum cudaFuncAttribute)       \
  X(hipDeviceAttribute_t, enum cudaDeviceAttr)      \
  X(hipMemoryAdvise, enum cudaMemoryAdvise)         \
  X(hipUUID, cudaUUID_t)                            \
  X(hipHostFn_t, cudaHostFn_t)

#define HIPSTACK_HIP_X(hip, cuda) typedef cuda hip;
HIPSTACK_HIP_TYPES(HIPSTACK_HIP_X)
#undef HIPSTACK_HIP_X

// ---- Constants and flags: X(HIP name, CUDA value). They keep CUDA's type.
#define HIPSTACK_HIP_CONSTANTS(X)                                             \
  X(hipMemcpyHostToHost, cudaMemcpyHostToHost)                                \
  X(hipMemcpyHostToDevice, cudaMemcpyHostToDevice)                            \
  X(hipMemcpyDeviceToHost, cudaMemcpyDeviceToHost)                            \
  X(hipMemcpyDeviceToDevice, cudaMemcpyDeviceToDevice)                        \
  X(hipMemcpyDefault, cudaMemcpyDefault)                                      \
  X(hipHostMallocDefault, cudaHostAllocDefault)                               \
  X(hipHostMallocPortable, cudaHostAllocPortable)                             \
  X(hipHostMallocMapped, cudaHostAllocMapped)                                 \
  X(hipHostMallocWriteCombined, cudaHostAllocWriteCombined)                   \
  X(hipHostRegisterDefault, cudaHostRegisterDefault)                          \
  X(hipHostRegisterPortable, cudaHostRegisterPortable)                        \
  X(hipHostRegisterMapped, cudaHostRegisterMapped)                            \
  X(hipHostRegisterIoMemory, cudaHostRegisterIoMemory)                        \
  X(hipHostRegisterReadOnly, cudaHostRegisterReadOnly)                        \
  X(hipMemAttachGlobal, cudaMemAttachGlobal)                                  \
  X(hipMemAttachHost, cudaMemAttachHost)                                      \
  X(hipMemAttachSingle, cudaMemAttachSingle)                                  \
  X(hipCpuDeviceId, cudaCpuDeviceId)                                          \
  X(hipInvalidDeviceId, cudaInvalidDeviceId)                                  \
  X(hipMemAdviseSetReadMostly, cudaMemAdviseSetReadMostly)                    \
  X(hipMemAdviseUnsetReadMostly, cudaMemAdviseUnsetReadMostly)                \
  X(hipMemAdviseSetPreferredLocation, cudaMemAdviseSetPreferredLocation)      \
  X(hipMemAdviseUnsetPreferredLocation, cudaMemAdviseUnsetPreferredLocation)  \
  X(hipMemAdviseSetAccessedBy, cudaMemAdviseSetAccessedBy)                    \
  X(hipMemAdviseUnsetAccessedBy, cudaMemAdviseUnsetAccessedBy)                \
  X(hipStreamDefault, cudaStreamDefault)                                      \
  X(hipStreamNonBlocking, cudaStreamNonBlocking)                              \
  X(hipEventDefault, cudaEventDefault)                                        \
  X(hipEventBlockingSync, cudaEventBlockingSync)                              \
  X(hipEventDisableTiming, cudaEventDisableTiming)                            \
  X(hipEventInterprocess, cudaEventInterprocess)                              \
  X(hipDeviceScheduleAuto, cudaDeviceScheduleAuto)                            \
  X(hipDeviceScheduleSpin, cudaDeviceScheduleSpin)                            \
  X(hipDeviceScheduleYield, cudaDeviceScheduleYield)                          \
  X(hipDeviceScheduleBlockingSync, cudaDeviceScheduleBlockingSync)            \
  X(hipDeviceMapHost, cudaDeviceMapHost)                                      \
  X(hipDeviceLmemResizeToMax, cudaDeviceLmemResizeToMax)                      \
  X(hipFuncCachePreferNone, cudaFuncCachePreferNone)                          \
  X(hipFuncCachePreferShared, cudaFuncCachePreferShared)                      \
  X(hipFuncCachePreferL1, cudaFuncCachePreferL1)                              \
  X(hipFuncCachePreferEqual, cudaFuncCachePreferEqual)                        \
  X(hipLimitStackSize, cudaLimitStackSize)                                    \
  X(hipLimitPrintfFifoSize, cudaLimitPrintfFifoSize)                          \
  X(hipLimitMallocHeapSize, cudaLimitMallocHeapSize)                          \
  X(hipFuncAttributeMaxDynamicSharedMemorySize, cudaFuncAttributeMaxDynamicSharedMemorySize) \
  X(hipFuncAttributePreferredSharedMemoryCarveout, cudaFuncAttributePreferredSharedMemoryCarveout) \
  X(hipOccupancyDefault, cudaOccupancyDefault)                                \
  X(hipOccupancyDisableCachingOverride, cudaOccupancyDisableCachingOverride)

#define HIPSTACK_HIP_X(hip, cuda) inline constexpr auto hip = cuda;
HIPSTACK_HIP_CONSTANTS(HIPSTACK_HIP_X)
#undef HIPSTACK_HIP_X

// CUDA spells these two as pointer-valued macros; so does HIP.
#define hipStreamPerThread cudaStreamPerThread
#define hipStreamLegacy cudaStreamLegacy

// ---- Device attributes, one table for hipDeviceGetAttribute and hipDeviceProp_t.
// P(HIP attribute, CUDA attribute, hipDeviceProp_t int field): hipGetDeviceProperties fills the field by
//   cudaDeviceGetAttribute (CUDA 13's cudaDeviceProp no longer carries clockRate, memoryClockRate,
//   computeMode, kernelExecTimeoutEnabled; one path for all keeps them consistent).
// A(HIP attribute, CUDA attribute): attribute only; the matching hipDeviceProp_t field, where there is
//   one, is a size_t or an array copied from cudaGetDeviceProperties.
#define HIPSTACK_HIP_DEVICE_ATTRIBUTES(P, A)                                                                  \
  P(hipDeviceAttributeClockRate, cudaDevAttrClockRate, clockRate)                                             \
  P(hipDeviceAttributeClockInstructionRate, cudaDevAttrClockRate, clockInstructionRate)                       \
  P(hipDeviceAttributeMemoryClockRate, cudaDevAttrMemoryClockRate, memoryClockRate)                           \
  P(hipDeviceAttributeMemoryBusWidth, cudaDevAttrGlobalMemoryBusWidth, memoryBusWidth)                        \
  P(hipDeviceAttributeComputeMode, cudaDevAttrComputeMode, computeMode)                                       \
  P(hipDeviceAttributeKernelExecTimeout, cudaDevAttrKernelExecTimeout, kernelExecTimeoutEnabled)              \
  P(hipDeviceAttributeWarpSize, cudaDevAttrWarpSize, warpSize)                                                \
  P(hipDeviceAttributeMaxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock, maxThreadsPerBlock)                  \
  P(hipDeviceAttributeMultiprocessorCount, cudaDevAttrMultiProcessorCount, multiProcessorCount)               \
  P(hipDeviceAttributeComputeCapabilityMajor, cudaDevAttrComputeCapabilityMajor, major)                       \
  P(hipDeviceAttributeComputeCapabilityMinor, cudaDevAttrComputeCapabilityMinor, minor)                       \
  P(hipDeviceAttributeL2CacheSize, cudaDevAttrL2CacheSize, l2CacheSize)                                       \
  P(hipDeviceAttributePersistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize, persistingL2CacheMaxSize) \
  P(hipDeviceAttributeMaxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor,                    \
    maxThreadsPerMultiProcessor)                                                                              \
  P(hipDeviceAttributeMaxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor,                      \
    maxBlocksPerMultiProcessor)                                                                               \
  P(hipDeviceAttributeMaxRegistersPerBlock, cudaDevAttrMaxRegistersPerBlock, regsPerBlock)                    \
  P(hipDeviceAttributeMaxRegistersPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor,                \
    regsPerMultiprocessor)                                                                                    \
  P(hipDeviceAttributePciBusId, cudaDevAttrPciBusId, pciBusID)                                                \
  P(hipDeviceAttributePciDeviceId, cudaDevAttrPciDeviceId, pciDeviceID)                                       \
  P(hipDeviceAttributePciDomainID, cudaDevAttrPciDomainId, pciDomainID)                                       \
  P(hipDeviceAttributeIntegrated, cudaDevAttrIntegrated, integrated)                                          \
  P(hipDeviceAttributeIsMultiGpuBoard, cudaDevAttrIsMultiGpuBoard, isMultiGpuBoard)                           \
  P(hipDeviceAttributeCanMapHostMemory, cudaDevAttrCanMapHostMemory, canMapHostMemory)                        \
  P(hipDeviceAttributeConcurrentKernels, cudaDevAttrConcurrentKernels, concurrentKernels)                     \
  P(hipDeviceAttributeEccEnabled, cudaDevAttrEccEnabled, ECCEnabled)                                          \
  P(hipDeviceAttributeAsyncEngineCount, cudaDevAttrAsyncEngineCount, asyncEngineCount)                        \
  P(hipDeviceAttributeUnifiedAddressing, cudaDevAttrUnifiedAddressing, unifiedAddressing)                     \
  P(hipDeviceAttributeManagedMemory, cudaDevAttrManagedMemory, managedMemory)                                 \
  P(hipDeviceAttributeConcurrentManagedAccess, cudaDevAttrConcurrentManagedAccess, concurrentManagedAccess)   \
  P(hipDeviceAttributeDirectManagedMemAccessFromHost, cudaDevAttrDirectManagedMemAccessFromHost,              \
    directManagedMemAccessFromHost)                                                                           \
  P(hipDeviceAttributePageableMemoryAccess, cudaDevAttrPageableMemoryAccess, pageableMemoryAccess)            \
  P(hipDeviceAttributePageableMemoryAccessUsesHostPageTables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, \
    pageableMemoryAccessUsesHostPageTables)                                                                   \
  P(hipDeviceAttributeCooperativeLaunch, cudaDevAttrCooperativeLaunch, cooperativeLaunch)                     \
  P(hipDeviceAttributeHostNativeAtomicSupported, cudaDevAttrHostNativeAtomicSupported,                        \
    hostNativeAtomicSupported)                                                                                \
  P(hipDeviceAttributeGlobalL1CacheSupported, cudaDevAttrGlobalL1CacheSupported, globalL1CacheSupported)      \
  P(hipDeviceAttributeLocalL1CacheSupported, cudaDevAttrLocalL1CacheSupported, localL1CacheSupported)         \
  P(hipDeviceAttributeStreamPrioritiesSupported, cudaDevAttrStreamPrioritiesSupported,                        \
    streamPrioritiesSupported)                                                                                \
  P(hipDeviceAttributeComputePreemptionSupported, cudaDevAttrComputePreemptionSupported,                      \
    computePreemptionSupported)                                                                               \
  P(hipDeviceAttributeCanUseHostPointerForRegisteredMem, cudaDevAttrCanUseHostPointerForRegisteredMem,        \
    canUseHostPointerForRegisteredMem)                                                                        \
  P(hipDeviceAttributeAccessPolicyMaxWindowSize, cudaDevAttrMaxAccessPolicyWindowSize,                        \
    accessPolicyMaxWindowSize)                                                                                \
  P(hipDeviceAttributeMemoryPoolsSupported, cudaDevAttrMemoryPoolsSupported, memoryPoolsSupported)            \
  A(hipDeviceAttributeMaxBlockDimX, cudaDevAttrMaxBlockDimX)                                                  \
  A(hipDeviceAttributeMaxBlockDimY, cudaDevAttrMaxBlockDimY)                                                  \
  A(hipDeviceAttributeMaxBlockDimZ, cudaDevAttrMaxBlockDimZ)                                                  \
  A(hipDeviceAttributeMaxGridDimX, cudaDevAttrMaxGridDimX)                                                    \
  A(hipDeviceAttributeMaxGridDimY, cudaDevAttrMaxGridDimY)                                                    \
  A(hipDeviceAttributeMaxGridDimZ, cudaDevAttrMaxGridDimZ)                                                    \
  A(hipDeviceAttributeMaxSharedMemoryPerBlock, cudaDevAttrMaxSharedMemoryPerBlock)                            \
  A(hipDeviceAttributeSharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin)                        \
  A(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor)          \
  A(hipDeviceAttributeTotalConstantMemory, cudaDevAttrTotalConstantMemory)                                    \
  A(hipDeviceAttributeMaxPitch, cudaDevAttrMaxPitch)                                                          \
  A(hipDeviceAttributeTextureAlignment, cudaDevAttrTextureAlignment)

#define HIPSTACK_HIP_P(hip, cuda, field) inline constexpr hipDeviceAttribute_t hip = cuda;
#define HIPSTACK_HIP_A(hip, cuda) inline constexpr hipDeviceAttribute_t hip = cuda;
HIPSTACK_HIP_DEVICE_ATTRIBUTES(HIPSTACK_HIP_P, HIPSTACK_HIP_A)
#undef HIPSTACK_HIP_P
#undef HIPSTACK_HIP_A

// The device description. Field names are HIP's; a field HIP has and CUDA cannot fill (AMD's gcnArch,
// arch feature bits, HDP registers, asicRevision, isLargeBar) is absent. gcnArchName holds the CUDA
// architecture, "sm_<major><minor>" (e.g. "sm_90"), the name nvcc's -arch takes.
struct hipDeviceProp_t {
  char name[256];
  hipUUID uuid;
  char gcnArchName[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  size_t maxSharedMemoryPerMultiProcessor;
  size_t totalConstMem;
  size_t memPitch;
  size_t textureAlignment;
  int maxThreadsDim[3];
  int maxGridSize[3];
#define HIPSTACK_HIP_P(hip, cuda, field) int field;
#define HIPSTACK_HIP_A(hip, cuda)
  HIPSTACK_HIP_DEVICE_ATTRIBUTES(HIPSTACK_HIP_P, HIPSTACK_HIP_A)
#undef HIPSTACK_HIP_P
#undef HIPSTACK_HIP_A
};
