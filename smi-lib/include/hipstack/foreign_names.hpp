// hipstack/foreign_names.hpp: the names other tools give hipstack's metrics (docs/api.md, "Foreign
// names"). One table per tool, each row naming the catalogue metrics it is answered from:
//   nvidia-smi  a query field (`--query-gpu`, `--query-compute-apps`)   smi-lib/src/foreign/nvidia_smi.cpp
//   pynvml      a call, a call's argument or a struct field it fills   smi-lib/src/foreign/pynvml.cpp
//   amdsmi      a call, or a call's dict key                           smi-lib/src/foreign/amdsmi.cpp
//   nfd         a Node Feature Discovery label (`static --nfd`)          smi-lib/src/foreign/nfd.cpp
//   rocm-smi    a key rocm-smi 5.2.3 prints (`--json`'s, the text's)   smi-lib/src/foreign/rocm_smi.cpp
//   jobs        a figure of hipstack-smid's job summary (docs/jobs.md)   smi-lib/src/foreign/job_summary.cpp
// hipstack-smi's nvidia-smi mode, hipstack.pynvml and hipstack.amdsmi take every metric name from
// these tables (the Python layers through the C API, hipstack_smi_foreign_name_get); `hipstack-smi
// catalogue --json` shows them and docs/nvidia-smi-compat.md and docs/foreign-names.md are generated
// from them.
#pragma once

#include <hipstack/smi.hpp>

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smi {

enum class ForeignTool : std::uint8_t { nvidia_smi, pynvml, amdsmi, nfd, rocm_smi, jobs };

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
  std::initializer_list<MetricId> from;  // the first the GPU provides (pci_ids: all of them)
  std::string_view instance;  // the metric's instance (remapped_rows' "correctable"), or the reason
  std::string_view note;      // how the figure maps, or why hipstack has none
  std::string_view missing = "[N/A]";  // what nvidia-smi prints when the GPU does not give the value
};

// Every field `nvidia-smi --help-query-gpu` lists (driver 580.159.04), in its order.
HIPSTACK_SMI_CXX_API std::span<const NvidiaSmiField> nvidia_smi_gpu_fields() noexcept;
// `--query-compute-apps` fields (nvidia-smi --help-query-compute-apps).
HIPSTACK_SMI_CXX_API std::span<const NvidiaSmiField> nvidia_smi_app_fields() noexcept;
// By canonical name or alias; null when nvidia-smi does not know the name either.
HIPSTACK_SMI_CXX_API const NvidiaSmiField* find_nvidia_smi_field(std::span<const NvidiaSmiField> fields,
                                                                 std::string_view name);
// A field's aliases, one string each.
HIPSTACK_SMI_CXX_API std::vector<std::string> nvidia_smi_aliases(const NvidiaSmiField& field);
// The --query-gpu fields that answer from `id`.
HIPSTACK_SMI_CXX_API std::vector<const NvidiaSmiField*> nvidia_smi_fields_of(MetricId id);

// A pynvml or amdsmi name, or an nvidia-smi field seen the same way.
struct ForeignName {
  std::string_view name;             // "nvmlDeviceGetPowerUsage", "amdsmi_get_power_info.socket_power"
  std::initializer_list<MetricId> from;  // the catalogue metrics, in candidate order (the first the GPU gives)
  std::string_view instance;         // the metric's instance the name reads ("" for none)
  std::string_view note;             // the conversion ("W -> mW") and how the candidates combine
};

// "nvidia-smi", "pynvml", "amdsmi", "nfd", "rocm-smi", "jobs".
HIPSTACK_SMI_CXX_API std::string_view foreign_tool_name(ForeignTool tool) noexcept;
// Every name of a tool, in its table's order (nvidia-smi: the --query-gpu fields hipstack answers
// and those it does not, with an empty `from`).
HIPSTACK_SMI_CXX_API std::span<const ForeignName> foreign_names(ForeignTool tool);
// A tool's name (nvidia-smi: canonical names only); null when the table has none.
HIPSTACK_SMI_CXX_API const ForeignName* find_foreign_name(ForeignTool tool, std::string_view name);
// The names of a tool that answer from `id`, in table order.
HIPSTACK_SMI_CXX_API std::vector<std::string_view> foreign_names_of(ForeignTool tool, MetricId id);

// How the daemon's job summary makes a figure from its metrics' readings over a job's samples.
enum class JobFigureMethod : std::uint8_t {
  mean,                       // mean of the first `from` metric each sample has
  maximum,                    // maximum, likewise (a mean and a maximum of one stem, "power_", read the same metrics)
  growth,                     // growth of the counter, in all and per instance; a count that goes back adds nothing
  growth_since_registration,  // growth of a count since the daemon registered for it (XIDs): a code first
                              // seen, or a count restarted at 0, counts from 0
  derived,                    // the daemon's own rule over `from` (docs/jobs.md): energy, throttle and violation time
};

// A job-summary figure made from catalogue metrics.
struct JobFigureSource {
  std::string_view name;                 // "power_mean": the job store's and the API's name
  JobFigureMethod method;
  std::initializer_list<MetricId> from;  // the metrics it reads, in candidate order
  std::string_view unit;                 // "W", "%", "" for a count
  std::string_view note;                 // how the candidates combine, for the docs
};

// Every such figure, in the order the summary lists them; foreign_names(ForeignTool::jobs) sees the
// same rows.
HIPSTACK_SMI_CXX_API std::span<const JobFigureSource> job_figure_sources() noexcept;
// "mean", "maximum", "growth", "growth since registration", "derived".
HIPSTACK_SMI_CXX_API std::string_view job_figure_method_name(JobFigureMethod method) noexcept;

}  // namespace hipstack::smi
