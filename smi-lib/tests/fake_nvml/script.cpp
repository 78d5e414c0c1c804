// Reading and checking the script of the fake libnvidia-ml.so.1 (format: README.md in this folder).
// The loader is strict: an unknown key, a malformed value or a dangling reference fails nvmlInit with
// NVML_ERROR_UNKNOWN and a message on stderr, so that a typo in a test script cannot pass silently.
#include "script.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>

namespace fake_nvml {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
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

// ---- Key rules -----------------------------------------------------------------------------------

enum class Type {
  str, u16, u32, u64, bytes, boolean, ret, cuda, cc, arch, cmode, pstate, level, reasons, procs, putil, addrs, vtype,
  field, bus_id, real, xids
};
enum class Scope { device, mig, both };

struct Rule {
  std::string_view pattern;  // dot-separated; {placeholders} described in placeholder_matches()
  Type type;
  Scope scope = Scope::both;
  size_t max_len = 0;  // strings: the NVML buffer size (the value must fit with its terminator)
};

#define FAKE_NVML_MEMBER_NAME(member, ...) #member,
constexpr const char* kMembers[] = {HIPSTACK_NVML_SYMBOLS(FAKE_NVML_MEMBER_NAME)};
#undef FAKE_NVML_MEMBER_NAME
constexpr std::string_view kGlobalMembers[] = {"init",           "shutdown",      "error_string",     "device_count",
                                               "driver_version", "cuda_version",  "gpm_sample_alloc", "gpm_sample_free",
                                               "event_set_create", "event_set_free", "event_set_wait"};

bool is_global_member(std::string_view m) {
  return std::find(std::begin(kGlobalMembers), std::end(kGlobalMembers), m) != std::end(kGlobalMembers);
}
bool is_device_member(std::string_view m) {
  return !is_global_member(m) && std::find(std::begin(kMembers), std::end(kMembers), m) != std::end(kMembers);
}

template <size_t N>
bool one_of(std::string_view tok, const char* const (&names)[N]) {
  return std::find(std::begin(names), std::end(names), tok) != std::end(names);
}

bool placeholder_matches(std::string_view ph, std::string_view tok) {
  static constexpr const char* kAttr[] = {"multiprocessor_count",      "shared_copy_engine_count",
                                          "shared_decoder_count",      "shared_encoder_count",
                                          "shared_jpeg_count",         "shared_ofa_count",
                                          "gpu_instance_slice_count",  "compute_instance_slice_count"};
  static constexpr const char* kMem[] = {"total", "reserved", "used", "free"};
  static constexpr const char* kBar1[] = {"total", "used", "free"};
  static constexpr const char* kPowerLimit[] = {"min", "max", "default", "enforced"};
  static constexpr const char* kCurrentPending[] = {"current", "pending"};
  static constexpr const char* kUtil[] = {"gpu", "memory"};
  if (ph == "{n}") return is_digits(tok) && tok.size() < 10;
  if (ph == "{clk}") return one_of(tok, kClockNames);
  if (ph == "{thr}") return one_of(tok, kThresholdNames);
  if (ph == "{txrx}") return one_of(tok, kPcieCounterNames);
  if (ph == "{eccT}") return one_of(tok, kEccTypeNames);
  if (ph == "{eccC}") return one_of(tok, kEccCounterNames);
  if (ph == "{cause}") return one_of(tok, kRetirementCauseNames);
  if (ph == "{policy}") return !tok.empty() && one_of(tok, kViolationPolicyNames);
  if (ph == "{attr}") return one_of(tok, kAttr);
  if (ph == "{mem}") return one_of(tok, kMem);
  if (ph == "{bar1}") return one_of(tok, kBar1);
  if (ph == "{pl}") return one_of(tok, kPowerLimit);
  if (ph == "{cp}") return one_of(tok, kCurrentPending);
  if (ph == "{util}") return one_of(tok, kUtil);
  if (ph == "{member}")  // members of physical devices only are listed as rules of their own
    return is_device_member(tok) && tok != "device_by_index" && tok != "max_mig_devices" &&
           tok != "mig_device_by_index";
  return false;
}

bool pattern_matches(std::string_view pattern, std::string_view key) {
  auto p = split(pattern, '.');
  auto k = split(key, '.');
  if (p.size() != k.size()) return false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].starts_with('{') ? !placeholder_matches(p[i], k[i]) : p[i] != k[i]) return false;
  }
  return true;
}

