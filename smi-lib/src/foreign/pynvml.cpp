// The pynvml names hipstack.pynvml answers (smi-lib/python/hipstack/pynvml.py), each with the
// catalogue metrics it reads: the call ("nvmlDeviceGetPowerUsage"), the call with the argument that
// selects the figure ("nvmlDeviceGetClockInfo(NVML_CLOCK_SM)"), or the field of the struct or tuple
// it returns ("nvmlDeviceGetMemoryInfo.total"). Where several metrics are listed the first the GPU
// gives answers, unless the note says how they combine. Units: NVML's (docs/python.md).
// pynvml.py takes every metric name from here (hipstack.foreign_names("pynvml")); a test fails when
// it names one itself, or when this table and the module's names part (docs/foreign-names.md).
#include "tables.hpp"

namespace hipstack::smi::foreign {
namespace pynvml_names {

using M = MetricId;

constexpr std::string_view kWattsToMilli = "W -> mW";
constexpr std::string_view kNvidiaOnly = "NVIDIA only";
constexpr std::string_view kEccNvidia = "NVML's aggregate total (NVIDIA only; amdgpu keeps no aggregate)";
constexpr std::string_view kEccVolatile = "NVIDIA: NVML's total; AMD: the sum over the RAS blocks (since the driver loaded)";
constexpr std::string_view kEnabled = "\"enabled\" -> NVML_FEATURE_ENABLED (NVIDIA only)";

const ForeignName kTable[] = {
    {"nvmlSystemGetDriverVersion", {M::driver_version}, "", "the first GPU's"},
    {"nvmlSystemGetCudaDriverVersion", {M::cuda_driver_version}, "", "\"13.0\" -> 13000; the first NVIDIA GPU's"},
    {"nvmlDeviceGetHandleBySerial", {M::serial_number}, "", "the GPU whose serial number matches"},
    {"nvmlDeviceGetName", {M::marketing_name}, "", ""},
    {"nvmlDeviceGetUUID", {M::uuid}, "", ""},
    {"nvmlDeviceGetSerial", {M::serial_number}, "", ""},
    {"nvmlDeviceGetVbiosVersion", {M::vbios_version}, "", ""},
    {"nvmlDeviceGetMinorNumber", {M::device_minor}, "", "N of /dev/nvidiaN (NVIDIA only)"},
    {"nvmlDeviceGetPciInfo.busId", {M::bdf}, "", "NVML's 8-digit domain; busIdLegacy, domain, bus and device too"},
    {"nvmlDeviceGetPciInfo.pciDeviceId", {M::pci_device_id, M::pci_vendor_id}, "", "device id << 16 | vendor id (both)"},
    {"nvmlDeviceGetPciInfo.pciSubSystemId", {M::pci_subsystem_device_id, M::pci_subsystem_vendor_id}, "",
     "subsystem device id << 16 | subsystem vendor id (both)"},
    {"nvmlDeviceGetCudaComputeCapability", {M::compute_capability}, "", "\"9.0\" -> (9, 0) (NVIDIA only)"},
    {"nvmlDeviceGetMemoryInfo.total", {M::vram_total}, "", "bytes"},
    {"nvmlDeviceGetMemoryInfo.free", {M::vram_free, M::vram_used}, "", "vram_free, else vram_total - vram_used (amdgpu); used = total - free"},
    {"nvmlDeviceGetMemoryInfo(nvmlMemory_v2).reserved", {M::vram_reserved}, "", "0 where the driver does not say (amdgpu)"},
    {"nvmlDeviceGetMemoryInfo(nvmlMemory_v2).used", {M::vram_used}, "", "else total - free - reserved"},
    {"nvmlDeviceGetBAR1MemoryInfo.bar1Total", {M::bar1_total}, "", "bytes; bar1Free = total - used"},
    {"nvmlDeviceGetBAR1MemoryInfo.bar1Used", {M::bar1_used}, "", "bytes"},
    {"nvmlDeviceGetUtilizationRates.gpu", {M::gpu_busy}, "", "whole %"},
    {"nvmlDeviceGetUtilizationRates.memory", {M::memory_busy}, "", "whole %"},
    {"nvmlDeviceGetEncoderUtilization", {M::encoder_busy}, "", "[whole %, 0]: NVML's sampling period is not known"},
    {"nvmlDeviceGetDecoderUtilization", {M::decoder_busy}, "", "[whole %, 0]: NVML's sampling period is not known"},
    {"nvmlDeviceGetFanSpeed", {M::fan_pwm}, "", "whole %; AMD: the fan's PWM duty (nvmlDeviceGetFanSpeed_v2: fan 0)"},
    {"nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)", {M::temperature_junction, M::temperature_edge}, "",
     "whole C; NVIDIA: the GPU sensor; AMD: the junction (hotspot), as amd-smi's, else the edge"},
    {"nvmlDeviceGetPowerUsage", {M::power_average, M::power_current}, "",
     "W -> mW; AMD MI300: power_current (the driver gives no average)"},
    {"nvmlDeviceGetEnforcedPowerLimit", {M::power_cap}, "", "W -> mW; nvmlDeviceGetPowerManagementLimit too"},
    {"nvmlDeviceGetPowerManagementDefaultLimit", {M::power_cap_default}, "", kWattsToMilli},
    {"nvmlDeviceGetPowerManagementLimitConstraints.minLimit", {M::power_cap_min}, "", kWattsToMilli},
    {"nvmlDeviceGetPowerManagementLimitConstraints.maxLimit", {M::power_cap_max}, "", kWattsToMilli},
    {"nvmlDeviceGetTotalEnergyConsumption", {M::energy_consumed}, "", "J -> mJ, since the driver loaded"},
    {"nvmlDeviceGetClockInfo(NVML_CLOCK_GRAPHICS)", {M::clock_sclk}, "", "MHz; AMD: the shader clock"},
    {"nvmlDeviceGetClockInfo(NVML_CLOCK_SM)", {M::clock_sm, M::clock_sclk}, "", "MHz; AMD: the shader clock"},
    {"nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)", {M::clock_mclk}, "", "MHz"},
    {"nvmlDeviceGetClockInfo(NVML_CLOCK_VIDEO)", {M::clock_video, M::clock_vclk}, "", "MHz; AMD: the video core clock"},
    {"nvmlDeviceGetMaxClockInfo(NVML_CLOCK_GRAPHICS)", {M::clock_sclk_max}, "", "MHz; AMD: the top sclk level"},
    {"nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)", {M::clock_sm_max, M::clock_sclk_max}, "", "MHz; AMD: the top sclk level"},
    {"nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)", {M::clock_mclk_max}, "", "MHz; AMD: the top mclk level"},
    {"nvmlDeviceGetMaxClockInfo(NVML_CLOCK_VIDEO)", {M::clock_video_max}, "", "MHz (NVIDIA only)"},
    {"nvmlDeviceGetCurrPcieLinkGeneration", {M::pcie_speed}, "", "GT/s -> the PCIe generation"},
    {"nvmlDeviceGetMaxPcieLinkGeneration", {M::pcie_speed_max}, "", "GT/s -> the PCIe generation"},
    {"nvmlDeviceGetCurrPcieLinkWidth", {M::pcie_width}, "", "lanes"},
    {"nvmlDeviceGetMaxPcieLinkWidth", {M::pcie_width_max}, "", "lanes"},
    {"nvmlDeviceGetPcieThroughput(NVML_PCIE_UTIL_TX_BYTES)", {M::pcie_tx}, "",
     "B/s -> KB/s; NVML's 20 ms window, or amdgpu's 1 s pcie_bw count (the call waits)"},
    {"nvmlDeviceGetPcieThroughput(NVML_PCIE_UTIL_RX_BYTES)", {M::pcie_rx}, "",
     "B/s -> KB/s; NVML's 20 ms window, or amdgpu's 1 s pcie_bw count (the call waits)"},
    {"nvmlDeviceGetPerformanceState", {M::performance_state}, "", "\"P0\" -> 0 (NVIDIA only)"},
    {"nvmlDeviceGetPersistenceMode", {M::persistence_mode}, "", kEnabled},
    {"nvmlDeviceGetDisplayActive", {M::display_active}, "", kEnabled},
    {"nvmlDeviceGetComputeMode", {M::compute_mode}, "", "\"default\" -> NVML_COMPUTEMODE_DEFAULT, ... (NVIDIA only)"},
    {"nvmlDeviceGetMigMode.currentMode", {M::mig_mode}, "", kEnabled},
    {"nvmlDeviceGetMigMode.pendingMode", {M::mig_mode_pending}, "", kEnabled},
    {"nvmlDeviceGetMaxMigDeviceCount", {M::mig_device_slots}, "", kNvidiaOnly},
    {"nvmlDeviceGetMigDeviceHandleByIndex", {M::partition_slot}, "",
     "the partition in that MIG slot; NOT_FOUND for an empty slot, INVALID_ARGUMENT past the GPU's slots (NVIDIA only)"},
    {"nvmlDeviceGetName(MIG)", {M::partition_name}, "", "a MIG device's handle"},
    {"nvmlDeviceGetUUID(MIG)", {M::partition_uuid}, "", "a MIG device's handle"},
    {"nvmlDeviceGetMemoryInfo(MIG).total", {M::partition_memory}, "", "bytes; a MIG device's handle"},
    {"nvmlDeviceGetMemoryInfo(MIG).used", {M::partition_memory_used}, "", "bytes; free = total - used"},
    {"nvmlDeviceGetBAR1MemoryInfo(MIG).bar1Total", {M::partition_bar1_total}, "", "bytes; a MIG device's handle"},
    {"nvmlDeviceGetBAR1MemoryInfo(MIG).bar1Used", {M::partition_bar1_used}, "", "bytes; bar1Free = total - used"},
    {"nvmlDeviceGetGpuInstanceId", {M::partition_gpu_instance_id}, "", "a MIG device's handle (a GPU's: INVALID_ARGUMENT)"},
    {"nvmlDeviceGetComputeInstanceId", {M::partition_compute_instance_id}, "", "a MIG device's handle (a GPU's: INVALID_ARGUMENT)"},
    {"nvmlDeviceGetEccMode.currentMode", {M::ecc_mode}, "", kEnabled},
    {"nvmlDeviceGetEccMode.pendingMode", {M::ecc_mode_pending}, "", kEnabled},
    {"nvmlDeviceGetCurrentClocksEventReasons", {M::throttle_status}, "",
     "NVML's clock-event bits (NVIDIA only: AMD's throttle bits mean other things); "
     "nvmlDeviceGetCurrentClocksThrottleReasons too"},
    {"nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC)",
     {M::ecc_corrected_volatile, M::ras_correctable}, "", kEccVolatile},
    {"nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC)",
     {M::ecc_uncorrected_volatile, M::ras_uncorrectable}, "", kEccVolatile},
    {"nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC)", {M::ecc_corrected_aggregate}, "",
     kEccNvidia},
    {"nvmlDeviceGetTotalEccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC)", {M::ecc_uncorrected_aggregate}, "",
     kEccNvidia},
    {"nvmlDeviceGetRemappedRows.corrRows", {M::remapped_rows}, "correctable", kNvidiaOnly},
    {"nvmlDeviceGetRemappedRows.uncRows", {M::remapped_rows}, "uncorrectable", kNvidiaOnly},
    {"nvmlDeviceGetRemappedRows.isPending", {M::remapped_rows_pending}, "", kNvidiaOnly},
    {"nvmlDeviceGetRemappedRows.failureOccurred", {M::remapped_rows_failed}, "", kNvidiaOnly},
    {"nvmlDeviceGetComputeRunningProcesses", {M::process_type}, "", "the processes whose type has \"compute\"; "
     "a process without a type (amdgpu) is a compute process"},
    {"nvmlDeviceGetGraphicsRunningProcesses", {M::process_type}, "", "the processes whose type has \"graphics\""},
    {"nvmlProcessInfo_t.usedGpuMemory", {M::process_vram}, "", "bytes; None where the driver does not say"},
    {"nvmlProcessInfo_t.gpuInstanceId", {M::process_gpu_instance_id}, "", "NVML_VALUE_NOT_AVAILABLE where none"},
    {"nvmlProcessInfo_t.computeInstanceId", {M::process_compute_instance_id}, "", "NVML_VALUE_NOT_AVAILABLE where none"},
};

}  // namespace pynvml_names

std::span<const ForeignName> pynvml_table() noexcept { return pynvml_names::kTable; }

}  // namespace hipstack::smi::foreign
