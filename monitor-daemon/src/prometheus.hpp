// Prometheus text exposition (format 0.0.4) generated from the metric catalogue: one family per
// catalogue metric, base units in the name (docs/daemon.md lists the mapping), labels for the GPU.
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <mutex>
#include <string>
#include <vector>

#include "job_accounting.hpp"
#include "sampler.hpp"
#include "self_metrics.hpp"
#include "series_profile.hpp"

namespace hipstack::smid {

struct ExpositionContext {
  std::string host;
  std::string version;
  SeriesProfile profile = SeriesProfile::full;  // the daemon passes its configuration's
  std::shared_ptr<const Attribution> attribution = nullptr;  // whose work is on each GPU; null: attribution off
  std::shared_ptr<const GpuJobs> jobs = nullptr;  // running jobs by GPU (job_accounting.hpp); null: job accounting off
  // The daemon's own costs (self_metrics.hpp), written with each request: none when not given.
  std::optional<ProcessFacts> process = std::nullopt;
  std::vector<std::pair<std::string, DurationHistogram::Counts>> sample_durations = {};  // by backend
  std::optional<MemoryFacts> memory = std::nullopt;
};

// Family name of a metric, e.g. temperature_edge -> hipstack_gpu_temperature_edge_celsius,
// clock_sclk -> hipstack_gpu_clock_sclk_hertz, energy_consumed -> hipstack_gpu_energy_consumed_joules_total,
// a state set performance_level -> hipstack_gpu_performance_level, other text -> ..._info.
std::string family_name(const smi::MetricInfo& info);

// The whole /metrics body for these device views.
std::string render_metrics(const std::vector<Sampler::View>& views, const ExpositionContext& context);

// The name of a container's summed process metric, e.g. process_vram ->
// hipstack_container_gpu_vram_bytes, process_engine_busy -> hipstack_container_gpu_engine_busy_ratio.
std::string container_family_name(const smi::MetricInfo& info);

// The same page, with the families that change only when a sample does (every catalogue metric,
// health, build info) rendered once per sample, and the attribution once per sample or attribution
// look, and reused; GPU up, sample age and the scrape duration are written for each request. Safe
// to call from several threads.
class MetricsPage {
 public:
  struct Parts {
    std::shared_ptr<const std::string> samples;      // shared by every request until the next sample
    std::shared_ptr<const std::string> attribution;  // likewise, until the next sample or attribution look
    std::string status;                               // up, sample age, scrape duration: this request's
  };
  Parts render_parts(const std::vector<Sampler::View>& views, const ExpositionContext& context);
  std::string render(const std::vector<Sampler::View>& views, const ExpositionContext& context);

 private:
  struct Key {
    struct Device {
      std::shared_ptr<const DeviceSnapshot> snapshot;  // held, so its address cannot be reused
      bool stale = false;
      bool operator==(const Device&) const = default;
    };
    std::vector<Device> devices;
    std::string host;
    std::string version;
    SeriesProfile profile = SeriesProfile::full;
    bool operator==(const Key&) const = default;
  };
  struct AttributionKey {
    Key samples;
    std::shared_ptr<const Attribution> attribution;
    std::shared_ptr<const GpuJobs> jobs;
    bool operator==(const AttributionKey&) const = default;
  };
  std::mutex mutex_;
  Key key_;
  std::shared_ptr<const std::string> samples_;
  AttributionKey attribution_key_;
  std::shared_ptr<const std::string> attribution_;
};

// Label value escaping (backslash, double quote, newline) and HELP escaping (backslash, newline).
// Text holding raw bytes (a control character, invalid UTF-8) is first made smi::printable_text, so
// a page is always valid UTF-8 without terminal controls.
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view text);

}  // namespace hipstack::smid
