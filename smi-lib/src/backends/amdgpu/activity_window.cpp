// The WINDOW-kind metrics of an AMD GPU: the firmware's gpu_metrics accumulators (v1.4+ on MI-series)
// differenced between two looks. The firmware adds one sample's value to each accumulator per count
// of accumulation_counter (the "accumulation cycle counter", v1.6+), so an accumulator's growth
// divided by the counter's growth is that value's average over the window: a percentage for the
// activity and busy accumulators, GB/s for pcie_bandwidth_acc, and for the throttler residencies
// the share of samples during which the reason was active (amd-smi's violation status divides the
// same way). XGMI data counts bytes: divided by the driver's timestamps.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <tuple>
#include <thread>

#include "amdgpu.hpp"
#include "gpu_metrics.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

constexpr double kTwo32 = 4294967296.0;

// Growth of an accumulator between two looks. The fixed layouts keep most accumulators in 32 bits,
// which wrap: a smaller value that fits 32 bits is a wrap when the wrapped growth is under 2^31 (a
// window is seconds; a restarted counter falls back by far more). Otherwise the counter restarted.
std::optional<double> grown(double before, double after) {
  if (after >= before) return after - before;
  if (before < kTwo32 && after + kTwo32 - before < kTwo32 / 2) return after + kTwo32 - before;
  return std::nullopt;
}

constexpr MetricId kAmdWindowMetrics[] = {MetricId::graphics_active, MetricId::memory_active,  MetricId::xcp_busy,
                                          MetricId::pcie_bandwidth_average, MetricId::xgmi_read_rate,
                                          MetricId::xgmi_write_rate, MetricId::violation_share};

void fail_all(ReadingList& list, const SampleOptions& options, int error_code, const std::string& why) {
  for (const MetricId id : kAmdWindowMetrics) {
    if (asked_for(options, id)) list.failed(id, error_code, why);
  }
}

// Divides accumulators by the firmware's sample count over one window.
class SampleWindow {
 public:
  SampleWindow(const GpuMetrics& before, const GpuMetrics& after, ReadingList& list)
      : layout_(after.layout.empty() ? "table" : after.layout), list_(list) {
    if (!before.accumulation_counter || !after.accumulation_counter) {
      why_not_ = fmt::format("gpu_metrics {}: no accumulation_counter to divide the accumulators by", layout());
      errno_ = ENOENT;
      return;
    }
    const auto samples = grown(static_cast<double>(*before.accumulation_counter), static_cast<double>(*after.accumulation_counter));
    if (!samples) {
      why_not_ = fmt::format("gpu_metrics: accumulation_counter went back from {} to {} (GPU reset or driver reload): "
                             "the next window starts now", *before.accumulation_counter, *after.accumulation_counter);
      errno_ = ENODATA;
    } else if (*samples == 0) {
      why_not_ = "gpu_metrics: accumulation_counter did not advance between the looks (the firmware took no sample)";
      errno_ = ENODATA;
    } else {
      samples_ = *samples;
    }
  }

  // Reports one accumulator's average per sample, times `scale`; `limit` bounds a share (0: none).
  void average(MetricId id, const std::optional<double>& before, const std::optional<double>& after, const char* field,
               double scale, double limit, const std::string& instance = {}) {
    if (!before || !after) return list_.failed(id, ENOENT, fmt::format("gpu_metrics {}: no {}", layout(), field), instance);
    if (samples_ == 0) return list_.failed(id, errno_, why_not_, instance);
    const auto growth = grown(*before, *after);
    if (!growth) {
      return list_.failed(id, ENODATA,
                          fmt::format("gpu_metrics: {} went back from {} to {} (GPU reset or driver reload): the next "
                                      "window starts now", field, *before, *after), instance);
    }
    report(id, *growth, field, scale, limit, instance);
  }

