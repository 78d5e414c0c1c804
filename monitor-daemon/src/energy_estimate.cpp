// energy_consumed between exact reads: power integrated over time, rebased at each read
// (energy_estimate.hpp).
#include "energy_estimate.hpp"

#include <algorithm>

namespace hipstack::smid {

void EnergyEstimate::power(std::optional<double> watts, Clock::time_point at) {
  if (!watts || *watts < 0) {
    broken_ = true;
    watts_.reset();
    return;
  }
  if (watts_) {
    const auto gap = at - watts_at_;
    if (gap > max_gap_ || gap.count() < 0) {
      broken_ = true;
    } else {
      integral_ += (*watts_ + *watts) / 2 * std::chrono::duration<double>(gap).count();
    }
  }
  watts_ = watts;
  watts_at_ = at;
}

double EnergyEstimate::exact(double joules) {
  if (base_ && joules < *base_) {
    exported_ = joules;  // the counter restarted (a driver reload): a real reset
  } else {
    exported_ = std::max(exported_, joules);
  }
  base_ = joules;
  integral_ = 0;
  broken_ = !watts_;  // integration needs the power at this read to start from
  return exported_;
}

std::optional<EnergyEstimate::Value> EnergyEstimate::now() {
  if (!base_) return std::nullopt;
  if (broken_) return Value{exported_, false};
  exported_ = std::max(exported_, *base_ + integral_);
  return Value{exported_, true};
}

}  // namespace hipstack::smid
