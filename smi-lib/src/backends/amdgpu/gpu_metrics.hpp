// Decoder for the amdgpu sysfs file device/gpu_metrics: a binary table whose layout is chosen by its
// 4-byte header {u16 structure_size; u8 format_revision; u8 content_revision}.
//
// Decoded: v1.0-v1.8 (dGPU; both v1.6 layouts, told apart by structure_size 384 / 1664), the v1.9
// self-describing attribute table, v2.0-v2.4 (APU) and v3.0 (APU). Every value is converted once,
// here, to the units named beside each field; a field the table lacks, or one the firmware left at the
// all-ones "not supported" fill (0xFF, 0xFFFF, 0xFFFFFFFF, all-ones u64), is std::nullopt (scalars) or
// absent (vectors). See docs/gpu-metrics.md for the per-version field map and the unit sources.
//
// The layouts are written here from the documented facts (offsets of the kernel's naturally aligned,
// little-endian structs); the kernel header itself is not part of the project.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smi::detail {

// One v1.9 attribute, as the table encodes it (also kept for ids this decoder does not name).
struct GpuMetricsAttribute {
  std::uint16_t id = 0;           // kernel enum amdgpu_metrics_attr_id
  std::uint8_t unit = 0;          // kernel enum amdgpu_metrics_attr_unit (0 none, 1 MHz, 2 °C, 3 W, ...)
  std::uint8_t type = 0;          // kernel enum amdgpu_metrics_attr_type (0 u8, 1 s8, ... 6 u64, 7 s64)
  std::uint32_t value_offset = 0; // byte offset of the first value in the blob
  // One entry per instance. raw: the value's bits (signed types sign-extended to 64 bits).
  std::vector<std::uint64_t> raw;
  // The value in the unit's SI-ish form: MHz, °C, W, s (TIME_1 ns, TIME_2 10 ns), GT/s (SPEED_1,
  // SPEED_2 0.1 GT/s), bytes per second (BW_1 GB/s), bytes (DATA_1 KB = 1024 bytes), %; unit 0 and
  // unknown units: the number as stored. nullopt where the instance holds the all-ones sentinel.
  std::vector<std::optional<double>> values;
};

// Per-partition (XCP) statistics of v1.6 (current layout), v1.7 and v1.8; sentinel entries skipped.
struct GpuMetricsPartition {
  std::vector<double> gfx_busy_inst;   // %, one per XCC of the partition
  std::vector<double> jpeg_busy;       // %
  std::vector<double> vcn_busy;        // %
  std::vector<double> gfx_busy_acc;    // accumulated, as the table gives it
  std::vector<double> gfx_below_host_limit_acc;        // v1.7 only, as the table gives it
  std::vector<double> gfx_below_host_limit_ppt_acc;    // v1.8
  std::vector<double> gfx_below_host_limit_thm_acc;    // v1.8
  std::vector<double> gfx_low_utilization_acc;         // v1.8
  std::vector<double> gfx_below_host_limit_total_acc;  // v1.8
};

struct GpuMetrics {
  std::uint16_t structure_size = 0;
  std::uint8_t format_revision = 0, content_revision = 0;
  // The layout that was decoded: "v1.3", "v1.6-early", "v1.6", "v1.9", "v2.1", ... ("" when none).
  std::string_view layout;

  // All values converted to: °C, W, J, MHz, %, mV, A, bytes, bytes per second, GT/s, seconds.
  // nullopt = not supported (absent from this version, or the all-ones sentinel).
  // On APUs (v2.x, v3.0) temperature_edge is the gfx temperature and temperature_hotspot the SoC
  // temperature, as the driver's own hwmon temp1/temp2 report them.
  std::optional<double> temperature_edge, temperature_hotspot, temperature_mem,
      temperature_vrgfx, temperature_vrsoc, temperature_vrmem;
  std::vector<double> temperature_hbm;            // one per HBM stack reported (skip sentinel stacks)
  // APU temperatures (v2.x, v3.0), °C
  std::optional<double> temperature_gfx, temperature_soc, temperature_skin;
  std::vector<double> temperature_core, temperature_l3;
  std::optional<double> average_temperature_gfx, average_temperature_soc;  // v2.3+
  std::vector<double> average_temperature_core, average_temperature_l3;   // v2.3+

