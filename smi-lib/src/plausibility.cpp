// Readings that cannot be true, marked errors (plausibility.hpp).
#include "plausibility.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace hipstack::smi::detail {
namespace {

// A value that may not exceed another reading of the same device times `ratio`: the pairs where
// exceeding is impossible, not merely unusual (a temperature above its critical limit or power above
// its cap are real events, health's business, and not here).
struct Bound {
  MetricId value;
  MetricId bound;
  double ratio;
  std::string_view rule;  // why it cannot be exceeded, and where that is written
};

constexpr Bound kBounds[] = {
    {MetricId::vram_used, MetricId::vram_total, 1.0,
     "a memory manager cannot hand out more than it manages (amdgpu_vram_mgr.c; NVML's used is part of its total)"},
    {MetricId::vram_free, MetricId::vram_total, 1.0, "free memory is part of the total (NVML nvmlMemory_t)"},
    {MetricId::vram_visible_used, MetricId::vram_visible_total, 1.0,
     "the CPU-visible part of VRAM cannot hold more than its size (amdgpu_vram_mgr.c)"},
    {MetricId::gtt_used, MetricId::gtt_total, 1.0, "a memory manager cannot hand out more than it manages (amdgpu_gtt_mgr.c)"},
    {MetricId::bar1_used, MetricId::bar1_total, 1.0, "BAR1 cannot map more than its size (NVML nvmlBAR1Memory_t)"},
    {MetricId::pcie_width, MetricId::pcie_width_max, 1.0,
     "a link trains at most as wide as the device's widest width (PCIe Base Specification, Link Capabilities)"},
    {MetricId::pcie_speed, MetricId::pcie_speed_max, 1.0,
     "a link trains at most at the device's fastest speed (PCIe Base Specification, Link Capabilities)"},
    // Clocks: the maximum is the top DPM level (amdgpu) or NVML's maximum clock, boost included.
    // Firmware runs a clock a little past its top level at most; a quarter above is a misread.
    {MetricId::clock_sclk, MetricId::clock_sclk_max, 1.25, "a clock does not run a quarter above its maximum"},
    {MetricId::clock_sclk_xcc, MetricId::clock_sclk_max, 1.25, "a clock does not run a quarter above its maximum"},
    {MetricId::clock_mclk, MetricId::clock_mclk_max, 1.25, "a clock does not run a quarter above its maximum"},
    {MetricId::clock_sm, MetricId::clock_sm_max, 1.25, "a clock does not run a quarter above its maximum"},
    {MetricId::clock_video, MetricId::clock_video_max, 1.25, "a clock does not run a quarter above its maximum"},
};

// The values a quantity of a unit can have at all, whatever the device.
struct Range {
  Unit unit;
  double low;
  double high;
  std::string_view rule;
};

constexpr double kNoLimit = HUGE_VAL;

constexpr Range kRanges[] = {
    {Unit::percent, 0.0, 100.5, "a share lies between 0 and 100 % (0.5 allowed for rounding)"},
    // Emergency shutdown limits are 105-125 C (amdgpu temp*_emergency, NVML's shutdown threshold);
    // no datacenter or desktop part is specified below -40 C.
    {Unit::celsius, -40.0, 150.0, "no sensor of a working GPU reads outside -40..150 C"},
    // The largest boards are rated 1.4 kW (MI355X, B300).
    {Unit::watt, 0.0, 4000.0, "a GPU board draws between 0 and 4 kW"},
    {Unit::joule, 0.0, kNoLimit, "an amount of energy is not negative"},
    {Unit::megahertz, 0.0, kNoLimit, "a clock is not negative"},
    {Unit::byte, 0.0, kNoLimit, "an amount of memory is not negative"},
    {Unit::byte_per_second, 0.0, kNoLimit, "a rate is not negative"},
    {Unit::millivolt, 0.0, kNoLimit, "a supply voltage is not negative"},
    {Unit::rpm, 0.0, kNoLimit, "a fan speed is not negative"},
    {Unit::gigatransfer_per_second, 0.0, kNoLimit, "a link speed is not negative"},
    {Unit::lane, 0.0, kNoLimit, "a link width is not negative"},
    {Unit::count, 0.0, kNoLimit, "a count is not negative"},
    {Unit::second, 0.0, kNoLimit, "a duration is not negative"},
};

// The value as written in a message: integers exact, reals as read, with the unit's symbol.
std::string quantity(const Reading& r, Unit unit) {
  const std::string_view symbol = unit_symbol(unit);
  std::string number;
  if (const auto* i = std::get_if<std::int64_t>(&r.value)) {
    number = fmt::format("{}", *i);
  } else if (const auto* d = std::get_if<double>(&r.value)) {
    number = fmt::format("{}", *d);
  }
  return symbol.empty() ? number : fmt::format("{} {}", number, symbol);
}

std::string metric_name(MetricId id) {
  const MetricInfo* info = find_metric(id);
  return info != nullptr ? std::string(info->name) : fmt::format("metric {}", static_cast<std::uint32_t>(id));
}

void mark(Reading& r, std::string why) {
  r.status = Status::error;
  r.error_code = kImplausibleErrorCode;
  r.value = std::monostate{};
  r.detail = std::move(why);
}

// The ok, single-valued reading of `id` in `readings`, or nothing.
const Reading* find_ok(const std::vector<Reading>& readings, MetricId id) {
  const auto it = std::find_if(readings.begin(), readings.end(),
                               [id](const Reading& r) { return r.id == id && r.instance.empty() && r.ok(); });
  return it == readings.end() ? nullptr : &*it;
}

}  // namespace

