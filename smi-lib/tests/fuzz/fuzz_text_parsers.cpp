// libFuzzer target for the sysfs/procfs text parsers: any bytes in, no crash, no hang, no UB, and
// the parsers' own invariants hold.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backends/amdgpu/amdgpu.hpp"
#include "backends/amdgpu/kfd_smi_events.hpp"
#include "fs_view.hpp"
#include "parse.hpp"

using namespace hipstack::smi::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  const std::string_view text = trim_sysfs_text(raw);
  if (text.size() > raw.size()) std::abort();

  const DpmTable dpm = parse_dpm_levels(text);
  for (const DpmLevel& level : dpm.levels) {
    if (level.index < -2 || level.index >= 1024 || !(level.mhz >= 0)) std::abort();
  }
  const PcieTable pcie = parse_pcie_levels(text);
  for (const PcieLevel& level : pcie.levels) {
    if (level.index < 0 || level.index > 64) std::abort();
  }
  (void)parse_key_values(text, ' ');
  (void)parse_key_values(text, '=');
  (void)parse_key_values(text, ':');
  (void)parse_active_power_profile(text);
  (void)parse_link_speed(text);
  (void)parse_int(text);
  (void)parse_uint(text);
  (void)parse_hex(text);
  (void)parse_real(text);
  (void)split_fields(text, ',');
  if (const auto bdf = hipstack::smi::detail::amdgpu::parse_bdf(text)) {
    if (bdf->bus > 0xff || bdf->device > 0x1f || bdf->function > 7) std::abort();
  }
  if (const auto value = parse_uint(text)) (void)gfx_target_name(*value);
  // KFD SMI event streams: lines stay bounded; an event parses with a kernel id or says why not.
  std::string carry;
  bool skipping = false;
  amdgpu::split_kfd_smi_lines(
      carry, skipping, raw,
      [](std::string_view line) {
        if (line.size() > amdgpu::kKfdSmiLineMax || line.find('\n') != std::string_view::npos) std::abort();
        std::string error;
        const auto event = amdgpu::parse_kfd_smi_line(line, error);
        if (event ? (event->id < 1 || event->id > 13) : error.empty()) std::abort();
      },
      [] {});
  if (carry.size() > amdgpu::kKfdSmiLineMax) std::abort();
  // printable_text: the result is printable once its added backslashes are set aside, and every
  // input byte is kept, as itself or as "\\", "\xNN".
  std::string shown = printable_text(raw);
  if (shown.size() < raw.size() || (is_printable_text(raw) && shown != raw)) std::abort();
  std::erase(shown, '\\');
  if (!is_printable_text(shown)) std::abort();
  return 0;
}
