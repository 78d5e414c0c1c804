/* hipstack/smi_catalogue.h: the metric catalogue, declared once.
 *
 * Every metric hipstack reports is one row of HIPSTACK_SMI_CATALOGUE. The C enum, the C++ MetricId,
 * the runtime catalogue table, CLI columns, JSON keys and exporter names are all generated from it.
 *
 * Row: X(id, name, unit, type, scope, kind, instance, help)
 *   id        stable number; never reused, never renumbered
 *   name      snake_case, without the unit (exporters append the unit)
 *   unit      NONE CELSIUS WATT JOULE MEGAHERTZ BYTE BYTE_PER_SECOND PERCENT MILLIVOLT RPM
 *             GIGATRANSFER_PER_SECOND LANE COUNT SECOND
 *   type      INTEGER (int64) REAL (double) TEXT (UTF-8 string)
 *   scope     DEVICE PARTITION PROCESS LINK
 *   kind      IDENTITY (never changes while the driver is loaded) STATIC (changes only on reconfiguration)
 *             LIVE (sampled) COUNTER (sampled, only grows while the driver is loaded: Prometheus counters)
 *             WINDOW (an average over the window between two looks at the device's counters: sampled
 *             only when asked, see SampleOptions::window)
 *   instance  "" for a single value, else the name of the instance label (e.g. "level", "stack", "ip")
 *   help      one sentence for humans and exporters
 */
#ifndef HIPSTACK_SMI_CATALOGUE_H
#define HIPSTACK_SMI_CATALOGUE_H

