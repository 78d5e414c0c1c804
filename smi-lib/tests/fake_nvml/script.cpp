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
    {"display_active", Type::boolean},
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