  std::optional<double> average_socket_power, current_socket_power; // W
  std::optional<double> average_cpu_power, average_soc_power, average_gfx_power;  // W (APU)
  std::optional<double> average_ipu_power, average_apu_power, average_dgpu_power,
      average_all_core_power, average_sys_power, stapm_power_limit, current_stapm_power_limit; // W (v3.0)
  std::vector<double> average_core_power;         // W per CPU core (APU)
  std::optional<double> energy_accumulator;       // J (counter of 2^-16 J = 15.259 µJ units)

  std::optional<double> average_gfx_activity, average_umc_activity, average_mm_activity; // %
  std::optional<double> gfx_activity_acc;         // accumulated counter as the table gives it
  std::optional<double> mem_activity_acc;         // accumulated counter as the table gives it
  std::vector<double> vcn_activity, jpeg_activity; // % per engine (v1.4, v1.5, v1.6-early, v1.9)
  std::vector<double> gfx_busy_inst;              // % per XCC (v1.9)
  std::vector<double> gfx_busy_acc;               // per XCC, as the table gives it (v1.9)
  std::vector<double> ipu_activity, core_c0_activity; // % (v3.0)

  std::optional<double> average_gfxclk, average_socclk, average_uclk, average_fclk, average_vclk0, average_dclk0; // MHz
  std::optional<double> average_vclk1, average_dclk1;                        // MHz (v1.0-1.3)
  std::optional<double> average_vpeclk, average_ipuclk, average_mpipuclk;    // MHz (v3.0)
  std::optional<double> current_gfxclk, current_socclk, current_uclk, current_fclk, current_vclk0, current_dclk0, current_dcefclk; // MHz
  std::optional<double> current_vclk1, current_dclk1;                        // MHz (v1.0-1.3)
  // current_dcefclk: no gpu_metrics version carries a DCEF clock; always nullopt (kept for the API).
  // v1.4+ (MI300): one per instance present. current_gfxclk/socclk/vclk0/dclk0 then hold the first one.
  std::vector<double> current_gfxclk_per_xcc;     // MHz, v1.4+ (MI300): one per XCC present
  std::vector<double> current_socclks, current_vclk0s, current_dclk0s;       // MHz, v1.4+
  std::vector<double> current_coreclk, current_l3clk;                        // MHz (APU)
  std::optional<double> current_core_maxfreq, current_gfx_maxfreq;           // MHz (v3.0)

  std::optional<double> voltage_gfx, voltage_soc, voltage_mem;  // mV
  std::optional<double> voltage_cpu;                            // mV (v2.4)
  std::optional<double> average_cpu_current, average_soc_current, average_gfx_current; // A (v2.4)
  std::optional<double> fan_speed_rpm;

  std::optional<double> pcie_link_width;          // lanes
  std::optional<double> pcie_link_speed;          // GT/s
  std::optional<double> pcie_bandwidth_inst;      // bytes per second (convert from the version's GB/s or Mbps)
  std::optional<double> pcie_bandwidth_acc;       // accumulated counter as the table gives it
  std::optional<double> pcie_replay_count;        // v1.4+ pcie_replay_count_acc if present
  std::optional<std::uint64_t> pcie_replay_rollover_count, pcie_l0_to_recovery_count,
      pcie_nak_sent_count, pcie_nak_received_count, pcie_other_end_recovery_count;
  std::optional<double> xgmi_link_width, xgmi_link_speed; // lanes, GT/s (kernel gives Gbps)
  std::vector<double> xgmi_read_data, xgmi_write_data;    // bytes per link, accumulated (kernel: KB)
  std::vector<double> xgmi_link_status;                   // per link: 0 inactive, 1 active, 2 n/a; NaN: not filled
  std::optional<double> mem_max_bandwidth;                // bytes per second (v1.7+)