// Keys of a device, after its "N." (or a MIG device's "N.mig.S.") prefix. First match wins.
constexpr Rule kDeviceRules[] = {
    {"error", Type::ret},
    {"device_by_index.error", Type::ret, Scope::device},
    {"max_mig_devices.error", Type::ret, Scope::device},
    {"mig_device_by_index.error", Type::ret, Scope::device},
    {"mig_device_by_index.{n}.error", Type::ret, Scope::device},
    {"{member}.error", Type::ret},
    {"max_clock.{clk}.error", Type::ret},
    {"clock.{clk}.error", Type::ret},
    {"temperature_threshold.{thr}.error", Type::ret},
    {"pcie_throughput.{txrx}.error", Type::ret},
    {"total_ecc_errors.{eccT}.{eccC}.error", Type::ret},
    {"retired_pages.{cause}.error", Type::ret},
    {"violation.{policy}.error", Type::ret},
    {"nvlink_state.{n}.error", Type::ret},
    {"nvlink_remote_pci.{n}.error", Type::ret},
    {"nvlink_remote_type.{n}.error", Type::ret},
    {"common_ancestor.{n}.error", Type::ret},
    {"name", Type::str, Scope::both, nv::kNameSize},
    {"uuid", Type::str, Scope::both, nv::kUuidSize},
    {"serial", Type::str, Scope::both, nv::kSerialSize},
    {"part_number", Type::str, Scope::both, nv::kPartNumberSize},
    {"vbios_version", Type::str, Scope::both, nv::kVbiosSize},
    {"pci.bus_id", Type::bus_id},
    {"pci.bus_id_legacy", Type::str, Scope::both, 16},
    {"pci.device_id", Type::u16},
    {"pci.vendor_id", Type::u16},
    {"pci.subsystem_id", Type::u32},
    {"minor_number", Type::u32},
    {"compute_capability", Type::cc},
    {"architecture", Type::arch},
    {"attributes.memory_size_mb", Type::u64},
    {"attributes.{attr}", Type::u32},
    {"numa_node", Type::u32},
    {"memory.{mem}", Type::bytes},
    {"bar1.{bar1}", Type::bytes},
    {"power_limit.{pl}", Type::u32},
    {"max_clock.{clk}", Type::u32},
    {"max_pcie_generation", Type::u32},
    {"max_pcie_width", Type::u32},
    {"ecc_mode.{cp}", Type::boolean},
    {"mig_mode.{cp}", Type::boolean},
    {"persistence_mode", Type::boolean},
    {"compute_mode", Type::cmode},
    {"temperature", Type::u32},
    {"temperature_threshold.{thr}", Type::u32},
    {"field.{n}", Type::field},
    {"field.{n}.type", Type::vtype},
    {"field.{n}.error", Type::ret},
    {"power_usage", Type::u32},
    {"total_energy", Type::u64},
    {"violation.{policy}", Type::u64},
    {"clock.{clk}", Type::u32},
    {"utilization.{util}", Type::u32},
    {"encoder_utilization", Type::u32},
    {"encoder_utilization.period_us", Type::u32},
    {"decoder_utilization", Type::u32},
    {"decoder_utilization.period_us", Type::u32},
    {"fan_speed", Type::u32},
    {"performance_state", Type::pstate},
    {"clock_event_reasons", Type::reasons},
    {"pcie_generation", Type::u32},
    {"pcie_width", Type::u32},
    {"pcie_throughput.{txrx}", Type::u32},
    {"pcie_replay_counter", Type::u32},
    {"total_ecc_errors.{eccT}.{eccC}", Type::u64},
    {"retired_pages.{cause}", Type::addrs},
    {"remapped_rows.correctable", Type::u32},
    {"remapped_rows.uncorrectable", Type::u32},
    {"remapped_rows.pending", Type::boolean},
    {"remapped_rows.failure", Type::boolean},
    {"nvlink.count", Type::u32, Scope::device},
    {"nvlink.beyond_count_error", Type::ret, Scope::device},
    {"nvlink.{n}", Type::boolean, Scope::device},
    {"nvlink.{n}.remote", Type::bus_id, Scope::device},
    {"nvlink.{n}.remote_type", Type::str, Scope::device, 16},
    {"compute_processes", Type::procs},
    {"graphics_processes", Type::procs},
    {"process_utilization", Type::putil},
    {"max_mig_devices", Type::u32, Scope::device},
    {"gpu_instance_id", Type::u32, Scope::mig},
    {"compute_instance_id", Type::u32, Scope::mig},
    {"topology", Type::level, Scope::device},
    {"topology.{n}", Type::level, Scope::device},
    {"gpm.supported", Type::boolean, Scope::device},
    {"gpm.metric.{n}", Type::real, Scope::device},
    {"gpm.metric.{n}.error", Type::ret, Scope::device},
    {"supported_events", Type::u64, Scope::device},
    {"xid_events", Type::xids, Scope::device},
};

