// The table of nvidia-smi's query fields (hipstack/foreign_names.hpp). One row per field of
// `nvidia-smi --help-query-gpu` (driver 580.159.04; the list, its aliases and header units are
// recorded in captures/recorded/nvidia-smi-580-h100/query-gpu-fields.tsv, which a test holds this
// table to), in nvidia-smi's order. `from` names the catalogue metrics with the same meaning; a
// field hipstack has no figure for is `none`, and its note says why (docs/nvidia-smi-compat.md is
// generated from these notes).
#include <hipstack/foreign_names.hpp>

#include <algorithm>

namespace hipstack::smi::foreign::nvidia_smi_names {

using Form = NvidiaSmiForm;
using Field = NvidiaSmiField;

constexpr std::initializer_list<MetricId> kNone = {};

// Why hipstack prints nvidia-smi's "not available" for a field: the same reasons recur.
constexpr std::string_view kVgpu = "vGPU capabilities: hipstack does not manage vGPUs";
// nvmlDeviceGetDisplayMode's answer is not read: nvidia-smi 580 calls display_mode deprecated and
// whether display_attached comes from it is not documented.
constexpr std::string_view kDisplay = "whether a display is attached: not read (nvidia-smi 580 calls display_mode deprecated)";
constexpr std::string_view kAccounting = "NVML process accounting: not read (hipstack-smid's job accounting is its own)";
constexpr std::string_view kDriverModel = "Windows driver model: hipstack runs on Linux";
constexpr std::string_view kInforom = "InfoROM versions: not read";
constexpr std::string_view kEventCounter = "NVML's clock-event-reason time counters: not read (violation_time has NVML's violation status)";
constexpr std::string_view kReasonAmd = "NVML's clock-event reason from throttle_status; AMD MI300 (gfx942): ";
constexpr std::string_view kEccLocation = "ECC errors per memory location: not read on NVIDIA (only totals)";
constexpr std::string_view kEccDram = "NVIDIA: not read per location; AMD: the UMC (memory controller) RAS block's count";
constexpr std::string_view kSram = "SRAM error details: not read";
constexpr std::string_view kHistogram = "row-remapping histogram: not read";
constexpr std::string_view kModulePower = "module power (Grace Hopper modules): not read";
constexpr std::string_view kSmoothing = "power smoothing settings: not read";
constexpr std::string_view kAppClocks = "application clocks: not read (deprecated by NVIDIA)";
constexpr std::string_view kFabric = "NVLink fabric (NVSwitch systems) state: not read";
constexpr std::string_view kPlatform = "platform (rack) information: not read";
constexpr std::string_view kUtilization = "JPEG and optical-flow engine use: not read";
constexpr std::string_view kEncoderStats = "encoder sessions: not read";

const Field kGpuFields[] = {
    {"timestamp", "", "", Form::timestamp, kNone, "", "the local time of the query"},
    {"driver_version", "", "", Form::text, {MetricId::driver_version}, "", ""},
    {"vgpu_driver_capability.heterogenous_multivGPU", "", "", Form::none, kNone, "", kVgpu},
    {"count", "", "", Form::count, kNone, "", "how many GPUs hipstack lists (AMD and NVIDIA)"},
    {"name", "gpu_name", "", Form::name, kNone, "", "the device list's marketing name"},
    {"serial", "gpu_serial", "", Form::text, {MetricId::serial_number}, "", ""},
    {"uuid", "gpu_uuid", "", Form::uuid, kNone, "", "the device list's UUID (AMD: hipstack's, from the unique id)"},
    {"pci.bus_id", "gpu_bus_id", "", Form::bus_id, {MetricId::bdf}, "", ""},
    {"pci.domain", "", "", Form::pci_domain, {MetricId::bdf}, "", ""},
    {"pci.bus", "", "", Form::pci_bus, {MetricId::bdf}, "", ""},
    {"pci.device", "", "", Form::pci_device, {MetricId::bdf}, "", ""},
    {"pci.baseClass", "", "", Form::none, kNone, "", "the PCI class code: not read"},
    {"pci.subClass", "", "", Form::none, kNone, "", "the PCI class code: not read"},
    {"pci.device_id", "", "", Form::pci_ids, {MetricId::pci_device_id, MetricId::pci_vendor_id}, "", ""},
    {"pci.sub_device_id", "", "", Form::pci_ids, {MetricId::pci_subsystem_device_id, MetricId::pci_subsystem_vendor_id}, "", ""},
    {"vgpu_device_capability.fractional_multiVgpu", "", "", Form::none, kNone, "", kVgpu},
    {"vgpu_device_capability.heterogeneous_timeSlice_profile", "", "", Form::none, kNone, "", kVgpu},
    {"vgpu_device_capability.heterogeneous_timeSlice_sizes", "", "", Form::none, kNone, "", kVgpu},
    {"vgpu_device_capability.homogeneous_placements", "", "", Form::none, kNone, "", kVgpu},
    {"vgpu_device_capability.mig_timeSlicing", "", "", Form::none, kNone, "", kVgpu},
    {"vgpu_device_capability.mig_timeSlicing_mode", "", "", Form::none, kNone, "", kVgpu},
    {"pcie.link.gen.current", "", "", Form::pcie_gen, {MetricId::pcie_speed}, "", "the link's rate as a PCIe generation"},
    {"pcie.link.gen.gpucurrent", "", "", Form::pcie_gen, {MetricId::pcie_speed}, "", "the link's rate as a PCIe generation"},
    {"pcie.link.gen.max", "", "", Form::pcie_gen, {MetricId::pcie_speed_max}, "", "the GPU's top rate as a PCIe generation"},
    {"pcie.link.gen.gpumax", "", "", Form::pcie_gen, {MetricId::pcie_speed_max}, "", "the GPU's top rate as a PCIe generation"},
    {"pcie.link.gen.hostmax", "", "", Form::none, kNone, "", "the host bridge's top rate: not read"},
    {"pcie.link.width.current", "", "", Form::whole, {MetricId::pcie_width}, "", ""},
    {"pcie.link.width.max", "", "", Form::whole, {MetricId::pcie_width_max}, "", ""},
    {"index", "", "", Form::index, kNone, "", "hipstack's index (AMD GPUs first, by PCI address)"},
    {"display_mode", "", "", Form::none, kNone, "", kDisplay},
    {"display_attached", "", "", Form::none, kNone, "", kDisplay},
    {"display_active", "", "", Form::enabled, {MetricId::display_active}, "", ""},
    {"persistence_mode", "", "", Form::enabled, {MetricId::persistence_mode}, "", ""},
    {"addressing_mode", "", "", Form::none, kNone, "", "NVML addressing mode: not read"},
    {"accounting.mode", "", "", Form::none, kNone, "", kAccounting},
    {"accounting.buffer_size", "", "", Form::none, kNone, "", kAccounting},
    {"driver_model.current", "", "", Form::none, kNone, "", kDriverModel},
    {"driver_model.pending", "", "", Form::none, kNone, "", kDriverModel},
    {"vbios_version", "", "", Form::text, {MetricId::vbios_version}, "", ""},
    {"inforom.img", "inforom.image", "", Form::none, kNone, "", kInforom},
    {"inforom.oem", "", "", Form::none, kNone, "", kInforom},
    {"inforom.ecc", "", "", Form::none, kNone, "", kInforom},
    {"inforom.pwr", "inforom.power", "", Form::none, kNone, "", kInforom},
    {"inforom.checksum_validation", "", "", Form::none, kNone, "", kInforom},
    {"gpu_recovery_action", "", "", Form::none, kNone, "", "NVML's recovery action: not read (hipstack-smi health judges)"},
    {"gom.current", "gpu_operation_mode.current", "", Form::none, kNone, "", "GPU operation mode (GeForce/Tesla): not read"},
    {"gom.pending", "gpu_operation_mode.pending", "", Form::none, kNone, "", "GPU operation mode (GeForce/Tesla): not read"},
    {"fan.speed", "", "%", Form::whole, {MetricId::fan_pwm}, "", "AMD: the fan's PWM duty"},
    {"pstate", "", "", Form::text, {MetricId::performance_state}, "", "NVIDIA only"},
    {"clocks_event_reasons.supported", "clocks_throttle_reasons.supported", "", Form::none, kNone, "",
     "the reasons a GPU can report: not read"},
    {"clocks_event_reasons.active", "clocks_throttle_reasons.active", "", Form::reason_mask, {MetricId::throttle_status}, "",
     "NVIDIA: throttle_status; AMD MI300 (gfx942): the NVML bits of the reasons below"},
    {"clocks_event_reasons.gpu_idle", "clocks_throttle_reasons.gpu_idle", "", Form::reason, {MetricId::throttle_status},
     "gpu_idle", "NVML's clock-event reason from throttle_status (NVIDIA only)"},
    {"clocks_event_reasons.applications_clocks_setting", "clocks_throttle_reasons.applications_clocks_setting", "",
     Form::reason, {MetricId::throttle_status}, "applications_clocks", "NVML's clock-event reason from throttle_status (NVIDIA only)"},
    {"clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap", "", Form::reason,
     {MetricId::throttle_status}, "sw_power_cap", "NVML's clock-event reason from throttle_status; AMD MI300 (gfx942): ppt"},
    {"clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown", "", Form::reason,
     {MetricId::throttle_status}, "hw_slowdown", "NVML's clock-event reason from throttle_status; AMD MI300 (gfx942): prochot"},
    {"clocks_event_reasons.hw_thermal_slowdown", "clocks_throttle_reasons.hw_thermal_slowdown", "", Form::reason,
     {MetricId::throttle_status}, "hw_thermal_slowdown", "NVML's clock-event reason from throttle_status (NVIDIA only)"},
    {"clocks_event_reasons.hw_power_brake_slowdown", "clocks_throttle_reasons.hw_power_brake_slowdown", "", Form::reason,
     {MetricId::throttle_status}, "hw_power_brake_slowdown", "NVML's clock-event reason from throttle_status (NVIDIA only)"},
    {"clocks_event_reasons.sw_thermal_slowdown", "clocks_throttle_reasons.sw_thermal_slowdown", "", Form::reason,
     {MetricId::throttle_status}, "sw_thermal_slowdown",
     "NVML's clock-event reason from throttle_status; AMD MI300 (gfx942): socket_thermal, vr_thermal or hbm_thermal"},
    {"clocks_event_reasons.sync_boost", "clocks_throttle_reasons.sync_boost", "", Form::reason, {MetricId::throttle_status},
     "sync_boost", "NVML's clock-event reason from throttle_status (NVIDIA only)"},
    {"clocks_event_reasons_counters.sw_power_cap", "", "us", Form::none, kNone, "", kEventCounter},
    {"clocks_event_reasons_counters.sync_boost", "", "us", Form::none, kNone, "", kEventCounter},
    {"clocks_event_reasons_counters.sw_thermal_slowdown", "", "us", Form::none, kNone, "", kEventCounter},
    {"clocks_event_reasons_counters.hw_thermal_slowdown", "", "us", Form::none, kNone, "", kEventCounter},
    {"clocks_event_reasons_counters.hw_power_brake_slowdown", "", "us", Form::none, kNone, "", kEventCounter},
    {"memory.total", "", "MiB", Form::mib, {MetricId::vram_total}, "", ""},
    {"memory.reserved", "", "MiB", Form::mib, {MetricId::vram_reserved}, "", "NVIDIA only"},
    {"memory.used", "", "MiB", Form::mib, {MetricId::vram_used}, "", ""},
    {"memory.free", "", "MiB", Form::mib_free, {MetricId::vram_free}, "", "AMD: vram_total - vram_used"},
    {"compute_mode", "", "", Form::compute_mode, {MetricId::compute_mode}, "", "NVIDIA only"},
    {"compute_cap", "", "", Form::text, {MetricId::compute_capability}, "", "NVIDIA only (a CUDA compute capability)"},
    {"utilization.gpu", "", "%", Form::whole, {MetricId::gpu_busy}, "", ""},
    {"utilization.memory", "", "%", Form::whole, {MetricId::memory_busy}, "", ""},
    {"utilization.encoder", "", "%", Form::whole, {MetricId::encoder_busy}, "", "NVIDIA only"},
    {"utilization.decoder", "", "%", Form::whole, {MetricId::decoder_busy}, "", "NVIDIA only"},
    {"utilization.jpeg", "", "%", Form::none, kNone, "", kUtilization},
    {"utilization.ofa", "", "%", Form::none, kNone, "", kUtilization},
    {"encoder.stats.sessionCount", "", "", Form::none, kNone, "", kEncoderStats},
    {"encoder.stats.averageFps", "", "", Form::none, kNone, "", kEncoderStats},
    {"encoder.stats.averageLatency", "", "", Form::none, kNone, "", kEncoderStats},
    {"dramEncryption.mode.current", "", "", Form::none, kNone, "", "DRAM encryption (Blackwell): not read"},
    {"dramEncryption.mode.pending", "", "", Form::none, kNone, "", "DRAM encryption (Blackwell): not read"},
    {"ecc.mode.current", "", "", Form::enabled, {MetricId::ecc_mode}, "", ""},
    {"ecc.mode.pending", "", "", Form::enabled, {MetricId::ecc_mode_pending}, "", "NVIDIA only"},
    {"ecc.errors.corrected.volatile.device_memory", "", "", Form::whole, {MetricId::ras_correctable}, "umc", kEccDram},
    {"ecc.errors.corrected.volatile.dram", "", "", Form::whole, {MetricId::ras_correctable}, "umc", kEccDram},
    {"ecc.errors.corrected.volatile.register_file", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.volatile.l1_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.volatile.l2_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.volatile.texture_memory", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.volatile.cbu", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.volatile.sram", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.volatile.total", "", "", Form::total, {MetricId::ecc_corrected_volatile, MetricId::ras_correctable},
     "", "AMD: the sum over RAS blocks (counted since the driver loaded)"},
    {"ecc.errors.corrected.aggregate.device_memory", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.dram", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.register_file", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.l1_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.l2_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.texture_memory", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.cbu", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.sram", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.corrected.aggregate.total", "", "", Form::whole, {MetricId::ecc_corrected_aggregate}, "", "NVIDIA only"},
    {"ecc.errors.uncorrected.volatile.device_memory", "", "", Form::whole, {MetricId::ras_uncorrectable}, "umc", kEccDram},
    {"ecc.errors.uncorrected.volatile.dram", "", "", Form::whole, {MetricId::ras_uncorrectable}, "umc", kEccDram},
    {"ecc.errors.uncorrected.volatile.register_file", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.volatile.l1_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.volatile.l2_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.volatile.texture_memory", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.volatile.cbu", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.volatile.sram", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.volatile.total", "", "", Form::total,
     {MetricId::ecc_uncorrected_volatile, MetricId::ras_uncorrectable}, "", "AMD: the sum over RAS blocks (counted since the driver loaded)"},
    {"ecc.errors.uncorrected.aggregate.device_memory", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.dram", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.register_file", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.l1_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.l2_cache", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.texture_memory", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.cbu", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.sram", "", "", Form::none, kNone, "", kEccLocation},
    {"ecc.errors.uncorrected.aggregate.total", "", "", Form::whole, {MetricId::ecc_uncorrected_aggregate}, "", "NVIDIA only"},
    {"ecc.errors.uncorrected.volatile.sram.parity", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.volatile.sram.secded", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.parity", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.secded", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.l2", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.sm", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.mcu", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.pcie", "", "", Form::none, kNone, "", kSram},
    {"ecc.errors.uncorrected.aggregate.sram.other", "", "", Form::none, kNone, "", kSram},
    {"retired_pages.single_bit_ecc.count", "retired_pages.sbe", "", Form::whole, {MetricId::retired_pages}, "single_bit_ecc",
     "NVIDIA only (before Ampere)"},
    {"retired_pages.double_bit.count", "retired_pages.dbe", "", Form::whole, {MetricId::retired_pages}, "double_bit_ecc",
     "NVIDIA only (before Ampere)"},
    {"retired_pages.pending", "", "", Form::yes_no, {MetricId::bad_pages_pending}, "",
     "NVIDIA: not read; AMD: bad pages waiting to be retired"},
    {"remapped_rows.correctable", "remapped_rows.sbe", "", Form::whole, {MetricId::remapped_rows}, "correctable", "NVIDIA only"},
    {"remapped_rows.correctable_inactive", "", "", Form::none, kNone, "", "inactive remapped rows: not read"},
    {"remapped_rows.uncorrectable", "remapped_rows.dbe", "", Form::whole, {MetricId::remapped_rows}, "uncorrectable",
     "NVIDIA only"},
    {"remapped_rows.uncorrectable_inactive", "", "", Form::none, kNone, "", "inactive remapped rows: not read"},
    {"remapped_rows.pending", "", "", Form::yes_no, {MetricId::remapped_rows_pending}, "", "NVIDIA only"},
    {"remapped_rows.failure", "", "", Form::yes_no, {MetricId::remapped_rows_failed}, "", "NVIDIA only"},
    {"remapped_rows.histogram.max", "", "", Form::none, kNone, "", kHistogram},
    {"remapped_rows.histogram.high", "", "", Form::none, kNone, "", kHistogram},
    {"remapped_rows.histogram.partial", "", "", Form::none, kNone, "", kHistogram},
    {"remapped_rows.histogram.low", "", "", Form::none, kNone, "", kHistogram},
    {"remapped_rows.histogram.none", "", "", Form::none, kNone, "", kHistogram},
    {"temperature.gpu", "", "", Form::whole, {MetricId::temperature_junction, MetricId::temperature_edge}, "",
     "NVIDIA: the GPU sensor; AMD: the hotspot (junction), as amd-smi's, else the edge"},
    {"temperature.gpu.tlimit", "", "", Form::none, kNone, "", "the margin to the slowdown temperature: not read"},
    {"temperature.memory", "", "", Form::whole, {MetricId::temperature_memory}, "", ""},
    {"power.management", "", "", Form::none, kNone, "", "NVML's power-management mode: not read (deprecated by NVIDIA)"},
    {"power.draw", "", "W", Form::two_places, {MetricId::power_average, MetricId::power_current}, "", ""},
    {"power.draw.average", "gpu.power.draw.average", "W", Form::two_places, {MetricId::power_average}, "", ""},
    {"power.draw.instant", "gpu.power.draw.instant", "W", Form::two_places, {MetricId::power_current}, "", ""},
    {"power.limit", "gpu.power.requested_limit", "W", Form::two_places, {MetricId::power_cap}, "", ""},
    {"enforced.power.limit", "gpu.power.current_limit", "W", Form::two_places, {MetricId::power_cap}, "", ""},
    {"power.default_limit", "gpu.power.default_limit", "W", Form::two_places, {MetricId::power_cap_default}, "", ""},
    {"power.min_limit", "gpu.power.min_limit", "W", Form::two_places, {MetricId::power_cap_min}, "", ""},
    {"power.max_limit", "gpu.power.max_limit", "W", Form::two_places, {MetricId::power_cap_max}, "", ""},
    {"module.power.draw.average", "", "W", Form::none, kNone, "", kModulePower},
    {"module.power.draw.instant", "", "W", Form::none, kNone, "", kModulePower},
    {"module.power.limit", "module.power.requested_limit", "W", Form::none, kNone, "", kModulePower},
    {"module.enforced.power.limit", "module.power.current_limit", "W", Form::none, kNone, "", kModulePower},
    {"module.power.default_limit", "", "W", Form::none, kNone, "", kModulePower},
    {"module.power.min_limit", "", "W", Form::none, kNone, "", kModulePower},
    {"module.power.max_limit", "", "W", Form::none, kNone, "", kModulePower},
    {"power_smoothing.delayed_power_smoothing_supported", "", "", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.primary_power_floor", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.secondary_power_floor", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.min_primary_floor_activation_offset", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.min_primary_floor_activation_point", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.window_multiplier", "", "ms", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.curr_profile.secondary_power_floor", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.curr_profile.primary_floor_act_window_multiplier", "", "", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.curr_profile.primary_floor_tar_window_multiplier", "", "", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.curr_profile.primary_floor_act_offset", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.admin_override.secondary_power_floor", "", "W", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.admin_override.primary_floor_act_window_multiplier", "", "", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.admin_override.primary_floor_tar_window_multiplier", "", "", Form::none, kNone, "", kSmoothing},
    {"power_smoothing.admin_override.primary_floor_act_offset", "", "W", Form::none, kNone, "", kSmoothing},
    {"clocks.current.graphics", "clocks.gr", "MHz", Form::whole, {MetricId::clock_sclk}, "", "AMD: the shader clock (sclk)"},
    {"clocks.current.sm", "clocks.sm", "MHz", Form::whole, {MetricId::clock_sm, MetricId::clock_sclk}, "", "AMD: the shader clock (sclk)"},
    {"clocks.current.memory", "clocks.mem", "MHz", Form::whole, {MetricId::clock_mclk}, "", ""},
    {"clocks.current.video", "clocks.video", "MHz", Form::whole, {MetricId::clock_video, MetricId::clock_vclk}, "",
     "AMD: the video core clock (vclk)"},
    {"clocks.applications.graphics", "clocks.applications.gr", "MHz", Form::none, kNone, "", kAppClocks},
    {"clocks.applications.memory", "clocks.applications.mem", "MHz", Form::none, kNone, "", kAppClocks},
    {"clocks.default_applications.graphics", "clocks.default_applications.gr", "MHz", Form::none, kNone, "", kAppClocks},
    {"clocks.default_applications.memory", "clocks.default_applications.mem", "MHz", Form::none, kNone, "", kAppClocks},
    {"clocks.max.graphics", "clocks.max.gr", "MHz", Form::whole, {MetricId::clock_sclk_max}, "", "AMD: the top sclk level"},
    {"clocks.max.sm", "", "MHz", Form::whole, {MetricId::clock_sm_max, MetricId::clock_sclk_max}, "", "AMD: the top sclk level"},
    {"clocks.max.memory", "clocks.max.mem", "MHz", Form::whole, {MetricId::clock_mclk_max}, "", "AMD: the top mclk level"},
    {"mig.mode.current", "", "", Form::enabled, {MetricId::mig_mode}, "", "NVIDIA only"},
    {"mig.mode.pending", "", "", Form::enabled, {MetricId::mig_mode_pending}, "", "NVIDIA only"},
    {"gsp.mode.current", "", "", Form::none, kNone, "", "GSP firmware mode: not read"},
    {"gsp.mode.default", "", "", Form::none, kNone, "", "GSP firmware mode: not read"},
    {"c2c.mode", "", "", Form::none, kNone, "", "chip-to-chip (Grace) link mode: not read"},
    {"protected_memory.total", "", "MiB", Form::none, kNone, "", "confidential-computing protected memory: not read"},
    {"protected_memory.used", "", "MiB", Form::none, kNone, "", "confidential-computing protected memory: not read"},
    {"protected_memory.free", "", "MiB", Form::none, kNone, "", "confidential-computing protected memory: not read"},
    {"fabric.state", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.status", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.cliqueId", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.clusterUuid", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.summary", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.bandwidth", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.route_recovery_in_progress", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.route_unhealthy", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.access_timeout_recovery", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.incorrect_configuration", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"fabric.health.partition_assigned", "", "", Form::none, kNone, "", kFabric, "N/A"},
    {"platform.chassis_serial_number", "", "", Form::none, kNone, "", kPlatform},
    {"platform.slot_number", "", "", Form::none, kNone, "", kPlatform},
    {"platform.tray_index", "", "", Form::none, kNone, "", kPlatform},
    {"platform.host_id", "", "", Form::none, kNone, "", kPlatform},
    {"platform.peer_type", "", "", Form::none, kNone, "", kPlatform},
    {"platform.module_id", "", "", Form::none, kNone, "", kPlatform},
    {"platform.gpu_fabric_guid", "", "", Form::none, kNone, "", kPlatform},
    {"hostname", "", "", Form::none, kNone, "", "the host name a vGPU guest reports: not read"},
};

// --query-compute-apps: one row per process on a GPU. The process figures come from the process
// list (nvidia_smi_compat.cpp); the GPU's from the device list.
const Field kAppFields[] = {
    {"timestamp", "", "", Form::timestamp, kNone, "", "the local time of the query"},
    {"gpu_name", "", "", Form::name, kNone, "", "the GPU's marketing name"},
    {"gpu_bus_id", "", "", Form::bus_id, {MetricId::bdf}, "", "the GPU's PCI address"},
    {"gpu_serial", "", "", Form::text, {MetricId::serial_number}, "", "the GPU's serial number"},
    {"gpu_uuid", "", "", Form::uuid, kNone, "", "the GPU's UUID"},
    {"pid", "", "", Form::whole, kNone, "", "the process id"},
    {"process_name", "name", "", Form::text, kNone, "", "the program (the first word of /proc/PID/cmdline, else comm)"},
    {"used_gpu_memory", "used_memory", "MiB", Form::mib, {MetricId::process_vram}, "", "the process's VRAM"},
};

// Each alias of a field, in order, without copying them.
template <typename Visit>
void for_each_alias(const NvidiaSmiField& field, Visit visit) {
  std::string_view rest = field.aliases;
  while (!rest.empty()) {
    const std::size_t comma = std::min(rest.find(','), rest.size());
    visit(rest.substr(0, comma));
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
}

}  // namespace hipstack::smi::foreign::nvidia_smi_names

namespace hipstack::smi {

std::vector<std::string> nvidia_smi_aliases(const NvidiaSmiField& field) {
  std::vector<std::string> out;
  foreign::nvidia_smi_names::for_each_alias(field, [&out](std::string_view alias) { out.emplace_back(alias); });
  return out;
}

std::span<const NvidiaSmiField> nvidia_smi_gpu_fields() noexcept { return foreign::nvidia_smi_names::kGpuFields; }
std::span<const NvidiaSmiField> nvidia_smi_app_fields() noexcept { return foreign::nvidia_smi_names::kAppFields; }

const NvidiaSmiField* find_nvidia_smi_field(std::span<const NvidiaSmiField> fields, std::string_view name) {
  const auto it = std::find_if(fields.begin(), fields.end(), [name](const NvidiaSmiField& f) {
    bool alias = false;
    foreign::nvidia_smi_names::for_each_alias(f, [&](std::string_view a) { alias = alias || a == name; });
    return f.name == name || alias;
  });
  return it == fields.end() ? nullptr : &*it;
}

std::vector<const NvidiaSmiField*> nvidia_smi_fields_of(MetricId id) {
  std::vector<const NvidiaSmiField*> out;
  for (const NvidiaSmiField& f : foreign::nvidia_smi_names::kGpuFields) {
    if (std::find(f.from.begin(), f.from.end(), id) != f.from.end()) out.push_back(&f);
  }
  return out;
}

}  // namespace hipstack::smi
