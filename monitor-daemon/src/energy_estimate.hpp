// energy_consumed between exact reads. The exact counter is costly on NVIDIA (~3 ms a call), so the
// sampler reads it every costly interval; in between it exports the last exact value plus
// power_average integrated over the samples since (trapezoids). The exported value never goes
// down, so Prometheus never sees a false counter reset: when an exact read finds the estimate ran
// ahead, the counter holds still until the true value passes it. A counter that goes back (a
// driver reload) is a real reset and is exported as read.
#pragma once

#include <chrono>
#include <optional>

namespace hipstack::smid {

class EnergyEstimate {
 public:
  using Clock = std::chrono::steady_clock;
  // Samples further apart than max_gap (a device that did not answer) end the estimate until the
  // next exact read: the power over the gap is unknown.
  explicit EnergyEstimate(Clock::duration max_gap) : max_gap_(max_gap) {}

  // One fast sample's power_average in watts (nullopt: not read).
  void power(std::optional<double> watts, Clock::time_point at);
  // An exact read of the counter, in joules; returns the value to export.
  double exact(double joules);

  struct Value {
    double joules = 0;
    bool estimated = false;  // false: the last exported value, no integration behind it
  };
  // The value to export now; nullopt before the first exact read.
  [[nodiscard]] std::optional<Value> now();

 private:
  Clock::duration max_gap_;
  std::optional<double> base_;      // the last exact read
  double integral_ = 0;             // J integrated since base_
  bool broken_ = false;             // a gap since base_: no estimate
  std::optional<double> watts_;     // the previous power sample
  Clock::time_point watts_at_{};
  double exported_ = 0;
};

}  // namespace hipstack::smid
