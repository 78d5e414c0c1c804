// gpu_metrics v2.0-v2.4 and v3.0: the APU tables (fixed layouts). Offsets are those of the kernel's
// naturally aligned little-endian structs gpu_metrics_v2_N / gpu_metrics_v3_0.
//
// Units. v2.x: the struct comments name no units before v2.4, but the APU firmware fills them with
// centi-°C temperatures, centi-% activity and mW power (real v2.1 Phoenix blob: temperature_gfx 2500
// while hwmon temp1 reads 25000 m°C, average_gfx_activity 79 while gpu_busy_percent reads 0; the
// driver's own sensor paths divide GfxActivity by 100 and shift mW power). v2.4 states the same
// (centi-°C, centi-%, mW) plus mV voltages and mA currents. Clocks are MHz throughout.
// v3.0: temperatures centi-°C, activity % [0-100], power mW, DRAM/IPU bandwidth MB/s, clocks MHz.
#include "gpu_metrics.hpp"

#include <array>
#include <vector>

namespace hipstack::smi::detail::gpu_metrics_impl {
namespace {

using M = GpuMetrics;

constexpr double kCenti = 100.0;    // centi-unit -> unit
constexpr double kMilli = 1000.0;   // mW -> W, mA -> A
constexpr double kMBps = 1e6;       // MB/s -> bytes/s

// ---- v2.0 (120; not naturally packed: system_clock_counter first, at byte 8) ----
constexpr Field kV2_0[] = {
    num(&M::system_clock_counter, 8, 8, 1, kNsDiv),
    num(&M::temperature_gfx, 16, 2, 1, kCenti),
    num(&M::temperature_soc, 18, 2, 1, kCenti),
    vec(&M::temperature_core, 20, 2, 8, 1, kCenti),
    vec(&M::temperature_l3, 36, 2, 2, 1, kCenti),
    num(&M::average_gfx_activity, 40, 2, 1, kCenti),
    num(&M::average_mm_activity, 42, 2, 1, kCenti),
    num(&M::average_socket_power, 44, 2, 1, kMilli),
    num(&M::average_cpu_power, 46, 2, 1, kMilli),
    num(&M::average_soc_power, 48, 2, 1, kMilli),
    num(&M::average_gfx_power, 50, 2, 1, kMilli),
    vec(&M::average_core_power, 52, 2, 8, 1, kMilli),
    num(&M::average_gfxclk, 68, 2),
    num(&M::average_socclk, 70, 2),
    num(&M::average_uclk, 72, 2),
    num(&M::average_fclk, 74, 2),
    num(&M::average_vclk0, 76, 2),
    num(&M::average_dclk0, 78, 2),
    num(&M::current_gfxclk, 80, 2),
    num(&M::current_socclk, 82, 2),
    num(&M::current_uclk, 84, 2),
    num(&M::current_fclk, 86, 2),
    num(&M::current_vclk0, 88, 2),
    num(&M::current_dclk0, 90, 2),
    vec(&M::current_coreclk, 92, 2, 8),
    vec(&M::current_l3clk, 108, 2, 2),
    bits(&M::throttle_status, 112, 4),
    // 116: fan_pwm (not decoded), 118: padding
};

// ---- v2.1 (120), v2.2 (128), v2.3 (152), v2.4 (168): each appends to the previous ----
constexpr Field kV2_4[] = {
    num(&M::temperature_gfx, 4, 2, 1, kCenti),
    num(&M::temperature_soc, 6, 2, 1, kCenti),
    vec(&M::temperature_core, 8, 2, 8, 1, kCenti),
    vec(&M::temperature_l3, 24, 2, 2, 1, kCenti),
    num(&M::average_gfx_activity, 28, 2, 1, kCenti),
    num(&M::average_mm_activity, 30, 2, 1, kCenti),
    num(&M::system_clock_counter, 32, 8, 1, kNsDiv),
    num(&M::average_socket_power, 40, 2, 1, kMilli),
    num(&M::average_cpu_power, 42, 2, 1, kMilli),
    num(&M::average_soc_power, 44, 2, 1, kMilli),
    num(&M::average_gfx_power, 46, 2, 1, kMilli),
    vec(&M::average_core_power, 48, 2, 8, 1, kMilli),
    num(&M::average_gfxclk, 64, 2),
    num(&M::average_socclk, 66, 2),
    num(&M::average_uclk, 68, 2),
    num(&M::average_fclk, 70, 2),
    num(&M::average_vclk0, 72, 2),
    num(&M::average_dclk0, 74, 2),
    num(&M::current_gfxclk, 76, 2),
    num(&M::current_socclk, 78, 2),
    num(&M::current_uclk, 80, 2),
    num(&M::current_fclk, 82, 2),
    num(&M::current_vclk0, 84, 2),
    num(&M::current_dclk0, 86, 2),
    vec(&M::current_coreclk, 88, 2, 8),
    vec(&M::current_l3clk, 104, 2, 2),
    bits(&M::throttle_status, 108, 4),
    // 112: fan_pwm (not decoded), 114: padding[3]
    // v2.2 adds:
    bits(&M::indep_throttle_status, 120, 8),
    // v2.3 adds:
    num(&M::average_temperature_gfx, 128, 2, 1, kCenti),
    num(&M::average_temperature_soc, 130, 2, 1, kCenti),
    vec(&M::average_temperature_core, 132, 2, 8, 1, kCenti),
    vec(&M::average_temperature_l3, 148, 2, 2, 1, kCenti),
    // v2.4 adds:
    num(&M::voltage_cpu, 152, 2),
    num(&M::voltage_soc, 154, 2),
    num(&M::voltage_gfx, 156, 2),
    num(&M::average_cpu_current, 158, 2, 1, kMilli),
    num(&M::average_soc_current, 160, 2, 1, kMilli),
    num(&M::average_gfx_current, 162, 2, 1, kMilli),
};
constexpr std::size_t kV2_1Count = 27;  // through throttle_status
constexpr std::size_t kV2_2Count = 28;  // through indep_throttle_status
constexpr std::size_t kV2_3Count = 32;  // through average_temperature_l3
static_assert(kV2_4[kV2_1Count - 1].offset == 108 && kV2_4[kV2_2Count - 1].offset == 120 &&
              kV2_4[kV2_3Count - 1].offset == 148);

// ---- v3.0 (264) ----
constexpr Field kV3_0[] = {
    num(&M::temperature_gfx, 4, 2, 1, kCenti),
    num(&M::temperature_soc, 6, 2, 1, kCenti),
    vec(&M::temperature_core, 8, 2, 16, 1, kCenti),
    num(&M::temperature_skin, 40, 2, 1, kCenti),
    num(&M::average_gfx_activity, 42, 2),
    num(&M::average_mm_activity, 44, 2),  // average_vcn_activity
    vec(&M::ipu_activity, 46, 2, 8),
    vec(&M::core_c0_activity, 62, 2, 16),
    num(&M::dram_read_bandwidth, 94, 2, kMBps),
    num(&M::dram_write_bandwidth, 96, 2, kMBps),
    num(&M::ipu_read_bandwidth, 98, 2, kMBps),
    num(&M::ipu_write_bandwidth, 100, 2, kMBps),
    num(&M::system_clock_counter, 104, 8, 1, kNsDiv),
    num(&M::average_socket_power, 112, 4, 1, kMilli),
    num(&M::average_ipu_power, 116, 2, 1, kMilli),
    num(&M::average_apu_power, 120, 4, 1, kMilli),
    num(&M::average_gfx_power, 124, 4, 1, kMilli),
    num(&M::average_dgpu_power, 128, 4, 1, kMilli),
    num(&M::average_all_core_power, 132, 4, 1, kMilli),
    vec(&M::average_core_power, 136, 2, 16, 1, kMilli),
    num(&M::average_sys_power, 168, 2, 1, kMilli),
    num(&M::stapm_power_limit, 170, 2, 1, kMilli),
    num(&M::current_stapm_power_limit, 172, 2, 1, kMilli),
    num(&M::average_gfxclk, 174, 2),
    num(&M::average_socclk, 176, 2),
    num(&M::average_vpeclk, 178, 2),
    num(&M::average_ipuclk, 180, 2),
    num(&M::average_fclk, 182, 2),
    num(&M::average_vclk0, 184, 2),
    num(&M::average_uclk, 186, 2),
    num(&M::average_mpipuclk, 188, 2),
    vec(&M::current_coreclk, 190, 2, 16),
    num(&M::current_core_maxfreq, 222, 2),
    num(&M::current_gfx_maxfreq, 224, 2),
    // 226: alignment padding
    bits(&M::throttle_residency_prochot, 228, 4),
    bits(&M::throttle_residency_spl, 232, 4),
    bits(&M::throttle_residency_fppt, 236, 4),
    bits(&M::throttle_residency_sppt, 240, 4),
    bits(&M::throttle_residency_thm_core, 244, 4),
    bits(&M::throttle_residency_thm_gfx, 248, 4),
    bits(&M::throttle_residency_thm_soc, 252, 4),
    // 256: time_filter_alphavalue (µs, not decoded)
};

// The driver's hwmon reports the APU gfx temperature as "edge" and the SoC temperature as "junction".
void finish_apu(std::span<const std::uint8_t>, GpuMetrics& m) {
  m.temperature_edge = m.temperature_gfx;
  m.temperature_hotspot = m.temperature_soc;
}

constexpr std::array<Layout, 6> kApuLayouts = {{
    {2, 0, 120, "v2.0", kV2_0, finish_apu},
    {2, 1, 120, "v2.1", prefix(kV2_4, kV2_1Count), finish_apu},
    {2, 2, 128, "v2.2", prefix(kV2_4, kV2_2Count), finish_apu},
    {2, 3, 152, "v2.3", prefix(kV2_4, kV2_3Count), finish_apu},
    {2, 4, 168, "v2.4", kV2_4, finish_apu},
    {3, 0, 264, "v3.0", kV3_0, finish_apu},
}};

// ---- Units per ASIC (docs/gpu-metrics.md, "Units the version does not decide") ----
// The APU tables copy the firmware's numbers unconverted; the unit is whatever that ASIC's firmware
// uses, which the kernel's own sensor code (<asic>_get_smu_metrics_data) shows:
//  - Renoir (renoir_ppt.c, MP1 12.0.0: 0x1636, 0x164c) and Green Sardine / Cezanne (MP1 12.0.1:
//    0x1638): CurrentSocketPower is W from SMU firmware 0x373200 (12.0.0) / 0x40000f (12.0.1) on,
//    mW before (METRICS_CURR_SOCKETPOWER). Renoir firmware is numbered 0x37xxxx (55.x), Green Sardine
//    0x40xxxx (64.x), so the firmware version alone picks the threshold. Activity: centi-%.
//  - Van Gogh (vangogh_ppt.c, 0x163f): GfxActivity and UvdActivity are % (the GPU-load sensor returns
//    them unscaled, unlike every other APU); power mW, temperatures centi-°C.
//  - Phoenix (smu_v13_0_4_ppt.c), Rembrandt (yellow_carp_ppt.c), Mendocino (smu_v13_0_5_ppt.c):
//    centi-% activity, mW power: the version's units.
//  - v3.0 (smu_v14_0_0_ppt.c): GfxActivity is % from SMU firmware 0x5d4600 on (exclusive), centi-%
//    up to it.
struct ApuUnits {
  double socket_power_div = kMilli;
  bool socket_power_known = true;
  double activity_div = kCenti;  // gfx and media activity
};

// The APU families whose firmware's units differ from the version's, as the kernel tells them
// apart: by the SMU's IP version (amdgpu_smu.c smu_set_funcs), else by the PCI device id.
enum class ApuFamily { renoir, green_sardine, van_gogh, other };

ApuFamily family_of(const GpuMetricsSource& source) {
  if (source.mp1) {
    const IpVersion v = *source.mp1;
    if (v == IpVersion{12, 0, 0}) return ApuFamily::renoir;         // Renoir, Lucienne
    if (v == IpVersion{12, 0, 1}) return ApuFamily::green_sardine;  // Green Sardine / Cezanne
    if (v == IpVersion{11, 5, 0} || v == IpVersion{11, 5, 2}) return ApuFamily::van_gogh;
    return ApuFamily::other;
  }
  switch (source.pci_device_id) {
    case 0x1636:  // Renoir
    case 0x164c:  // Lucienne (Renoir)
      return ApuFamily::renoir;
    case 0x1638:  // Green Sardine / Cezanne
      return ApuFamily::green_sardine;
    case 0x163f:  // Van Gogh
      return ApuFamily::van_gogh;
    default:
      return ApuFamily::other;
  }
}

ApuUnits units_for(const Layout& layout, const GpuMetricsSource& source) {
  ApuUnits u;
  const auto fw = source.smc_fw_version;
  if (layout.format_revision == 3) {
    u.activity_div = fw && *fw <= 0x5d4600 ? kCenti : 1.0;
    return u;
  }
  const ApuFamily family = family_of(source);
  switch (family) {
    case ApuFamily::renoir:
    case ApuFamily::green_sardine:
      // renoir_get_smu_metrics_data: W from firmware 0x40000f on (12.0.1) or 0x373200 on (12.0.0).
      // Without the IP version the firmware numbering tells the two apart (0x37xxxx, 0x40xxxx).
      if (!fw) {
        u.socket_power_known = false;
      } else if (source.mp1 ? *fw >= (family == ApuFamily::renoir ? 0x373200u : 0x40000fu)
                            : (*fw >= 0x40000f || (*fw >= 0x373200 && *fw < 0x380000))) {
        u.socket_power_div = 1.0;  // W
      }
      break;
    case ApuFamily::van_gogh:
      u.activity_div = 1.0;
      break;
    case ApuFamily::other:
      break;
  }
  return u;
}

}  // namespace

std::span<const Layout> apu_layouts() noexcept { return kApuLayouts; }

std::vector<Field> apu_fields_for(const Layout& layout, const GpuMetricsSource& source, bool& socket_power_unknown) {
  const ApuUnits u = units_for(layout, source);
  socket_power_unknown = !u.socket_power_known;
  std::vector<Field> fields(layout.fields.begin(), layout.fields.end());
  for (Field& f : fields) {
    if (f.number == &M::average_socket_power) f.div = u.socket_power_div;
    if (f.number == &M::average_gfx_activity || (layout.format_revision == 2 && f.number == &M::average_mm_activity)) {
      f.div = u.activity_div;
    }
  }
  return fields;
}

}  // namespace hipstack::smi::detail::gpu_metrics_impl
