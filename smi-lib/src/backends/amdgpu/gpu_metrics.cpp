// gpu_metrics: header checks, version dispatch and the fixed-layout field reader.
// Per-version tables: gpu_metrics_v1.cpp (v1.0-1.8), gpu_metrics_apu.cpp (v2.x, v3.0),
// gpu_metrics_v1_9.cpp (attribute table).
#include <fmt/format.h>

#include "gpu_metrics.hpp"

#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <string>

namespace hipstack::smi::detail {
namespace gpu_metrics_impl {

std::optional<std::uint64_t> read_le(std::span<const std::uint8_t> bytes, std::size_t offset,
                                     std::size_t width) noexcept {
  if (width == 0 || width > 8 || offset > bytes.size() || bytes.size() - offset < width) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) value |= std::uint64_t{bytes[offset + i]} << (8 * i);
  return value;
}

bool is_all_ones(std::uint64_t value, std::size_t width) noexcept {
  if (width >= 8) return value == ~std::uint64_t{0};
  const std::uint64_t mask = (std::uint64_t{1} << (8 * width)) - 1;
  return (value & mask) == mask;
}

namespace {
// A present (non-sentinel) value of one element, or nullopt.
std::optional<std::uint64_t> present(std::span<const std::uint8_t> table, std::size_t offset, std::size_t width) noexcept {
  const auto v = read_le(table, offset, width);
  if (!v || is_all_ones(*v, width)) return std::nullopt;
  return v;
}
}  // namespace

void apply_fields(std::span<const std::uint8_t> table, std::span<const Field> fields, GpuMetrics& out) {
  for (const Field& f : fields) {
    switch (f.kind) {
      case Field::Kind::number: {
        const auto v = present(table, f.offset, f.width);
        out.*f.number = v ? std::optional<double>(static_cast<double>(*v) * f.mul / f.div) : std::nullopt;
        break;
      }
      case Field::Kind::vector: {
        std::vector<double>& dst = out.*f.vector;
        dst.clear();
        for (std::size_t i = 0; i < f.count; ++i) {
          const auto v = present(table, f.offset + i * f.width, f.width);
          if (v) {
            dst.push_back(static_cast<double>(*v) * f.mul / f.div);
          } else if (f.positional) {
            dst.push_back(std::numeric_limits<double>::quiet_NaN());
          }
        }
        if (f.positional) {
          while (!dst.empty() && std::isnan(dst.back())) dst.pop_back();
        }
        break;
      }
      case Field::Kind::raw:
        out.*f.raw = present(table, f.offset, f.width);
        break;
    }
  }
}

// pcie_link_speed of the fixed v1.x tables is in 0.1 GT/s: the drivers fill it from link_speed[] =
// {25, 50, 80, 160} (smu_v11_0.c, smu_v13_0.c, vega12/vega20 hwmgr) or pcie_gen_to_speed()
// (smu_v13_0_6, and smu_v13_0_0/_7 since that fix). Before it, smu_v13_0_0_get_gpu_metrics and
// smu_v13_0_7_get_gpu_metrics (RDNA3 dGPUs) stored the firmware's PcieRate, a PCIe generation number
// (1 = 2.5 GT/s ... 5 = 32 GT/s). The ranges do not overlap (25 and up vs 1..6): a stored value below
// 25 is read as a generation; 0, or anything else below 25, is no link speed.
void pcie_generation_as_speed(GpuMetrics& m) {
  if (!m.pcie_link_speed || *m.pcie_link_speed >= 2.5) return;
  constexpr double kGenerationSpeed[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  const auto stored = static_cast<long>(*m.pcie_link_speed * 10.0 + 0.5);
  m.pcie_link_speed = stored >= 1 && stored <= 6 ? std::optional<double>(kGenerationSpeed[stored - 1]) : std::nullopt;
}

}  // namespace gpu_metrics_impl

namespace {

using gpu_metrics_impl::Layout;

std::string version_text(std::uint8_t format, std::uint8_t content) {
  // fmt rather than "v" + std::to_string(...): GCC 12 at -O3 warns falsely (-Wrestrict) on the latter.
  return fmt::format("v{}.{}", format, content);
}

// The layout for (format, content, structure_size), or nullptr with `error` set.
const Layout* find_layout(const GpuMetrics& m, std::string& error) {
  const Layout* candidates[4] = {};
  std::size_t n = 0;
  for (auto list : {gpu_metrics_impl::v1_layouts(), gpu_metrics_impl::apu_layouts()}) {
    for (const Layout& l : list) {
      if (l.format_revision == m.format_revision && l.content_revision == m.content_revision && n < 4) {
        candidates[n++] = &l;
      }
    }
  }
  const std::string ver = version_text(m.format_revision, m.content_revision);
  if (n == 0) {
    error = "gpu_metrics: unsupported version " + ver + " (format_revision " + std::to_string(m.format_revision) +
            ", content_revision " + std::to_string(m.content_revision) + ", structure_size " +
            std::to_string(m.structure_size) + "); known: v1.0-v1.9, v2.0-v2.4, v3.0";
    return nullptr;
  }
  if (n == 1) {
    if (m.structure_size < candidates[0]->size) {
      error = "gpu_metrics " + ver + ": header says " + std::to_string(m.structure_size) + " bytes but the " +
              ver + " table needs " + std::to_string(candidates[0]->size) + " bytes (its fields end at byte " +
              std::to_string(candidates[0]->size) + ")";
      return nullptr;
    }
    return candidates[0];
  }
  // Several layouts share this revision (v1.6): the structure size decides. An exact match wins; a
  // size above the largest is taken as that (newest) layout grown at the end.
  const Layout* largest = candidates[0];
  for (std::size_t i = 0; i < n; ++i) {
    if (candidates[i]->size == m.structure_size) return candidates[i];
    if (candidates[i]->size > largest->size) largest = candidates[i];
  }
  if (m.structure_size > largest->size) return largest;
  error = "gpu_metrics " + ver + ": structure_size " + std::to_string(m.structure_size) + " matches no " + ver +
          " layout (";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) error += ", ";
    error += std::string(candidates[i]->name) + " " + std::to_string(candidates[i]->size) + " bytes";
  }
  error += ")";
  return nullptr;
}

