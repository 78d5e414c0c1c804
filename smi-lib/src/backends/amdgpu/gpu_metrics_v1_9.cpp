// gpu_metrics v1.9: a packed, self-describing attribute table (MI300-class parts, kernels from 2025).
//
// Bytes: header (4) | s32 attr_count at byte 4 | attr_count times { u64 encoding word; then
// instance-count values of the encoded type, packed (no alignment) }. Encoding word:
//   bits 24-31 unit, 20-23 value type, 10-19 attribute id, 0-9 instance count.
// Value types: 0 u8, 1 s8, 2 u16, 3 s16, 4 u32, 5 s32, 6 u64, 7 s64. Every value starts all-ones
// (the "not supported" fill). structure_size is the whole table's length.
//
// Each attribute is kept in GpuMetrics::attributes; the ids below are also mapped onto the named
// fields, converted by their encoded unit. Ids from 49 on are not mapped: the kernel inserted
// TEMPERATURE_MID at 49 after TEMPERATURE_AID/XCD had shipped as 49/50, so their meaning depends on
// the kernel that wrote the table (see docs/gpu-metrics.md).
#include "gpu_metrics.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <cstdio>

namespace hipstack::smi::detail::gpu_metrics_impl {
namespace {

using M = GpuMetrics;

enum Unit : std::uint8_t {
  kNone = 0, kClock1 = 1 /* MHz */, kTemp1 = 2 /* °C */, kPower1 = 3 /* W */, kTime1 = 4 /* ns */,
  kTime2 = 5 /* 10 ns */, kSpeed1 = 6 /* GT/s */, kSpeed2 = 7 /* 0.1 GT/s */, kBw1 = 8 /* GB/s */,
  kData1 = 9 /* KB */, kPercent = 10,
};
constexpr std::uint16_t bit(Unit u) { return static_cast<std::uint16_t>(1u << u); }

constexpr std::size_t kTypeWidth[8] = {1, 1, 2, 2, 4, 4, 8, 8};
constexpr bool type_is_signed(std::uint8_t type) { return type % 2 == 1; }

// Where a known attribute goes.
enum class Dest : std::uint8_t {
  number,        // first present instance -> optional<double>
  sum,           // sum of present instances -> optional<double>
  vector,        // present instances -> vector<double>
  vector_first,  // vector, and its first entry -> the scalar too
  positions,     // every instance up to the last present one, absent ones NaN -> vector<double> (index = link)
  raw,           // first present instance's bits -> optional<uint64_t>
  partitions,    // num_partition
};

struct AttrMap {
  std::uint16_t id;
  Dest dest;
  std::uint16_t units;   // accepted encoded units (bit per unit); others leave the field unset
  double div = 1.0;      // applied after the unit conversion (energy counter -> J)
  std::optional<double> M::*number = nullptr;
  std::vector<double> M::*vector = nullptr;
  std::optional<std::uint64_t> M::*raw = nullptr;
};

constexpr AttrMap n(std::uint16_t id, std::optional<double> M::*m, std::uint16_t units, double div = 1.0) {
  return {id, Dest::number, units, div, m, nullptr, nullptr};
}
constexpr AttrMap s(std::uint16_t id, std::optional<double> M::*m, std::uint16_t units) {
  return {id, Dest::sum, units, 1.0, m, nullptr, nullptr};
}
constexpr AttrMap v(std::uint16_t id, std::vector<double> M::*m, std::uint16_t units) {
  return {id, Dest::vector, units, 1.0, nullptr, m, nullptr};
}
constexpr AttrMap vp(std::uint16_t id, std::vector<double> M::*m, std::uint16_t units) {
  return {id, Dest::positions, units, 1.0, nullptr, m, nullptr};
}
constexpr AttrMap vf(std::uint16_t id, std::vector<double> M::*m, std::optional<double> M::*first, std::uint16_t units) {
  return {id, Dest::vector_first, units, 1.0, first, m, nullptr};
}
constexpr AttrMap r(std::uint16_t id, std::optional<std::uint64_t> M::*m) {
  return {id, Dest::raw, bit(kNone), 1.0, nullptr, nullptr, m};
}

constexpr std::uint16_t kSpeed = bit(kSpeed1) | bit(kSpeed2);
constexpr std::uint16_t kTime = bit(kTime1) | bit(kTime2);
constexpr std::uint16_t kAcc = bit(kNone) | bit(kPercent);  // accumulators: the kernel has used both

// Ids of enum amdgpu_metrics_attr_id that are stable across kernels (0-48).
constexpr AttrMap kMap[] = {
    n(0, &M::temperature_hotspot, bit(kTemp1)),
    n(1, &M::temperature_mem, bit(kTemp1)),
    n(2, &M::temperature_vrsoc, bit(kTemp1)),
    n(3, &M::current_socket_power, bit(kPower1)),
    n(4, &M::average_gfx_activity, bit(kPercent)),
    n(5, &M::average_umc_activity, bit(kPercent)),
    n(6, &M::mem_max_bandwidth, bit(kBw1)),
    n(7, &M::energy_accumulator, bit(kNone), 65536.0),  // counter of 2^-16 J
    n(8, &M::system_clock_counter, kTime),
    r(9, &M::accumulation_counter),
    r(10, &M::prochot_residency_acc),
    r(11, &M::ppt_residency_acc),
    r(12, &M::socket_thm_residency_acc),
    r(13, &M::vr_thm_residency_acc),
    r(14, &M::hbm_thm_residency_acc),
    r(15, &M::gfxclk_lock_status),
    n(16, &M::pcie_link_width, bit(kNone)),
    n(17, &M::pcie_link_speed, kSpeed),
    n(18, &M::xgmi_link_width, bit(kNone)),
    n(19, &M::xgmi_link_speed, kSpeed),
    n(20, &M::gfx_activity_acc, kAcc),
    n(21, &M::mem_activity_acc, kAcc),
    s(22, &M::pcie_bandwidth_acc, kAcc),
    s(23, &M::pcie_bandwidth_inst, bit(kBw1)),
    r(24, &M::pcie_l0_to_recovery_count),
    n(25, &M::pcie_replay_count, bit(kNone)),
    r(26, &M::pcie_replay_rollover_count),
    r(27, &M::pcie_nak_sent_count),
    r(28, &M::pcie_nak_received_count),
    v(29, &M::xgmi_read_data, bit(kData1)),
    v(30, &M::xgmi_write_data, bit(kData1)),
    vp(31, &M::xgmi_link_status, bit(kNone)),
    n(32, &M::firmware_timestamp, kTime),
    vf(33, &M::current_gfxclk_per_xcc, &M::current_gfxclk, bit(kClock1)),
    vf(34, &M::current_socclks, &M::current_socclk, bit(kClock1)),
    vf(35, &M::current_vclk0s, &M::current_vclk0, bit(kClock1)),
    vf(36, &M::current_dclk0s, &M::current_dclk0, bit(kClock1)),
    n(37, &M::current_uclk, bit(kClock1)),
    {38, Dest::partitions, bit(kNone), 1.0, nullptr, nullptr, nullptr},
    r(39, &M::pcie_other_end_recovery_count),
    v(40, &M::gfx_busy_inst, bit(kPercent)),
    v(41, &M::jpeg_activity, bit(kPercent)),
    v(42, &M::vcn_activity, bit(kPercent)),
    v(43, &M::gfx_busy_acc, kAcc),
    // 44-47 gfx_below_host_limit_{ppt,thm}_acc, gfx_low_utilization_acc, ..._total_acc: attributes only
    v(48, &M::temperature_hbm, bit(kTemp1)),
};

const AttrMap* find_map(std::uint16_t id) {
  for (const AttrMap& m : kMap) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

// The value in the unit's SI-ish form (see GpuMetricsAttribute::values).
double convert(double value, std::uint8_t unit) {
  switch (unit) {
    case kTime1: return value / 1e9;
    case kTime2: return value / 1e8;
    case kSpeed2: return value / 10.0;
    case kBw1: return value * 1e9;
    case kData1: return value * 1024.0;
    default: return value;  // none, MHz, °C, W, GT/s, %, and units this decoder does not know
  }
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void map_attribute(const GpuMetricsAttribute& a, GpuMetrics& out) {
  const AttrMap* map = find_map(a.id);
  if (!map || a.unit > 15 || !(map->units & (1u << a.unit))) return;
  std::vector<double> present;
  std::optional<std::uint64_t> first_raw;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (!a.values[i]) continue;
    present.push_back(*a.values[i] / map->div);
    if (!first_raw) first_raw = a.raw[i];
  }
  switch (map->dest) {
    case Dest::number:
      out.*map->number = present.empty() ? std::nullopt : std::optional<double>(present.front());
      break;
    case Dest::sum: {
      std::optional<double> total;
      for (double x : present) total = total.value_or(0.0) + x;
      out.*map->number = total;
      break;
    }
    case Dest::vector:
      out.*map->vector = std::move(present);
      break;
    case Dest::positions: {
      std::vector<double>& dst = out.*map->vector;
      dst.clear();
      for (const auto& v : a.values) dst.push_back(v ? *v / map->div : std::numeric_limits<double>::quiet_NaN());
      while (!dst.empty() && std::isnan(dst.back())) dst.pop_back();
      break;
    }
    case Dest::vector_first:
      out.*map->number = present.empty() ? std::nullopt : std::optional<double>(present.front());
      out.*map->vector = std::move(present);
      break;
    case Dest::raw:
      out.*map->raw = first_raw;
      break;
    case Dest::partitions:
      if (first_raw && !type_is_signed(a.type) && *first_raw <= 0xFFFFFFFFu) {
        out.num_partition = static_cast<std::uint32_t>(*first_raw);
      } else {
        out.num_partition.reset();
      }
      break;
  }
}

}  // namespace

bool decode_attribute_table(std::span<const std::uint8_t> table, GpuMetrics& out, std::string& error) {
  const std::string where = "gpu_metrics v1.9: ";
  const auto count_bits = read_le(table, 4, 4);
  if (!count_bits) {
    error = where + "table of " + std::to_string(table.size()) + " bytes has no attr_count (s32 at bytes 4-7)";
    return false;
  }
  const auto attr_count = static_cast<std::int32_t>(static_cast<std::uint32_t>(*count_bits));
  if (attr_count < 0) {
    error = where + "attr_count " + std::to_string(attr_count) + " at byte 4 is negative";
    return false;
  }
  std::array<bool, 1024> mapped{};  // an id seen twice: the first one counts
  std::size_t offset = 8;
  // Each attribute takes at least 8 bytes, so the loop ends within structure_size / 8 rounds.
  for (std::int32_t i = 0; i < attr_count; ++i) {
    const auto which = [&] { return "attribute " + std::to_string(i) + " of " + std::to_string(attr_count); };
    const auto enc = read_le(table, offset, 8);
    if (!enc) {
      error = where + which() + ": its encoding word at bytes " + std::to_string(offset) + "-" +
              std::to_string(offset + 7) + " runs past structure_size " + std::to_string(table.size());
      return false;
    }
    GpuMetricsAttribute a;
    a.unit = static_cast<std::uint8_t>((*enc >> 24) & 0xFF);
    a.type = static_cast<std::uint8_t>((*enc >> 20) & 0xF);
    a.id = static_cast<std::uint16_t>((*enc >> 10) & 0x3FF);
    const std::size_t instances = *enc & 0x3FF;
    if (a.type >= 8) {
      error = where + which() + " at byte " + std::to_string(offset) + " (encoding " + hex(*enc) +
              "): unknown value type " + std::to_string(a.type);
      return false;
    }
    const std::size_t width = kTypeWidth[a.type];
    const std::size_t values_at = offset + 8;
    const std::size_t end = values_at + instances * width;
    if (end > table.size()) {
      error = where + which() + " (id " + std::to_string(a.id) + ") at byte " + std::to_string(offset) + ": " +
              std::to_string(instances) + " values of " + std::to_string(width) + " bytes end at byte " +
              std::to_string(end) + ", past structure_size " + std::to_string(table.size());
      return false;
    }
    a.value_offset = static_cast<std::uint32_t>(values_at);
    a.raw.reserve(instances);
    a.values.reserve(instances);
    for (std::size_t k = 0; k < instances; ++k) {
      std::uint64_t bits = read_le(table, values_at + k * width, width).value_or(~std::uint64_t{0});
      const bool sentinel = is_all_ones(bits, width);
      if (type_is_signed(a.type) && width < 8 && (bits >> (8 * width - 1)) & 1) {
        bits |= ~std::uint64_t{0} << (8 * width);  // sign-extend
      }
      a.raw.push_back(bits);
      if (sentinel) {
        a.values.push_back(std::nullopt);
      } else {
        const double value = type_is_signed(a.type) ? static_cast<double>(static_cast<std::int64_t>(bits))
                                                    : static_cast<double>(bits);
        a.values.push_back(convert(value, a.unit));
      }
    }
    if (!mapped[a.id]) {
      mapped[a.id] = true;
      map_attribute(a, out);
    }
    out.attributes.push_back(std::move(a));
    offset = end;
  }
  return true;
}

}  // namespace hipstack::smi::detail::gpu_metrics_impl
