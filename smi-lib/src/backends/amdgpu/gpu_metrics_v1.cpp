// gpu_metrics v1.0-v1.8: the dGPU tables (fixed layouts). Offsets are those of the kernel's
// naturally aligned little-endian structs gpu_metrics_v1_N (see docs/gpu-metrics.md).
//
// Units: temperatures °C, power W, activity %, clocks MHz, voltages mV, fan RPM (as stored);
// pcie_link_speed 0.1 GT/s; energy_accumulator 2^-16 J (15.259 µJ); system_clock_counter ns;
// firmware_timestamp 10 ns; v1.4+: xgmi_link_speed Gbps (taken as GT/s), xgmi data KB (1024 bytes),
// PCIe bandwidth GB/s (v1.6 early layout: Mbps), mem_max_bandwidth GB/s.
#include "gpu_metrics.hpp"

#include <algorithm>
#include <array>

namespace hipstack::smi::detail::gpu_metrics_impl {
namespace {

using M = GpuMetrics;

constexpr double kEnergyDiv = 65536.0;       // 2^-16 J per count
constexpr double kTenNsDiv = 1e8;            // 10 ns -> s
constexpr double kTenthDiv = 10.0;           // 0.1 GT/s -> GT/s
constexpr double kGBps = 1e9;                // GB/s -> bytes/s
constexpr double kMbps = 1e6 / 8.0;          // Mbit/s -> bytes/s
constexpr double kKiB = 1024.0;              // KB -> bytes

// ---- v1.0 (80 bytes; not naturally packed: system_clock_counter sits at byte 8) ----
constexpr Field kV1_0[] = {
    num(&M::system_clock_counter, 8, 8, 1, kNsDiv),
    num(&M::temperature_edge, 16, 2),
    num(&M::temperature_hotspot, 18, 2),
    num(&M::temperature_mem, 20, 2),
    num(&M::temperature_vrgfx, 22, 2),
    num(&M::temperature_vrsoc, 24, 2),
    num(&M::temperature_vrmem, 26, 2),
    num(&M::average_gfx_activity, 28, 2),
    num(&M::average_umc_activity, 30, 2),
    num(&M::average_mm_activity, 32, 2),
    num(&M::average_socket_power, 34, 2),
    num(&M::energy_accumulator, 36, 4, 1, kEnergyDiv),
    num(&M::average_gfxclk, 40, 2),
    num(&M::average_socclk, 42, 2),
    num(&M::average_uclk, 44, 2),
    num(&M::average_vclk0, 46, 2),
    num(&M::average_dclk0, 48, 2),
    num(&M::average_vclk1, 50, 2),
    num(&M::average_dclk1, 52, 2),
    num(&M::current_gfxclk, 54, 2),
    num(&M::current_socclk, 56, 2),
    num(&M::current_uclk, 58, 2),
    num(&M::current_vclk0, 60, 2),
    num(&M::current_dclk0, 62, 2),
    num(&M::current_vclk1, 64, 2),
    num(&M::current_dclk1, 66, 2),
    bits(&M::throttle_status, 68, 4),
    num(&M::fan_speed_rpm, 72, 2),
    num(&M::pcie_link_width, 74, 1),
    num(&M::pcie_link_speed, 75, 1, 1, kTenthDiv),
};

// ---- v1.1 (96), v1.2 (104), v1.3 (120): each adds fields at the end of the previous one ----
constexpr Field kV1_3[] = {
    num(&M::temperature_edge, 4, 2),
    num(&M::temperature_hotspot, 6, 2),
    num(&M::temperature_mem, 8, 2),
    num(&M::temperature_vrgfx, 10, 2),
    num(&M::temperature_vrsoc, 12, 2),
    num(&M::temperature_vrmem, 14, 2),
    num(&M::average_gfx_activity, 16, 2),
    num(&M::average_umc_activity, 18, 2),
    num(&M::average_mm_activity, 20, 2),
    num(&M::average_socket_power, 22, 2),
    num(&M::energy_accumulator, 24, 8, 1, kEnergyDiv),
    num(&M::system_clock_counter, 32, 8, 1, kNsDiv),
    num(&M::average_gfxclk, 40, 2),
    num(&M::average_socclk, 42, 2),
    num(&M::average_uclk, 44, 2),
    num(&M::average_vclk0, 46, 2),
    num(&M::average_dclk0, 48, 2),
    num(&M::average_vclk1, 50, 2),
    num(&M::average_dclk1, 52, 2),
    num(&M::current_gfxclk, 54, 2),
    num(&M::current_socclk, 56, 2),
    num(&M::current_uclk, 58, 2),
    num(&M::current_vclk0, 60, 2),
    num(&M::current_dclk0, 62, 2),
    num(&M::current_vclk1, 64, 2),
    num(&M::current_dclk1, 66, 2),
    bits(&M::throttle_status, 68, 4),
    num(&M::fan_speed_rpm, 72, 2),
    num(&M::pcie_link_width, 74, 2),
    num(&M::pcie_link_speed, 76, 2, 1, kTenthDiv),
    // 78: padding
    num(&M::gfx_activity_acc, 80, 4),
    num(&M::mem_activity_acc, 84, 4),
    vec(&M::temperature_hbm, 88, 2, 4),
    // v1.2 adds:
    num(&M::firmware_timestamp, 96, 8, 1, kTenNsDiv),
    // v1.3 adds:
    num(&M::voltage_soc, 104, 2),
    num(&M::voltage_gfx, 106, 2),
    num(&M::voltage_mem, 108, 2),
    // 110: padding1
    bits(&M::indep_throttle_status, 112, 8),
};
constexpr std::size_t kV1_1Count = 33;  // through temperature_hbm
constexpr std::size_t kV1_2Count = 34;  // through firmware_timestamp
static_assert(kV1_3[kV1_1Count - 1].offset == 88 && kV1_3[kV1_2Count - 1].offset == 96);

// ---- v1.4 (288) ----
constexpr Field kV1_4[] = {
    num(&M::temperature_hotspot, 4, 2),
    num(&M::temperature_mem, 6, 2),
    num(&M::temperature_vrsoc, 8, 2),
    num(&M::current_socket_power, 10, 2),
    num(&M::average_gfx_activity, 12, 2),
    num(&M::average_umc_activity, 14, 2),
    vec(&M::vcn_activity, 16, 2, 4),
    num(&M::energy_accumulator, 24, 8, 1, kEnergyDiv),
    num(&M::system_clock_counter, 32, 8, 1, kNsDiv),
    bits(&M::throttle_status, 40, 4),
    bits(&M::gfxclk_lock_status, 44, 4),
    num(&M::pcie_link_width, 48, 2),
    num(&M::pcie_link_speed, 50, 2, 1, kTenthDiv),
    num(&M::xgmi_link_width, 52, 2),
    num(&M::xgmi_link_speed, 54, 2),
    num(&M::gfx_activity_acc, 56, 4),
    num(&M::mem_activity_acc, 60, 4),
    num(&M::pcie_bandwidth_acc, 64, 8),
    num(&M::pcie_bandwidth_inst, 72, 8, kGBps),
    bits(&M::pcie_l0_to_recovery_count, 80, 8),
    num(&M::pcie_replay_count, 88, 8),
    bits(&M::pcie_replay_rollover_count, 96, 8),
    vec(&M::xgmi_read_data, 104, 8, 8, kKiB),
    vec(&M::xgmi_write_data, 168, 8, 8, kKiB),
    num(&M::firmware_timestamp, 232, 8, 1, kTenNsDiv),
    vec(&M::current_gfxclk_per_xcc, 240, 2, 8),
    vec(&M::current_socclks, 256, 2, 4),
    vec(&M::current_vclk0s, 264, 2, 4),
    vec(&M::current_dclk0s, 272, 2, 4),
    num(&M::current_uclk, 280, 2),
};

// ---- v1.5 (360): v1.4 plus jpeg_activity and PCIe NAK counters ----
constexpr Field kV1_5[] = {
    num(&M::temperature_hotspot, 4, 2),
    num(&M::temperature_mem, 6, 2),
    num(&M::temperature_vrsoc, 8, 2),
    num(&M::current_socket_power, 10, 2),
    num(&M::average_gfx_activity, 12, 2),
    num(&M::average_umc_activity, 14, 2),
    vec(&M::vcn_activity, 16, 2, 4),
    vec(&M::jpeg_activity, 24, 2, 32),
    num(&M::energy_accumulator, 88, 8, 1, kEnergyDiv),
    num(&M::system_clock_counter, 96, 8, 1, kNsDiv),
    bits(&M::throttle_status, 104, 4),
    bits(&M::gfxclk_lock_status, 108, 4),
    num(&M::pcie_link_width, 112, 2),
    num(&M::pcie_link_speed, 114, 2, 1, kTenthDiv),
    num(&M::xgmi_link_width, 116, 2),
    num(&M::xgmi_link_speed, 118, 2),
    num(&M::gfx_activity_acc, 120, 4),
    num(&M::mem_activity_acc, 124, 4),
    num(&M::pcie_bandwidth_acc, 128, 8),
    num(&M::pcie_bandwidth_inst, 136, 8, kGBps),
    bits(&M::pcie_l0_to_recovery_count, 144, 8),
    num(&M::pcie_replay_count, 152, 8),
    bits(&M::pcie_replay_rollover_count, 160, 8),
    bits(&M::pcie_nak_sent_count, 168, 4),
    bits(&M::pcie_nak_received_count, 172, 4),
    vec(&M::xgmi_read_data, 176, 8, 8, kKiB),
    vec(&M::xgmi_write_data, 240, 8, 8, kKiB),
    num(&M::firmware_timestamp, 304, 8, 1, kTenNsDiv),
    vec(&M::current_gfxclk_per_xcc, 312, 2, 8),
    vec(&M::current_socclks, 328, 2, 4),
    vec(&M::current_vclk0s, 336, 2, 4),
    vec(&M::current_dclk0s, 344, 2, 4),
    num(&M::current_uclk, 352, 2),
};

// ---- v1.6, early layout (384; reverted upstream in 2024, PCIe bandwidth in Mbps) ----
constexpr Field kV1_6Early[] = {
    num(&M::temperature_hotspot, 4, 2),
    num(&M::temperature_mem, 6, 2),
    num(&M::temperature_vrsoc, 8, 2),
    num(&M::current_socket_power, 10, 2),
    num(&M::average_gfx_activity, 12, 2),
    num(&M::average_umc_activity, 14, 2),
    vec(&M::vcn_activity, 16, 2, 4),
    vec(&M::jpeg_activity, 24, 2, 32),
    num(&M::energy_accumulator, 88, 8, 1, kEnergyDiv),
    num(&M::system_clock_counter, 96, 8, 1, kNsDiv),
    bits(&M::accumulation_counter, 104, 4),
    bits(&M::prochot_residency_acc, 108, 4),
    bits(&M::ppt_residency_acc, 112, 4),
    bits(&M::socket_thm_residency_acc, 116, 4),
    bits(&M::vr_thm_residency_acc, 120, 4),
    bits(&M::hbm_thm_residency_acc, 124, 4),
    bits(&M::throttle_status, 128, 4),
    bits(&M::gfxclk_lock_status, 132, 4),
    num(&M::pcie_link_width, 136, 2),
    num(&M::pcie_link_speed, 138, 2, 1, kTenthDiv),
    num(&M::xgmi_link_width, 140, 2),
    num(&M::xgmi_link_speed, 142, 2),
    num(&M::gfx_activity_acc, 144, 4),
    num(&M::mem_activity_acc, 148, 4),
    num(&M::pcie_bandwidth_acc, 152, 8),
    num(&M::pcie_bandwidth_inst, 160, 8, kMbps),
    bits(&M::pcie_l0_to_recovery_count, 168, 8),
    num(&M::pcie_replay_count, 176, 8),
    bits(&M::pcie_replay_rollover_count, 184, 8),
    bits(&M::pcie_nak_sent_count, 192, 4),
    bits(&M::pcie_nak_received_count, 196, 4),
    vec(&M::xgmi_read_data, 200, 8, 8, kKiB),
    vec(&M::xgmi_write_data, 264, 8, 8, kKiB),
    num(&M::firmware_timestamp, 328, 8, 1, kTenNsDiv),
    vec(&M::current_gfxclk_per_xcc, 336, 2, 8),
    vec(&M::current_socclks, 352, 2, 4),
    vec(&M::current_vclk0s, 360, 2, 4),
    vec(&M::current_dclk0s, 368, 2, 4),
    num(&M::current_uclk, 376, 2),
};

// ---- v1.6, current layout (1664): no throttle_status, per-partition xcp_stats ----
constexpr Field kV1_6[] = {
    num(&M::temperature_hotspot, 4, 2),
    num(&M::temperature_mem, 6, 2),
    num(&M::temperature_vrsoc, 8, 2),
    num(&M::current_socket_power, 10, 2),
    num(&M::average_gfx_activity, 12, 2),
    num(&M::average_umc_activity, 14, 2),
    num(&M::energy_accumulator, 16, 8, 1, kEnergyDiv),
    num(&M::system_clock_counter, 24, 8, 1, kNsDiv),
    bits(&M::accumulation_counter, 32, 4),
    bits(&M::prochot_residency_acc, 36, 4),
    bits(&M::ppt_residency_acc, 40, 4),
    bits(&M::socket_thm_residency_acc, 44, 4),
    bits(&M::vr_thm_residency_acc, 48, 4),
    bits(&M::hbm_thm_residency_acc, 52, 4),
    bits(&M::gfxclk_lock_status, 56, 4),
    num(&M::pcie_link_width, 60, 2),
    num(&M::pcie_link_speed, 62, 2, 1, kTenthDiv),
    num(&M::xgmi_link_width, 64, 2),
    num(&M::xgmi_link_speed, 66, 2),
    num(&M::gfx_activity_acc, 68, 4),
    num(&M::mem_activity_acc, 72, 4),
    // 76: alignment padding
    num(&M::pcie_bandwidth_acc, 80, 8),
    num(&M::pcie_bandwidth_inst, 88, 8, kGBps),
    bits(&M::pcie_l0_to_recovery_count, 96, 8),
    num(&M::pcie_replay_count, 104, 8),
    bits(&M::pcie_replay_rollover_count, 112, 8),
    bits(&M::pcie_nak_sent_count, 120, 4),
    bits(&M::pcie_nak_received_count, 124, 4),
    vec(&M::xgmi_read_data, 128, 8, 8, kKiB),
    vec(&M::xgmi_write_data, 192, 8, 8, kKiB),
    num(&M::firmware_timestamp, 256, 8, 1, kTenNsDiv),
    vec(&M::current_gfxclk_per_xcc, 264, 2, 8),
    vec(&M::current_socclks, 280, 2, 4),
    vec(&M::current_vclk0s, 288, 2, 4),
    vec(&M::current_dclk0s, 296, 2, 4),
    num(&M::current_uclk, 304, 2),
    // 306: num_partition, 312: xcp_stats[8] (finish_v1_6)
    bits(&M::pcie_other_end_recovery_count, 1656, 4),
};

// ---- v1.7 (2208) and v1.8 (3872): same head, xgmi_link_status, mem_max_bandwidth ----
constexpr Field kV1_7Head[] = {
    num(&M::temperature_hotspot, 4, 2),
    num(&M::temperature_mem, 6, 2),
    num(&M::temperature_vrsoc, 8, 2),
    num(&M::current_socket_power, 10, 2),
    num(&M::average_gfx_activity, 12, 2),
    num(&M::average_umc_activity, 14, 2),
    num(&M::mem_max_bandwidth, 16, 8, kGBps),
    num(&M::energy_accumulator, 24, 8, 1, kEnergyDiv),
    num(&M::system_clock_counter, 32, 8, 1, kNsDiv),
    bits(&M::accumulation_counter, 40, 4),
    bits(&M::prochot_residency_acc, 44, 4),
    bits(&M::ppt_residency_acc, 48, 4),
    bits(&M::socket_thm_residency_acc, 52, 4),
    bits(&M::vr_thm_residency_acc, 56, 4),
    bits(&M::hbm_thm_residency_acc, 60, 4),
    bits(&M::gfxclk_lock_status, 64, 4),
    num(&M::pcie_link_width, 68, 2),
    num(&M::pcie_link_speed, 70, 2, 1, kTenthDiv),
    num(&M::xgmi_link_width, 72, 2),
    num(&M::xgmi_link_speed, 74, 2),
    num(&M::gfx_activity_acc, 76, 4),
    num(&M::mem_activity_acc, 80, 4),
    // 84: alignment padding
    num(&M::pcie_bandwidth_acc, 88, 8),
    num(&M::pcie_bandwidth_inst, 96, 8, kGBps),
    bits(&M::pcie_l0_to_recovery_count, 104, 8),
    num(&M::pcie_replay_count, 112, 8),
    bits(&M::pcie_replay_rollover_count, 120, 8),
    bits(&M::pcie_nak_sent_count, 128, 4),
    bits(&M::pcie_nak_received_count, 132, 4),
    vec(&M::xgmi_read_data, 136, 8, 8, kKiB),
    vec(&M::xgmi_write_data, 200, 8, 8, kKiB),
    vec_at(&M::xgmi_link_status, 264, 2, 8),
    // 280: padding
    num(&M::firmware_timestamp, 288, 8, 1, kTenNsDiv),
    vec(&M::current_gfxclk_per_xcc, 296, 2, 8),
    vec(&M::current_socclks, 312, 2, 4),
    vec(&M::current_vclk0s, 320, 2, 4),
    vec(&M::current_dclk0s, 328, 2, 4),
    num(&M::current_uclk, 336, 2),
    // 338: num_partition, 344: xcp_stats[8] (finish_v1_7 / finish_v1_8)
};

// Per-partition block layouts (relative offsets inside one xcp_stats entry).
struct XcpLayout {
  std::size_t table_offset;     // xcp_stats[0]
  std::size_t stride;           // sizeof one entry
  std::size_t num_partition_offset;
  std::size_t jpeg_count;       // 32 (v1.6, v1.7) or 40 (v1.8)
  std::size_t vcn;              // offset of vcn_busy[4]
  std::size_t busy_acc;         // offset of gfx_busy_acc[8]
  std::size_t below_host;       // v1.7 gfx_below_host_limit_acc[8], 0 = absent
  std::size_t ppt, thm, low, total;  // v1.8 accumulators, 0 = absent
};
constexpr std::size_t kMaxPartitions = 8;
constexpr std::size_t kMaxXcc = 8;
constexpr XcpLayout kXcpV1_6{312, 168, 306, 32, 96, 104, 0, 0, 0, 0, 0};
constexpr XcpLayout kXcpV1_7{344, 232, 338, 32, 96, 104, 168, 0, 0, 0, 0};
constexpr XcpLayout kXcpV1_8{344, 440, 338, 40, 112, 120, 0, 184, 248, 312, 376};

void push_present(std::span<const std::uint8_t> table, std::size_t offset, std::size_t width, std::size_t count,
                  std::vector<double>& dst) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = read_le(table, offset + i * width, width);
    if (v && !is_all_ones(*v, width)) dst.push_back(static_cast<double>(*v));
  }
}

