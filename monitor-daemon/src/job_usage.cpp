// What one job used of one GPU, accumulated from the daemon's live samples (job_usage.hpp).
#include "job_usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <stdexcept>
#include <string_view>

namespace hipstack::smid {
namespace {

using smi::MetricId;

// The gauges a job's summary averages or peaks (docs/jobs.md names the figures). `fallback` is
// read when `metric` is not in a sample (NVML gives some GPUs only the instant power).
struct GaugeSource {
  std::string_view stem;
  MetricId metric;
  MetricId fallback;
  std::string_view mean;  // figure name of the mean; empty: none
  std::string_view peak;  // figure name of the maximum; empty: none
  std::string_view unit;
};
constexpr std::array kGauges{
    GaugeSource{"power", MetricId::power_average, MetricId::power_current, "power_mean", "power_max", "W"},
    GaugeSource{"busy", MetricId::gpu_busy, MetricId::gpu_busy, "busy_mean", "", "%"},
    GaugeSource{"memory_busy", MetricId::memory_busy, MetricId::memory_busy, "memory_busy_mean", "", "%"},
    GaugeSource{"activity", MetricId::graphics_active, MetricId::graphics_active, "activity_mean", "", "%"},
    GaugeSource{"vram", MetricId::vram_used, MetricId::vram_used, "", "vram_peak", "B"},
};

// The counters whose growth over the job is a figure of its own (per instance too, where the
// metric has instances: the XID code, the RAS block, the page retirement cause).
struct CounterSource {
  MetricId metric;
  std::string_view figure;
  std::string_view unit;
  // Counts since the daemon registered for them (XIDs): a code first seen, or a count that went
  // back (a new registration after a restart), counted from 0. Any other counter that goes back
  // adds nothing: its new value is not known to be use (an estimate the exact read corrected).
  bool since_registration = false;
};
constexpr std::array kCounters{
    CounterSource{MetricId::energy_consumed, "energy", "J"},
    CounterSource{MetricId::ecc_corrected_volatile, "ecc_corrected", ""},
    CounterSource{MetricId::ecc_uncorrected_volatile, "ecc_uncorrected", ""},
    CounterSource{MetricId::ras_correctable, "ras_correctable", ""},
    CounterSource{MetricId::ras_uncorrectable, "ras_uncorrectable", ""},
    CounterSource{MetricId::ras_deferred, "ras_deferred", ""},
    CounterSource{MetricId::retired_pages, "retired_pages", ""},
    CounterSource{MetricId::remapped_rows, "remapped_rows", ""},
    // Gauges of the driver that only grow while the GPU runs: their rise is what the job saw.
    CounterSource{MetricId::bad_pages_reserved, "bad_pages", ""},
    CounterSource{MetricId::bad_pages_pending, "bad_pages_pending", ""},
    CounterSource{MetricId::xid_errors, "xid_errors", "", true},
    CounterSource{MetricId::pcie_replay_count, "pcie_replays", ""},
    // Not figures themselves: the violation times come from them (figures()).
    CounterSource{MetricId::violation_residency, "", ""},
    CounterSource{MetricId::violation_accumulation_count, "", ""},
    CounterSource{MetricId::violation_time, "", ""},
};

// NVML's clock-event reasons that set clocks rather than slow the GPU down.
constexpr std::array<std::string_view, 3> kNotSlowdowns{"gpu_idle", "applications_clocks", "display_clock_setting"};

std::string_view name_of(MetricId id) { return smi::find_metric(id)->name; }

// A number the library can read: finite, and within what a 64-bit counter holds (under 1.9e19), so
// that sums over any job stay finite and the stored state reads back (JSON has no infinity).
bool countable(double value) { return std::isfinite(value) && std::fabs(value) < 1e20; }

std::int64_t to_ns(std::chrono::system_clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

double number_of(const HistoryValue& v) { return v.integer ? static_cast<double>(v.as_integer()) : v.as_real(); }

const std::string& instance_of(const HistoryEntry& entry, const HistoryValue& v) {
  static const std::string none;
  return entry.instances && v.instance < entry.instances->size() ? (*entry.instances)[v.instance] : none;
}

const CounterSource* counter_source(MetricId id) {
  const auto* found = std::find_if(kCounters.begin(), kCounters.end(), [id](const CounterSource& c) { return c.metric == id; });
  return found == kCounters.end() ? nullptr : found;
}

std::string counter_key(MetricId id, const std::string& instance) {
  return instance.empty() ? std::string(name_of(id)) : fmt::format("{}/{}", name_of(id), instance);
}

std::string health_line(const smi::HealthReport& report) { return std::string(smi::verdict_name(report.overall)); }

}  // namespace

void GaugeStats::add(double value) noexcept {
  max = count == 0 ? value : std::max(max, value);
  sum += value;
  ++count;
}

void CounterGrowth::add(double value, bool from_zero) noexcept {
  if (!last && from_zero) last = 0.0;
  if (last) {
    if (value >= *last) {
      growth += value - *last;
    } else {
      ++resets;
      if (from_zero && value > 0) growth += value;  // a count restarted at 0 (never a negative one)
    }
  }
  last = value;
}

void JobGpuUsage::count(const HistoryEntry& entry, const HistoryValue& v) {
  const CounterSource* source = counter_source(v.id);
  if (source == nullptr) return;
  const std::string metric(name_of(v.id));
  if (v.status != smi::Status::ok) {
    // Registered, and none of any code since (the library's ENODATA): 0 is known, and every code's
    // count starts again from 0 (the daemon restarted or reloaded: a new registration).
    if (source->since_registration && v.error_code == ENODATA) {
      counters[metric].add(0);
      for (auto& [key, counter] : counters) {
        if (key.starts_with(metric + "/")) counter.last = 0.0;
      }
    }
    return;
  }
  // A new code of a counter already watched counts from 0: before, it had none.
  const bool watched = std::any_of(counters.begin(), counters.end(), [&metric](const auto& c) {
    return c.first == metric || c.first.starts_with(metric + "/");
  });
  counters[counter_key(v.id, instance_of(entry, v))].add(number_of(v), source->since_registration && watched);
}

void JobGpuUsage::begin(const DeviceSnapshot& device, const HistoryEntry* baseline) {
  index = device.device.index;
  uuid = device.device.uuid;
  bdf = device.device.bdf;
  name = device.device.name;
  vendor = device.device.vendor;
  for (const smi::Reading& r : device.facts()) {
    if (r.id == MetricId::gfx_target && r.ok()) gfx_target = std::string(r.text().value_or(""));
  }
  health_start = health_line(device.health());
  health_start_summary = smi::health_summary(device.health());
  if (baseline == nullptr) return;
  baseline_ns = last_sample_ns = to_ns(baseline->at);
  for (const HistoryValue& v : baseline->values) {
    if (v.status == smi::Status::ok && !countable(number_of(v))) continue;
    count(*baseline, v);
    if (v.status != smi::Status::ok) continue;
    if (v.id == MetricId::power_average || (v.id == MetricId::power_current && !last_power_w)) last_power_w = number_of(v);
  }
}

bool JobGpuUsage::fold(const HistoryEntry& entry, double max_gap_s) {
  const std::int64_t at = to_ns(entry.at);
  if (at <= last_sample_ns) return false;
  // The time this sample stands for: since the previous one, unless the daemon was not sampling
  // in between (stopped, restarted, the GPU not answering): that gap is nobody's.
  const double since = last_sample_ns == 0 ? 0.0 : static_cast<double>(at - last_sample_ns) / 1e9;
  const double covered = since <= max_gap_s ? since : 0.0;
  if (since > max_gap_s) unsampled_s += since;
  if (baseline_ns == 0) baseline_ns = at;  // no sample before the job: the first one is its start
  last_sample_ns = at;
  ++samples;
  std::map<MetricId, double> read;
  std::optional<std::uint64_t> throttle_bits;  // a bit mask: kept whole, not as a double
  for (const HistoryValue& v : entry.values) {
    const std::string_view metric = name_of(v.id);
    if (v.status != smi::Status::ok) {
      last_status[std::string(metric)] = std::string(smi::status_name(v.status));
      count(entry, v);
      continue;
    }
    const double value = number_of(v);
    if (!countable(value)) continue;  // not a reading to count (a sum or a counter would never recover)
    if (v.id == MetricId::throttle_status && v.integer) throttle_bits = v.raw;
    count(entry, v);
    read.emplace(v.id, value);
  }
  for (const GaugeSource& g : kGauges) {
    auto found = read.find(g.metric);
    if (found == read.end()) found = read.find(g.fallback);
    if (found == read.end()) continue;
    gauges[std::string(g.stem)].add(found->second);
  }
  std::optional<double> power;
  if (const auto p = read.find(MetricId::power_average); p != read.end()) power = p->second;
  else if (const auto c = read.find(MetricId::power_current); c != read.end()) power = c->second;
  if (power && last_power_w && covered > 0) power_integral_j += (*power + *last_power_w) / 2.0 * covered;
  if (power && covered > 0) power_integrated_s += covered;
  last_power_w = power;
  if (throttle_bits && covered > 0) {
    throttle_seen_s += covered;
    const std::uint64_t bits = *throttle_bits;
    const auto reasons = smi::throttle_reasons(vendor, gfx_target, bits);
    bool slowed = false;
    if (reasons) {
      for (const std::string& reason : *reasons) {
        if (std::find(kNotSlowdowns.begin(), kNotSlowdowns.end(), reason) != kNotSlowdowns.end()) continue;
        throttle_s[reason] += covered;
        slowed = true;
      }
    } else {
      slowed = bits != 0;  // bits this GPU's firmware does not document: throttled, for no reason named
    }
    if (slowed) throttle_s["any"] += covered;
  }
  return true;
}

void JobGpuUsage::finish(const smi::HealthReport& health) {
  health_end = health_line(health);
  health_end_summary = smi::health_summary(health);
}

namespace {

// Why a metric has no figure: what the job's samples said of it, or that they lacked it.
std::string missing_reason(const JobGpuUsage& u, MetricId id) {
  const auto status = u.last_status.find(std::string(name_of(id)));
  return status != u.last_status.end() ? fmt::format("{} was {} in the job's samples", name_of(id), status->second)
                                       : fmt::format("{} is not in the daemon's samples of this GPU", name_of(id));
}

// Mean and peak of each gauge (power, temperature, busy, VRAM, ...).
void add_gauge_figures(const JobGpuUsage& u, std::vector<JobFigure>& out) {
  for (const GaugeSource& g : kGauges) {
    const auto stats = u.gauges.find(std::string(g.stem));
    const bool known = stats != u.gauges.end() && stats->second.count > 0;
    std::string source = fmt::format("{} over the job's samples", name_of(g.metric));
    if (g.fallback != g.metric) source += fmt::format(" ({} where a sample had no {})", name_of(g.fallback), name_of(g.metric));
    const std::string why = known ? "" : missing_reason(u, g.metric);
    if (!g.mean.empty()) {
      out.push_back({std::string(g.mean), "", std::string(g.unit),
                     known ? std::optional(stats->second.sum / static_cast<double>(stats->second.count)) : std::nullopt,
                     known ? "mean of " + source : "", why});
    }
    if (!g.peak.empty()) {
      out.push_back({std::string(g.peak), "", std::string(g.unit), known ? std::optional(stats->second.max) : std::nullopt,
                     known ? "maximum of " + source : "", why});
    }
  }
}

void add_throttle_figures(const JobGpuUsage& u, std::vector<JobFigure>& out) {
  if (u.throttle_seen_s > 0) {
    const auto any = u.throttle_s.find("any");
    out.push_back({"throttle_time", "", "s", any == u.throttle_s.end() ? 0.0 : any->second,
                   "time between samples whose throttle_status named a slowdown", ""});
    for (const auto& [reason, seconds] : u.throttle_s) {
      if (reason != "any") out.push_back({"throttle_time", reason, "s", seconds, "throttle_status reason", ""});
    }
  } else {
    out.push_back({"throttle_time", "", "s", std::nullopt, "", missing_reason(u, MetricId::throttle_status)});
  }
}

void add_violation_figures(const JobGpuUsage& u, double sampled, std::vector<JobFigure>& out) {
  // Violation time per reason: NVML's own counters (seconds), or the AMD firmware's residency
  // counters against its sample count, times the sampled time.
  const std::string nvml_prefix = fmt::format("{}/", name_of(MetricId::violation_time));
  const std::string amd_prefix = fmt::format("{}/", name_of(MetricId::violation_residency));
  const auto accumulated = u.counters.find(std::string(name_of(MetricId::violation_accumulation_count)));
  const bool amd_known = accumulated != u.counters.end() && accumulated->second.growth > 0;
  bool violation_known = false;
  for (const auto& [key, counter] : u.counters) {
    if (u.samples == 0) break;
    if (key.starts_with(nvml_prefix)) {
      out.push_back({"violation_time", key.substr(nvml_prefix.size()), "s", counter.growth,
                     "growth of violation_time (NVML violation status) over the job's samples", ""});
      violation_known = true;
    } else if (amd_known && key.starts_with(amd_prefix)) {
      out.push_back({"violation_time", key.substr(amd_prefix.size()), "s", counter.growth / accumulated->second.growth * sampled,
                     "violation_residency over violation_accumulation_count, times the sampled time", ""});
      violation_known = true;
    }
  }
  if (!violation_known) {
    out.push_back({"violation_time", "", "s", std::nullopt, "",
                   u.samples == 0 ? "no sample was taken during the job"
                   : accumulated != u.counters.end() ? "the firmware counted no samples during the job"
                                                   : fmt::format("neither {} nor {}", missing_reason(u, MetricId::violation_time),
                                                                 missing_reason(u, MetricId::violation_accumulation_count))});
  }
}

// Each counter's growth over the job (with its instances), and how many went back.
void add_counter_figures(const JobGpuUsage& u, std::vector<JobFigure>& out) {
  std::int64_t resets = 0;
  for (const CounterSource& c : kCounters) {
    const std::string metric(name_of(c.metric));
    std::optional<double> total;
    std::vector<std::pair<std::string, double>> instances;
    for (const auto& [key, counter] : u.counters) {
      if (key != metric && !key.starts_with(metric + "/")) continue;
      resets += counter.resets;
      total = total.value_or(0) + counter.growth;
      if (key != metric && counter.growth > 0) instances.emplace_back(key.substr(metric.size() + 1), counter.growth);
    }
    if (c.figure.empty() || c.metric == MetricId::energy_consumed) continue;
    const std::string source = fmt::format("growth of {} over the job's samples", metric);
    out.push_back({std::string(c.figure), "", std::string(c.unit), u.samples > 0 ? total : std::nullopt,
                   total && u.samples > 0 ? source : "", total && u.samples > 0 ? "" : missing_reason(u, c.metric)});
    for (const auto& [instance, growth] : instances) out.push_back({std::string(c.figure), instance, std::string(c.unit), growth, source, ""});
  }
  out.push_back({"counter_resets", "", "", static_cast<double>(resets), "counters that went back during the job (not counted as use)", ""});
}

}  // namespace

std::vector<JobFigure> JobGpuUsage::figures(double wall_seconds) const {
  std::vector<JobFigure> out;
  const double sampled = samples > 0 ? static_cast<double>(last_sample_ns - baseline_ns) / 1e9 : 0.0;
  out.push_back({"wall_time", "", "s", wall_seconds, "the job's start to its stop (or now)", ""});
  out.push_back({"samples", "", "", static_cast<double>(samples), "the daemon's live samples taken during the job", ""});
  if (samples > 0) {
    out.push_back({"sampled_time", "", "s", sampled, "the first sample before the job to the last one counted", ""});
  } else {
    out.push_back({"sampled_time", "", "s", std::nullopt, "", "no sample was taken during the job"});
  }
  out.push_back({"unsampled_time", "", "s", unsampled_s, "gaps between samples longer than the daemon samples (it was stopped)", ""});

  // Energy: the counter's growth where the GPU has one, else the power integrated.
  const auto energy = counters.find(std::string(name_of(MetricId::energy_consumed)));
  if (energy != counters.end() && samples > 0) {
    out.push_back({"energy", "", "J", energy->second.growth, "growth of energy_consumed over the job's samples", ""});
  } else if (power_integrated_s > 0) {
    out.push_back({"energy", "", "J", power_integral_j, "power integrated between the job's samples (no energy counter)", ""});
  } else {
    out.push_back({"energy", "", "J", std::nullopt, "", samples == 0 ? "no sample was taken during the job" : missing_reason(*this, MetricId::energy_consumed)});
  }
  add_gauge_figures(*this, out);
  add_throttle_figures(*this, out);
  add_violation_figures(*this, sampled, out);
  add_counter_figures(*this, out);
  return out;
}

nlohmann::json to_json(const JobGpuUsage& u) {
  nlohmann::json counters = nlohmann::json::object();
  for (const auto& [key, c] : u.counters) {
    counters[key] = {{"growth", c.growth}, {"last", c.last ? nlohmann::json(*c.last) : nlohmann::json()}, {"resets", c.resets}};
  }
  nlohmann::json gauges = nlohmann::json::object();
  for (const auto& [key, g] : u.gauges) gauges[key] = {{"sum", g.sum}, {"count", g.count}, {"max", g.max}};
  return {{"index", u.index},
          {"uuid", u.uuid},
          {"bdf", u.bdf},
          {"name", u.name},
          {"vendor", u.vendor},
          {"gfx_target", u.gfx_target},
          {"baseline_ns", u.baseline_ns},
          {"last_sample_ns", u.last_sample_ns},
          {"samples", u.samples},
          {"unsampled_s", u.unsampled_s},
          {"gauges", gauges},
          {"counters", counters},
          {"last_status", u.last_status},
          {"power_integral_j", u.power_integral_j},
          {"power_integrated_s", u.power_integrated_s},
          {"last_power_w", u.last_power_w ? nlohmann::json(*u.last_power_w) : nlohmann::json()},
          {"throttle_seen_s", u.throttle_seen_s},
          {"throttle_s", u.throttle_s},
          {"health_start", u.health_start},
          {"health_start_summary", u.health_start_summary},
          {"health_end", u.health_end},
          {"health_end_summary", u.health_end_summary}};
}

namespace {

template <typename T>
T field(const nlohmann::json& json, const char* key) {
  const auto found = json.find(key);
  if (found == json.end()) throw std::runtime_error(fmt::format("no \"{}\"", key));
  try {
    return found->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(fmt::format("\"{}\" is not a {}", key, std::is_arithmetic_v<T> ? "number" : "string or map"));
  }
}

std::optional<double> optional_number(const nlohmann::json& json, const char* key) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return std::nullopt;
  if (!found->is_number()) throw std::runtime_error(fmt::format("\"{}\" is not a number", key));
  return found->get<double>();
}

}  // namespace

JobGpuUsage usage_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::runtime_error("not a JSON object");
  JobGpuUsage u;
  u.index = field<std::uint32_t>(json, "index");
  u.uuid = field<std::string>(json, "uuid");
  u.bdf = field<std::string>(json, "bdf");
  u.name = field<std::string>(json, "name");
  u.vendor = field<std::string>(json, "vendor");
  u.gfx_target = field<std::string>(json, "gfx_target");
  u.baseline_ns = field<std::int64_t>(json, "baseline_ns");
  u.last_sample_ns = field<std::int64_t>(json, "last_sample_ns");
  u.samples = field<std::int64_t>(json, "samples");
  u.unsampled_s = field<double>(json, "unsampled_s");
  const auto gauges = field<nlohmann::json>(json, "gauges");
  const auto counters = field<nlohmann::json>(json, "counters");
  if (!gauges.is_object() || !counters.is_object()) throw std::runtime_error("\"gauges\" or \"counters\" is not a map");
  for (const auto& [key, g] : gauges.items()) {
    u.gauges[key] = {field<double>(g, "sum"), field<std::int64_t>(g, "count"), field<double>(g, "max")};
  }
  for (const auto& [key, c] : counters.items()) {
    u.counters[key] = {field<double>(c, "growth"), optional_number(c, "last"), field<std::int64_t>(c, "resets")};
  }
  u.last_status = field<std::map<std::string, std::string>>(json, "last_status");
  u.power_integral_j = field<double>(json, "power_integral_j");
  u.power_integrated_s = field<double>(json, "power_integrated_s");
  u.last_power_w = optional_number(json, "last_power_w");
  u.throttle_seen_s = field<double>(json, "throttle_seen_s");
  u.throttle_s = field<std::map<std::string, double>>(json, "throttle_s");
  u.health_start = field<std::string>(json, "health_start");
  u.health_start_summary = field<std::string>(json, "health_start_summary");
  u.health_end = field<std::string>(json, "health_end");
  u.health_end_summary = field<std::string>(json, "health_end_summary");
  return u;
}

}  // namespace hipstack::smid