void add_plausibility_bounds(MetricId id, std::vector<MetricId>& out) {
  for (const Bound& b : kBounds) {
    if (b.value == id && std::find(out.begin(), out.end(), b.bound) == out.end()) out.push_back(b.bound);
  }
}

void add_all_plausibility_bounds(std::vector<MetricId>& out) {
  for (const Bound& b : kBounds) {
    if (std::find(out.begin(), out.end(), b.bound) == out.end()) out.push_back(b.bound);
  }
}

std::vector<std::pair<std::size_t, Reading>> mark_implausible(std::vector<Reading>& readings) {
  std::vector<std::pair<std::size_t, Reading>> changed;
  // Ranges first, so that a bound out of its own range is not used to judge another reading.
  for (Reading& r : readings) {
    if (!r.ok()) continue;
    const auto value = r.number();
    const MetricInfo* info = find_metric(r.id);
    if (!value || info == nullptr) continue;
    for (const Range& range : kRanges) {
      if (range.unit != info->unit) continue;
      if (!std::isfinite(*value) || *value < range.low || *value > range.high) {
        const std::string what = r.instance.empty() ? std::string(info->name) : fmt::format("{}[{}]", info->name, r.instance);
        changed.emplace_back(static_cast<std::size_t>(&r - readings.data()), r);
        mark(r, fmt::format("{} read {}, which cannot be: {} (read from {})", what, quantity(r, info->unit), range.rule,
                            r.detail.empty() ? "an unnamed source" : r.detail));
      }
      break;
    }
  }
  for (const Bound& b : kBounds) {
    const Reading* bound = find_ok(readings, b.bound);
    const auto limit = bound != nullptr ? bound->number() : std::nullopt;
    if (!limit || *limit <= 0) continue;  // no bound, or one that bounds nothing (0: not reported)
    const MetricInfo* info = find_metric(b.value);
    if (info == nullptr) continue;
    for (Reading& r : readings) {
      if (r.id != b.value || !r.ok()) continue;
      const auto value = r.number();
      if (!value || *value <= *limit * b.ratio) continue;
      const std::string what = r.instance.empty() ? std::string(info->name) : fmt::format("{}[{}]", info->name, r.instance);
      const std::string above = b.ratio == 1.0 ? std::string("above") : fmt::format("more than {:g} times", b.ratio);
      const MetricInfo* bound_info = find_metric(b.bound);
      changed.emplace_back(static_cast<std::size_t>(&r - readings.data()), r);
      mark(r, fmt::format("{} read {}, {} {} {}, which cannot be: {} (read from {})", what, quantity(r, info->unit), above,
                          metric_name(b.bound), quantity(*bound, bound_info != nullptr ? bound_info->unit : info->unit), b.rule,
                          r.detail.empty() ? "an unnamed source" : r.detail));
    }
  }
  return changed;
}

}  // namespace hipstack::smi::detail
