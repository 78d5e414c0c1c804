// Throttle reasons from a throttle_status bit mask, where the vendor documents the bits (smi.hpp).
#include <hipstack/smi.hpp>

#include <fmt/format.h>

#include <span>

namespace hipstack::smi {
namespace {

struct ReasonBit {
  std::uint64_t mask;
  std::string_view name;
};

// nvmlClocksEventReason* (nvml.h; nvmlDeviceGetCurrentClocksEventReasons).
constexpr ReasonBit kNvmlReasons[] = {
    {0x1, "gpu_idle"},          {0x2, "applications_clocks"},    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},       {0x10, "sync_boost"},            {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"},
};

// SMU 13.0.6 firmware (MI300 series): THROTTLER_PROCHOT_BIT 0, THROTTLER_PPT_BIT 1,
// THROTTLER_THERMAL_SOCKET_BIT 2 (AID, XCD, CCD), THROTTLER_THERMAL_VR_BIT 3, THROTTLER_THERMAL_HBM_BIT 4
// (smu_v13_0_6_pmfw.h), the bits gpu_metrics v1.4/v1.5 carry in throttle_status.
constexpr ReasonBit kSmu13_0_6Reasons[] = {
    {1u << 0, "prochot"}, {1u << 1, "ppt"}, {1u << 2, "socket_thermal"}, {1u << 3, "vr_thermal"}, {1u << 4, "hbm_thermal"},
};

std::vector<std::string> decode(std::span<const ReasonBit> table, std::uint64_t bits) {
  std::vector<std::string> out;
  for (const ReasonBit& reason : table) {
    if ((bits & reason.mask) != 0) out.emplace_back(reason.name);
    bits &= ~reason.mask;
  }
  for (int bit = 0; bit < 64; ++bit) {
    if ((bits >> bit & 1u) != 0) out.push_back(fmt::format("bit{}", bit));
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> throttle_reasons(std::string_view vendor, std::string_view gfx_target,
                                                         std::uint64_t bits) {
  if (vendor == "nvidia") return decode(kNvmlReasons, bits);
  if (vendor == "amd" && gfx_target == "gfx942") return decode(kSmu13_0_6Reasons, bits);
  return std::nullopt;
}

}  // namespace hipstack::smi