constexpr Rule kGlobalRules[] = {
    {"init.error", Type::ret},
    {"shutdown.error", Type::ret},
    {"device_count.error", Type::ret},
    {"driver_version.error", Type::ret},
    {"cuda_version.error", Type::ret},
    {"gpm_sample_alloc.error", Type::ret},
    {"event_set_create.error", Type::ret},
    {"event_set_wait.error", Type::ret},
    {"device_count", Type::u32},
    {"driver_version", Type::str, Scope::both, nv::kDriverVersionSize},
    {"cuda_version", Type::cuda},
};

// Checks a value against its type; `error` gets the reason.
bool value_ok(const Rule& rule, std::string_view v, std::string& error) {
  auto fail = [&](const char* what) {
    error = std::string("expected ") + what;
    return false;
  };
  switch (rule.type) {
    case Type::str:
      if (v.size() + 1 > rule.max_len)
        return fail(("a string of at most " + std::to_string(rule.max_len - 1) + " characters").c_str());
      return true;
    case Type::u16: {
      auto x = parse_uint(v);
      return (x && *x <= 0xffff) || fail("an integer 0..0xffff");
    }
    case Type::u32: {
      auto x = parse_uint(v);
      return (x && *x <= 0xffffffffULL) || fail("an integer 0..0xffffffff (decimal or 0x hex)");
    }
    case Type::u64: return parse_uint(v).has_value() || fail("an unsigned integer (decimal or 0x hex)");
    case Type::bytes: return parse_uint(v, true).has_value() || fail("a size in bytes, optionally with B/KiB/MiB/GiB/TiB");
    case Type::boolean: return parse_bool(v).has_value() || fail("a boolean (1/0, enabled/disabled, yes/no, active/inactive)");
    case Type::ret: return parse_return(v).has_value() || fail("an NVML return code name (e.g. NOT_SUPPORTED) or number");
    case Type::cuda: return parse_cuda_version(v).has_value() || fail("a CUDA version such as 13000 or 13.0");
    case Type::cc: return parse_compute_capability(v).has_value() || fail("a compute capability such as 9.0");
    case Type::arch: return parse_architecture(v).has_value() || fail("an architecture name (HOPPER, ...) or number");
    case Type::cmode: return parse_compute_mode(v).has_value() || fail("a compute mode (DEFAULT, PROHIBITED, EXCLUSIVE_PROCESS) or number");
    case Type::pstate: return parse_pstate(v).has_value() || fail("a performance state P0..P15, UNKNOWN or number");
    case Type::level: return parse_topology_level(v).has_value() || fail("a topology level (INTERNAL, SINGLE/PIX, MULTIPLE/PXB, HOSTBRIDGE/PHB, NODE, SYSTEM/SYS) or number");
    case Type::reasons: return parse_event_reasons(v).has_value() || fail("a bit mask or reason names joined with |");
    case Type::procs: return parse_processes(v).has_value() || fail("a process list pid:memory[:gpu_instance:compute_instance], ... or none");
    case Type::putil: return parse_process_utilization(v).has_value() || fail("a list pid:sm:memory:encoder:decoder (percent), ... or none");
    case Type::addrs: return parse_addresses(v).has_value() || fail("a list of page addresses or none");
    case Type::vtype: return parse_value_type(v).has_value() || fail("a value type (double, uint, ulong, ullong, sllong, sint, ushort)");
    case Type::field: return true;  // checked once its type is known (cross_check)
    case Type::bus_id: return parse_bus_id(v).has_value() || fail("a PCI bus id such as 00000000:00:06.0");
    case Type::real: return parse_real(v).has_value() || fail("a decimal number such as 93.8 or -1");
    case Type::xids: return parse_xid_batches(v).has_value() || fail("XID codes separated by commas, batches by | (79, 13 | 48)");
  }
  return false;
}