/* clang-format off */
#define HIPSTACK_SMI_CATALOGUE(X)                                                                          \
  /* identity: 1..99 */                                                                                    \
  X(1,  vendor,                  NONE, TEXT,    DEVICE, IDENTITY, "", "GPU vendor: amd or nvidia.")          \
  X(2,  bdf,                     NONE, TEXT,    DEVICE, IDENTITY, "", "PCI address domain:bus:device.function.") \
  X(3,  pci_vendor_id,           NONE, TEXT,    DEVICE, IDENTITY, "", "PCI vendor id, 0x-prefixed hex.")     \
  X(4,  pci_device_id,           NONE, TEXT,    DEVICE, IDENTITY, "", "PCI device id, 0x-prefixed hex.")     \
  X(5,  pci_subsystem_vendor_id, NONE, TEXT,    DEVICE, IDENTITY, "", "PCI subsystem vendor id, 0x-prefixed hex.") \
  X(6,  pci_subsystem_device_id, NONE, TEXT,    DEVICE, IDENTITY, "", "PCI subsystem device id, 0x-prefixed hex.") \
  X(7,  pci_revision_id,         NONE, TEXT,    DEVICE, IDENTITY, "", "PCI revision id, 0x-prefixed hex.")   \
  X(8,  marketing_name,          NONE, TEXT,    DEVICE, IDENTITY, "", "Marketing name of the GPU model.")    \
  X(9,  unique_id,               NONE, TEXT,    DEVICE, IDENTITY, "", "Driver unique id of the GPU (ASIC serial), 16 hex digits.") \
  X(10, uuid,                    NONE, TEXT,    DEVICE, IDENTITY, "", "hipstack UUID of the GPU, stable across reboots.") \
  X(11, serial_number,           NONE, TEXT,    DEVICE, IDENTITY, "", "Board serial number from the FRU EEPROM.") \
  X(12, product_name,            NONE, TEXT,    DEVICE, IDENTITY, "", "Board product name from the FRU EEPROM.") \
  X(13, product_number,          NONE, TEXT,    DEVICE, IDENTITY, "", "Board part number from the FRU EEPROM.") \
  X(14, manufacturer,            NONE, TEXT,    DEVICE, IDENTITY, "", "Board manufacturer from the FRU EEPROM.") \
  X(15, vbios_version,           NONE, TEXT,    DEVICE, IDENTITY, "", "Video BIOS version string.")          \
  X(16, gfx_target,              NONE, TEXT,    DEVICE, IDENTITY, "", "Compiler target of the GPU, e.g. gfx942.") \
  X(17, driver_name,             NONE, TEXT,    DEVICE, IDENTITY, "", "Kernel driver bound to the GPU.")     \
  X(18, driver_version,          NONE, TEXT,    DEVICE, IDENTITY, "", "Kernel driver version.")             \
  X(19, firmware_version,        NONE, TEXT,    DEVICE, IDENTITY, "ip", "Firmware version of one IP block.") \
  X(20, drm_card,                NONE, INTEGER, DEVICE, IDENTITY, "", "DRM card number (/dev/dri/cardN).")   \
  X(21, drm_render_minor,        NONE, INTEGER, DEVICE, IDENTITY, "", "DRM render node minor (/dev/dri/renderDN).") \
  X(22, kfd_gpu_id,              NONE, INTEGER, DEVICE, IDENTITY, "", "KFD topology gpu_id of the GPU.")     \
  X(23, device_type,             NONE, TEXT,    DEVICE, IDENTITY, "", "discrete or integrated.")            \
  X(24, cuda_driver_version,     NONE, TEXT,    DEVICE, IDENTITY, "", "CUDA version the NVIDIA driver supports, e.g. 13.0.") \
  X(25, compute_capability,      NONE, TEXT,    DEVICE, IDENTITY, "", "CUDA compute capability, e.g. 9.0.")  \
  X(26, architecture,            NONE, TEXT,    DEVICE, IDENTITY, "", "GPU architecture family, e.g. hopper.") \
  X(27, device_minor,            NONE, INTEGER, DEVICE, IDENTITY, "", "Minor number of the GPU's own character device: N of /dev/nvidiaN (NVIDIA).") \
  /* static facts: 100..199 */                                                                             \
  X(100, vram_total,             BYTE, INTEGER, DEVICE, STATIC, "", "Total VRAM.")                          \
  X(101, vram_visible_total,     BYTE, INTEGER, DEVICE, STATIC, "", "CPU-visible VRAM (BAR) size.")         \
  X(102, gtt_total,              BYTE, INTEGER, DEVICE, STATIC, "", "Total GTT (GPU-mapped system memory).") \
  X(103, vram_vendor,            NONE, TEXT,    DEVICE, STATIC, "", "VRAM vendor reported by the driver.")  \
  X(104, compute_units,          COUNT, INTEGER, DEVICE, STATIC, "", "Compute units (AMD) or streaming multiprocessors (NVIDIA).") \
  X(105, simds_per_cu,           COUNT, INTEGER, DEVICE, STATIC, "", "SIMD units per compute unit.")        \
  X(106, wavefront_size,         COUNT, INTEGER, DEVICE, STATIC, "", "Threads per wavefront (warp).")       \
  X(107, max_waves_per_simd,     COUNT, INTEGER, DEVICE, STATIC, "", "Maximum wavefronts resident per SIMD.") \
  X(108, lds_size,               BYTE, INTEGER, DEVICE, STATIC, "", "Local data share (shared memory) per workgroup.") \
  X(109, xccs,                  COUNT, INTEGER, DEVICE, STATIC, "", "Accelerator complex dies (XCCs) in the GPU.") \
  X(110, sdma_engines,           COUNT, INTEGER, DEVICE, STATIC, "", "SDMA (copy) engines.")                \
  X(111, clock_sclk_max,         MEGAHERTZ, REAL, DEVICE, STATIC, "", "Maximum graphics (shader) clock.")   \
  X(112, clock_mclk_max,         MEGAHERTZ, REAL, DEVICE, STATIC, "", "Maximum memory clock.")              \
  X(113, sclk_level,             MEGAHERTZ, REAL, DEVICE, STATIC, "level", "Graphics clock DPM level.")     \
  X(114, mclk_level,             MEGAHERTZ, REAL, DEVICE, STATIC, "level", "Memory clock DPM level.")       \
  X(115, fclk_level,             MEGAHERTZ, REAL, DEVICE, STATIC, "level", "Fabric clock DPM level.")       \
  X(116, socclk_level,           MEGAHERTZ, REAL, DEVICE, STATIC, "level", "SoC clock DPM level.")          \
  X(117, dcefclk_level,          MEGAHERTZ, REAL, DEVICE, STATIC, "level", "Display controller clock DPM level.") \
  X(118, vclk_level,             MEGAHERTZ, REAL, DEVICE, STATIC, "level", "Video core clock DPM level.")   \
  X(119, dclk_level,             MEGAHERTZ, REAL, DEVICE, STATIC, "level", "Video decode clock DPM level.") \
  X(120, pcie_level,             NONE, TEXT,    DEVICE, STATIC, "level", "PCIe DPM level: speed and width.") \
  X(121, power_cap_min,          WATT, REAL,    DEVICE, STATIC, "", "Lowest settable power cap.")          \
  X(122, power_cap_max,          WATT, REAL,    DEVICE, STATIC, "", "Highest settable power cap.")         \
  X(123, power_cap_default,      WATT, REAL,    DEVICE, STATIC, "", "Default power cap.")                  \
  X(124, power_cap,              WATT, REAL,    DEVICE, STATIC, "", "Power cap in force.")                 \
  X(125, pcie_speed_max,         GIGATRANSFER_PER_SECOND, REAL, DEVICE, STATIC, "", "Maximum PCIe link speed.") \
  X(126, pcie_width_max,         LANE, INTEGER, DEVICE, STATIC, "", "Maximum PCIe link width.")            \
  X(127, cache_size,             BYTE, INTEGER, DEVICE, STATIC, "level", "Size of one cache of the given level (L1, L2, L3).") \
  X(128, numa_node,              NONE, INTEGER, DEVICE, STATIC, "", "NUMA node closest to the GPU (-1 when none).") \
  X(129, xgmi_hive_id,           NONE, TEXT,    DEVICE, STATIC, "", "XGMI hive id, 0x-prefixed hex; 0x0 when not in a hive.") \
  X(130, temperature_edge_critical,     CELSIUS, REAL, DEVICE, STATIC, "", "Critical limit of the edge sensor.") \
  X(131, temperature_junction_critical, CELSIUS, REAL, DEVICE, STATIC, "", "Critical limit of the junction (hotspot) sensor.") \
  X(132, temperature_memory_critical,   CELSIUS, REAL, DEVICE, STATIC, "", "Critical limit of the memory sensor.") \
  X(133, temperature_edge_emergency,    CELSIUS, REAL, DEVICE, STATIC, "", "Emergency (shutdown) limit of the edge sensor.") \
  X(134, temperature_junction_emergency, CELSIUS, REAL, DEVICE, STATIC, "", "Emergency (shutdown) limit of the junction sensor.") \
  X(135, temperature_memory_emergency,  CELSIUS, REAL, DEVICE, STATIC, "", "Emergency (shutdown) limit of the memory sensor.") \
  X(136, fan_speed_max,          RPM, INTEGER, DEVICE, STATIC, "", "Highest fan speed.")                    \
  X(137, compute_partition,      NONE, TEXT,    DEVICE, STATIC, "", "Current compute partition mode (SPX, DPX, TPX, QPX, CPX).") \
  X(138, memory_partition,       NONE, TEXT,    DEVICE, STATIC, "", "Current memory partition mode (NPS1, NPS2, NPS4, NPS8).") \
  X(139, xgmi_physical_id,       NONE, INTEGER, DEVICE, STATIC, "", "Position of the GPU in its XGMI hive.") \
  X(140, bar1_total,             BYTE, INTEGER, DEVICE, STATIC, "", "BAR1 (CPU-mapped device memory) size.") \
  X(141, ecc_mode,               NONE, TEXT,    DEVICE, STATIC, "", "ECC mode in force: enabled or disabled.") \
  X(142, mig_mode,               NONE, TEXT,    DEVICE, STATIC, "", "MIG mode in force: enabled or disabled.") \
  X(143, persistence_mode,       NONE, TEXT,    DEVICE, STATIC, "", "Driver persistence mode: enabled or disabled.") \
  X(144, compute_mode,           NONE, TEXT,    DEVICE, STATIC, "", "Compute mode: default, exclusive_process or prohibited.") \
  X(145, clock_sm_max,           MEGAHERTZ, REAL, DEVICE, STATIC, "", "Maximum streaming multiprocessor clock.") \
  X(146, clock_video_max,        MEGAHERTZ, REAL, DEVICE, STATIC, "", "Maximum video clock.")               \
  X(147, bad_page_threshold,     COUNT, INTEGER, DEVICE, STATIC, "", "Retired pages at which the driver marks the GPU bad.") \
  X(148, compute_partition_available, NONE, TEXT, DEVICE, STATIC, "", "Compute partition modes the GPU accepts, comma-separated.") \
  X(149, memory_partition_available, NONE, TEXT, DEVICE, STATIC, "", "Memory partition modes the GPU accepts, comma-separated.") \
  X(150, cpu_affinity,           NONE, TEXT,    DEVICE, STATIC, "", "CPUs closest to the GPU, as the kernel lists them for its PCI device (local_cpulist), e.g. 0-47,96-143.") \
  X(151, fan_pwm_level_max,      NONE, INTEGER, DEVICE, STATIC, "", "Raw fan duty value that means full speed (hwmon pwm1_max): the scale of fan_pwm_level.") \
  X(152, ecc_mode_pending,       NONE, TEXT,    DEVICE, STATIC, "", "ECC mode the GPU takes at its next reset: enabled or disabled (NVIDIA).") \
  X(153, mig_mode_pending,       NONE, TEXT,    DEVICE, STATIC, "", "MIG mode the GPU takes at its next reset: enabled or disabled (NVIDIA).") \
  X(154, display_active,         NONE, TEXT,    DEVICE, STATIC, "", "Whether a display is initialised on the GPU (memory kept for one): enabled or disabled (NVIDIA).") \
  X(155, mig_device_slots,       COUNT, INTEGER, DEVICE, STATIC, "", "MIG device slots of the GPU: the most MIG devices it can hold (NVML's nvmlDeviceGetMaxMigDeviceCount).") \
  /* live metrics: 200..399 */                                                                             \
  X(200, temperature_edge,       CELSIUS, REAL, DEVICE, LIVE, "", "Edge temperature.")                      \
  X(201, temperature_junction,   CELSIUS, REAL, DEVICE, LIVE, "", "Junction (hotspot) temperature.")        \
  X(202, temperature_memory,     CELSIUS, REAL, DEVICE, LIVE, "", "Memory temperature.")                    \
  X(203, temperature_hbm,        CELSIUS, REAL, DEVICE, LIVE, "stack", "Temperature of one HBM stack.")     \
  X(204, temperature_vr_gfx,     CELSIUS, REAL, DEVICE, LIVE, "", "Graphics voltage regulator temperature.") \
  X(205, temperature_vr_soc,     CELSIUS, REAL, DEVICE, LIVE, "", "SoC voltage regulator temperature.")     \
  X(206, temperature_vr_mem,     CELSIUS, REAL, DEVICE, LIVE, "", "Memory voltage regulator temperature.")  \
  X(210, power_average,          WATT, REAL,    DEVICE, LIVE, "", "Average socket power.")                 \
  X(211, power_current,          WATT, REAL,    DEVICE, LIVE, "", "Instantaneous socket power.")           \
  X(212, energy_consumed,        JOULE, REAL,   DEVICE, COUNTER, "", "Energy consumed since the driver loaded.") \
  X(219, dpm_level_current,      NONE, TEXT,    DEVICE, LIVE, "clock", "Index of the pp_dpm level (clock or pcie) the driver stars as current (sysfs numbering; S = deep sleep).") \
  X(220, clock_sclk,             MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current graphics (shader) clock.")     \
  X(221, clock_mclk,             MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current memory clock.")                \
  X(222, clock_fclk,             MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current fabric clock.")                \
  X(223, clock_socclk,           MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current SoC clock.")                   \
  X(224, clock_vclk,             MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current video core clock.")            \
  X(225, clock_dclk,             MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current video decode clock.")          \
  X(226, clock_dcefclk,          MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current display controller clock.")    \
  X(227, clock_sclk_xcc,         MEGAHERTZ, REAL, DEVICE, LIVE, "xcc", "Current graphics clock of one XCC.") \
  X(228, clock_sm,               MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current streaming multiprocessor clock.") \
  X(229, clock_video,            MEGAHERTZ, REAL, DEVICE, LIVE, "", "Current video clock.")                 \
  X(230, gpu_busy,               PERCENT, REAL, DEVICE, LIVE, "", "Graphics/compute engine busy.")          \
  X(231, memory_busy,            PERCENT, REAL, DEVICE, LIVE, "", "Memory controller busy.")                \
  X(232, media_busy,             PERCENT, REAL, DEVICE, LIVE, "", "Video (VCN) engine busy.")               \
  X(233, encoder_busy,           PERCENT, REAL, DEVICE, LIVE, "", "Video encoder busy.")                    \
  X(234, decoder_busy,           PERCENT, REAL, DEVICE, LIVE, "", "Video decoder busy.")                    \
  X(240, vram_used,              BYTE, INTEGER, DEVICE, LIVE, "", "VRAM in use.")                          \
  X(241, vram_visible_used,      BYTE, INTEGER, DEVICE, LIVE, "", "CPU-visible VRAM in use.")              \
  X(242, gtt_used,               BYTE, INTEGER, DEVICE, LIVE, "", "GTT in use.")                           \
  X(243, vram_free,              BYTE, INTEGER, DEVICE, LIVE, "", "VRAM not allocated.")                   \
  X(244, vram_reserved,          BYTE, INTEGER, DEVICE, LIVE, "", "VRAM reserved by the driver and firmware.") \
  X(245, bar1_used,              BYTE, INTEGER, DEVICE, LIVE, "", "BAR1 in use.")                          \
  X(250, fan_speed,              RPM, INTEGER,  DEVICE, LIVE, "", "Fan speed.")                            \
  X(251, fan_pwm,                PERCENT, REAL, DEVICE, LIVE, "", "Fan duty cycle (PWM) as a share of its maximum.") \
  X(252, fan_pwm_level,          NONE, INTEGER, DEVICE, LIVE, "", "Fan duty cycle as the driver's raw value (hwmon pwm1), from 0 to fan_pwm_level_max.") \
  X(260, voltage_gfx,            MILLIVOLT, REAL, DEVICE, LIVE, "", "Graphics core voltage.")               \
  X(261, voltage_soc,            MILLIVOLT, REAL, DEVICE, LIVE, "", "SoC voltage.")                         \
  X(262, voltage_memory,         MILLIVOLT, REAL, DEVICE, LIVE, "", "Memory voltage.")                      \
  X(263, voltage_northbridge,    MILLIVOLT, REAL, DEVICE, LIVE, "", "Northbridge voltage (APUs).")          \
  X(270, pcie_speed,             GIGATRANSFER_PER_SECOND, REAL, DEVICE, LIVE, "", "Current PCIe link speed.") \
  X(271, pcie_width,             LANE, INTEGER, DEVICE, LIVE, "", "Current PCIe link width.")              \
  X(272, pcie_replay_count,      COUNT, INTEGER, DEVICE, COUNTER, "", "PCIe replays since the driver loaded.") \
  X(273, pcie_rx,                BYTE_PER_SECOND, REAL, DEVICE, LIVE, "", "PCIe receive throughput (opt-in on amdgpu: the read blocks 1 s).") \
  X(274, pcie_tx,                BYTE_PER_SECOND, REAL, DEVICE, LIVE, "", "PCIe transmit throughput (opt-in on amdgpu: the read blocks 1 s).") \
  X(275, pcie_bandwidth,         BYTE_PER_SECOND, REAL, DEVICE, LIVE, "", "Instantaneous PCIe bandwidth reported by firmware.") \
  X(276, xgmi_link_speed,        GIGATRANSFER_PER_SECOND, REAL, DEVICE, LIVE, "", "XGMI link speed.")   \
  X(277, xgmi_link_width,        LANE, INTEGER, DEVICE, LIVE, "", "XGMI link width.")                      \
  X(280, throttle_status,        NONE, INTEGER, DEVICE, LIVE, "", "Firmware throttle status bit mask (0 when not throttled).") \
  X(281, performance_level,      NONE, TEXT,    DEVICE, LIVE, "", "DPM performance level (auto, manual, high, ...).") \
  X(282, power_profile,          NONE, TEXT,    DEVICE, LIVE, "", "Active power profile (3D_FULL_SCREEN, COMPUTE, ...).") \
  X(283, gpu_metrics_version,    NONE, TEXT,    DEVICE, LIVE, "", "Format of the driver's gpu_metrics table, e.g. 1.3.") \
  X(284, gfx_activity_accumulated, COUNT, REAL, DEVICE, COUNTER, "", "Accumulated graphics activity counter from firmware.") \
  X(285, firmware_timestamp,     SECOND, REAL,  DEVICE, LIVE, "", "Firmware timestamp of the gpu_metrics sample.") \
  X(286, violation_accumulation_count, COUNT, INTEGER, DEVICE, COUNTER, "", "Firmware samples the violation residencies are counted against.") \
  X(287, violation_residency,    COUNT, INTEGER, DEVICE, COUNTER, "reason", "Firmware samples during which a throttle reason (prochot, ppt, socket_thermal, vr_thermal, hbm_thermal) was active.") \
  X(288, pcie_nak_sent_count,    COUNT, INTEGER, DEVICE, COUNTER, "", "PCIe NAKs sent since the driver loaded.") \
  X(289, pcie_nak_received_count, COUNT, INTEGER, DEVICE, COUNTER, "", "PCIe NAKs received since the driver loaded.") \
  X(290, pcie_recovery_count,    COUNT, INTEGER, DEVICE, COUNTER, "", "PCIe L0-to-recovery transitions since the driver loaded.") \
  X(291, xgmi_read_data,         BYTE, INTEGER, DEVICE, COUNTER, "link", "Data read over one XGMI link since the driver loaded.") \
  X(292, xgmi_write_data,        BYTE, INTEGER, DEVICE, COUNTER, "link", "Data written over one XGMI link since the driver loaded.") \
  X(293, performance_state,      NONE, TEXT,    DEVICE, LIVE, "", "Performance state, P0 (highest) to P15.") \
  X(294, ecc_corrected_volatile, COUNT, INTEGER, DEVICE, COUNTER, "", "Corrected ECC errors since the driver loaded.") \
  X(295, ecc_uncorrected_volatile, COUNT, INTEGER, DEVICE, COUNTER, "", "Uncorrected ECC errors since the driver loaded.") \
  X(296, ecc_corrected_aggregate, COUNT, INTEGER, DEVICE, COUNTER, "", "Corrected ECC errors over the device's life.") \
  X(297, ecc_uncorrected_aggregate, COUNT, INTEGER, DEVICE, COUNTER, "", "Uncorrected ECC errors over the device's life.") \
  X(298, retired_pages,          COUNT, INTEGER, DEVICE, COUNTER, "cause", "Memory pages retired, by cause (single_bit_ecc, double_bit_ecc).") \
  X(299, remapped_rows,          COUNT, INTEGER, DEVICE, COUNTER, "kind", "Memory rows remapped, by kind (correctable, uncorrectable).") \
  X(300, remapped_rows_pending,  NONE, INTEGER, DEVICE, LIVE, "", "1 when a row remapping waits for a GPU reset.") \
  X(301, remapped_rows_failed,   NONE, INTEGER, DEVICE, LIVE, "", "1 when a row remapping has failed.")  \
  X(302, nvlink_state,           NONE, TEXT,    DEVICE, LIVE, "link", "State of one NVLink: active or inactive.") \
  X(303, ras_correctable,        COUNT, INTEGER, DEVICE, COUNTER, "block", "Correctable errors of one RAS block (umc, gfx, sdma, mmhub, pcie_bif, xgmi_wafl, ...).") \
  X(304, ras_uncorrectable,      COUNT, INTEGER, DEVICE, COUNTER, "block", "Uncorrectable errors of one RAS block.") \
  X(305, ras_deferred,           COUNT, INTEGER, DEVICE, COUNTER, "block", "Deferred errors of one RAS block.") \
  X(306, bad_pages_reserved,     COUNT, INTEGER, DEVICE, LIVE, "", "VRAM pages retired and reserved by the driver.") \
  X(307, bad_pages_pending,      COUNT, INTEGER, DEVICE, LIVE, "", "VRAM pages waiting to be retired (after a reset).") \
  X(308, bad_pages_failed,       COUNT, INTEGER, DEVICE, LIVE, "", "VRAM pages the driver failed to retire.") \
  X(309, running_processes,      COUNT, INTEGER, DEVICE, LIVE, "", "Processes hipstack sees with a context on the GPU now, distinct PIDs (NVML: compute and graphics process lists; amdgpu: KFD processes with memory or queues on it and DRM clients with memory on it).") \
  /* activity over a window between two looks: 310..349 */                                                 \
  X(310, graphics_active,        PERCENT, REAL, DEVICE, WINDOW, "", "Share of the window the graphics/compute engine was busy (NVIDIA GPM GRAPHICS_UTIL; AMD gpu_metrics gfx_activity_acc).") \
  X(311, sm_active,              PERCENT, REAL, DEVICE, WINDOW, "", "Share of the window the SMs had at least one warp resident, averaged over all SMs (NVIDIA GPM SM_UTIL).") \
  X(312, sm_occupancy,           PERCENT, REAL, DEVICE, WINDOW, "", "Resident warps as a share of the SMs' maximum, averaged over the window (NVIDIA GPM SM_OCCUPANCY).") \
  X(313, tensor_active,          PERCENT, REAL, DEVICE, WINDOW, "", "Share of the window the tensor (matrix) pipes were busy, any precision (NVIDIA GPM ANY_TENSOR_UTIL).") \
  X(314, fp64_active,            PERCENT, REAL, DEVICE, WINDOW, "", "Share of the window the FP64 pipes (not tensor) were busy (NVIDIA GPM FP64_UTIL).") \
  X(315, fp32_active,            PERCENT, REAL, DEVICE, WINDOW, "", "Share of the window the FP32 pipes (not tensor) were busy (NVIDIA GPM FP32_UTIL).") \
  X(316, fp16_active,            PERCENT, REAL, DEVICE, WINDOW, "", "Share of the window the FP16 pipes (not tensor) were busy (NVIDIA GPM FP16_UTIL).") \
  X(317, dram_active,            PERCENT, REAL, DEVICE, WINDOW, "", "DRAM bandwidth used as a share of its maximum, averaged over the window (NVIDIA GPM DRAM_BW_UTIL).") \
  X(318, memory_active,          PERCENT, REAL, DEVICE, WINDOW, "", "Memory controller (UMC) activity averaged over the window (AMD gpu_metrics mem_activity_acc).") \
  X(319, xcp_busy,               PERCENT, REAL, DEVICE, WINDOW, "xcp", "Graphics busy of one compute partition (XCP), averaged over its XCCs and the window (AMD gpu_metrics xcp_stats gfx_busy_acc).") \
  X(320, pcie_rx_rate,           BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "", "PCIe bytes received per second, averaged over the window (NVIDIA GPM PCIE_RX_PER_SEC).") \
  X(321, pcie_tx_rate,           BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "", "PCIe bytes transmitted per second, averaged over the window (NVIDIA GPM PCIE_TX_PER_SEC).") \
  X(322, pcie_bandwidth_average, BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "", "PCIe bandwidth, both directions, averaged over the window (AMD gpu_metrics pcie_bandwidth_acc).") \
  X(323, nvlink_rx_rate,         BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "link", "Bytes received per second over one NVLink, averaged over the window (NVIDIA GPM NVLINK_Ln_RX_PER_SEC).") \
  X(324, nvlink_tx_rate,         BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "link", "Bytes transmitted per second over one NVLink, averaged over the window (NVIDIA GPM NVLINK_Ln_TX_PER_SEC).") \
  X(325, xgmi_read_rate,         BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "link", "Bytes read per second over one XGMI link, averaged over the window (AMD gpu_metrics xgmi_read_data_acc).") \
  X(326, xgmi_write_rate,        BYTE_PER_SECOND, REAL, DEVICE, WINDOW, "link", "Bytes written per second over one XGMI link, averaged over the window (AMD gpu_metrics xgmi_write_data_acc).") \
  /* events: 350..359 */                                                                                    \
  X(350, xid_errors,             COUNT, INTEGER, DEVICE, COUNTER, "xid", "XID errors the NVIDIA driver reported since this program registered for them, by XID code (NVML XID critical-error events).") \
  X(351, xid_last,               NONE, INTEGER, DEVICE, LIVE, "", "Code of the latest XID error reported since this program registered for them.") \
  X(352, xid_last_time,          SECOND, REAL,  DEVICE, LIVE, "", "When this program took the latest XID error from NVML's event queue (at most one sample after the driver reported it), in seconds since the Unix epoch.") \
  X(353, kfd_events,             COUNT, INTEGER, DEVICE, COUNTER, "event", "Events the amdgpu driver reported for the GPU since this program subscribed to them, by kind: vm_fault, thermal_throttle, gpu_pre_reset, gpu_post_reset (KFD SMI events, AMDKFD_IOC_SMI_EVENTS).") \
  /* live metrics, continued: 360..399 */                                                                  \
  X(360, dpm_clock_current,      MEGAHERTZ, REAL, DEVICE, LIVE, "clock", "Clock the driver's starred pp_dpm line prints (a level's; on a fine-grained min / current / max table, the current clock between them).") \
  X(361, xgmi_link_status,       NONE, TEXT,    DEVICE, LIVE, "link", "State of one XGMI link as the firmware reports it: up or down (AMD gpu_metrics v1.7+).") \
  X(327, violation_share,        PERCENT, REAL, DEVICE, WINDOW, "reason", "Share of the window's firmware samples during which a throttle reason (prochot, ppt, socket_thermal, vr_thermal, hbm_thermal) was active, or the graphics clock was below the host's limit (gfx_below_host_limit, _ppt, _thermal, _total) or held low for low utilisation (gfx_low_utilization), averaged over the XCCs (AMD gpu_metrics residencies).") \
  X(328, violation_time,         SECOND, REAL,  DEVICE, COUNTER, "reason", "Time a limiter held the GPU's clocks down since the driver loaded (NVML violation status): power, thermal, sync_boost, board_limit, low_utilization, reliability; total_app_clocks and total_base_clocks: below the application or the base clocks, whatever the reason.") \
  /* partitions: 400..449 */                                                                               \
  X(400, partition_compute_units, COUNT, INTEGER, PARTITION, STATIC, "", "Compute units in the partition.") \
  X(401, partition_xccs,    COUNT, INTEGER, PARTITION, STATIC, "", "XCCs in the partition.")           \
  X(402, partition_memory,       BYTE, INTEGER, PARTITION, STATIC, "", "Memory local to the partition.")    \
  X(403, partition_kfd_gpu_id,   NONE, INTEGER, PARTITION, IDENTITY, "", "KFD gpu_id of the partition.")     \
  X(404, partition_render_minor, NONE, INTEGER, PARTITION, IDENTITY, "", "DRM render minor of the partition.") \
  X(405, partition_gpu_instance_id, NONE, INTEGER, PARTITION, IDENTITY, "", "MIG GPU instance id of the partition.") \
  X(406, partition_compute_instance_id, NONE, INTEGER, PARTITION, IDENTITY, "", "MIG compute instance id of the partition.") \
  X(407, partition_uuid,         NONE, TEXT,    PARTITION, IDENTITY, "", "UUID of the partition (MIG device UUID).") \
  X(408, partition_name,         NONE, TEXT,    PARTITION, IDENTITY, "", "Name of the partition's device (a MIG device's, as NVML gives it).") \
  X(409, partition_memory_used,  BYTE, INTEGER, PARTITION, LIVE, "", "Memory of the partition in use.") \
  X(410, partition_slot,         NONE, INTEGER, PARTITION, IDENTITY, "", "The partition's MIG device slot (nvmlDeviceGetMigDeviceHandleByIndex's index; slots may be empty).") \
  X(411, partition_bar1_total,   BYTE, INTEGER, PARTITION, STATIC, "", "BAR1 (the CPU's window onto the partition's memory) size.") \
  X(412, partition_bar1_used,    BYTE, INTEGER, PARTITION, LIVE, "", "BAR1 of the partition in use.") \
  /* processes: 450..499 */                                                                                \
  X(450, process_vram,           BYTE, INTEGER, PROCESS, LIVE, "", "VRAM held by the process.")             \
  X(451, process_gtt,            BYTE, INTEGER, PROCESS, LIVE, "", "GTT held by the process.")              \
  X(452, process_cu_occupancy,   COUNT, INTEGER, PROCESS, LIVE, "", "Compute units the process occupies now.") \
  X(453, process_queues,         COUNT, INTEGER, PROCESS, LIVE, "", "User-mode queues the process has on the GPU.") \
  X(454, process_sdma_usage,     COUNT, INTEGER, PROCESS, COUNTER, "", "Cumulative SDMA activity counter of the process.") \
  X(455, process_engine_busy,    PERCENT, REAL, PROCESS, LIVE, "engine", "Share of time one engine ran the process's work over the sampling interval.") \
  X(456, process_type,           NONE, TEXT,    PROCESS, LIVE, "", "Kind of GPU client: compute, graphics or compute+graphics.") \
  X(457, process_gpu_instance_id, NONE, INTEGER, PROCESS, LIVE, "", "MIG GPU instance the process runs in.") \
  X(458, process_compute_instance_id, NONE, INTEGER, PROCESS, LIVE, "", "MIG compute instance the process runs in.") \
  X(459, process_partitions,     NONE, TEXT,    PROCESS, LIVE, "", "Partitions of the GPU (indices, comma-separated) where the process holds memory or queues.") \
  /* links between GPUs: 500..549 */                                                                       \
  X(500, link_type,              NONE, TEXT,    LINK, STATIC, "", "Link type between two GPUs: xgmi, pcie or nvlink (amdgpu: \"type N\" for another KFD io_link type).") \
  X(501, link_hops,              COUNT, INTEGER, LINK, STATIC, "", "Hops between two GPUs.")               \
  X(502, link_weight,            NONE, INTEGER, LINK, STATIC, "", "KFD link weight (lower is closer).")   \
  X(503, link_bandwidth_max,     BYTE_PER_SECOND, REAL, LINK, STATIC, "", "Maximum bandwidth of the link.") \
  X(504, link_numa_distance,     NONE, INTEGER, LINK, STATIC, "", "NUMA distance between the GPUs' nodes.") \
  X(505, link_pcie_path,         NONE, TEXT,    LINK, STATIC, "", "Closest common PCIe ancestor: board, switch, switches, host_bridge, numa_node or system.") \
  X(506, link_nvlink_count,      COUNT, INTEGER, LINK, STATIC, "", "Active NVLinks joining the two GPUs, directly or through NVSwitches.")