  std::optional<std::uint64_t> throttle_status;   // throttle_status, or indep_throttle_status where that is the only one
  std::optional<std::uint64_t> indep_throttle_status;     // ASIC-independent bits (v1.3, v2.2+)
  std::optional<std::uint64_t> gfxclk_lock_status;        // bit per gfx clock instance (v1.4+)
  // v1.6+ accumulated throttler residencies and the cycle counter they are divided by.
  std::optional<std::uint64_t> accumulation_counter, prochot_residency_acc, ppt_residency_acc,
      socket_thm_residency_acc, vr_thm_residency_acc, hbm_thm_residency_acc;
  // v3.0 throttle residencies, as the table gives them.
  std::optional<std::uint64_t> throttle_residency_prochot, throttle_residency_spl,
      throttle_residency_fppt, throttle_residency_sppt, throttle_residency_thm_core,
      throttle_residency_thm_gfx, throttle_residency_thm_soc;

  std::optional<double> dram_read_bandwidth, dram_write_bandwidth, ipu_read_bandwidth,
      ipu_write_bandwidth;                        // bytes per second (v3.0; kernel MB/s)

  std::optional<double> system_clock_counter;     // seconds (driver timestamp, ns in the table)
  std::optional<double> firmware_timestamp;       // seconds

  std::optional<std::uint32_t> num_partition;     // v1.6 (current layout), v1.7, v1.8, v1.9
  std::vector<GpuMetricsPartition> xcp_stats;     // the first num_partition entries
  std::vector<GpuMetricsAttribute> attributes;    // v1.9: every attribute, in table order
};

struct GpuMetricsDecode {
  bool ok = false;
  // When !ok: what is wrong, with byte offsets, e.g.
  // "gpu_metrics: header says 1664 bytes but only 512 were read". metrics then holds the header only.
  std::string error;
  GpuMetrics metrics;
};

// Decodes one gpu_metrics read. Bytes after header.structure_size (NUL padding of captures) are
// ignored; fewer bytes than structure_size, or than the version's table needs, is an error. Never
// throws, never reads outside blob.
// What the decoder needs beyond the blob where a unit depends on the ASIC or its firmware, not on the
// format version: the APU tables (v2.x, v3.0) carry the firmware's own numbers, which are mW on one
// family and W on another, % on one and hundredths of % on another. docs/gpu-metrics.md ("Units the
// version does not decide") lists the rules and the kernel code they come from.
struct IpVersion {
  unsigned major = 0, minor = 0, revision = 0;
  bool operator==(const IpVersion&) const = default;
};
struct GpuMetricsSource {
  // The SMU's IP version (MP1), by which the kernel picks an ASIC's code (smu_set_funcs): it names
  // the family for device ids no table lists. Taken before the device id when known.
  std::optional<IpVersion> mp1;
  std::uint32_t pci_device_id = 0;               // device/device; 0 = unknown: the version's units
  std::optional<std::uint32_t> smc_fw_version;   // device/fw_version/smc_fw_version ("0x%08x")
};

GpuMetricsDecode decode_gpu_metrics(std::span<const std::uint8_t> blob, const GpuMetricsSource& source = {}) noexcept;

// Whether decoding this blob uses GpuMetricsSource::smc_fw_version: only the APU tables (format
// revision 2 and 3) do, so a dGPU's sample need not read the firmware version file.
bool gpu_metrics_uses_firmware_version(std::span<const std::uint8_t> blob) noexcept;

