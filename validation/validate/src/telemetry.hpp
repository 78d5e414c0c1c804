// telemetry.hpp: what the GPU did while a test ran, sampled through libhipstack-smi: temperatures,
// power, clocks, PCIe link and throttle reasons, summarised as min/mean/max.
#pragma once

#include <hipstack/smi.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hipstack::validate {

struct MetricSummary {
  std::string unit;
  double min = 0, max = 0, sum = 0;
  int count = 0;
  void add(double v);
  [[nodiscard]] double mean() const { return count ? sum / count : 0; }
};

struct TelemetrySummary {
  int samples = 0;
  std::map<std::string, MetricSummary> metrics;  // by catalogue name
  std::uint64_t throttle_mask = 0;               // every throttle bit seen
  std::uint64_t slowing_mask = 0;                // the bits of it that mean the GPU was slowed (slowing_bits)
  int throttled_samples = 0;                     // samples with a throttle reason that slows the GPU
  std::vector<std::string> throttle_reasons;     // names of the bits seen (NVIDIA), or the mask (AMD)
  std::vector<std::string> slowing_reasons;      // names of the slowing bits seen: what a warning names
  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] const MetricSummary* find(const std::string& name) const;
};

// Samples one device of a System every `interval` while a test runs: call tick() as often as you
// like (it samples only when the interval has passed), then summary().
class TelemetrySampler {
 public:
  TelemetrySampler(const smi::System& system, std::uint32_t device, std::string vendor,
                   std::chrono::milliseconds interval = std::chrono::milliseconds(250));
  void tick();
  [[nodiscard]] TelemetrySummary summary() const { return summary_; }

 private:
  void sample();
  const smi::System& system_;
  std::uint32_t device_;
  std::string vendor_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  smi::SampleOptions options_;
  TelemetrySummary summary_;
};

// Names of the throttle bits of a vendor's mask; NVIDIA's are NVML's clocks-event reasons. For AMD the
// bits depend on the ASIC's firmware, so the mask is given as it is.
std::vector<std::string> throttle_reason_names(const std::string& vendor, std::uint64_t mask);
// The bits of a mask that mean heat or power delivery slowed the GPU: NVIDIA's thermal, hardware
// slowdown and power-brake reasons. AMD's bits differ by ASIC (power limits among them), so none
// count there; the temperature check against the critical limits covers heat on every GPU.
std::uint64_t slowing_bits(const std::string& vendor, std::uint64_t mask);

}  // namespace hipstack::validate
