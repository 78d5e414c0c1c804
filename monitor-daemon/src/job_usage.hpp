// What one job used of one GPU, accumulated from the daemon's live samples one at a time
// (docs/jobs.md): gauges as sum, count and maximum, counters as the sum of their rises, throttling
// as the time between samples that reported it. The state is plain data, stored as JSON after every
// sample (job_store.hpp), so a daemon that restarts mid-job resumes where the last sample left it.
#pragma once

#include <hipstack/smi.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "snapshot.hpp"

namespace hipstack::smid {

// A gauge over the job's samples.
struct GaugeStats {
  double sum = 0;
  std::int64_t count = 0;
  double max = 0;
  void add(double value) noexcept;
};

// A counter over the job: the sum of its rises from sample to sample. A fall (the driver reloaded,
// the GPU was reset) is counted as a reset and the count goes on from the new value; the fall adds
// nothing, unless the counter counts from 0 (`from_zero`: it restarted at 0, so its new value is
// growth, and a first value is growth from 0).
struct CounterGrowth {
  double growth = 0;
  std::optional<double> last;
  std::int64_t resets = 0;
  void add(double value, bool from_zero = false) noexcept;
};

// One figure of a job's summary; `name` is one of docs/jobs.md's, `instance` the reason, XID code
// or RAS block of the figures that have them.
struct JobFigure {
  std::string name;
  std::string instance;
  std::string unit;  // "J", "W", "%", "B", "s", "" (a count)
  std::optional<double> value;
  std::string source;  // where the value came from, when known
  std::string why;     // why it is not known
};

struct JobGpuUsage {
  // The GPU, as the job started on it.
  std::uint32_t index = 0;
  std::string uuid, bdf, name, vendor, gfx_target;
  // The sample the job began from (its counters' starting values; not itself counted) and the
  // last one counted, as system-clock nanoseconds (they outlive the daemon).
  std::int64_t baseline_ns = 0;
  std::int64_t last_sample_ns = 0;
  std::int64_t samples = 0;
  double unsampled_s = 0;  // gaps between samples longer than max_gap_s (the daemon was stopped)
  std::map<std::string, GaugeStats> gauges;       // by metric name
  std::map<std::string, CounterGrowth> counters;  // by metric name, or "name/instance"
  std::map<std::string, std::string> last_status; // a metric's status in the last sample that had it not ok
  double power_integral_j = 0;                    // trapezoids of power between samples, for GPUs without an energy counter
  double power_integrated_s = 0;
  std::optional<double> last_power_w;
  double throttle_seen_s = 0;                     // time covered by samples that read throttle_status
  std::map<std::string, double> throttle_s;       // by reason ("any" for every slowdown together)
  std::string health_start, health_start_summary, health_end, health_end_summary;

  // Starts from the device's latest sample (`baseline`; null: none yet) and its health.
  void begin(const DeviceSnapshot& device, const HistoryEntry* baseline);
  // Counts one sample taken after the previous one. Older or equal ones are ignored (false). A
  // sample further than max_gap_s from the previous one stands for no time (the daemon was not
  // sampling): its counters' growth still counts, as the counters kept counting.
  bool fold(const HistoryEntry& entry, double max_gap_s);
  void finish(const smi::HealthReport& health);

  [[nodiscard]] std::vector<JobFigure> figures(double wall_seconds) const;

 private:
  void count(const HistoryEntry& entry, const HistoryValue& v);  // a counter's reading, ok or not
};

nlohmann::json to_json(const JobGpuUsage& usage);
// Throws std::runtime_error naming the field that is missing or of the wrong type.
JobGpuUsage usage_from_json(const nlohmann::json& json);

}  // namespace hipstack::smid
