// The C API's foreign names (hipstack/smi.h, "Foreign names"): the tables of
// hipstack/foreign_names.hpp with NUL-terminated strings and the metrics joined, made once per tool
// and kept while the library is loaded (as the catalogue's strings are).
#include "c_api_internal.hpp"

#include <hipstack/foreign_names.hpp>

#include <array>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace hipstack::smi::c_api {
namespace {

// One row as C reads it: the strings it points into.
struct ForeignRow {
  std::string name;
  std::string metrics;  // comma-separated catalogue names
  std::vector<std::uint32_t> ids;
  std::string instance;
  std::string note;
};

constexpr std::array kForeignTools = {ForeignTool::nvidia_smi, ForeignTool::pynvml, ForeignTool::amdsmi, ForeignTool::nfd,
                                      ForeignTool::rocm_smi, ForeignTool::jobs};
static_assert(HIPSTACK_SMI_FOREIGN_NVIDIA_SMI == static_cast<int>(ForeignTool::nvidia_smi));
static_assert(HIPSTACK_SMI_FOREIGN_PYNVML == static_cast<int>(ForeignTool::pynvml));
static_assert(HIPSTACK_SMI_FOREIGN_AMDSMI == static_cast<int>(ForeignTool::amdsmi));
static_assert(HIPSTACK_SMI_FOREIGN_NFD == static_cast<int>(ForeignTool::nfd));
static_assert(HIPSTACK_SMI_FOREIGN_ROCM_SMI == static_cast<int>(ForeignTool::rocm_smi));
static_assert(HIPSTACK_SMI_FOREIGN_JOBS == static_cast<int>(ForeignTool::jobs));

const std::vector<ForeignRow>* foreign_rows(hipstack_smi_foreign_tool tool) {
  static const std::array<std::vector<ForeignRow>, kForeignTools.size()> rows = [] {
    std::array<std::vector<ForeignRow>, kForeignTools.size()> out;
    for (std::size_t t = 0; t < kForeignTools.size(); ++t) {
      for (const ForeignName& n : foreign_names(kForeignTools[t])) {
        ForeignRow row{std::string(n.name), "", {}, std::string(n.instance), std::string(n.note)};
        for (const MetricId id : n.from) {
          row.metrics += (row.metrics.empty() ? "" : ",") + std::string(find_metric(id)->name);
          row.ids.push_back(static_cast<std::uint32_t>(id));
        }
        out[t].push_back(std::move(row));
      }
    }
    return out;
  }();
  const auto index = static_cast<std::size_t>(tool);
  return index < rows.size() ? &rows[index] : nullptr;
}

hipstack_smi_result copy_foreign_row(hipstack_smi_foreign_tool tool, const ForeignRow& row, hipstack_smi_foreign_name* out) {
  hipstack_smi_foreign_name info{};
  info.struct_size = sizeof info;
  info.tool = tool;
  info.name = row.name.c_str();
  info.metrics = row.metrics.c_str();
  info.metric_ids = row.ids.empty() ? nullptr : row.ids.data();
  info.metric_count = row.ids.size();
  info.instance = row.instance.c_str();
  info.note = row.note.c_str();
  return copy_out(info, out, "foreign name");
}

hipstack_smi_result unknown_foreign_tool(hipstack_smi_foreign_tool tool) {
  return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, fmt::format("no foreign tool {}", static_cast<int>(tool)));
}

}  // namespace
}  // namespace hipstack::smi::c_api

using namespace hipstack::smi::c_api;

extern "C" {

size_t hipstack_smi_foreign_names_size(hipstack_smi_foreign_tool tool) {
  try {
    const auto* rows = foreign_rows(tool);
    return rows != nullptr ? rows->size() : 0;
  } catch (const std::bad_alloc&) {  // out of memory making the table: nothing to count
    return 0;
  }
}

hipstack_smi_result hipstack_smi_foreign_name_get(hipstack_smi_foreign_tool tool, size_t position,
                                                  hipstack_smi_foreign_name* out) {
  return guarded([&]() -> hipstack_smi_result {
    const auto* rows = foreign_rows(tool);
    if (rows == nullptr) return unknown_foreign_tool(tool);
    if (position >= rows->size()) {
      return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("position {} is past the {} names of {}", position, rows->size(),
                                                             hipstack::smi::foreign_tool_name(static_cast<hipstack::smi::ForeignTool>(tool))));
    }
    return copy_foreign_row(tool, (*rows)[position], out);
  });
}

hipstack_smi_result hipstack_smi_foreign_name_find(hipstack_smi_foreign_tool tool, const char* name,
                                                   hipstack_smi_foreign_name* out) {
  return guarded([&]() -> hipstack_smi_result {
    if (name == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "name must not be NULL");
    const auto* rows = foreign_rows(tool);
    if (rows == nullptr) return unknown_foreign_tool(tool);
    for (const ForeignRow& row : *rows) {
      if (row.name == name) return copy_foreign_row(tool, row, out);
    }
    return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("{} has no name \"{}\" in hipstack's table",
                                                           hipstack::smi::foreign_tool_name(static_cast<hipstack::smi::ForeignTool>(tool)), name));
  });
}

}  // extern "C"
