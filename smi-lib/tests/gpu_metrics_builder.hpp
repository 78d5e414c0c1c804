// Test helper: builds amdgpu gpu_metrics blobs of every version with chosen field values.
//
// The fixed layouts are declared here as ordered field lists (kernel field names, element width,
// element count) and laid out with C natural alignment, the way the compiler lays out the kernel's
// structs. This is deliberately a different derivation from the decoder's hand-written offset
// tables, so a wrong offset on either side makes the tests fail. Blobs start all-ones (the kernel
// memsets every table to 0xFF) with the header filled in; set() writes chosen values.
//
// The v1.9 attribute table is built with AttributeTableBuilder.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smi::test {

struct FieldDecl {
  std::string name;
  std::size_t width = 2;      // bytes per element; alignment of a plain field
  std::size_t count = 1;      // array elements
  std::size_t align = 0;      // 0 = width (nested structs give their own)
};

// Offsets of an ordered field list under natural alignment (x86-64 / aarch64 rules).
class StructLayout {
 public:
  StructLayout() = default;
  explicit StructLayout(std::vector<FieldDecl> fields) : fields_(std::move(fields)) {
    std::size_t at = 0;
    for (auto& f : fields_) {
      const std::size_t a = f.align ? f.align : f.width;
      align_ = std::max(align_, a);
      at = (at + a - 1) / a * a;
      offsets_.push_back(at);
      at += f.width * f.count;
    }
    size_ = (at + align_ - 1) / align_ * align_;  // tail padding, like sizeof
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t align() const { return align_; }
  [[nodiscard]] const std::vector<FieldDecl>& fields() const { return fields_; }
  [[nodiscard]] std::size_t index(std::string_view name) const {
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      if (fields_[i].name == name) return i;
    }
    throw std::out_of_range("gpu_metrics_builder: no field " + std::string(name));
  }
  [[nodiscard]] bool has(std::string_view name) const {
    return std::any_of(fields_.begin(), fields_.end(), [&](const FieldDecl& f) { return f.name == name; });
  }
  [[nodiscard]] std::size_t offset(std::string_view name) const { return offsets_[index(name)]; }
  [[nodiscard]] std::size_t offset_at(std::size_t i) const { return offsets_[i]; }
  [[nodiscard]] const FieldDecl& field(std::string_view name) const { return fields_[index(name)]; }

 private:
  std::vector<FieldDecl> fields_;
  std::vector<std::size_t> offsets_;
  std::size_t size_ = 0;
  std::size_t align_ = 1;
};