// The first present instance becomes the scalar (XCC 0, SOCCLK instance 0, ...).
void first_instance_scalars(GpuMetrics& m) {
  const auto first = [](const std::vector<double>& v) { return v.empty() ? std::nullopt : std::optional<double>(v.front()); };
  m.current_gfxclk = first(m.current_gfxclk_per_xcc);
  m.current_socclk = first(m.current_socclks);
  m.current_vclk0 = first(m.current_vclk0s);
  m.current_dclk0 = first(m.current_dclk0s);
}

void decode_partitions(std::span<const std::uint8_t> table, const XcpLayout& x, GpuMetrics& m) {
  const auto np = read_le(table, x.num_partition_offset, 2);
  m.num_partition.reset();
  m.xcp_stats.clear();
  if (!np || is_all_ones(*np, 2)) return;
  m.num_partition = static_cast<std::uint32_t>(*np);
  const std::size_t count = std::min<std::size_t>(*np, kMaxPartitions);
  for (std::size_t p = 0; p < count; ++p) {
    const std::size_t base = x.table_offset + p * x.stride;
    GpuMetricsPartition part;
    push_present(table, base, 4, kMaxXcc, part.gfx_busy_inst);
    push_present(table, base + 32, 2, x.jpeg_count, part.jpeg_busy);
    push_present(table, base + x.vcn, 2, 4, part.vcn_busy);
    push_present(table, base + x.busy_acc, 8, kMaxXcc, part.gfx_busy_acc);
    if (x.below_host) push_present(table, base + x.below_host, 8, kMaxXcc, part.gfx_below_host_limit_acc);
    if (x.ppt) push_present(table, base + x.ppt, 8, kMaxXcc, part.gfx_below_host_limit_ppt_acc);
    if (x.thm) push_present(table, base + x.thm, 8, kMaxXcc, part.gfx_below_host_limit_thm_acc);
    if (x.low) push_present(table, base + x.low, 8, kMaxXcc, part.gfx_low_utilization_acc);
    if (x.total) push_present(table, base + x.total, 8, kMaxXcc, part.gfx_below_host_limit_total_acc);
    m.xcp_stats.push_back(std::move(part));
  }
}

