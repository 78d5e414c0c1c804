// The keys rocm-smi 5.2.3 prints (`rocm-smi --json`'s keys; the text lines read the same) that
// `hipstack-smi --rocm-smi` answers, each with the catalogue metrics it is read from
// (smi-cli/src/rocm_smi_compat.cpp takes every metric from here; docs/rocm-smi-compat.md). Where
// several metrics are listed the first the GPU gives answers, unless the note says how they combine.
#include "tables.hpp"

namespace hipstack::smi::foreign {
namespace rocm_smi_names {

using M = MetricId;

constexpr std::string_view kPythonFloat = "printed as Python prints a float (\"41.045\", \"155.0\")";
constexpr std::string_view kClockSpeed = "\"(NMhz)\", MHz as a whole number";
constexpr std::string_view kClockLevel = "the starred pp_dpm line's index";
constexpr std::string_view kBytes = "bytes";

constexpr ForeignName kTable[] = {
    {"GPU ID", {M::pci_device_id}, "", ""},
    {"VBIOS version", {M::vbios_version}, "", ""},
    {"Temperature (Sensor edge) (C)", {M::temperature_edge}, "", kPythonFloat},
    {"Temperature (Sensor junction) (C)", {M::temperature_junction}, "", kPythonFloat},
    {"Temperature (Sensor memory) (C)", {M::temperature_memory}, "", kPythonFloat},
    {"Temperature (Sensor HBM 0) (C)", {M::temperature_hbm}, "0", kPythonFloat},
    {"Temperature (Sensor HBM 1) (C)", {M::temperature_hbm}, "1", kPythonFloat},
    {"Temperature (Sensor HBM 2) (C)", {M::temperature_hbm}, "2", kPythonFloat},
    {"Temperature (Sensor HBM 3) (C)", {M::temperature_hbm}, "3", kPythonFloat},
    {"Average Graphics Package Power (W)", {M::power_average, M::power_current}, "",
     "as Python prints a float; rocm-smi 5.2.3 reads power1_average only, MI300 gives power1_input (power_current)"},
    {"dcefclk clock level:", {M::dpm_level_current}, "dcefclk", kClockLevel},
    {"dcefclk clock speed:", {M::clock_dcefclk}, "", kClockSpeed},
    {"fclk clock level:", {M::dpm_level_current}, "fclk", kClockLevel},
    {"fclk clock speed:", {M::clock_fclk}, "", kClockSpeed},
    {"mclk clock level:", {M::dpm_level_current}, "mclk", kClockLevel},
    {"mclk clock speed:", {M::clock_mclk}, "", kClockSpeed},
    {"sclk clock level:", {M::dpm_level_current}, "sclk", kClockLevel},
    {"sclk clock speed:", {M::clock_sclk}, "", kClockSpeed},
    {"socclk clock level:", {M::dpm_level_current}, "socclk", kClockLevel},
    {"socclk clock speed:", {M::clock_socclk}, "", kClockSpeed},
    {"Fan speed (level)", {M::fan_pwm_level}, "", "hwmon pwm1 as it is"},
    {"Fan speed (%)", {M::fan_pwm_level, M::fan_pwm_level_max}, "",
     "both: round(round(pwm1 / pwm1_max * 100, 2)), halves to even; 0 (either) prints \"Unable to detect fan speed\""},
    {"Fan RPM", {M::fan_speed}, "", ""},
    {"Performance Level", {M::performance_level}, "", ""},
    {"Max Graphics Package Power (W)", {M::power_cap}, "", kPythonFloat},
    {"GPU use (%)", {M::gpu_busy}, "", ""},
    {"GPU memory use (%)", {M::memory_busy}, "", ""},
    {"Voltage (mV)", {M::voltage_gfx}, "", ""},
    {"PCI Bus", {M::bdf}, "", "upper case (\"0000:C1:00.0\")"},
    {"Unique ID", {M::unique_id}, "", "0x-prefixed"},
    {"Serial Number", {M::serial_number}, "", ""},
    {"GPU memory vendor", {M::vram_vendor}, "", ""},
    {"Card series", {M::marketing_name}, "", ""},
    {"Card model", {M::pci_subsystem_device_id}, "", ""},
    {"Card vendor", {M::pci_vendor_id}, "", "the GPU's PCI vendor id, as rocm-smi 5.2.3 printed it on every recorded capture"},
    {"Card SKU", {M::vbios_version}, "", "the VBIOS part number's second '-'-separated field, at most 6 characters"},
    {"VRAM Total Memory (B)", {M::vram_total}, "", kBytes},
    {"VRAM Total Used Memory (B)", {M::vram_used}, "", kBytes},
    {"VIS_VRAM Total Memory (B)", {M::vram_visible_total}, "", kBytes},
    {"VIS_VRAM Total Used Memory (B)", {M::vram_visible_used}, "", kBytes},
    {"GTT Total Memory (B)", {M::gtt_total}, "", kBytes},
    {"GTT Total Used Memory (B)", {M::gtt_used}, "", kBytes},
    {"Driver version", {M::driver_version}, "", "the first GPU's"},
};

}  // namespace rocm_smi_names

std::span<const ForeignName> rocm_smi_table() noexcept { return rocm_smi_names::kTable; }

}  // namespace hipstack::smi::foreign
