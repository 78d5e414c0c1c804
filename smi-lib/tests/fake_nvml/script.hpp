// The script of the fake libnvidia-ml.so.1: reading, checking and decoding its `key = value` lines.
// README.md in this folder documents the format and every key.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/nvml/nvml_api.hpp"

namespace fake_nvml {

namespace nv = hipstack::smi::detail::nvml;

struct Entry {
  std::string value;
  std::string where;  // "file:line", for messages
};
using KeyMap = std::map<std::string, Entry, std::less<>>;

enum class LoadResult { ok, unreadable, invalid };

// Reads and checks the whole script: syntax, known keys, well-formed values, cross references.
// On `invalid`, `error` says where and why.
LoadResult load_script(const char* path, KeyMap& keys, std::string& error);

// Number of devices the script describes: `device_count`, else 1 + the highest device index used.
unsigned script_device_count(const KeyMap& keys);

// Text helpers the loader and the decoders share (script_values.cpp).
std::string_view trim(std::string_view s);
bool is_digits(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);

// Decoders of values the loader has already checked (they return nullopt only on malformed input).
std::optional<unsigned long long> parse_uint(std::string_view text, bool byte_units = false);
std::optional<bool> parse_bool(std::string_view text);
std::optional<nv::Return> parse_return(std::string_view text);
std::optional<int> parse_cuda_version(std::string_view text);
std::optional<std::pair<int, int>> parse_compute_capability(std::string_view text);
std::optional<unsigned> parse_architecture(std::string_view text);
std::optional<int> parse_compute_mode(std::string_view text);
std::optional<int> parse_pstate(std::string_view text);
std::optional<int> parse_topology_level(std::string_view text);
std::optional<unsigned long long> parse_event_reasons(std::string_view text);
std::optional<int> parse_value_type(std::string_view text);
std::optional<nv::Value> parse_field_value(std::string_view text, int value_type);
std::optional<double> parse_real(std::string_view text);
// "79, 13 | 48": the XIDs of each drain, batches separated by '|' (an empty batch is allowed).
std::optional<std::vector<std::vector<unsigned long long>>> parse_xid_batches(std::string_view text);  // strtod's forms: 93.8, -1, 1e3, nan
std::optional<std::vector<nv::ProcessInfo>> parse_processes(std::string_view text);
// "pid:sm:memory:encoder:decoder, ..." (percent): one sample per process, taken at each call.
std::optional<std::vector<nv::ProcessUtilizationSample>> parse_process_utilization(std::string_view text);
std::optional<std::vector<unsigned long long>> parse_addresses(std::string_view text);

struct BusId {
  unsigned domain, bus, device, function;
};
std::optional<BusId> parse_bus_id(std::string_view text);

// Names used in keys for the enumerated arguments, indexed by the NVML enum value.
inline constexpr const char* kClockNames[] = {"graphics", "sm", "mem", "video"};
inline constexpr const char* kThresholdNames[] = {"shutdown",      "slowdown",     "mem_max",      "gpu_max",
                                                  "acoustic_min", "acoustic_curr", "acoustic_max", "gps_curr"};
inline constexpr const char* kPcieCounterNames[] = {"tx", "rx"};
inline constexpr const char* kEccTypeNames[] = {"corrected", "uncorrected"};
inline constexpr const char* kEccCounterNames[] = {"volatile", "aggregate"};
inline constexpr const char* kRetirementCauseNames[] = {"multiple_sbe", "dbe"};
// nvmlPerfPolicyType_t: 6-9 are no policy (NVML answers INVALID_ARGUMENT).
inline constexpr const char* kViolationPolicyNames[] = {"power",           "thermal",     "sync_boost", "board_limit",
                                                        "low_utilization", "reliability", "",           "",
                                                        "",                "",            "total_app_clocks",
                                                        "total_base_clocks"};

}  // namespace fake_nvml