// Implementation pieces shared by the gpu_metrics*.cpp files. Not for use elsewhere.
namespace gpu_metrics_impl {

// Little-endian unsigned read of `width` (1, 2, 4 or 8) bytes; nullopt when it does not fit.
std::optional<std::uint64_t> read_le(std::span<const std::uint8_t> bytes, std::size_t offset,
                                     std::size_t width) noexcept;
// The "not supported" fill: every bit of a `width`-byte field set.
bool is_all_ones(std::uint64_t value, std::size_t width) noexcept;

// One field of a fixed layout: where it is, how wide, and where its converted value goes.
struct Field {
  enum class Kind : std::uint8_t { number, vector, raw };
  Kind kind = Kind::number;
  std::uint16_t offset = 0;
  std::uint8_t width = 2;      // bytes per element
  std::uint8_t count = 1;      // elements (vector kind)
  bool positional = false;     // vector kind: an absent element in the middle stays, as NaN (its index is its link's)
  double mul = 1.0;            // converted = stored * mul / div
  double div = 1.0;
  std::optional<double> GpuMetrics::*number = nullptr;
  std::vector<double> GpuMetrics::*vector = nullptr;
  std::optional<std::uint64_t> GpuMetrics::*raw = nullptr;
};

// Unit divisor shared by every layout: the firmware's nanosecond clock counter -> seconds.
inline constexpr double kNsDiv = 1e9;

constexpr Field num(std::optional<double> GpuMetrics::*m, std::uint16_t offset, std::uint8_t width,
                    double mul = 1.0, double div = 1.0) {
  Field f;
  f.kind = Field::Kind::number; f.offset = offset; f.width = width; f.mul = mul; f.div = div; f.number = m;
  return f;
}
constexpr Field vec(std::vector<double> GpuMetrics::*m, std::uint16_t offset, std::uint8_t width,
                    std::uint8_t count, double mul = 1.0, double div = 1.0) {
  Field f;
  f.kind = Field::Kind::vector; f.offset = offset; f.width = width; f.count = count;
  f.mul = mul; f.div = div; f.vector = m;
  return f;
}
// A vector whose index means something (a link): absent elements before the last present one stay, as NaN.
constexpr Field vec_at(std::vector<double> GpuMetrics::*m, std::uint16_t offset, std::uint8_t width, std::uint8_t count) {
  Field f = vec(m, offset, width, count);
  f.positional = true;
  return f;
}
constexpr Field bits(std::optional<std::uint64_t> GpuMetrics::*m, std::uint16_t offset, std::uint8_t width) {
  Field f;
  f.kind = Field::Kind::raw; f.offset = offset; f.width = width; f.raw = m;
  return f;
}

// One fixed layout: the kernel struct's size and its fields.
struct Layout {
  std::uint8_t format_revision = 0;
  std::uint8_t content_revision = 0;
  std::uint16_t size = 0;                 // sizeof the kernel struct (x86-64/aarch64 natural alignment)
  std::string_view name;                  // "v1.3", "v1.6-early", ...
  std::span<const Field> fields;
  // Decoding beyond the field list (first-instance scalars, xcp_stats); may be null. `table` is the
  // blob cut to structure_size, which is at least `size` bytes.
  void (*finish)(std::span<const std::uint8_t> table, GpuMetrics& out) = nullptr;
};

// The first `n` fields of a longer revision's list (older revisions are prefixes of newer ones).
constexpr std::span<const Field> prefix(std::span<const Field> all, std::size_t n) { return all.first(n); }

// Writes every field from `table` into `out` (sentinels become nullopt / are skipped). These may
// throw std::bad_alloc only; decode_gpu_metrics catches it.
void apply_fields(std::span<const std::uint8_t> table, std::span<const Field> fields, GpuMetrics& out);

// Fixed v1.x tables: a pcie_link_speed stored as a PCIe generation (older RDNA3 kernels) -> GT/s.
void pcie_generation_as_speed(GpuMetrics& m);

std::span<const Layout> v1_layouts() noexcept;   // gpu_metrics_v1.cpp: v1.0-v1.8
std::span<const Layout> apu_layouts() noexcept;  // gpu_metrics_apu.cpp: v2.0-v2.4, v3.0
// gpu_metrics_apu.cpp: the fields of an APU layout with the power and activity divisors of the ASIC
// `source` names (the layout's own where nothing is known). `socket_power_unknown` is set when the
// ASIC is known but the unit of its socket power cannot be decided (firmware version missing).
std::vector<Field> apu_fields_for(const Layout& layout, const GpuMetricsSource& source, bool& socket_power_unknown);

// gpu_metrics_v1_9.cpp: walks the v1.9 attribute table (`table` cut to structure_size). On failure
// returns false with `error` set (with byte offsets).
bool decode_attribute_table(std::span<const std::uint8_t> table, GpuMetrics& out, std::string& error);

}  // namespace gpu_metrics_impl
}  // namespace hipstack::smi::detail
