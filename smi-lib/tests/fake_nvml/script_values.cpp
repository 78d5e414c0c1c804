// Decoding the values of the fake libnvidia-ml.so.1's script (format: README.md in this folder): the
// loader checks every value with these before the fake answers from it.
#include "script.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <span>

namespace fake_nvml {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    auto pos = s.find(sep);
    out.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return out;
    s.remove_prefix(pos + 1);
  }
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits a list on commas and blanks, dropping empty items.
std::vector<std::string_view> split_list(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ',' || std::isspace(static_cast<unsigned char>(s[i])))) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ',' && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

struct Named {
  const char* name;
  long long value;
};

std::optional<long long> parse_named(std::string_view text, std::span<const Named> table, bool numeric_too) {
  text = trim(text);
  for (const Named& n : table)
    if (iequals(text, n.name)) return n.value;
  if (numeric_too) {
    if (auto v = parse_uint(text); v && *v <= static_cast<unsigned long long>(LLONG_MAX))
      return static_cast<long long>(*v);
  }
  return std::nullopt;
}

constexpr Named kReturnNames[] = {
    {"SUCCESS", 0},
    {"UNINITIALIZED", 1},
    {"INVALID_ARGUMENT", 2},
    {"NOT_SUPPORTED", 3},
    {"NO_PERMISSION", 4},
    {"ALREADY_INITIALIZED", 5},
    {"NOT_FOUND", 6},
    {"INSUFFICIENT_SIZE", 7},
    {"INSUFFICIENT_POWER", 8},
    {"DRIVER_NOT_LOADED", 9},
    {"TIMEOUT", 10},
    {"IRQ_ISSUE", 11},
    {"LIBRARY_NOT_FOUND", 12},
    {"FUNCTION_NOT_FOUND", 13},
    {"CORRUPTED_INFOROM", 14},
    {"GPU_IS_LOST", 15},
    {"RESET_REQUIRED", 16},
    {"OPERATING_SYSTEM", 17},
    {"LIB_RM_VERSION_MISMATCH", 18},
    {"IN_USE", 19},
    {"MEMORY", 20},
    {"NO_DATA", 21},
    {"VGPU_ECC_NOT_SUPPORTED", 22},
    {"INSUFFICIENT_RESOURCES", 23},
    {"FREQ_NOT_SUPPORTED", 24},
    {"ARGUMENT_VERSION_MISMATCH", 25},
    {"DEPRECATED", 26},
    {"NOT_READY", 27},
    {"GPU_NOT_FOUND", 28},
    {"INVALID_STATE", 29},
    {"RESET_TYPE_NOT_SUPPORTED", 30},
    {"UNKNOWN", 999},
};

constexpr Named kArchitectureNames[] = {
    {"KEPLER", 2}, {"MAXWELL", 3}, {"PASCAL", 4}, {"VOLTA", 5},      {"TURING", 6},
    {"AMPERE", 7}, {"ADA", 8},     {"HOPPER", 9}, {"BLACKWELL", 10}, {"UNKNOWN", 0xffffffffLL},
};

constexpr Named kComputeModeNames[] = {
    {"DEFAULT", 0}, {"EXCLUSIVE_THREAD", 1}, {"PROHIBITED", 2}, {"EXCLUSIVE_PROCESS", 3}};

constexpr Named kTopologyNames[] = {
    {"INTERNAL", 0},    {"SINGLE", 10}, {"PIX", 10},    {"MULTIPLE", 20}, {"PXB", 20},
    {"HOSTBRIDGE", 30}, {"PHB", 30},    {"NODE", 40},   {"SYSTEM", 50},   {"SYS", 50},
};

constexpr Named kEventReasonNames[] = {
    {"NONE", 0x0},
    {"GPU_IDLE", 0x1},
    {"APPLICATIONS_CLOCKS_SETTING", 0x2},
    {"SW_POWER_CAP", 0x4},
    {"HW_SLOWDOWN", 0x8},
    {"SYNC_BOOST", 0x10},
    {"SW_THERMAL_SLOWDOWN", 0x20},
    {"HW_THERMAL_SLOWDOWN", 0x40},
    {"HW_POWER_BRAKE_SLOWDOWN", 0x80},
    {"DISPLAY_CLOCK_SETTING", 0x100},
};

constexpr Named kValueTypeNames[] = {{"double", 0}, {"uint", 1},   {"ulong", 2},  {"ullong", 3},
                                     {"sllong", 4}, {"sint", 5},   {"ushort", 6}};


}  // namespace

// ---- Decoders ------------------------------------------------------------------------------------

