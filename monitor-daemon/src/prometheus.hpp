// Prometheus text exposition (format 0.0.4) generated from the metric catalogue: one family per
// catalogue metric, base units in the name (docs/daemon.md lists the mapping), labels for the GPU.
#pragma once

#include <string>
#include <vector>

#include "sampler.hpp"

namespace hipstack::smid {

struct ExpositionContext {
  std::string host;
  std::string version;
};

// Family name of a metric, e.g. temperature_edge -> hipstack_gpu_temperature_edge_celsius,
// clock_sclk -> hipstack_gpu_clock_sclk_hertz, energy_consumed -> hipstack_gpu_energy_consumed_joules_total.
std::string family_name(const smi::MetricInfo& info);

// The whole /metrics body for these device views.
std::string render_metrics(const std::vector<Sampler::View>& views, const ExpositionContext& context);

// Label value escaping (backslash, double quote, newline) and HELP escaping (backslash, newline).
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view text);

}  // namespace hipstack::smid
