// Parsers for the text formats of sysfs and procfs. Each takes the file's text (already trimmed of
// NUL padding) and returns a value or nullopt / an error string naming what did not parse; the caller
// adds where the text came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hipstack::smi::detail {

std::optional<std::int64_t> parse_int(std::string_view text) noexcept;     // decimal, optional sign
std::optional<std::uint64_t> parse_uint(std::string_view text) noexcept;   // decimal
std::optional<std::uint64_t> parse_hex(std::string_view text) noexcept;    // with or without 0x
std::optional<double> parse_real(std::string_view text) noexcept;          // classic locale

// "16.0 GT/s PCIe", "8.0 GT/s", "2.5GT/s" -> GT/s.
std::optional<double> parse_link_speed(std::string_view text) noexcept;

// One line of pp_dpm_* files: "1: 1200Mhz *", "S: 100Mhz *" (deep sleep: index -1).
struct DpmLevel {
  int index = 0;          // -1: the deep-sleep "S:" line; -2: a current clock outside the levels
  double mhz = 0;
  bool current = false;
};
struct DpmTable {
  std::vector<DpmLevel> levels;
  std::string error;      // non-empty when a line did not parse (names the line)
};
DpmTable parse_dpm_levels(std::string_view text);

// pp_dpm_pcie lines: "1: 16.0GT/s, x16 619Mhz *".
struct PcieLevel {
  int index = 0;
  double gts = 0;
  int width = 0;
  bool current = false;
  std::string text;       // the level as printed after "N: ", without the star
};
struct PcieTable {
  std::vector<PcieLevel> levels;
  std::string error;
};
PcieTable parse_pcie_levels(std::string_view text);

// "key value" lines (KFD properties) and "KEY=VALUE" lines (uevent), "key: value" (fdinfo).
using KeyValues = std::vector<std::pair<std::string, std::string>>;
KeyValues parse_key_values(std::string_view text, char separator);
std::optional<std::string_view> find_value(const KeyValues& kv, std::string_view key) noexcept;

// pp_power_profile_mode: the name of the row marked '*', nullopt when none is marked.
std::optional<std::string> parse_active_power_profile(std::string_view text);

// KFD gfx_target_version (e.g. 90402, 110003) -> "gfx942", "gfx1103".
std::string gfx_target_name(std::uint64_t gfx_target_version);

// Splits on a separator, trimming spaces, dropping empty fields.
std::vector<std::string_view> split_fields(std::string_view text, char separator);

// Text read from a file or a vendor library, made safe for every output (terminal, JSON, CSV,
// Prometheus labels, protobuf and D-Bus strings, all of which need valid UTF-8 and none of which
// should carry terminal controls): valid UTF-8 stays, a backslash becomes "\\", and each control
// character (C0, DEL, C1), each bidirectional override or isolate (U+202A..E, U+2066..9) and each
// byte that is not part of valid UTF-8 becomes "\xNN", so the raw bytes can still be read back in
// hex. Applied once, where readings leave the library.
std::string printable_text(std::string_view raw);
// True when printable_text would return the text unchanged (the common case: no copy needed).
bool is_printable_text(std::string_view raw) noexcept;
// True when the text holds a control character or a byte that is not part of valid UTF-8: what
// printable_text writes as "\xNN" (a backslash does not count).
bool holds_raw_bytes(std::string_view raw) noexcept;

}  // namespace hipstack::smi::detail