namespace gm_layouts {

inline std::vector<FieldDecl> header() {
  return {{"structure_size", 2}, {"format_revision", 1}, {"content_revision", 1}};
}
inline void add(std::vector<FieldDecl>& v, std::initializer_list<FieldDecl> more) { v.insert(v.end(), more); }

// Per-partition blocks of v1.6 (rev 0), v1.7 (rev 1), v1.8 (rev 2).
inline StructLayout xcp(int rev) {
  std::vector<FieldDecl> f = {{"gfx_busy_inst", 4, 8}, {"jpeg_busy", 2, rev == 2 ? 40u : 32u}, {"vcn_busy", 2, 4},
                              {"gfx_busy_acc", 8, 8}};
  if (rev == 1) add(f, {{"gfx_below_host_limit_acc", 8, 8}});
  if (rev == 2) {
    add(f, {{"gfx_below_host_limit_ppt_acc", 8, 8}, {"gfx_below_host_limit_thm_acc", 8, 8},
            {"gfx_low_utilization_acc", 8, 8}, {"gfx_below_host_limit_total_acc", 8, 8}});
  }
  return StructLayout(f);
}

inline std::vector<FieldDecl> v1_legacy(int content) {  // v1.0 - v1.3
  std::vector<FieldDecl> f = header();
  if (content == 0) add(f, {{"system_clock_counter", 8}});
  add(f, {{"temperature_edge", 2}, {"temperature_hotspot", 2}, {"temperature_mem", 2}, {"temperature_vrgfx", 2},
          {"temperature_vrsoc", 2}, {"temperature_vrmem", 2}, {"average_gfx_activity", 2},
          {"average_umc_activity", 2}, {"average_mm_activity", 2}, {"average_socket_power", 2}});
  if (content == 0) {
    add(f, {{"energy_accumulator", 4}});
  } else {
    add(f, {{"energy_accumulator", 8}, {"system_clock_counter", 8}});
  }
  add(f, {{"average_gfxclk_frequency", 2}, {"average_socclk_frequency", 2}, {"average_uclk_frequency", 2},
          {"average_vclk0_frequency", 2}, {"average_dclk0_frequency", 2}, {"average_vclk1_frequency", 2},
          {"average_dclk1_frequency", 2}, {"current_gfxclk", 2}, {"current_socclk", 2}, {"current_uclk", 2},
          {"current_vclk0", 2}, {"current_dclk0", 2}, {"current_vclk1", 2}, {"current_dclk1", 2},
          {"throttle_status", 4}, {"current_fan_speed", 2}});
  if (content == 0) {
    add(f, {{"pcie_link_width", 1}, {"pcie_link_speed", 1}});
    return f;
  }
  add(f, {{"pcie_link_width", 2}, {"pcie_link_speed", 2}, {"padding", 2}, {"gfx_activity_acc", 4},
          {"mem_activity_acc", 4}, {"temperature_hbm", 2, 4}});
  if (content >= 2) add(f, {{"firmware_timestamp", 8}});
  if (content >= 3) {
    add(f, {{"voltage_soc", 2}, {"voltage_gfx", 2}, {"voltage_mem", 2}, {"padding1", 2},
            {"indep_throttle_status", 8}});
  }
  return f;
}

// v1.4, v1.5, v1.6 (early = the reverted 384-byte layout), v1.7, v1.8.
inline std::vector<FieldDecl> v1_mi(int content, bool early) {
  std::vector<FieldDecl> f = header();
  add(f, {{"temperature_hotspot", 2}, {"temperature_mem", 2}, {"temperature_vrsoc", 2}, {"curr_socket_power", 2},
          {"average_gfx_activity", 2}, {"average_umc_activity", 2}});
  const bool engines = content == 4 || content == 5 || (content == 6 && early);
  if (engines) add(f, {{"vcn_activity", 2, 4}});
  if (engines && content != 4) add(f, {{"jpeg_activity", 2, 32}});
  if (content >= 7) add(f, {{"mem_max_bandwidth", 8}});
  add(f, {{"energy_accumulator", 8}, {"system_clock_counter", 8}});
  if (content >= 6) {
    add(f, {{"accumulation_counter", 4}, {"prochot_residency_acc", 4}, {"ppt_residency_acc", 4},
            {"socket_thm_residency_acc", 4}, {"vr_thm_residency_acc", 4}, {"hbm_thm_residency_acc", 4}});
  }
  if (content <= 5 || early) add(f, {{"throttle_status", 4}});
  add(f, {{"gfxclk_lock_status", 4}, {"pcie_link_width", 2}, {"pcie_link_speed", 2}, {"xgmi_link_width", 2},
          {"xgmi_link_speed", 2}, {"gfx_activity_acc", 4}, {"mem_activity_acc", 4}, {"pcie_bandwidth_acc", 8},
          {"pcie_bandwidth_inst", 8}, {"pcie_l0_to_recov_count_acc", 8}, {"pcie_replay_count_acc", 8},
          {"pcie_replay_rover_count_acc", 8}});
  if (content >= 5) add(f, {{"pcie_nak_sent_count_acc", 4}, {"pcie_nak_rcvd_count_acc", 4}});
  add(f, {{"xgmi_read_data_acc", 8, 8}, {"xgmi_write_data_acc", 8, 8}});
  if (content >= 7) add(f, {{"xgmi_link_status", 2, 8}, {"padding", 2}});
  add(f, {{"firmware_timestamp", 8}, {"current_gfxclk", 2, 8}, {"current_socclk", 2, 4}, {"current_vclk0", 2, 4},
          {"current_dclk0", 2, 4}, {"current_uclk", 2}});
  if (content <= 5 || early) {
    add(f, {{"padding", 2}});
  } else {
    const StructLayout x = xcp(content - 6);
    add(f, {{"num_partition", 2}, {"xcp_stats", x.size(), 8, x.align()}, {"pcie_lc_perf_other_end_recovery", 4}});
  }
  return f;
}

inline std::vector<FieldDecl> v2(int content) {  // v2.0 - v2.4
  std::vector<FieldDecl> f = header();
  if (content == 0) add(f, {{"system_clock_counter", 8}});
  add(f, {{"temperature_gfx", 2}, {"temperature_soc", 2}, {"temperature_core", 2, 8}, {"temperature_l3", 2, 2},
          {"average_gfx_activity", 2}, {"average_mm_activity", 2}});
  if (content != 0) add(f, {{"system_clock_counter", 8}});
  add(f, {{"average_socket_power", 2}, {"average_cpu_power", 2}, {"average_soc_power", 2}, {"average_gfx_power", 2},
          {"average_core_power", 2, 8}, {"average_gfxclk_frequency", 2}, {"average_socclk_frequency", 2},
          {"average_uclk_frequency", 2}, {"average_fclk_frequency", 2}, {"average_vclk_frequency", 2},
          {"average_dclk_frequency", 2}, {"current_gfxclk", 2}, {"current_socclk", 2}, {"current_uclk", 2},
          {"current_fclk", 2}, {"current_vclk", 2}, {"current_dclk", 2}, {"current_coreclk", 2, 8},
          {"current_l3clk", 2, 2}, {"throttle_status", 4}, {"fan_pwm", 2}});
  add(f, {{"padding", 2, content == 0 ? 1u : 3u}});
  if (content >= 2) add(f, {{"indep_throttle_status", 8}});
  if (content >= 3) {
    add(f, {{"average_temperature_gfx", 2}, {"average_temperature_soc", 2}, {"average_temperature_core", 2, 8},
            {"average_temperature_l3", 2, 2}});
  }
  if (content >= 4) {
    add(f, {{"average_cpu_voltage", 2}, {"average_soc_voltage", 2}, {"average_gfx_voltage", 2},
            {"average_cpu_current", 2}, {"average_soc_current", 2}, {"average_gfx_current", 2}});
  }
  return f;
}

inline std::vector<FieldDecl> v3_0() {
  std::vector<FieldDecl> f = header();
  add(f, {{"temperature_gfx", 2}, {"temperature_soc", 2}, {"temperature_core", 2, 16}, {"temperature_skin", 2},
          {"average_gfx_activity", 2}, {"average_vcn_activity", 2}, {"average_ipu_activity", 2, 8},
          {"average_core_c0_activity", 2, 16}, {"average_dram_reads", 2}, {"average_dram_writes", 2},
          {"average_ipu_reads", 2}, {"average_ipu_writes", 2}, {"system_clock_counter", 8},
          {"average_socket_power", 4}, {"average_ipu_power", 2}, {"average_apu_power", 4}, {"average_gfx_power", 4},
          {"average_dgpu_power", 4}, {"average_all_core_power", 4}, {"average_core_power", 2, 16},
          {"average_sys_power", 2}, {"stapm_power_limit", 2}, {"current_stapm_power_limit", 2},
          {"average_gfxclk_frequency", 2}, {"average_socclk_frequency", 2}, {"average_vpeclk_frequency", 2},
          {"average_ipuclk_frequency", 2}, {"average_fclk_frequency", 2}, {"average_vclk_frequency", 2},
          {"average_uclk_frequency", 2}, {"average_mpipu_frequency", 2}, {"current_coreclk", 2, 16},
          {"current_core_maxfreq", 2}, {"current_gfx_maxfreq", 2}, {"throttle_residency_prochot", 4},
          {"throttle_residency_spl", 4}, {"throttle_residency_fppt", 4}, {"throttle_residency_sppt", 4},
          {"throttle_residency_thm_core", 4}, {"throttle_residency_thm_gfx", 4}, {"throttle_residency_thm_soc", 4},
          {"time_filter_alphavalue", 4}});
  return f;
}

}  // namespace gm_layouts

