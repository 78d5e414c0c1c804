// nvidia-smi's query fields (`--query-gpu`, `--query-compute-apps`), each with the catalogue
// metric(s) hipstack answers it from: the one table the compat mode, its --help-query-gpu, the
// catalogue's JSON and docs/nvidia-smi-compat.md are generated from (docs/nvidia-smi-compat.md).
#pragma once

#include <hipstack/smi.hpp>

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::cli {

// How nvidia-smi prints a field's value, and where hipstack's figure for it comes from.
enum class NvidiaSmiForm {
  none,               // hipstack has no figure: printed as `missing`, `note` says why
  text,               // as read
  whole,              // integer ("35")
  two_places,         // "69.97"
  mib,                // bytes as whole MiB, rounded up as nvidia-smi does (615.3 MiB reserved prints 616 on an H200)
  mib_free,           // vram_free; where the driver gives only total and used (amdgpu), total - used
  mib_down,           // bytes as whole MiB, rounded down (BAR1 in -q: 1.5 MiB used prints 1 there)
  total,              // a count; an instanced one (amdgpu's RAS blocks) summed over its instances
  bus_id,             // "00000000:18:00.0"
  pci_domain,         // "0x0000", from the bus id
  pci_bus,            // "0x18"
  pci_device,         // "0x00"
  pci_ids,            // "0x233010DE": device id above vendor id (from = {device id, vendor id})
  enabled,            // "Enabled" / "Disabled"
  yes_no,             // "Yes" when the count is not zero, else "No"
  compute_mode,       // "Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process"
  pcie_gen,           // GT/s as the PCIe generation ("5")
  reason_mask,        // throttle_status as NVML's clock-event bits, "0x0000000000000001"
  reason,             // "Active" / "Not Active": the NVML clock-event reason named by `instance`
  index,              // the device's index
  uuid,               // the device's UUID
  name,               // the device's marketing name
  count,              // how many GPUs
  timestamp,          // "2026/12/06 21:37:14.136", local time of the query
};

struct NvidiaSmiField {
  std::string_view name;     // nvidia-smi's canonical name: the CSV header's
  std::string_view aliases;  // other names nvidia-smi takes for it, comma-separated
  std::string_view unit;     // the header's unit ("MiB"), empty for none
  NvidiaSmiForm form;
  std::initializer_list<smi::MetricId> from;  // the first the GPU provides (pci_ids: all of them)
  std::string_view instance;  // the metric's instance (remapped_rows' "correctable"), or the reason
  std::string_view note;      // how the figure maps, or why hipstack has none
  std::string_view missing = "[N/A]";  // what nvidia-smi prints when the GPU does not give the value
};

// Every field `nvidia-smi --help-query-gpu` lists (driver 580.159.04), in its order.
std::span<const NvidiaSmiField> nvidia_smi_gpu_fields() noexcept;
// `--query-compute-apps` fields (nvidia-smi --help-query-compute-apps).
std::span<const NvidiaSmiField> nvidia_smi_app_fields() noexcept;
// By canonical name or alias; null when nvidia-smi does not know the name either.
const NvidiaSmiField* find_nvidia_smi_field(std::span<const NvidiaSmiField> fields, std::string_view name);
// A field the code names itself (the -q report's lines): std::logic_error when the table lacks it.
const NvidiaSmiField& nvidia_smi_field(std::span<const NvidiaSmiField> fields, std::string_view name);
// The program a process runs, as nvidia-smi names it: argv[0] (cmdline's first word), else comm;
// "" when neither is known (the process is gone, or its /proc unreadable).
std::string nvidia_smi_program(const smi::ProcessInfo& process);
// A field's aliases, one string each.
std::vector<std::string> nvidia_smi_aliases(const NvidiaSmiField& field);
// The fields that answer from `id` (for the catalogue's JSON).
std::vector<const NvidiaSmiField*> nvidia_smi_fields_of(smi::MetricId id);

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
