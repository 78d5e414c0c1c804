// `hipstack-smi --nvidia-smi -q [-d SECTION,...]`: nvidia-smi's query report (docs/nvidia-smi-compat.md).
#pragma once

#include <hipstack/smi.hpp>

#include <optional>
#include <string>
#include <vector>

#include "nvidia_smi_fields.hpp"

namespace hipstack::cli {

struct NvidiaSmiReport {
  std::vector<std::string> sections;  // -d: MEMORY, UTILIZATION, ECC, TEMPERATURE, POWER, CLOCK, PIDS, PERFORMANCE
};

// Whether the report shows a -d section: -d names it, or names nothing.
bool nvidia_smi_report_shows(const NvidiaSmiReport& report, std::string_view section);
// nvidia-smi's words for a -d it does not know; nothing when the request is good.
std::optional<std::string> nvidia_smi_report_refusal(const NvidiaSmiReport& report);
// The metrics the report's lines are made from.
std::vector<smi::MetricId> nvidia_smi_report_metrics(const NvidiaSmiReport& report);
// The report's opening: the log banner, time, driver and CUDA versions, how many GPUs.
std::string nvidia_smi_report_header(std::string_view driver, std::string_view cuda, std::size_t count);
// One GPU's lines after its "GPU 00000000:BB:DD.F" line; processes are nullopt when unread.
std::string nvidia_smi_report_gpu(const NvidiaSmiReport& report, const NvidiaSmiRow& row,
                                  const std::optional<std::vector<smi::ProcessInfo>>& processes);

}  // namespace hipstack::cli