  // Reports an accumulator growth already known (a mean over XCCs) as its average per sample.
  void report(MetricId id, double growth, const char* field, double scale, double limit, const std::string& instance = {}) {
    if (samples_ == 0) return list_.failed(id, errno_, why_not_, instance);
    double value = growth / samples_;
    if (limit > 0 && value > limit * 1.01) {
      return list_.malformed(id, fmt::format("gpu_metrics: {} grew by {} over {} samples: {:.1f} is above {}", field,
                                             growth, samples_, value, limit), instance);
    }
    if (limit > 0) value = std::min(value, limit);  // firmware rounding may add a hair
    list_.real(id, value * scale, fmt::format("gpu_metrics {} over {} firmware samples", field, samples_), instance);
  }

  [[nodiscard]] const std::string& layout() const { return layout_; }

 private:
  std::string layout_;
  ReadingList& list_;
  double samples_ = 0;
  std::string why_not_;
  int errno_ = 0;
};

std::optional<double> as_double(const std::optional<std::uint64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

// Mean growth of per-XCC accumulators between two looks (each XCC's own wrap counted); nullopt when
// one went back (a reset or driver reload).
std::optional<double> mean_xcc_growth(const std::vector<double>& before, const std::vector<double>& after) {
  double sum = 0;
  for (std::size_t x = 0; x < after.size(); ++x) {
    const auto g = grown(before[x], after[x]);
    if (!g) return std::nullopt;
    sum += *g;
  }
  return sum / static_cast<double>(after.size());
}

// Graphics busy of each partition: its XCCs' gfx_busy_acc averaged.
void partition_busy(const GpuMetrics& before, const GpuMetrics& after, SampleWindow& window, ReadingList& list) {
  if (after.xcp_stats.empty()) {
    return list.failed(MetricId::xcp_busy, ENOENT, fmt::format("gpu_metrics {}: no per-partition (xcp_stats) accumulators", window.layout()));
  }
  if (before.xcp_stats.size() != after.xcp_stats.size()) {
    return list.failed(MetricId::xcp_busy, ENODATA, "gpu_metrics: the partitions changed between the looks: the next window starts now");
  }
  for (std::size_t p = 0; p < after.xcp_stats.size(); ++p) {
    const auto& a = before.xcp_stats[p].gfx_busy_acc;
    const auto& b = after.xcp_stats[p].gfx_busy_acc;
    const std::string instance = std::to_string(p);
    if (b.empty() || a.size() != b.size()) {
      list.failed(MetricId::xcp_busy, ENOENT, fmt::format("gpu_metrics: partition {} has no gfx_busy_acc", p), instance);
      continue;
    }
    // The mean of the XCCs' accumulators is the partition's accumulator of its mean busy.
    const auto growth = mean_xcc_growth(a, b);
    if (!growth) {
      list.failed(MetricId::xcp_busy, ENODATA, "gpu_metrics: gfx_busy_acc went back (GPU reset or driver reload)", instance);
      continue;
    }
    window.report(MetricId::xcp_busy, *growth, "xcp_stats gfx_busy_acc", 1.0, 100.0, instance);
  }
}

// Seconds between two tables by the driver's clock (system_clock_counter, stamped on every read), else
// the firmware's; 0 when neither advanced: a recorded table, or one the driver did not refresh, whose
// counters say nothing about the window.
std::pair<double, const char*> table_seconds(const GpuMetrics& before, const GpuMetrics& after) {
  const std::pair<const std::optional<double> GpuMetrics::*, const char*> clocks[] = {
      {&GpuMetrics::system_clock_counter, "system_clock_counter"}, {&GpuMetrics::firmware_timestamp, "firmware_timestamp"}};
  for (const auto& [member, name] : clocks) {
    const auto& a = before.*member;
    const auto& b = after.*member;
    if (a && b && *b > *a) return {*b - *a, name};
  }
  return {0.0, nullptr};
}

// Bytes over one XGMI link per second of the tables' own clock.
void xgmi_rates(const GpuMetrics& before, const GpuMetrics& after, const SampleOptions& options, ReadingList& list) {
  const auto [seconds, clock] = table_seconds(before, after);
  const std::pair<MetricId, const std::vector<double> GpuMetrics::*> directions[] = {
      {MetricId::xgmi_read_rate, &GpuMetrics::xgmi_read_data}, {MetricId::xgmi_write_rate, &GpuMetrics::xgmi_write_data}};
  for (const auto& [id, member] : directions) {
    if (!asked_for(options, id)) continue;
    const auto& a = before.*member;
    const auto& b = after.*member;
    if (b.empty() || a.size() != b.size()) {
      list.failed(id, ENOENT, "gpu_metrics: no XGMI data accumulators");
      continue;
    }
    for (std::size_t link = 0; link < b.size(); ++link) {
      const std::string instance = std::to_string(link);
      if (b[link] < a[link]) {
        list.failed(id, ENODATA, "gpu_metrics: XGMI data went back (GPU reset or driver reload)", instance);
      } else if (seconds <= 0) {
        list.failed(id, ENODATA,
                    "gpu_metrics: neither system_clock_counter nor firmware_timestamp advanced between the looks (a "
                    "recorded table, or one the driver did not refresh)", instance);
      } else {
        list.real(id, (b[link] - a[link]) / seconds, fmt::format("gpu_metrics xgmi data over {:.3f} s ({})", seconds, clock),
                  instance);
      }
    }
  }
}

// pcie_bandwidth_acc adds one GB/s reading per sample (Mbit/s in the early v1.6 layout); the v1.9
// attribute table does not say its unit.
std::optional<double> pcie_accumulator_unit(std::string_view layout) {
  if (layout == "v1.6-early") return 1e6 / 8.0;
  if (layout == "v1.4" || layout == "v1.5" || layout == "v1.6" || layout == "v1.7" || layout == "v1.8") return 1e9;
  return std::nullopt;
}

// The per-XCC "graphics clock below the host's limit" and "low utilisation" accumulators of v1.7 and
// v1.8 (xcp_stats), averaged over every XCC of every partition, as violation_share reasons. False
// when the table has none.
bool clock_below_limit_shares(const GpuMetrics& before, const GpuMetrics& after, SampleWindow& window, ReadingList& list) {
  using Member = std::vector<double> GpuMetricsPartition::*;
  const std::tuple<const char*, const char*, Member> kinds[] = {
      {"gfx_below_host_limit", "gfx_below_host_limit_acc", &GpuMetricsPartition::gfx_below_host_limit_acc},
      {"gfx_below_host_limit_ppt", "gfx_below_host_limit_ppt_acc", &GpuMetricsPartition::gfx_below_host_limit_ppt_acc},
      {"gfx_below_host_limit_thermal", "gfx_below_host_limit_thm_acc", &GpuMetricsPartition::gfx_below_host_limit_thm_acc},
      {"gfx_low_utilization", "gfx_low_utilization_acc", &GpuMetricsPartition::gfx_low_utilization_acc},
      {"gfx_below_host_limit_total", "gfx_below_host_limit_total_acc", &GpuMetricsPartition::gfx_below_host_limit_total_acc}};
  bool any = false;
  for (const auto& [reason, field, member] : kinds) {
    std::vector<double> a, b;  // every XCC of every partition
    bool matched = after.xcp_stats.size() == before.xcp_stats.size();
    for (std::size_t p = 0; matched && p < after.xcp_stats.size(); ++p) {
      const auto& x = before.xcp_stats[p].*member;
      const auto& y = after.xcp_stats[p].*member;
      matched = x.size() == y.size();
      a.insert(a.end(), x.begin(), x.end());
      b.insert(b.end(), y.begin(), y.end());
    }
    if (b.empty()) continue;
    any = true;
    if (!matched) {
      list.failed(MetricId::violation_share, ENODATA, "gpu_metrics: the partitions changed between the looks: the next window starts now",
                  reason);
      continue;
    }
    // Each XCC's accumulator counts samples (0 or 1 each): times 100 for a percentage.
    if (const auto growth = mean_xcc_growth(a, b)) {
      window.report(MetricId::violation_share, *growth, field, 100.0, 1.0, reason);
    } else {
      list.failed(MetricId::violation_share, ENODATA, fmt::format("gpu_metrics: {} went back (GPU reset or driver reload)", field),
                  reason);
    }
  }
  return any;
}

}  // namespace

