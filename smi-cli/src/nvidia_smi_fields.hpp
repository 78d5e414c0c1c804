// nvidia-smi's query fields (`--query-gpu`, `--query-compute-apps`), each with the catalogue
// metric(s) hipstack answers it from: the library's table (hipstack/foreign_names.hpp), which the
// compat mode, its --help-query-gpu, the catalogue's JSON and docs/nvidia-smi-compat.md are generated
// from (docs/nvidia-smi-compat.md); and what the compat mode adds to it.
#pragma once

#include <hipstack/foreign_names.hpp>
#include <hipstack/smi.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::cli {

// The table itself is the library's (hipstack/foreign_names.hpp, smi-lib/src/foreign/nvidia_smi.cpp).
using smi::find_nvidia_smi_field;
using smi::nvidia_smi_aliases;
using smi::nvidia_smi_app_fields;
using smi::nvidia_smi_fields_of;
using smi::nvidia_smi_gpu_fields;
using smi::NvidiaSmiField;
using smi::NvidiaSmiForm;

// A field the code names itself (the -q report's lines): std::logic_error when the table lacks it.
const NvidiaSmiField& nvidia_smi_field(std::span<const NvidiaSmiField> fields, std::string_view name);
// The program a process runs, as nvidia-smi names it: argv[0] (cmdline's first word), else comm;
// "" when neither is known (the process is gone, or its /proc unreadable).
std::string nvidia_smi_program(const smi::ProcessInfo& process);

// What one GPU's row needs: its summary, its readings, how many GPUs there are, the query's time.
struct NvidiaSmiRow {
  const smi::DeviceSummary& device;
  const std::vector<smi::Reading>& readings;
  std::size_t count;
  std::string_view timestamp;
};
// The field's value as nvidia-smi prints it, with the unit unless `units` is false.
std::string nvidia_smi_value(const NvidiaSmiField& field, const NvidiaSmiRow& row, bool units);
// The metrics a field's value is made from (identity included), for the sample.
std::vector<smi::MetricId> nvidia_smi_metrics(const NvidiaSmiField& field);
// nvidia-smi's timestamp form of now, local time.
std::string nvidia_smi_timestamp();

}  // namespace hipstack::cli