void finish_mi(std::span<const std::uint8_t>, GpuMetrics& m) { first_instance_scalars(m); }

void finish_v1_6(std::span<const std::uint8_t> table, GpuMetrics& m) {
  first_instance_scalars(m);
  decode_partitions(table, kXcpV1_6, m);
}

void finish_v1_7(std::span<const std::uint8_t> table, GpuMetrics& m) {
  first_instance_scalars(m);
  decode_partitions(table, kXcpV1_7, m);
  const auto v = read_le(table, 2200, 4);
  m.pcie_other_end_recovery_count = (v && !is_all_ones(*v, 4)) ? v : std::nullopt;
}

void finish_v1_8(std::span<const std::uint8_t> table, GpuMetrics& m) {
  first_instance_scalars(m);
  decode_partitions(table, kXcpV1_8, m);
  const auto v = read_le(table, 3864, 4);
  m.pcie_other_end_recovery_count = (v && !is_all_ones(*v, 4)) ? v : std::nullopt;
}

constexpr std::array<Layout, 10> kV1Layouts = {{
    {1, 0, 80, "v1.0", kV1_0, nullptr},
    {1, 1, 96, "v1.1", prefix(kV1_3, kV1_1Count), nullptr},
    {1, 2, 104, "v1.2", prefix(kV1_3, kV1_2Count), nullptr},
    {1, 3, 120, "v1.3", kV1_3, nullptr},
    {1, 4, 288, "v1.4", kV1_4, finish_mi},
    {1, 5, 360, "v1.5", kV1_5, finish_mi},
    {1, 6, 384, "v1.6-early", kV1_6Early, finish_mi},
    {1, 6, 1664, "v1.6", kV1_6, finish_v1_6},
    {1, 7, 2208, "v1.7", kV1_7Head, finish_v1_7},
    {1, 8, 3872, "v1.8", kV1_7Head, finish_v1_8},
}};

}  // namespace

std::span<const Layout> v1_layouts() noexcept { return kV1Layouts; }

}  // namespace hipstack::smi::detail::gpu_metrics_impl