const Rule* find_rule(std::span<const Rule> rules, std::string_view key, bool mig) {
  for (const Rule& r : rules) {
    if (r.scope == Scope::device && mig) continue;
    if (r.scope == Scope::mig && !mig) continue;
    if (pattern_matches(r.pattern, key)) return &r;
  }
  return nullptr;
}

// Splits "N.rest" into N and rest.
bool split_index(std::string_view key, unsigned& index, std::string_view& rest) {
  auto dot = key.find('.');
  if (dot == std::string_view::npos || !is_digits(key.substr(0, dot)) || dot > 6) return false;
  index = static_cast<unsigned>(*parse_uint(key.substr(0, dot)));
  rest = key.substr(dot + 1);
  return true;
}

bool check_key(std::string_view key, std::string_view value, std::string& error) {
  unsigned index = 0;
  std::string_view rest;
  if (!split_index(key, index, rest)) {
    const Rule* r = find_rule(kGlobalRules, key, false);
    if (!r) return error = "unknown key", false;
    return value_ok(*r, value, error);
  }
  bool mig = false;
  if (rest.starts_with("mig.")) {
    unsigned slot = 0;
    std::string_view tail;
    if (!split_index(rest.substr(4), slot, tail)) return error = "expected N.mig.SLOT.<key>", false;
    rest = tail;
    mig = true;
  }
  const Rule* r = find_rule(kDeviceRules, rest, mig);
  if (!r) {
    if (!mig && find_rule(kDeviceRules, rest, true)) return error = "only valid for a MIG device (N.mig.S.)", false;
    if (mig && find_rule(kDeviceRules, rest, false)) return error = "not valid for a MIG device", false;
    return error = "unknown key", false;
  }
  return value_ok(*r, value, error);
}

const Entry* lookup(const KeyMap& keys, const std::string& key) {
  auto it = keys.find(key);
  return it == keys.end() ? nullptr : &it->second;
}

