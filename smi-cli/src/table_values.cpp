// Readings as people read them in the `static` and `metric` tables: limits beside values, decoded
// bits (table_values.hpp).
#include "table_values.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "render.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;

// The word a limit is printed with (the catalogue's limit column): "72 C (crit 105 C)"; a share
// prints as "used / total (pct)".
std::string_view limit_word(smi::LimitRole role) {
  switch (role) {
    case smi::LimitRole::critical: return "crit";
    case smi::LimitRole::cap: return "cap";
    case smi::LimitRole::maximum: return "max";
    case smi::LimitRole::share_of: return "";
  }
  return "";
}

const smi::Reading* find(MetricId id, std::string_view instance, const std::vector<smi::Reading>& shown,
                         const TableContext& context) {
  for (const auto* list : {&shown, &context.readings}) {
    for (const smi::Reading& r : *list) {
      if (r.id == id && r.instance == instance && r.ok()) return &r;
    }
  }
  return nullptr;
}

std::optional<std::uint64_t> hex_number(std::string_view text) {
  if (!text.starts_with("0x") && !text.starts_with("0X")) return std::nullopt;
  text.remove_prefix(2);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// rocm-smi's forms (showFwInfo): VCN, VCE, UVD, SOS and ASD in hex; TA XGMI, TA RAS and SMC as the
// four bytes in decimal ("00.85.91.00"); the other blocks as one decimal number.
std::string amd_firmware(std::string_view block, std::uint64_t version) {
  for (const std::string_view hex : {"vcn", "vce", "uvd", "sos", "asd"}) {
    if (block == hex) return fmt::format("0x{:08x}", version);
  }
  for (const std::string_view dotted : {"ta_xgmi", "ta_ras", "smc"}) {
    if (block == dotted) {
      return fmt::format("{:02d}.{:02d}.{:02d}.{:02d}", version >> 24 & 0xff, version >> 16 & 0xff, version >> 8 & 0xff,
                         version & 0xff);
    }
  }
  return std::to_string(version);
}

std::string throttle_text(const smi::Reading& r, const std::vector<smi::Reading>& shown, const TableContext& context) {
  const auto bits = static_cast<std::uint64_t>(*r.number());
  const smi::Reading* gfx = find(MetricId::gfx_target, "", shown, context);
  const auto* target = gfx != nullptr ? std::get_if<std::string>(&gfx->value) : nullptr;
  // NVML documents 0 as "no reason"; an amdgpu driver that does not report throttling in gpu_metrics
  // also writes 0 (MI300 on later kernels), so there 0 says only that no bit is set.
  if (bits == 0) return context.vendor == "nvidia" ? "0x0: none" : "0x0: no bit set";
  const auto reasons = smi::throttle_reasons(context.vendor, target != nullptr ? *target : "", bits);
  if (!reasons) return fmt::format("0x{:x} (this GPU's throttle bits are not documented: not decoded)", bits);
  return fmt::format("0x{:x}: {}", bits, fmt::join(*reasons, ", "));
}

}  // namespace

std::optional<std::string> table_value(const smi::Reading& r, const std::vector<smi::Reading>& shown,
                                       const TableContext& context, bool show_unsupported) {
  std::string value = value_with_unit(r);
  if (!r.ok()) return value;
  if (r.id == MetricId::firmware_version && context.vendor == "amd") {
    const auto* text = std::get_if<std::string>(&r.value);
    const auto version = text != nullptr ? hex_number(*text) : std::nullopt;
    if (!version) return value;
    if (*version == 0 && !show_unsupported) return std::nullopt;  // the driver loaded no firmware for the block
    return amd_firmware(r.instance, *version);
  }
  if (r.id == MetricId::throttle_status && r.number()) return throttle_text(r, shown, context);
  if (r.id == MetricId::violation_residency && r.number()) {
    const smi::Reading* window = find(MetricId::violation_accumulation_count, "", shown, context);
    const auto total = window != nullptr ? window->number() : std::nullopt;
    if (total && *total > 0) value += fmt::format(" ({:.1f} % of the time)", 100.0 * *r.number() / *total);
    return value;
  }
  if (const auto limit = smi::metric_limit(r.id)) {
    const smi::Reading* l = find(limit->limit, r.instance, shown, context);
    if (l != nullptr && limit->role == smi::LimitRole::share_of) {
      const auto used = r.number(), total = l->number();
      value += " / " + value_with_unit(*l);
      if (used && total && *total > 0) value += fmt::format(" ({:.0f} %)", 100.0 * *used / *total);
    } else if (l != nullptr) {
      value += fmt::format(" ({} {})", limit_word(limit->role), value_with_unit(*l));
    }
  }
  return value;
}

}  // namespace hipstack::cli