std::optional<unsigned long long> parse_uint(std::string_view text, bool byte_units) {
  text = trim(text);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  unsigned long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string_view unit = trim(std::string_view(end, static_cast<size_t>(text.data() + text.size() - end)));
  if (unit.empty()) return value;
  if (!byte_units) return std::nullopt;
  static constexpr Named kUnits[] = {{"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
  for (const Named& u : kUnits) {
    if (!iequals(unit, u.name)) continue;
    if (u.value > 0 && value > (std::numeric_limits<unsigned long long>::max() >> u.value)) return std::nullopt;
    return value << u.value;
  }
  return std::nullopt;
}

std::optional<bool> parse_bool(std::string_view text) {
  static constexpr Named kBools[] = {{"1", 1},        {"0", 0},         {"enabled", 1}, {"disabled", 0},
                                     {"yes", 1},      {"no", 0},        {"on", 1},      {"off", 0},
                                     {"true", 1},     {"false", 0},     {"active", 1},  {"inactive", 0}};
  auto v = parse_named(text, kBools, false);
  if (!v) return std::nullopt;
  return *v != 0;
}

std::optional<nv::Return> parse_return(std::string_view text) {
  text = trim(text);
  if (text.size() > 11 && iequals(text.substr(0, 11), "NVML_ERROR_")) text.remove_prefix(11);
  else if (iequals(text, "NVML_SUCCESS")) text = "SUCCESS";
  if (!text.empty() && text[0] == '-') {
    auto v = parse_uint(text.substr(1));
    if (!v || *v > static_cast<unsigned long long>(INT_MAX)) return std::nullopt;
    return -static_cast<int>(*v);
  }
  auto v = parse_named(text, kReturnNames, true);
  if (!v || *v > INT_MAX) return std::nullopt;
  return static_cast<nv::Return>(*v);
}

std::optional<int> parse_cuda_version(std::string_view text) {
  text = trim(text);
  auto dot = text.find('.');
  if (dot == std::string_view::npos) {
    auto v = parse_uint(text);
    if (!v || *v > INT_MAX) return std::nullopt;
    return static_cast<int>(*v);
  }
  auto major = parse_uint(text.substr(0, dot));
  auto minor = parse_uint(text.substr(dot + 1));
  if (!major || !minor || *major > 100000 || *minor > 99) return std::nullopt;
  return static_cast<int>(*major * 1000 + *minor * 10);
}

std::optional<std::pair<int, int>> parse_compute_capability(std::string_view text) {
  text = trim(text);
  auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto major = parse_uint(text.substr(0, dot));
  auto minor = parse_uint(text.substr(dot + 1));
  if (!major || !minor || *major > 1000 || *minor > 1000) return std::nullopt;
  return std::pair{static_cast<int>(*major), static_cast<int>(*minor)};
}

std::optional<unsigned> parse_architecture(std::string_view text) {
  auto v = parse_named(text, kArchitectureNames, true);
  if (!v || *v > 0xffffffffLL) return std::nullopt;
  return static_cast<unsigned>(*v);
}

std::optional<int> parse_compute_mode(std::string_view text) {
  auto v = parse_named(text, kComputeModeNames, true);
  if (!v || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<int> parse_pstate(std::string_view text) {
  text = trim(text);
  if (iequals(text, "UNKNOWN")) return 32;
  if (!text.empty() && (text[0] == 'P' || text[0] == 'p')) {
    auto v = parse_uint(text.substr(1));
    if (!v || *v > 15) return std::nullopt;
    return static_cast<int>(*v);
  }
  auto v = parse_uint(text);
  if (!v || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<int> parse_topology_level(std::string_view text) {
  auto v = parse_named(text, kTopologyNames, true);
  if (!v || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<unsigned long long> parse_event_reasons(std::string_view text) {
  if (auto v = parse_uint(text)) return v;
  unsigned long long mask = 0;
  for (std::string_view part : split(text, '|')) {
    auto v = parse_named(part, kEventReasonNames, false);
    if (!v) return std::nullopt;
    mask |= static_cast<unsigned long long>(*v);
  }
  return mask;
}

std::optional<int> parse_value_type(std::string_view text) {
  auto v = parse_named(text, kValueTypeNames, true);
  if (!v || *v > 6) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<std::vector<std::vector<unsigned long long>>> parse_xid_batches(std::string_view text) {
  std::vector<std::vector<unsigned long long>> batches;
  for (std::string_view batch : split(text, '|')) {
    std::vector<unsigned long long> codes;
    for (std::string_view item : split_list(batch)) {
      const auto code = parse_uint(item);
      if (!code || *code > 0xffffffffULL) return std::nullopt;
      codes.push_back(*code);
    }
    batches.push_back(std::move(codes));
  }
  return batches;
}

std::optional<double> parse_real(std::string_view text) {
  const std::string copy(text);
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

std::optional<nv::Value> parse_field_value(std::string_view text, int value_type) {
  text = trim(text);
  nv::Value value{};
  auto signed_value = [&]() -> std::optional<long long> {
    long long v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
  };
  switch (value_type) {
    case 0: {
      double d = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
      value.dVal = d;
      return value;
    }
    case 1: {
      auto v = parse_uint(text);
      if (!v || *v > 0xffffffffULL) return std::nullopt;
      value.uiVal = static_cast<unsigned>(*v);
      return value;
    }
    case 2: {
      auto v = parse_uint(text);
      if (!v || *v > std::numeric_limits<unsigned long>::max()) return std::nullopt;
      value.ulVal = static_cast<unsigned long>(*v);
      return value;
    }
    case 3: {
      auto v = parse_uint(text);
      if (!v) return std::nullopt;
      value.ullVal = *v;
      return value;
    }
    case 4: {
      auto v = signed_value();
      if (!v) return std::nullopt;
      value.sllVal = *v;
      return value;
    }
    case 5: {
      auto v = signed_value();
      if (!v || *v < INT_MIN || *v > INT_MAX) return std::nullopt;
      value.siVal = static_cast<int>(*v);
      return value;
    }
    case 6: {
      auto v = parse_uint(text);
      if (!v || *v > 0xffff) return std::nullopt;
      value.usVal = static_cast<unsigned short>(*v);
      return value;
    }
    default: return std::nullopt;
  }
}

std::optional<std::vector<nv::ProcessInfo>> parse_processes(std::string_view text) {
  std::vector<nv::ProcessInfo> out;
  text = trim(text);
  if (text.empty() || iequals(text, "none")) return out;
  for (std::string_view item : split(text, ',')) {
    auto fields = split(trim(item), ':');
    if (fields.size() != 2 && fields.size() != 4) return std::nullopt;
    nv::ProcessInfo p{};
    auto pid = parse_uint(fields[0]);
    if (!pid || *pid > 0xffffffffULL) return std::nullopt;
    p.pid = static_cast<unsigned>(*pid);
    if (iequals(trim(fields[1]), "N/A")) {
      p.usedGpuMemory = std::numeric_limits<unsigned long long>::max();  // NVML_VALUE_NOT_AVAILABLE
    } else {
      auto mem = parse_uint(fields[1], true);
      if (!mem) return std::nullopt;
      p.usedGpuMemory = *mem;
    }
    p.gpuInstanceId = p.computeInstanceId = nv::kInvalidInstanceId;
    if (fields.size() == 4) {
      auto gi = parse_uint(fields[2]);
      auto ci = parse_uint(fields[3]);
      if (!gi || !ci || *gi > 0xffffffffULL || *ci > 0xffffffffULL) return std::nullopt;
      p.gpuInstanceId = static_cast<unsigned>(*gi);
      p.computeInstanceId = static_cast<unsigned>(*ci);
    }
    out.push_back(p);
  }
  return out;
}

std::optional<std::vector<nv::ProcessUtilizationSample>> parse_process_utilization(std::string_view text) {
  std::vector<nv::ProcessUtilizationSample> out;
  text = trim(text);
  if (text.empty() || iequals(text, "none")) return out;
  for (std::string_view item : split(text, ',')) {
    auto fields = split(trim(item), ':');
    if (fields.size() != 5) return std::nullopt;
    unsigned values[5] = {};
    for (std::size_t i = 0; i < 5; ++i) {
      auto v = parse_uint(trim(fields[i]));
      if (!v || *v > (i == 0 ? 0xffffffffULL : 100ULL)) return std::nullopt;
      values[i] = static_cast<unsigned>(*v);
    }
    out.push_back({values[0], 0, values[1], values[2], values[3], values[4]});
  }
  return out;
}

std::optional<std::vector<unsigned long long>> parse_addresses(std::string_view text) {
  std::vector<unsigned long long> out;
  text = trim(text);
  if (text.empty() || iequals(text, "none")) return out;
  for (std::string_view item : split_list(text)) {
    auto v = parse_uint(item);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<BusId> parse_bus_id(std::string_view text) {
  text = trim(text);
  auto parts = split(text, ':');
  if (parts.size() != 3) return std::nullopt;
  auto dev_fn = split(parts[2], '.');
  if (dev_fn.size() != 2) return std::nullopt;
  auto hex = [](std::string_view s, size_t max_digits) -> std::optional<unsigned> {
    if (s.empty() || s.size() > max_digits) return std::nullopt;
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  };
  auto domain = hex(parts[0], 8), bus = hex(parts[1], 2), device = hex(dev_fn[0], 2), function = hex(dev_fn[1], 1);
  if (!domain || !bus || !device || !function || *device > 31 || *function > 7) return std::nullopt;
  return BusId{*domain, *bus, *device, *function};
}

}  // namespace fake_nvml
