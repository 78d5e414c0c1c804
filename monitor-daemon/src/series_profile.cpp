// Which series /metrics carries for each catalogue metric under a profile, from the catalogue's
// series column (series_profile.hpp).
#include "series_profile.hpp"

namespace hipstack::smid {
namespace {

bool in_default(const smi::MetricInfo& info) { return smi::metric_default_series(info.id) == smi::DefaultSeries::series; }

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
  if (info.kind == smi::Kind::identity || smi::metric_default_series(info.id) == smi::DefaultSeries::info_label) return true;
  return info.scope == smi::Scope::partition && info.kind == smi::Kind::static_info;
}

Exposure exposure(const smi::MetricInfo& info, SeriesProfile profile) {
  const bool full = profile == SeriesProfile::full;
  if (info.type == smi::ValueType::text) {
    if (!smi::metric_states(info.id).empty()) return full || in_default(info) ? Exposure::state_set : Exposure::omitted;
    if (info.instance_label.empty()) return Exposure::omitted;  // a label of the info series
    return full ? Exposure::series : Exposure::omitted;
  }
  if (full) return Exposure::series;
  return in_default(info) ? Exposure::series : Exposure::omitted;
}

}  // namespace hipstack::smid
