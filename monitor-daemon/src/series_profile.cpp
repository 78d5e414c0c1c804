#include "series_profile.hpp"

#include <algorithm>
#include <iterator>

namespace hipstack::smid {
namespace {

using smi::MetricId;

// The default profile's numeric series. Kept: every metric a health check reads (smi-lib's
// health.cpp) that changes, what the recording and alerting rules and the dashboard's first rows use
// (busy, activity, memory, power, energy, clocks, temperatures and their limits, PCIe link and
// replays, throttling, memory errors, XIDs, KFD events). Memory errors are the GPU's totals
// (ecc_*_volatile: on AMD the library's sum of the RAS blocks, written only when every block was
// read); the per-block RAS counts are `full` only. Left to `full` too: per-XCC and per-link detail,
// DPM tables, architecture facts, voltages, fans, the other clocks.
constexpr MetricId kDefaultSeries[] = {
    MetricId::gpu_busy, MetricId::graphics_active, MetricId::sm_active, MetricId::sm_occupancy, MetricId::tensor_active,
    MetricId::dram_active, MetricId::fp64_active, MetricId::fp32_active, MetricId::fp16_active,
    MetricId::vram_used, MetricId::vram_total, MetricId::power_current, MetricId::power_average, MetricId::power_cap,
    MetricId::energy_consumed, MetricId::clock_sclk, MetricId::clock_sm, MetricId::running_processes,
    MetricId::temperature_edge, MetricId::temperature_junction, MetricId::temperature_memory,
    MetricId::temperature_edge_critical, MetricId::temperature_junction_critical, MetricId::temperature_memory_critical,
    MetricId::pcie_speed, MetricId::pcie_width, MetricId::pcie_speed_max, MetricId::pcie_width_max,
    MetricId::pcie_replay_count, MetricId::bad_pages_reserved, MetricId::bad_pages_pending, MetricId::bad_pages_failed,
    MetricId::ecc_corrected_volatile, MetricId::ecc_uncorrected_volatile, MetricId::ecc_uncorrected_aggregate,
    MetricId::remapped_rows_pending, MetricId::remapped_rows_failed, MetricId::violation_accumulation_count,
    MetricId::violation_residency, MetricId::violation_time, MetricId::throttle_status, MetricId::xid_errors,
    MetricId::kfd_events,
};
constexpr MetricId kDefaultStateSets[] = {MetricId::performance_level, MetricId::power_profile};

// Limits a health check compares against that never change while the driver is loaded: labels of
// hipstack_gpu_info in every profile (full has their series too), so the default keeps them at no
// series' cost.
constexpr MetricId kLimitLabels[] = {MetricId::clock_sclk_max, MetricId::clock_sm_max, MetricId::bad_page_threshold};

template <std::size_t N>
bool listed(const MetricId (&list)[N], MetricId id) {
  return std::find(std::begin(list), std::end(list), id) != std::end(list);
}

}  // namespace

std::optional<SeriesProfile> parse_series_profile(std::string_view name) {
  if (name == "default") return SeriesProfile::standard;
  if (name == "full") return SeriesProfile::full;
  return std::nullopt;
}

std::string_view series_profile_name(SeriesProfile profile) {
  return profile == SeriesProfile::full ? "full" : "default";
}

bool info_label(const smi::MetricInfo& info) {
  if (!info.instance_label.empty()) return false;
  if (info.type == smi::ValueType::text) return smi::metric_states(info.id).empty();
  if (info.kind == smi::Kind::identity || listed(kLimitLabels, info.id)) return true;
  return info.scope == smi::Scope::partition && info.kind == smi::Kind::static_info;
}

Exposure exposure(const smi::MetricInfo& info, SeriesProfile profile) {
  const bool full = profile == SeriesProfile::full;
  if (info.type == smi::ValueType::text) {
    if (!smi::metric_states(info.id).empty()) return full || listed(kDefaultStateSets, info.id) ? Exposure::state_set : Exposure::omitted;
    if (info.instance_label.empty()) return Exposure::omitted;  // a label of the info series
    return full ? Exposure::series : Exposure::omitted;
  }
  if (full) return Exposure::series;
  return listed(kDefaultSeries, info.id) ? Exposure::series : Exposure::omitted;
}

}  // namespace hipstack::smid