// References between keys: device indices, MIG slots, NVLink links, topology peers, field types.
bool cross_check(const KeyMap& keys, std::string& error) {
  const Entry* count_entry = lookup(keys, "device_count");
  const unsigned count = script_device_count(keys);
  for (const auto& item : keys) {
    const std::string& key = item.first;
    const Entry& entry = item.second;
    auto fail = [&](const std::string& why) {
      error = entry.where + ": " + key + ": " + why;
      return false;
    };
    unsigned index = 0;
    std::string_view rest;
    if (!split_index(key, index, rest)) continue;
    if (count_entry && index >= count) return fail("device index is not below device_count");
    const std::string dev = std::to_string(index) + ".";
    std::string prefix = dev;
    if (rest.starts_with("mig.")) {
      unsigned slot = 0;
      std::string_view tail;
      split_index(rest.substr(4), slot, tail);
      const Entry* max = lookup(keys, dev + "max_mig_devices");
      if (!max || slot >= *parse_uint(max->value)) return fail("MIG slot needs " + dev + "max_mig_devices above it");
      prefix += "mig." + std::to_string(slot) + ".";
      rest = tail;
    }
    auto parts = split(rest, '.');
    if (parts.size() >= 2 && parts[0] == "nvlink" && is_digits(parts[1])) {
      const Entry* links = lookup(keys, dev + "nvlink.count");
      if (!links || *parse_uint(parts[1]) >= *parse_uint(links->value))
        return fail("link needs " + dev + "nvlink.count above it");
    }
    if (parts.size() == 2 && parts[0] == "nvlink" && parts[1] == "count" && *parse_uint(entry.value) > nv::kNvlinkMaxLinks)
      return fail("at most 18 links (NVML_NVLINK_MAX_LINKS)");
    if (parts.size() == 2 && parts[0] == "topology") {
      auto peer = *parse_uint(parts[1]);
      if (peer == index) return fail("a device's topology to itself is INTERNAL, not scripted");
      if (peer >= count) return fail("peer device index is not below the device count");
    }
    if (parts.size() == 2 && parts[0] == "field") {
      const Entry* type = lookup(keys, prefix + "field." + std::string(parts[1]) + ".type");
      int vt = type ? *parse_value_type(type->value) : 1;
      if (!parse_field_value(entry.value, vt)) return fail("value does not fit the field's value type");
    }
  }
  return true;
}

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

unsigned script_device_count(const KeyMap& keys) {
  if (auto it = keys.find("device_count"); it != keys.end()) return static_cast<unsigned>(*parse_uint(it->second.value));
  unsigned count = 0;
  for (const auto& [key, entry] : keys) {
    unsigned index = 0;
    std::string_view rest;
    if (split_index(key, index, rest)) count = std::max(count, index + 1);
  }
  return count;
}

LoadResult load_script(const char* path, KeyMap& keys, std::string& error) {
  keys.clear();
  std::ifstream in(path);
  if (!in) {
    error = std::string(path) + ": cannot be read";
    return LoadResult::unreadable;
  }
  std::string line;
  for (unsigned number = 1; std::getline(in, line); ++number) {
    const std::string where = std::string(path) + ":" + std::to_string(number);
    auto fail = [&](const std::string& why) {
      error = where + ": " + why;
      keys.clear();
      return LoadResult::invalid;
    };
    std::string_view s = trim(line);
    if (s.empty() || s.front() == '#') continue;
    auto eq = s.find('=');
    if (eq == std::string_view::npos) return fail("expected `key = value`");
    std::string_view key = trim(s.substr(0, eq));
    std::string_view value = trim(s.substr(eq + 1));
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                 c == '_' || c == '.';
        }))
      return fail("a key is made of a-z, 0-9, _ and .");
    if (!value.empty() && value.front() == '"') {
      auto close = value.find('"', 1);
      if (close == std::string_view::npos) return fail("unterminated quote");
      std::string_view after = trim(value.substr(close + 1));
      if (!after.empty() && after.front() != '#') return fail("text after the closing quote");
      value = value.substr(1, close - 1);
    } else {
      // A comment starts at a '#' that begins the value or follows a blank.
      for (size_t i = 0; i < value.size(); ++i) {
        if (value[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(value[i - 1])))) {
          value = trim(value.substr(0, i));
          break;
        }
      }
    }
    std::string why;
    if (!check_key(key, value, why)) return fail(std::string(key) + ": " + why);
    if (keys.contains(key)) return fail(std::string(key) + ": already set at " + keys.find(key)->second.where);
    keys.emplace(std::string(key), Entry{std::string(value), where});
  }
  if (!cross_check(keys, error)) {
    keys.clear();
    return LoadResult::invalid;
  }
  return LoadResult::ok;
}

}  // namespace fake_nvml