// The layout of gpu_metrics v<format>.<content> (early: the 384-byte v1.6). Throws for v1.9 and
// versions the kernel never emitted.
inline StructLayout gpu_metrics_layout(int format, int content, bool early = false) {
  if (format == 1 && content >= 0 && content <= 3) return StructLayout(gm_layouts::v1_legacy(content));
  if (format == 1 && content >= 4 && content <= 8) return StructLayout(gm_layouts::v1_mi(content, early));
  if (format == 2 && content >= 0 && content <= 4) return StructLayout(gm_layouts::v2(content));
  if (format == 3 && content == 0) return StructLayout(gm_layouts::v3_0());
  throw std::invalid_argument("gpu_metrics_builder: no fixed layout for v" + std::to_string(format) + "." +
                              std::to_string(content));
}

// A fixed-layout blob: all-ones, header filled, then the values you set.
class GpuMetricsBlob {
 public:
  GpuMetricsBlob(int format, int content, bool early = false)
      : layout_(gpu_metrics_layout(format, content, early)), bytes_(layout_.size(), 0xFF) {
    if (format == 1 && content >= 6 && content <= 8 && !early) xcp_ = gm_layouts::xcp(content - 6);
    put(0, 2, layout_.size());
    put(2, 1, static_cast<std::uint64_t>(format));
    put(3, 1, static_cast<std::uint64_t>(content));
  }
  // Writes element `index` of a field (little-endian, the field's width).
  GpuMetricsBlob& set(std::string_view field, std::uint64_t value, std::size_t index = 0) {
    const FieldDecl& f = layout_.field(field);
    if (index >= f.count) throw std::out_of_range("gpu_metrics_builder: " + std::string(field) + " index");
    put(layout_.offset(field) + index * f.width, f.width, value);
    return *this;
  }
  // Writes element `index` of a field of xcp_stats[partition] (v1.6 current layout, v1.7, v1.8).
  GpuMetricsBlob& set_xcp(std::size_t partition, std::string_view field, std::uint64_t value, std::size_t index = 0) {
    if (!xcp_ || partition >= 8) throw std::out_of_range("gpu_metrics_builder: no xcp_stats here");
    const FieldDecl& f = xcp_->field(field);
    put(layout_.offset("xcp_stats") + partition * xcp_->size() + xcp_->offset(field) + index * f.width, f.width, value);
    return *this;
  }
  GpuMetricsBlob& set_structure_size(std::uint16_t size) { put(0, 2, size); return *this; }
  GpuMetricsBlob& put(std::size_t offset, std::size_t width, std::uint64_t value) {
    if (offset + width > bytes_.size()) throw std::out_of_range("gpu_metrics_builder: write past the end");
    for (std::size_t i = 0; i < width; ++i) bytes_[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
    return *this;
  }
  [[nodiscard]] const StructLayout& layout() const { return layout_; }
  [[nodiscard]] const std::optional<StructLayout>& xcp_layout() const { return xcp_; }
  [[nodiscard]] const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  StructLayout layout_;
  std::optional<StructLayout> xcp_;
  std::vector<std::uint8_t> bytes_;
};

// v1.9 attribute table builder: header, s32 attr_count, then per attribute a u64 encoding word and
// its values, packed.
class AttributeTableBuilder {
 public:
  enum Type : std::uint8_t { u8 = 0, s8, u16, s16, u32, s32, u64, s64 };
  enum Unit : std::uint8_t { none = 0, mhz, celsius, watt, ns, ten_ns, gts, tenth_gts, gbps_bw, kbytes, percent };

