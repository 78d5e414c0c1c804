// `hipstack-smi --nvidia-smi dmon`: nvidia-smi's device monitor columns (docs/nvidia-smi-compat.md).
#pragma once

#include <hipstack/smi.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hipstack::cli {

struct DmonRequest {
  std::string select = "puc";  // -s: the metric groups, nvidia-smi's default
  std::string time_columns;    // -o: D (date) and/or T (time)
};

// nvidia-smi's words for a -s or -o it does not know (its exit code is 255); nothing when the request is good.
std::optional<std::string> dmon_refusal(const DmonRequest& request);
// The two header lines ("# gpu    pwr ...", "# Idx      W ...").
std::string dmon_header(const DmonRequest& request);
// The metrics the selected columns are made from.
std::vector<smi::MetricId> dmon_metrics(const DmonRequest& request);
// One GPU's line of a round.
std::string dmon_line(const DmonRequest& request, std::uint32_t index, const std::vector<smi::Reading>& readings);

}  // namespace hipstack::cli
