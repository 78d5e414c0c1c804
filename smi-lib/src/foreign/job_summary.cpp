// The figures of hipstack-smid's job summary (docs/jobs.md, `hipstack-smid job show`) that come from
// catalogue metrics, in the order the summary lists them, each with how it is made from them. The
// daemon (monitor-daemon/src/job_usage.cpp) takes its metrics from here and names none itself; the
// figures that are not any metric's (wall_time, samples, sampled_time, unsampled_time,
// counter_resets) are the daemon's own. The names are the job store's and the gRPC/JSON schema's:
// kept exactly.
#include "tables.hpp"

#include <algorithm>
#include <vector>

namespace hipstack::smi {
namespace {

using M = MetricId;
using How = JobFigureMethod;

// Power: the first a sample has (NVML gives some GPUs only the instant power; MI300 has no average).
constexpr std::string_view kFirstPower = "power_current where a sample had no power_average";

const JobFigureSource kFigures[] = {
    {"energy", How::derived, {M::energy_consumed, M::power_average, M::power_current}, "J",
     "growth of the energy counter; without one, the power integrated between samples"},
    {"power_mean", How::mean, {M::power_average, M::power_current}, "W", kFirstPower},
    {"power_max", How::maximum, {M::power_average, M::power_current}, "W", kFirstPower},
    {"busy_mean", How::mean, {M::gpu_busy}, "%", ""},
    {"memory_busy_mean", How::mean, {M::memory_busy}, "%", ""},
    {"activity_mean", How::mean, {M::graphics_active}, "%", "each sample carries the latest window"},
    {"vram_peak", How::maximum, {M::vram_used}, "B", ""},
    {"throttle_time", How::derived, {M::throttle_status}, "s", "time between samples whose throttle_status named a slowdown"},
    {"violation_time", How::derived, {M::violation_time, M::violation_residency, M::violation_accumulation_count}, "s",
     "NVIDIA: growth of violation_time; AMD: violation_residency's growth over violation_accumulation_count's, "
     "times the sampled time"},
    {"ecc_corrected", How::growth, {M::ecc_corrected_volatile}, "", ""},
    {"ecc_uncorrected", How::growth, {M::ecc_uncorrected_volatile}, "", ""},
    {"ras_correctable", How::growth, {M::ras_correctable}, "", ""},
    {"ras_uncorrectable", How::growth, {M::ras_uncorrectable}, "", ""},
    {"ras_deferred", How::growth, {M::ras_deferred}, "", ""},
    {"retired_pages", How::growth, {M::retired_pages}, "", ""},
    {"remapped_rows", How::growth, {M::remapped_rows}, "", ""},
    // Gauges of the driver that only grow while the GPU runs: their rise is what the job saw.
    {"bad_pages", How::growth, {M::bad_pages_reserved}, "", ""},
    {"bad_pages_pending", How::growth, {M::bad_pages_pending}, "", ""},
    {"xid_errors", How::growth_since_registration, {M::xid_errors}, "",
     "counts run from the daemon's registration for XID events"},
    {"pcie_replays", How::growth, {M::pcie_replay_count}, "", ""},
};

}  // namespace

std::string_view job_figure_method_name(JobFigureMethod method) noexcept {
  switch (method) {
    case JobFigureMethod::mean: return "mean";
    case JobFigureMethod::maximum: return "maximum";
    case JobFigureMethod::growth: return "growth";
    case JobFigureMethod::growth_since_registration: return "growth since registration";
    case JobFigureMethod::derived: return "derived";
  }
  return "";
}

std::span<const JobFigureSource> job_figure_sources() noexcept { return kFigures; }

namespace foreign {

// The same rows seen as foreign names: the note says how the figure is made.
std::span<const ForeignName> job_summary_table() noexcept {
  static const std::vector<std::string> notes = [] {
    std::vector<std::string> out;
    for (const JobFigureSource& f : kFigures) {
      std::string note(job_figure_method_name(f.method));
      if (!f.note.empty()) note += "; " + std::string(f.note);
      out.push_back(std::move(note));
    }
    return out;
  }();
  static const std::vector<ForeignName> names = [] {
    std::vector<ForeignName> out;
    for (std::size_t i = 0; i < std::size(kFigures); ++i) out.push_back({kFigures[i].name, kFigures[i].from, "", notes[i]});
    return out;
  }();
  return names;
}

}  // namespace foreign
}  // namespace hipstack::smi
