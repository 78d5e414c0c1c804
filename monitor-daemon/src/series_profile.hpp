// Which series /metrics carries for each catalogue metric under a profile (docs/daemon.md, "Series
// profiles"): `default` keeps what health, alerts and the dashboard use, within a budget of 60
// series per MI300X GPU; `full` exports every metric sampled. In both, identity and static text
// facts are labels of one hipstack_gpu_info series per GPU (and hipstack_gpu_partition_info per
// partition), and text states are state sets, so that no change of a value creates a series.
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace hipstack::smid {

enum class SeriesProfile : std::uint8_t { standard, full };  // configuration names: default, full

std::optional<SeriesProfile> parse_series_profile(std::string_view name);
std::string_view series_profile_name(SeriesProfile profile);

enum class Exposure : std::uint8_t {
  omitted,    // not a series under this profile
  series,     // a family of its own: a number per instance; instanced text as _info{INSTANCE, value}
  state_set,  // one series per state (smi::metric_states), 1 for the current one, 0 for the others
};
Exposure exposure(const smi::MetricInfo& info, SeriesProfile profile);

// Whether the metric's value is a label of hipstack_gpu_info (device scope) or
// hipstack_gpu_partition_info (partition scope), named as the metric: single-valued text facts
// without states, identity numbers (card, render minor, KFD ids), the limits health checks compare
// against (clock_sclk_max, clock_sm_max, bad_page_threshold) and a partition's static sizes.
bool info_label(const smi::MetricInfo& info);

}  // namespace hipstack::smid