  static std::uint64_t encode(std::uint8_t unit, std::uint8_t type, std::uint16_t id, std::uint16_t instances) {
    return (std::uint64_t{unit} << 24) | (std::uint64_t{type} << 20) | (std::uint64_t{id} << 10) | instances;
  }
  static std::size_t width(std::uint8_t type) { return std::size_t{1} << (type / 2); }

  // values: one per instance; a value's low `width` bytes are written (use all-ones for "unsupported").
  AttributeTableBuilder& add(std::uint16_t id, std::uint8_t unit, std::uint8_t type, std::vector<std::uint64_t> values) {
    attrs_.push_back({encode(unit, type, id, static_cast<std::uint16_t>(values.size())), width(type), std::move(values)});
    return *this;
  }
  // An attribute whose instances are all the "unsupported" fill.
  AttributeTableBuilder& add_unsupported(std::uint16_t id, std::uint8_t unit, std::uint8_t type, std::size_t n) {
    return add(id, unit, type, std::vector<std::uint64_t>(n, ~std::uint64_t{0}));
  }
  AttributeTableBuilder& add_raw_encoding(std::uint64_t encoding, std::size_t value_bytes) {
    attrs_.push_back({encoding, 1, std::vector<std::uint64_t>(value_bytes, 0x5A)});
    return *this;
  }
  [[nodiscard]] std::vector<std::uint8_t> bytes(std::optional<std::int32_t> attr_count = std::nullopt) const {
    std::vector<std::uint8_t> out(8, 0);
    const auto put = [&out](std::uint64_t v, std::size_t w) {
      for (std::size_t i = 0; i < w; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    };
    for (const auto& a : attrs_) {
      put(a.encoding, 8);
      for (std::uint64_t v : a.values) put(v, a.width);
    }
    const auto size = static_cast<std::uint16_t>(out.size());
    out[0] = static_cast<std::uint8_t>(size);
    out[1] = static_cast<std::uint8_t>(size >> 8);
    out[2] = 1;
    out[3] = 9;
    const auto count = static_cast<std::uint32_t>(attr_count.value_or(static_cast<std::int32_t>(attrs_.size())));
    for (std::size_t i = 0; i < 4; ++i) out[4 + i] = static_cast<std::uint8_t>(count >> (8 * i));
    return out;
  }

 private:
  struct Attr {
    std::uint64_t encoding;
    std::size_t width;
    std::vector<std::uint64_t> values;
  };
  std::vector<Attr> attrs_;
};

}  // namespace hipstack::smi::test