void decode_into(std::span<const std::uint8_t> blob, const GpuMetricsSource& source, GpuMetricsDecode& result) {
  GpuMetrics& m = result.metrics;
  if (blob.size() < 4) {
    result.error = "gpu_metrics: only " + std::to_string(blob.size()) +
                   " bytes were read; the header needs 4 (structure_size u16 at byte 0, revisions at bytes 2-3)";
    return;
  }
  m.structure_size = static_cast<std::uint16_t>(blob[0] | (blob[1] << 8));
  m.format_revision = blob[2];
  m.content_revision = blob[3];
  const auto header_only = [&m] {
    GpuMetrics h;
    h.structure_size = m.structure_size;
    h.format_revision = m.format_revision;
    h.content_revision = m.content_revision;
    m = std::move(h);
  };

  const bool attribute_table = m.format_revision == 1 && m.content_revision == 9;
  const Layout* layout = nullptr;
  if (!attribute_table) {
    layout = find_layout(m, result.error);
    if (!layout) return;
  } else if (m.structure_size < 8) {
    result.error = "gpu_metrics v1.9: header says " + std::to_string(m.structure_size) +
                   " bytes but the attribute table needs at least 8 (attr_count s32 at byte 4)";
    return;
  }
  if (blob.size() < m.structure_size) {
    result.error = "gpu_metrics: header says " + std::to_string(m.structure_size) + " bytes but only " +
                   std::to_string(blob.size()) + " were read";
    return;
  }
  const auto table = blob.first(m.structure_size);  // what follows (NUL padding of captures) is ignored

  if (attribute_table) {
    m.layout = "v1.9";
    if (!gpu_metrics_impl::decode_attribute_table(table, m, result.error)) {
      header_only();
      return;
    }
  } else {
    m.layout = layout->name;
    if (layout->format_revision == 1) {
      gpu_metrics_impl::apply_fields(table, layout->fields, m);
    } else {  // APU: units per ASIC
      bool socket_power_unknown = false;
      gpu_metrics_impl::apply_fields(table, gpu_metrics_impl::apu_fields_for(*layout, source, socket_power_unknown), m);
      if (socket_power_unknown) m.average_socket_power.reset();
    }
    if (layout->finish) layout->finish(table, m);
    if (m.format_revision == 1) gpu_metrics_impl::pcie_generation_as_speed(m);
  }
  result.ok = true;
}

}  // namespace

bool gpu_metrics_uses_firmware_version(std::span<const std::uint8_t> blob) noexcept {
  return blob.size() >= 4 && blob[2] != 1;  // the header's format_revision (decode_into): 1 is a dGPU's
}

GpuMetricsDecode decode_gpu_metrics(std::span<const std::uint8_t> blob, const GpuMetricsSource& source) noexcept {
  GpuMetricsDecode result;
  try {
    decode_into(blob, source, result);
  } catch (...) {  // only std::bad_alloc can get here; the blob is at most 64 KiB
    result.ok = false;
    result.metrics = GpuMetrics{};
    try {
      result.error = "gpu_metrics: out of memory while decoding";
    } catch (...) {
      result.error.clear();
    }
  }
  return result;
}

}  // namespace hipstack::smi::detail
