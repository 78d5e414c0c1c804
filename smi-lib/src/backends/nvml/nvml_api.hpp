// The part of NVML hipstack uses, declared by us (no nvml.h is needed to build): the few types and
// constants, and every entry point listed once with its signature and its exported names, newest
// version first. The loader (nvml_loader.cpp) and the test double (tests/fake_nvml) share this list.
// Facts from NVIDIA's NVML API reference (nvml.h of CUDA 13.0, NVML_API_VERSION 13).
#pragma once

#include <cstdint>

namespace hipstack::smi::detail::nvml {

using Return = int;                       // nvmlReturn_t
using Device = struct nvmlDevice_st*;     // nvmlDevice_t (opaque)
using EnableState = int;                  // nvmlEnableState_t: 0 disabled, 1 enabled

constexpr Return kSuccess = 0;
constexpr Return kErrorUninitialized = 1;
constexpr Return kErrorInvalidArgument = 2;
constexpr Return kErrorNotSupported = 3;
constexpr Return kErrorNoPermission = 4;
constexpr Return kErrorNotFound = 6;
constexpr Return kErrorInsufficientSize = 7;
constexpr Return kErrorDriverNotLoaded = 9;
constexpr Return kErrorTimeout = 10;
constexpr Return kErrorLibraryNotFound = 12;
constexpr Return kErrorFunctionNotFound = 13;
constexpr Return kErrorGpuIsLost = 15;
constexpr Return kErrorResetRequired = 16;
constexpr Return kErrorInUse = 19;
constexpr Return kErrorNoData = 21;
constexpr Return kErrorNotReady = 27;
constexpr Return kErrorGpuNotFound = 28;
constexpr Return kErrorUnknown = 999;

// Buffer sizes (NVML_DEVICE_*_BUFFER_SIZE).
constexpr unsigned kNameSize = 96;
constexpr unsigned kUuidSize = 96;
constexpr unsigned kSerialSize = 30;
constexpr unsigned kPartNumberSize = 80;
constexpr unsigned kVbiosSize = 32;
constexpr unsigned kDriverVersionSize = 80;

// Enumerations used as arguments.
constexpr int kTemperatureGpu = 0;                       // nvmlTemperatureSensors_t
constexpr int kThresholdShutdown = 0, kThresholdSlowdown = 1, kThresholdMemMax = 2, kThresholdGpuMax = 3;
constexpr int kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kClockVideo = 3;  // nvmlClockType_t
constexpr int kPcieTxBytes = 0, kPcieRxBytes = 1;        // nvmlPcieUtilCounter_t, KB/s
constexpr int kErrorCorrected = 0, kErrorUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kVolatileEcc = 0, kAggregateEcc = 1;       // nvmlEccCounterType_t
constexpr int kRetiredMultipleSbe = 0, kRetiredDbe = 1;  // nvmlPageRetirementCause_t
constexpr unsigned kNvlinkMaxLinks = 18;
constexpr int kNvlinkRemoteGpu = 0, kNvlinkRemoteSwitch = 2;  // nvmlIntNvLinkDeviceType_t
constexpr unsigned kFieldMemoryTemperature = 82;         // NVML_FI_DEV_MEMORY_TEMP
constexpr unsigned kFieldPowerInstant = 186;             // NVML_FI_DEV_POWER_INSTANT, mW
constexpr unsigned kFieldTotalEnergy = 83;               // NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ
constexpr unsigned kFieldPcieReplays = 94;               // NVML_FI_DEV_PCIE_REPLAY_COUNTER
constexpr unsigned kFieldEccSbeVolatile = 3, kFieldEccDbeVolatile = 4, kFieldEccSbeAggregate = 5,
                   kFieldEccDbeAggregate = 6;            // NVML_FI_DEV_ECC_{SBE,DBE}_{VOL,AGG}_TOTAL
constexpr unsigned kInvalidInstanceId = 0xffffffffu;

struct PciInfo {             // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;      // device id << 16 | vendor id
  unsigned int pciSubSystemId;   // subsystem device id << 16 | subsystem vendor id
  char busId[32];
};

struct Memory {              // nvmlMemory_t
  unsigned long long total, free, used;
};

struct MemoryV2 {            // nvmlMemory_v2_t; version = sizeof | 2 << 24
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
constexpr unsigned int kMemoryV2Version = static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24);

struct Bar1Memory {          // nvmlBAR1Memory_t
  unsigned long long bar1Total, bar1Free, bar1Used;
};

struct Utilization {         // nvmlUtilization_t
  unsigned int gpu, memory;
};

struct ProcessInfo {         // nvmlProcessInfo_t (= v2) of the _v3 process queries
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timeStamp;  // CPU time of the sample, microseconds since the epoch
  unsigned int smUtil, memUtil, encUtil, decUtil;  // percent
};

struct DeviceAttributes {    // nvmlDeviceAttributes_t
  unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount,
      sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount, computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};

struct ViolationTime {       // nvmlViolationTime_t
  unsigned long long referenceTime;  // the CPU's time of the answer, microseconds since the epoch
  unsigned long long violationTime;  // nanoseconds the policy held the clocks down since the driver loaded
};

union Value {                // nvmlValue_t
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct FieldValue {          // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;             // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ullong, 4 sllong, 5 sint, 6 ushort
  Return nvmlReturn;
  Value value;
};

// GPU Performance Monitoring (GPM, Hopper and later): a metric is computed from two samples of the
// device's counters (nvmlGpmMetricsGet), so it is an average over the time between them.
using GpmSample = struct nvmlGpmSample_st*;  // nvmlGpmSample_t (opaque, nvmlGpmSampleAlloc)
struct GpmSupport {          // nvmlGpmSupport_t
  unsigned int version;      // kGpmSupportVersion
  unsigned int isSupportedDevice;
};
constexpr unsigned kGpmSupportVersion = 1;
struct GpmMetric {           // nvmlGpmMetric_t
  unsigned int metricId;     // in: NVML_GPM_METRIC_*
  Return nvmlReturn;         // out: this metric's status
  double value;              // out: valid when nvmlReturn is SUCCESS
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;              // out: may be null
};
// nvmlGpmMetricsGet_t as NVML's own header declares it: NVML_GPM_METRIC_MAX entries (98 in CUDA
// 12.0, 333 in CUDA 13). The version stayed 1 while the array grew, so a driver cannot tell a
// shorter caller's struct from its own: hipstack gives it the longest one (10.7 KB, kept off the
// stack by its users) whatever numMetrics says. Driver 580.159.04 touches only numMetrics entries;
// bench/nvml_layout_probe.py checks what a driver writes and reads.
constexpr unsigned kGpmMetricsCapacity = 333;
struct GpmMetricsGet {
  unsigned int version;      // kGpmMetricsGetVersion
  unsigned int numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricsCapacity];
};
constexpr unsigned kGpmMetricsGetVersion = 1;
// nvmlGpmMetricId_t: utilisations are percent (0..100), the per-second ones MiB/s.
constexpr unsigned kGpmGraphicsUtil = 1, kGpmSmUtil = 2, kGpmSmOccupancy = 3, kGpmAnyTensorUtil = 5,
                   kGpmDramBwUtil = 10, kGpmFp64Util = 11, kGpmFp32Util = 12, kGpmFp16Util = 13,
                   kGpmPcieTxPerSec = 20, kGpmPcieRxPerSec = 21;
// NVML_GPM_METRIC_NVLINK_L<k>_RX_PER_SEC = 62 + 2k, _TX_PER_SEC = 63 + 2k, k < 18.
constexpr unsigned kGpmNvlinkL0RxPerSec = 62;

// Events (nvmlEventSet*): the driver queues the events of the types a set registered for.
using EventSet = struct nvmlEventSet_st*;  // nvmlEventSet_t (opaque)
struct EventData {           // nvmlEventData_t (the _v2 wait's layout, 32 bytes)
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;   // the XID code for kEventXidCriticalError (999: unknown XID)
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
constexpr unsigned long long kEventSingleBitEcc = 0x1, kEventDoubleBitEcc = 0x2, kEventXidCriticalError = 0x8;

// X(member, signature, exported names newest first...). `required` members must resolve or the
// backend is absent; every other member may be missing (an older driver) and reads as not supported.
#define HIPSTACK_NVML_SYMBOLS(X)                                                                              \
  X(init, Return(), "nvmlInit_v2", "nvmlInit")                                                                 \
  X(shutdown, Return(), "nvmlShutdown")                                                                        \
  X(error_string, const char*(Return), "nvmlErrorString")                                                     \
  X(device_count, Return(unsigned*), "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")                         \
  X(device_by_index, Return(unsigned, Device*), "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex") \
  X(driver_version, Return(char*, unsigned), "nvmlSystemGetDriverVersion")                                   \
  X(cuda_version, Return(int*), "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")       \
  X(name, Return(Device, char*, unsigned), "nvmlDeviceGetName")                                               \
  X(uuid, Return(Device, char*, unsigned), "nvmlDeviceGetUUID")                                               \
  X(serial, Return(Device, char*, unsigned), "nvmlDeviceGetSerial")                                           \
  X(part_number, Return(Device, char*, unsigned), "nvmlDeviceGetBoardPartNumber")                             \
  X(vbios_version, Return(Device, char*, unsigned), "nvmlDeviceGetVbiosVersion")                              \
  X(pci_info, Return(Device, PciInfo*), "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2")                 \
  X(minor_number, Return(Device, unsigned*), "nvmlDeviceGetMinorNumber")                                      \
  X(compute_capability, Return(Device, int*, int*), "nvmlDeviceGetCudaComputeCapability")                     \
  X(architecture, Return(Device, unsigned*), "nvmlDeviceGetArchitecture")                                     \
  X(attributes, Return(Device, DeviceAttributes*), "nvmlDeviceGetAttributes_v2")                              \
  X(numa_node, Return(Device, unsigned*), "nvmlDeviceGetNumaNodeId")                                          \
  X(memory_v2, Return(Device, MemoryV2*), "nvmlDeviceGetMemoryInfo_v2")                                       \
  X(memory, Return(Device, Memory*), "nvmlDeviceGetMemoryInfo")                                               \
  X(bar1_memory, Return(Device, Bar1Memory*), "nvmlDeviceGetBAR1MemoryInfo")                                  \
  X(power_limit_constraints, Return(Device, unsigned*, unsigned*), "nvmlDeviceGetPowerManagementLimitConstraints") \
  X(power_limit_default, Return(Device, unsigned*), "nvmlDeviceGetPowerManagementDefaultLimit")               \
  X(power_limit_enforced, Return(Device, unsigned*), "nvmlDeviceGetEnforcedPowerLimit")                       \
  X(max_clock, Return(Device, int, unsigned*), "nvmlDeviceGetMaxClockInfo")                                   \
  X(max_pcie_generation, Return(Device, unsigned*), "nvmlDeviceGetMaxPcieLinkGeneration")                     \
  X(max_pcie_width, Return(Device, unsigned*), "nvmlDeviceGetMaxPcieLinkWidth")                               \
  X(ecc_mode, Return(Device, EnableState*, EnableState*), "nvmlDeviceGetEccMode")                             \
  X(mig_mode, Return(Device, unsigned*, unsigned*), "nvmlDeviceGetMigMode")                                   \
  X(persistence_mode, Return(Device, EnableState*), "nvmlDeviceGetPersistenceMode")                           \
  X(display_active, Return(Device, EnableState*), "nvmlDeviceGetDisplayActive")                               \
  X(compute_mode, Return(Device, int*), "nvmlDeviceGetComputeMode")                                           \
  X(temperature, Return(Device, int, unsigned*), "nvmlDeviceGetTemperature")                                  \
  X(temperature_threshold, Return(Device, int, unsigned*), "nvmlDeviceGetTemperatureThreshold")               \
  X(field_values, Return(Device, int, FieldValue*), "nvmlDeviceGetFieldValues")                               \
  X(power_usage, Return(Device, unsigned*), "nvmlDeviceGetPowerUsage")                                        \
  X(total_energy, Return(Device, unsigned long long*), "nvmlDeviceGetTotalEnergyConsumption")                 \
  X(clock, Return(Device, int, unsigned*), "nvmlDeviceGetClockInfo")                                          \
  X(utilization, Return(Device, Utilization*), "nvmlDeviceGetUtilizationRates")                               \
  X(encoder_utilization, Return(Device, unsigned*, unsigned*), "nvmlDeviceGetEncoderUtilization")             \
  X(decoder_utilization, Return(Device, unsigned*, unsigned*), "nvmlDeviceGetDecoderUtilization")             \
  X(fan_speed, Return(Device, unsigned*), "nvmlDeviceGetFanSpeed")                                            \
  X(performance_state, Return(Device, int*), "nvmlDeviceGetPerformanceState")                                 \
  X(clock_event_reasons, Return(Device, unsigned long long*), "nvmlDeviceGetCurrentClocksEventReasons",      \
    "nvmlDeviceGetCurrentClocksThrottleReasons")                                                               \
  X(violation_status, Return(Device, int, ViolationTime*), "nvmlDeviceGetViolationStatus")                     \
  X(pcie_generation, Return(Device, unsigned*), "nvmlDeviceGetCurrPcieLinkGeneration")                        \
  X(pcie_width, Return(Device, unsigned*), "nvmlDeviceGetCurrPcieLinkWidth")                                  \
  X(pcie_throughput, Return(Device, int, unsigned*), "nvmlDeviceGetPcieThroughput")                           \
  X(pcie_replay_counter, Return(Device, unsigned*), "nvmlDeviceGetPcieReplayCounter")                         \
  X(total_ecc_errors, Return(Device, int, int, unsigned long long*), "nvmlDeviceGetTotalEccErrors")           \
  X(retired_pages, Return(Device, int, unsigned*, unsigned long long*), "nvmlDeviceGetRetiredPages")          \
  X(remapped_rows, Return(Device, unsigned*, unsigned*, unsigned*, unsigned*), "nvmlDeviceGetRemappedRows")   \
  X(nvlink_state, Return(Device, unsigned, EnableState*), "nvmlDeviceGetNvLinkState")                         \
  X(nvlink_remote_pci, Return(Device, unsigned, PciInfo*), "nvmlDeviceGetNvLinkRemotePciInfo_v2",             \
    "nvmlDeviceGetNvLinkRemotePciInfo")                                                                        \
  X(nvlink_remote_type, Return(Device, unsigned, int*), "nvmlDeviceGetNvLinkRemoteDeviceType")               \
  X(compute_processes, Return(Device, unsigned*, ProcessInfo*), "nvmlDeviceGetComputeRunningProcesses_v3")    \
  X(graphics_processes, Return(Device, unsigned*, ProcessInfo*), "nvmlDeviceGetGraphicsRunningProcesses_v3")  \
  X(process_utilization, Return(Device, ProcessUtilizationSample*, unsigned*, unsigned long long),           \
    "nvmlDeviceGetProcessUtilization")                                                                         \
  X(max_mig_devices, Return(Device, unsigned*), "nvmlDeviceGetMaxMigDeviceCount")                             \
  X(mig_device_by_index, Return(Device, unsigned, Device*), "nvmlDeviceGetMigDeviceHandleByIndex")            \
  X(gpu_instance_id, Return(Device, unsigned*), "nvmlDeviceGetGpuInstanceId")                                 \
  X(compute_instance_id, Return(Device, unsigned*), "nvmlDeviceGetComputeInstanceId")                         \
  X(common_ancestor, Return(Device, Device, int*), "nvmlDeviceGetTopologyCommonAncestor")                    \
  X(gpm_query_support, Return(Device, GpmSupport*), "nvmlGpmQueryDeviceSupport")                              \
  X(gpm_sample_alloc, Return(GpmSample*), "nvmlGpmSampleAlloc")                                               \
  X(gpm_sample_free, Return(GpmSample), "nvmlGpmSampleFree")                                                  \
  X(gpm_sample_get, Return(Device, GpmSample), "nvmlGpmSampleGet")                                           \
  X(gpm_metrics_get, Return(GpmMetricsGet*), "nvmlGpmMetricsGet")                                            \
  X(event_set_create, Return(EventSet*), "nvmlEventSetCreate")                                                \
  X(event_set_free, Return(EventSet), "nvmlEventSetFree")                                                     \
  X(supported_event_types, Return(Device, unsigned long long*), "nvmlDeviceGetSupportedEventTypes")          \
  X(register_events, Return(Device, unsigned long long, EventSet), "nvmlDeviceRegisterEvents")                \
  X(event_set_wait, Return(EventSet, EventData*, unsigned), "nvmlEventSetWait_v2")

// Topology levels (nvmlGpuTopologyLevel_t).
constexpr int kTopologyInternal = 0, kTopologySingle = 10, kTopologyMultiple = 20, kTopologyHostBridge = 30,
              kTopologyNode = 40, kTopologySystem = 50;

}  // namespace hipstack::smi::detail::nvml
