// Parsers for the text formats of sysfs and procfs (parse.hpp).
#include "parse.hpp"

#include <hipstack/smi.hpp>

#include <cctype>
#include <charconv>
#include <cmath>

#include "fs_view.hpp"

namespace hipstack::smi::detail {
namespace {

constexpr std::string_view kBlank = " \t\r\n";

std::string_view trim(std::string_view text) noexcept {
  const auto first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
}

template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(pos, end - pos));
    if (!line.empty()) fn(line);
    pos = end + 1;
  }
}

// Parses a leading decimal number ("1200Mhz" -> 1200, "16.0GT/s" -> 16.0); returns the rest.
std::optional<double> leading_real(std::string_view& text) noexcept {
  std::size_t n = 0;
  while (n < text.size() && ((text[n] >= '0' && text[n] <= '9') || text[n] == '.')) ++n;
  if (n == 0) return std::nullopt;
  const auto value = parse_real(text.substr(0, n));
  text.remove_prefix(n);
  return value;
}

}  // namespace

std::optional<std::int64_t> parse_int(std::string_view text) noexcept {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_uint(std::string_view text) noexcept {
  text = trim(text);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_hex(std::string_view text) noexcept {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view text) noexcept {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<double> parse_link_speed(std::string_view text) noexcept {
  text = trim(text);
  const auto value = leading_real(text);
  if (!value) return std::nullopt;
  text = trim(text);
  if (text.rfind("GT/s", 0) != 0) return std::nullopt;
  return value;
}

DpmTable parse_dpm_levels(std::string_view text) {
  DpmTable table;
  for_each_line(text, [&table](std::string_view line) {
    if (!table.error.empty()) return;
    DpmLevel level;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      table.error = "no ':' in line \"" + std::string(line) + "\"";
      return;
    }
    const std::string_view key = trim(line.substr(0, colon));
    if (key == "S") {
      level.index = -1;  // deep-sleep level (MI300)
    } else if (const auto index = parse_int(key); index && *index >= 0 && *index < 1024) {
      level.index = static_cast<int>(*index);
    } else {
      table.error = "bad level index in line \"" + std::string(line) + "\"";
      return;
    }
    std::string_view rest = trim(line.substr(colon + 1));
    const auto mhz = leading_real(rest);
    rest = trim(rest);
    if (!mhz || (rest.rfind("Mhz", 0) != 0 && rest.rfind("MHz", 0) != 0)) {
      table.error = "bad clock in line \"" + std::string(line) + "\"";
      return;
    }
    level.mhz = *mhz;
    level.current = trim(rest.substr(3)) == "*";
    table.levels.push_back(level);
  });
  // Fine-grained DPM (SMU11+ gfxclk) prints "0: min / 1: current * / 2: max". When the starred middle
  // line lies outside [min, max] it cannot be a level: keep min and max as the levels, with the
  // indices sysfs printed (the max stays level 2: that is the number pp_dpm_sclk shows), and the
  // current clock as a separate, non-level entry (index -2) so callers still see it.
  auto& l = table.levels;
  if (table.error.empty() && l.size() == 3 && l[1].current && !l[0].current && !l[2].current &&
      l[0].mhz <= l[2].mhz && (l[1].mhz < l[0].mhz || l[1].mhz > l[2].mhz)) {
    DpmLevel current = l[1];
    current.index = -2;
    l.erase(l.begin() + 1);
    l.push_back(current);
  }
  return table;
}

PcieTable parse_pcie_levels(std::string_view text) {
  PcieTable table;
  for_each_line(text, [&table](std::string_view line) {
    if (!table.error.empty()) return;
    const auto colon = line.find(':');
    const auto index = colon == std::string_view::npos ? std::nullopt : parse_int(line.substr(0, colon));
    if (!index || *index < 0 || *index > 64) {
      table.error = "bad level index in line \"" + std::string(line) + "\"";
      return;
    }
    PcieLevel level;
    level.index = static_cast<int>(*index);
    std::string_view rest = trim(line.substr(colon + 1));
    if (!rest.empty() && rest.back() == '*') {
      level.current = true;
      rest = trim(rest.substr(0, rest.size() - 1));
    }
    level.text = std::string(rest);
    const auto gts = leading_real(rest);
    const auto x = rest.find('x');
    std::optional<std::int64_t> width;
    if (x != std::string_view::npos) {
      const auto fields = split_fields(rest.substr(x + 1), ' ');
      if (!fields.empty()) width = parse_int(fields.front());
    }
    if (!gts || rest.rfind("GT/s", 0) != 0 || !width) {
      table.error = "bad PCIe level in line \"" + std::string(line) + "\"";
      return;
    }
    level.gts = *gts;
    level.width = static_cast<int>(*width);
    table.levels.push_back(std::move(level));
  });
  return table;
}

KeyValues parse_key_values(std::string_view text, char separator) {
  KeyValues out;
  for_each_line(text, [&out, separator](std::string_view line) {
    std::size_t split = line.find(separator);
    if (separator == ' ') split = line.find_first_of(" \t");
    if (split == std::string_view::npos) return;
    out.emplace_back(std::string(trim(line.substr(0, split))), std::string(trim(line.substr(split + 1))));
  });
  return out;
}

std::optional<std::string_view> find_value(const KeyValues& kv, std::string_view key) noexcept {
  for (const auto& [k, v] : kv) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string> parse_active_power_profile(std::string_view text) {
  std::optional<std::string> active;
  for_each_line(text, [&active](std::string_view line) {
    if (active) return;
    std::size_t n = 0;
    while (n < line.size() && line[n] >= '0' && line[n] <= '9') ++n;
    const auto colon = line.find(':');
    if (n == 0 || colon == std::string_view::npos || colon < n) return;
    const std::string_view name_field = line.substr(n, colon - n);
    if (name_field.find('*') == std::string_view::npos) return;
    std::string name;
    for (const char c : name_field) {
      if (c != '*' && c != ' ' && c != '\t') name += c;
    }
    if (!name.empty()) active = std::move(name);
  });
  return active;
}

std::string gfx_target_name(std::uint64_t version) {
  // gfx_target_version is major*10000 + minor*100 + stepping; the name prints minor and stepping in
  // hex (gfx90a, gfx90c).
  const std::uint64_t major = version / 10000;
  const std::uint64_t minor = (version / 100) % 100;
  const std::uint64_t step = version % 100;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "gfx" + std::to_string(major);
  name += kHex[minor % 16];
  name += kHex[step % 16];
  return name;
}

std::vector<std::string_view> split_fields(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view field = trim(text.substr(pos, end - pos));
    if (!field.empty()) fields.push_back(field);
    pos = end + 1;
  }
  return fields;
}

// Length of the valid UTF-8 sequence starting at text[i] (1..4), or 0 when the bytes there are not
// one (bad lead byte, missing or bad continuation, overlong form, surrogate, beyond U+10FFFF).
static std::size_t utf8_sequence(std::string_view text, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// Characters written as "\xNN" although valid UTF-8: the C1 controls U+0080..U+009F (C2 80..C2 9F)
// and the bidirectional embeddings, overrides and isolates U+202A..U+202E (E2 80 AA..AE) and
// U+2066..U+2069 (E2 81 A6..A9), which reorder how a terminal shows the text around them (a
// "FAIL" shown as "LIAF", a column moved).
static bool is_escaped_character(std::string_view text, std::size_t i, std::size_t length) noexcept {
  const auto byte = [&text, i](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  if (length == 2) return byte(0) == 0xC2 && byte(1) <= 0x9F;
  if (length != 3 || byte(0) != 0xE2) return false;
  return (byte(1) == 0x80 && byte(2) >= 0xAA && byte(2) <= 0xAE) || (byte(1) == 0x81 && byte(2) >= 0xA6 && byte(2) <= 0xA9);
}

static bool is_control(unsigned char c) noexcept { return c < 0x20 || c == 0x7F; }

// Whether every character is valid UTF-8 and no control; a backslash fails only when it counts.
static bool all_printable(std::string_view raw, bool backslash_counts) noexcept {
  for (std::size_t i = 0; i < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[i]);
    // Printable ASCII, what almost every text is, needs no sequence decoding (a poller's sample runs
    // this on every reading's detail).
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      ++i;
      continue;
    }
    if ((backslash_counts && c == '\\') || is_control(c)) return false;
    const std::size_t length = utf8_sequence(raw, i);
    if (length == 0 || is_escaped_character(raw, i, length)) return false;
    i += length;
  }
  return true;
}

bool is_printable_text(std::string_view raw) noexcept { return all_printable(raw, true); }

bool holds_raw_bytes(std::string_view raw) noexcept { return !all_printable(raw, false); }

std::string printable_text(std::string_view raw) {
  if (is_printable_text(raw)) return std::string(raw);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() + 16);
  const auto escape = [&out](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  };
  for (std::size_t i = 0; i < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[i]);
    const std::size_t length = utf8_sequence(raw, i);
    if (c == '\\') {
      out += "\\\\";
      ++i;
    } else if (length == 0 || is_control(c)) {
      escape(c);
      ++i;
    } else if (is_escaped_character(raw, i, length)) {
      for (std::size_t k = 0; k < length; ++k) escape(static_cast<unsigned char>(raw[i + k]));
      i += length;
    } else {
      out.append(raw.substr(i, length));
      i += length;
    }
  }
  return out;
}


}  // namespace hipstack::smi::detail

namespace hipstack::smi {

std::string normalise_bdf(std::string_view bdf) {
  std::string id(detail::trim_sysfs_text(bdf));
  if (id.size() == 16 && id[8] == ':' && id.compare(0, 4, "0000") == 0) id.erase(0, 4);  // NVML, CUDA
  if (id.size() == 7 && id[2] == ':') id = "0000:" + id;                                  // "c1:00.0"
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

std::string printable_text(std::string_view raw) { return detail::printable_text(raw); }

bool holds_raw_bytes(std::string_view text) noexcept { return detail::holds_raw_bytes(text); }

}  // namespace hipstack::smi