/* The units, declared once: the C++ Unit enum, its names and symbols, and the exporters' base units
 * are generated from this table.
 * Row: X(NAME, name, symbol, base_suffix, base_scale)
 *   NAME         as the catalogue rows write it; the enum's value is the row's position
 *   name         the unit's name in JSON and the C API ("celsius")
 *   symbol       for human tables ("C"; "" where a bare number reads right)
 *   base_suffix  Prometheus' base unit, appended to a metric's name ("_hertz"; "" for none)
 *   base_scale   what one of this unit is in the base unit (MHz: 1e6 Hz; percent: 0.01 ratio)
 */
#define HIPSTACK_SMI_UNITS(X)                                                      \
  X(NONE,                    none,                    "",      "",                      1)    \
  X(CELSIUS,                 celsius,                 "C",     "_celsius",              1)    \
  X(WATT,                    watt,                    "W",     "_watts",                1)    \
  X(JOULE,                   joule,                   "J",     "_joules",               1)    \
  X(MEGAHERTZ,               megahertz,               "MHz",   "_hertz",                1e6)  \
  X(BYTE,                    byte,                    "B",     "_bytes",                1)    \
  X(BYTE_PER_SECOND,         byte_per_second,         "B/s",   "_bytes_per_second",     1)    \
  X(PERCENT,                 percent,                 "%",     "_ratio",                0.01) \
  X(MILLIVOLT,               millivolt,               "mV",    "_volts",                0.001) \
  X(RPM,                     rpm,                     "RPM",   "_rpm",                  1)    \
  X(GIGATRANSFER_PER_SECOND, gigatransfer_per_second, "GT/s",  "_transfers_per_second", 1e9)  \
  X(LANE,                    lane,                    "lanes", "_lanes",                1)    \
  X(COUNT,                   count,                   "",      "",                      1)    \
  X(SECOND,                  second,                  "s",     "_seconds",              1)
/* clang-format on */

#endif
