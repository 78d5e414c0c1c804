// telemetry.cpp: the sampler behind every test's telemetry block.
#include "telemetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>

namespace hipstack::validate {
namespace {

using smi::MetricId;

// What a test's report shows; the backend reads only these.
constexpr MetricId kSampled[] = {
    MetricId::temperature_edge,  MetricId::temperature_junction, MetricId::temperature_memory,
    MetricId::power_average,     MetricId::power_current,        MetricId::clock_sclk,
    MetricId::clock_sm,          MetricId::clock_mclk,           MetricId::gpu_busy,
    MetricId::pcie_speed,        MetricId::pcie_width,           MetricId::throttle_status,
};

// NVML's clocks-event reason bits (nvmlClocksEventReason*), in bit order.
constexpr const char* kNvidiaReasons[] = {"gpu_idle",        "applications_clocks_setting", "sw_power_cap",
                                          "hw_slowdown",     "sync_boost",                  "sw_thermal_slowdown",
                                          "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting"};
// hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown and hw_power_brake_slowdown: heat or the
// board's power delivery held the GPU back. sw_power_cap is the GPU running at its power limit, as a
// busy GPU should; idle, application clocks, sync boost and display clocks do not slow it.
constexpr std::uint64_t kNvidiaSlowing = 0x8 | 0x20 | 0x40 | 0x80;

// The throttle mask as the backend gave it: an integer, or a double cast only when it fits (a double
// outside uint64's range, negative or NaN has no conversion; such a reading is left out).
std::optional<std::uint64_t> mask_of(const smi::Reading& r) {
  if (const auto* whole = std::get_if<std::int64_t>(&r.value)) return static_cast<std::uint64_t>(*whole);
  if (const auto* real = std::get_if<double>(&r.value); real && *real >= 0 && *real < 0x1p64)
    return static_cast<std::uint64_t>(*real);
  return std::nullopt;
}

}  // namespace

void MetricSummary::add(double v) {
  if (count == 0) min = max = v;
  min = std::min(min, v);
  max = std::max(max, v);
  sum += v;
  ++count;
}

const MetricSummary* TelemetrySummary::find(const std::string& name) const {
  const auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : &it->second;
}

nlohmann::json TelemetrySummary::to_json() const {
  nlohmann::json j;
  j["samples"] = samples;
  nlohmann::json m = nlohmann::json::object();
  for (const auto& [name, s] : metrics)
    m[name] = {{"unit", s.unit}, {"min", s.min}, {"mean", s.mean()}, {"max", s.max}, {"count", s.count}};
  j["metrics"] = m;
  j["throttle"] = {{"mask", fmt::format("{:#x}", throttle_mask)},
                   {"reasons", throttle_reasons},
                   {"slowing", slowing_reasons},
                   {"throttled_samples", throttled_samples}};
  return j;
}

std::vector<std::string> throttle_reason_names(const std::string& vendor, std::uint64_t mask) {
  std::vector<std::string> names;
  if (mask == 0) return names;
  if (vendor != "nvidia") return {fmt::format("firmware mask {:#x}", mask)};
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(mask & (std::uint64_t{1} << bit))) continue;
    names.push_back(bit < std::size(kNvidiaReasons) ? kNvidiaReasons[bit] : fmt::format("bit {}", bit));
  }
  return names;
}

std::uint64_t slowing_bits(const std::string& vendor, std::uint64_t mask) {
  return vendor == "nvidia" ? mask & kNvidiaSlowing : 0;
}

TelemetrySampler::TelemetrySampler(const smi::System& system, std::uint32_t device, std::string vendor,
                                   std::chrono::milliseconds interval)
    : system_(system), device_(device), vendor_(std::move(vendor)), interval_(interval) {
  options_.live = true;
  options_.metrics.assign(std::begin(kSampled), std::end(kSampled));
  sample();  // the state as the test starts
}

void TelemetrySampler::tick() {
  if (std::chrono::steady_clock::now() - last_ >= interval_) sample();
}

void TelemetrySampler::sample() {
  last_ = std::chrono::steady_clock::now();
  std::vector<smi::Reading> readings;
  try {
    readings = system_.sample(device_, options_);
  } catch (const smi::Error&) {
    return;  // a device that vanished mid-test: the module's own result says what happened
  }
  ++summary_.samples;
  bool slowed = false;
  for (const smi::Reading& r : readings) {
    if (!r.ok() || !r.instance.empty()) continue;
    if (r.id == MetricId::throttle_status) {
      if (const auto mask = mask_of(r)) {
        summary_.throttle_mask |= *mask;
        summary_.slowing_mask |= slowing_bits(vendor_, *mask);
        slowed = slowed || slowing_bits(vendor_, *mask) != 0;
      }
      continue;
    }
    const auto value = r.number();
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (!value || !info) continue;
    MetricSummary& s = summary_.metrics[std::string(info->name)];
    s.unit = std::string(smi::unit_symbol(info->unit));
    s.add(*value);
  }
  if (slowed) ++summary_.throttled_samples;
  summary_.throttle_reasons = throttle_reason_names(vendor_, summary_.throttle_mask);
  summary_.slowing_reasons = throttle_reason_names(vendor_, summary_.slowing_mask);
}

}  // namespace hipstack::validate