void window_readings(const GpuMetrics& before, const GpuMetrics& after, const SampleOptions& options, ReadingList& list) {
  SampleWindow window(before, after, list);
  if (asked_for(options, MetricId::graphics_active)) {
    window.average(MetricId::graphics_active, before.gfx_activity_acc, after.gfx_activity_acc, "gfx_activity_acc", 1.0, 100.0);
  }
  if (asked_for(options, MetricId::memory_active)) {
    window.average(MetricId::memory_active, before.mem_activity_acc, after.mem_activity_acc, "mem_activity_acc", 1.0, 100.0);
  }
  if (asked_for(options, MetricId::xcp_busy)) partition_busy(before, after, window, list);
  if (asked_for(options, MetricId::pcie_bandwidth_average)) {
    if (const auto unit = pcie_accumulator_unit(after.layout)) {
      window.average(MetricId::pcie_bandwidth_average, before.pcie_bandwidth_acc, after.pcie_bandwidth_acc,
                     "pcie_bandwidth_acc", *unit, 0);
    } else {
      list.failed(MetricId::pcie_bandwidth_average, ENOENT,
                  fmt::format("gpu_metrics {}: pcie_bandwidth_acc absent or its unit undocumented", window.layout()));
    }
  }
  xgmi_rates(before, after, options, list);
  if (asked_for(options, MetricId::violation_share)) {
    const std::tuple<const char*, const char*, std::optional<std::uint64_t> GpuMetrics::*> reasons[] = {
        {"prochot", "prochot_residency_acc", &GpuMetrics::prochot_residency_acc},
        {"ppt", "ppt_residency_acc", &GpuMetrics::ppt_residency_acc},
        {"socket_thermal", "socket_thm_residency_acc", &GpuMetrics::socket_thm_residency_acc},
        {"vr_thermal", "vr_thm_residency_acc", &GpuMetrics::vr_thm_residency_acc},
        {"hbm_thermal", "hbm_thm_residency_acc", &GpuMetrics::hbm_thm_residency_acc}};
    bool any = false;
    for (const auto& [reason, field, member] : reasons) {
      if (!(after.*member)) continue;
      any = true;
      // A residency counts samples (0 or 1 each): times 100 for a percentage.
      window.average(MetricId::violation_share, as_double(before.*member), as_double(after.*member), field, 100.0, 1.0,
                     reason);
    }
    any = clock_below_limit_shares(before, after, window, list) || any;
    if (!any) list.failed(MetricId::violation_share, ENOENT, fmt::format("gpu_metrics {}: no throttler residencies", window.layout()));
  }
}

void AmdgpuBackend::read_window(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const {
  if (std::none_of(std::begin(kAmdWindowMetrics), std::end(kAmdWindowMetrics), [&options](MetricId id) { return asked_for(options, id); })) {
    return;  // nothing of ours asked for: no look taken
  }
  const AmdGpu& gpu = gpus_.at(device);
  ReadingList list(out);
  const std::lock_guard lock(window_mutex_);
  auto look = [&]() -> std::optional<GpuMetrics> {
    GpuMetricsRead table = read_gpu_metrics(fs_, gpu);
    if (!table.ok) {
      fail_all(list, options, table.error_code, table.problem);
      return std::nullopt;
    }
    return std::move(table.metrics);
  };
  auto previous = window_last_.find(device);
  if (previous == window_last_.end()) {
    auto first = look();
    if (!first) return;
    previous = window_last_.emplace(device, std::move(*first)).first;
    if (options.window_ms == 0) {
      return fail_all(list, options, ENODATA, "needs two looks: this was the first look at the accumulators (the next look reports it)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(options.window_ms));
  }
  auto now = look();
  if (!now) return;
  window_readings(previous->second, *now, options, list);
  previous->second = std::move(*now);
}

}  // namespace hipstack::smi::detail::amdgpu
