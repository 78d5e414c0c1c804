// What one job used of one GPU, accumulated from the daemon's live samples (job_usage.hpp).
#include "job_usage.hpp"

#include <hipstack/foreign_names.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace hipstack::smid {
namespace {

using smi::MetricId;

using smi::JobFigureMethod;
using smi::JobFigureSource;

// The figures made from catalogue metrics, and how, are the library's table (hipstack/
// foreign_names.hpp, job_figure_sources(); docs/jobs.md lists them): nothing here names a metric
// for a figure except the rules of the derived ones (energy, throttle and violation time).
const JobFigureSource& figure_source(std::string_view name) {
  for (const JobFigureSource& f : smi::job_figure_sources()) {
    if (f.name == name) return f;
  }
  throw std::logic_error(fmt::format("the job summary's table has no figure {}", name));
}

bool is_gauge(const JobFigureSource& f) { return f.method == JobFigureMethod::mean || f.method == JobFigureMethod::maximum; }

// A gauge figure's stem: its name before the last '_' ("power" of power_mean and power_max). The
// stem keys the sums a job keeps (and stores), so a mean and a maximum of one stem share them.
std::string_view stem_of(const JobFigureSource& f) { return f.name.substr(0, f.name.rfind('_')); }

// How a metric's growth over a job is counted, where a figure needs it: the metric of a growth
// figure, or a counter a derived figure reads (energy_consumed, the violation counters).
struct CounterRule {
  smi::MetricId metric;
  // Counts since the daemon registered for them (XIDs): a code first seen, or a count that went
  // back (a new registration after a restart), counted from 0. Any other counter that goes back
  // adds nothing: its new value is not known to be use (an estimate the exact read corrected).
  bool since_registration;
};

const std::vector<CounterRule>& counter_rules() {
  static const std::vector<CounterRule> rules = [] {
    std::vector<CounterRule> out;
    for (const JobFigureSource& f : smi::job_figure_sources()) {
      for (const MetricId id : f.from) {
        const bool counted = f.method == JobFigureMethod::growth || f.method == JobFigureMethod::growth_since_registration ||
                             (f.method == JobFigureMethod::derived && smi::find_metric(id)->kind == smi::Kind::counter);
        if (counted) out.push_back({id, f.method == JobFigureMethod::growth_since_registration});
      }
    }
    return out;
  }();
  return rules;
}

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

const CounterRule* counter_rule(MetricId id) {
  const auto& rules = counter_rules();
  const auto found = std::find_if(rules.begin(), rules.end(), [id](const CounterRule& c) { return c.metric == id; });
  return found == rules.end() ? nullptr : &*found;
}

// The power a sample gives for integrating energy: the first of the energy figure's live metrics.
std::optional<double> power_of(const std::map<MetricId, double>& read) {
  for (const MetricId id : figure_source("energy").from) {
    if (smi::find_metric(id)->kind != smi::Kind::live) continue;
    if (const auto found = read.find(id); found != read.end()) return found->second;
  }
  return std::nullopt;
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
  const CounterRule* source = counter_rule(v.id);
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
  std::map<MetricId, double> read;
  for (const HistoryValue& v : baseline->values) {
    if (v.status == smi::Status::ok && !countable(number_of(v))) continue;
    count(*baseline, v);
    if (v.status == smi::Status::ok) read.emplace(v.id, number_of(v));
  }
  last_power_w = power_of(read);
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
  std::vector<std::string_view> stems_added;  // a mean and a maximum of one stem add the value once
  for (const JobFigureSource& f : smi::job_figure_sources()) {
    if (!is_gauge(f) || std::find(stems_added.begin(), stems_added.end(), stem_of(f)) != stems_added.end()) continue;
    const auto first = std::find_if(f.from.begin(), f.from.end(), [&read](MetricId id) { return read.contains(id); });
    if (first == f.from.end()) continue;
    gauges[std::string(stem_of(f))].add(read.at(*first));
    stems_added.push_back(stem_of(f));
  }
  const std::optional<double> power = power_of(read);
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

// The mean or peak of each gauge figure (power, busy, VRAM, ...).
void add_gauge_figures(const JobGpuUsage& u, std::vector<JobFigure>& out) {
  for (const JobFigureSource& f : smi::job_figure_sources()) {
    if (!is_gauge(f)) continue;
    const auto stats = u.gauges.find(std::string(stem_of(f)));
    const MetricId first = *f.from.begin();
    if (stats == u.gauges.end() || stats->second.count == 0) {
      out.push_back({std::string(f.name), "", std::string(f.unit), std::nullopt, "", missing_reason(u, first)});
      continue;
    }
    std::string source = fmt::format("{} of {} over the job's samples", f.method == JobFigureMethod::mean ? "mean" : "maximum",
                                     name_of(first));
    for (auto other = f.from.begin() + 1; other != f.from.end(); ++other) {
      source += fmt::format(" ({} where a sample had no {})", name_of(*other), name_of(first));
    }
    const GaugeStats& g = stats->second;
    out.push_back({std::string(f.name), "", std::string(f.unit),
                   f.method == JobFigureMethod::mean ? g.sum / static_cast<double>(g.count) : g.max, source, ""});
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

// Each growth figure's counter over the job (with its instances), and how many counters went back.
void add_counter_figures(const JobGpuUsage& u, std::vector<JobFigure>& out) {
  for (const JobFigureSource& f : smi::job_figure_sources()) {
    if (f.method != JobFigureMethod::growth && f.method != JobFigureMethod::growth_since_registration) continue;
    const std::string metric(name_of(*f.from.begin()));
    std::optional<double> total;
    std::vector<std::pair<std::string, double>> instances;
    for (const auto& [key, counter] : u.counters) {
      if (key != metric && !key.starts_with(metric + "/")) continue;
      total = total.value_or(0) + counter.growth;
      if (key != metric && counter.growth > 0) instances.emplace_back(key.substr(metric.size() + 1), counter.growth);
    }
    const std::string source = fmt::format("growth of {} over the job's samples", metric);
    const bool known = total && u.samples > 0;
    out.push_back({std::string(f.name), "", std::string(f.unit), u.samples > 0 ? total : std::nullopt, known ? source : "",
                   known ? "" : missing_reason(u, *f.from.begin())});
    for (const auto& [instance, growth] : instances) out.push_back({std::string(f.name), instance, std::string(f.unit), growth, source, ""});
  }
  std::int64_t resets = 0;
  for (const auto& entry : u.counters) resets += entry.second.resets;
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
  const JobFigureSource& energy_source = figure_source("energy");
  const MetricId energy_counter = *energy_source.from.begin();
  const auto energy = counters.find(std::string(name_of(energy_counter)));
  if (energy != counters.end() && samples > 0) {
    out.push_back({"energy", "", "J", energy->second.growth, fmt::format("growth of {} over the job's samples", name_of(energy_counter)), ""});
  } else if (power_integrated_s > 0) {
    out.push_back({"energy", "", "J", power_integral_j, "power integrated between the job's samples (no energy counter)", ""});
  } else {
    out.push_back({"energy", "", "J", std::nullopt, "", samples == 0 ? "no sample was taken during the job" : missing_reason(*this, energy_counter)});
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
