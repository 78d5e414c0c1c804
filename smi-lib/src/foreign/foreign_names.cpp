// Looking names up in the foreign-name tables (hipstack/foreign_names.hpp): the nvidia-smi fields
// seen as ForeignNames, by tool, by name and by metric.
#include "tables.hpp"

#include <algorithm>
#include <vector>

namespace hipstack::smi {
namespace {

// nvidia-smi's --query-gpu fields as ForeignNames (the Form, aliases and unit stay in the field).
const std::vector<ForeignName>& nvidia_smi_names() {
  static const std::vector<ForeignName> names = [] {
    std::vector<ForeignName> out;
    for (const NvidiaSmiField& f : nvidia_smi_gpu_fields()) {
      // A reason field's `instance` is NVML's clock-event reason, not the metric's instance.
      out.push_back({f.name, f.from, f.form == NvidiaSmiForm::reason ? std::string_view() : f.instance, f.note});
    }
    return out;
  }();
  return names;
}

}  // namespace

std::string_view foreign_tool_name(ForeignTool tool) noexcept {
  switch (tool) {
    case ForeignTool::nvidia_smi: return "nvidia-smi";
    case ForeignTool::pynvml: return "pynvml";
    case ForeignTool::amdsmi: return "amdsmi";
    case ForeignTool::nfd: return "nfd";
    case ForeignTool::rocm_smi: return "rocm-smi";
    case ForeignTool::jobs: return "jobs";
  }
  return "";
}

std::span<const ForeignName> foreign_names(ForeignTool tool) {
  switch (tool) {
    case ForeignTool::nvidia_smi: return nvidia_smi_names();
    case ForeignTool::pynvml: return foreign::pynvml_table();
    case ForeignTool::amdsmi: return foreign::amdsmi_table();
    case ForeignTool::nfd: return foreign::nfd_table();
    case ForeignTool::rocm_smi: return foreign::rocm_smi_table();
    case ForeignTool::jobs: return foreign::job_summary_table();
  }
  return {};
}

const ForeignName* find_foreign_name(ForeignTool tool, std::string_view name) {
  const auto names = foreign_names(tool);
  const auto it = std::find_if(names.begin(), names.end(), [name](const ForeignName& n) { return n.name == name; });
  return it == names.end() ? nullptr : &*it;
}

std::vector<std::string_view> foreign_names_of(ForeignTool tool, MetricId id) {
  std::vector<std::string_view> out;
  for (const ForeignName& n : foreign_names(tool)) {
    if (std::find(n.from.begin(), n.from.end(), id) != n.from.end()) out.push_back(n.name);
  }
  return out;
}

}  // namespace hipstack::smi
