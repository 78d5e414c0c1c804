// The runtime form of the metric catalogue (hipstack/smi_catalogue.h) and the small enums' names.
#include <hipstack/smi.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>

#include "readings.hpp"

namespace hipstack::smi {
namespace {

namespace u {
#define HIPSTACK_SMI_UNIT_X(NAME, name, symbol, base_suffix, base_scale) constexpr Unit NAME = Unit::name;
HIPSTACK_SMI_UNITS(HIPSTACK_SMI_UNIT_X)
#undef HIPSTACK_SMI_UNIT_X
}  // namespace u
namespace t {
constexpr ValueType INTEGER = ValueType::integer, REAL = ValueType::real, TEXT = ValueType::text;
}
namespace s {
constexpr Scope DEVICE = Scope::device, PARTITION = Scope::partition, PROCESS = Scope::process,
                LINK = Scope::link;
}
namespace k {
constexpr Kind IDENTITY = Kind::identity, STATIC = Kind::static_info, LIVE = Kind::live, COUNTER = Kind::counter,
               WINDOW = Kind::window;
}

// The metrics of the costly class (smi.hpp, Cost), each with the dearest read measured for it
// (bench/nvml_floor calls: each call once per GPU a second apart, as a sampler makes it, on 4 H200s,
// driver 580.159.04; NVML answers calls repeated within a few ms from a cache, far cheaper;
// docs/performance.md has the table). Values that change slowly or only count up, so a sampler
// loses little by reading them every few seconds. ECC totals, retired pages and remapped rows stay
// cheap: about a microsecond each there.
constexpr MetricId kCostly[] = {
    MetricId::energy_consumed,    // nvmlDeviceGetTotalEnergyConsumption (or its field value): 3.3 ms
    MetricId::nvlink_state,       // nvmlDeviceGetNvLinkState, one call per link: 1.6 ms for 18 links
    MetricId::pcie_replay_count,  // nvmlDeviceGetPcieReplayCounter: 0.4 ms (its field value 0.8 ms)
    MetricId::violation_time,     // nvmlDeviceGetViolationStatus, one call per policy: 0.6-0.9 ms each, 8 policies
                                  // (H200, 2026-11-29: the calls' own referenceTime stamps)
    MetricId::bar1_used,          // nvmlDeviceGetBAR1MemoryInfo: 0.4 ms
    MetricId::fan_pwm,            // nvmlDeviceGetFanSpeed: 0.4 ms to answer "not supported" on a fanless H200
    MetricId::fan_pwm_level,      // amdgpu: the same pwm1 read as fan_pwm, so both come in the same sample
    // amdgpu: each read makes the driver query the error registers of its RAS block (ras/*_err_count)
    // or format the whole bad-page table (gpu_vram_bad_pages).
    MetricId::ras_correctable, MetricId::ras_uncorrectable, MetricId::ras_deferred,
    MetricId::bad_pages_reserved, MetricId::bad_pages_pending, MetricId::bad_pages_failed,
    // amdgpu: a walk of /proc/*/fdinfo for DRM clients (NVML's two process lists: ~35 µs).
    MetricId::running_processes,
};
// Reads that wait by design (nvmlDeviceGetPcieThroughput counts for 20 ms, amdgpu's pcie_bw for 1 s).
constexpr MetricId kBlocking[] = {MetricId::pcie_rx, MetricId::pcie_tx};

constexpr Cost cost_of(MetricId id, Kind kind) {
  if (kind == Kind::window) return Cost::window;
  for (const MetricId m : kBlocking) {
    if (m == id) return Cost::blocking;
  }
  for (const MetricId m : kCostly) {
    if (m == id) return Cost::costly;
  }
  return Cost::cheap;
}

constexpr std::array kCatalogue = {
#define HIPSTACK_SMI_X(id, name, unit, type, scope, kind, instance, help) \
  MetricInfo{MetricId::name, #name, u::unit, t::type, s::scope, k::kind, instance, help, cost_of(MetricId::name, k::kind)},
    HIPSTACK_SMI_CATALOGUE(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
};

// A costly read is one a sampler may put off: only live values and counters are sampled.
constexpr bool costly_are_sampled() {
  for (const MetricInfo& m : kCatalogue) {
    if (m.cost == Cost::costly && m.kind != Kind::live && m.kind != Kind::counter) return false;
  }
  return true;
}
static_assert(costly_are_sampled(), "a costly metric must be of the LIVE or COUNTER kind");

// Each id's row in kCatalogue (-1: no such metric): find_metric(MetricId) runs for every reading
// every sample, in every output.
constexpr std::size_t kMaxId = [] {
  std::uint32_t top = 0;
  for (const MetricInfo& m : kCatalogue) top = std::max(top, static_cast<std::uint32_t>(m.id));
  return top;
}();
// Tables indexed by id (System::sample's flags, AskedFor) have detail::kMetricIdSpace entries.
static_assert(kMaxId < detail::kMetricIdSpace, "catalogue ids must stay below kMetricIdSpace (readings.hpp)");
constexpr auto kIndexById = [] {
  std::array<std::int16_t, kMaxId + 1> index{};
  index.fill(-1);
  for (std::size_t i = 0; i < kCatalogue.size(); ++i) index[static_cast<std::uint32_t>(kCatalogue[i].id)] = static_cast<std::int16_t>(i);
  return index;
}();

// The groups of `-m GROUP`. A metric may be in several (power_cap: power and limits).
using enum MetricId;
constexpr MetricId kTemperature[] = {temperature_edge, temperature_junction, temperature_memory, temperature_hbm,
                                     temperature_vr_gfx, temperature_vr_soc, temperature_vr_mem,
                                     temperature_edge_critical, temperature_junction_critical,
                                     temperature_memory_critical, temperature_edge_emergency,
                                     temperature_junction_emergency, temperature_memory_emergency};
constexpr MetricId kPower[] = {power_average, power_current, energy_consumed, power_cap, power_cap_min, power_cap_max,
                               power_cap_default};
constexpr MetricId kMemory[] = {vram_total, vram_used, vram_free, vram_reserved, vram_visible_total,
                                vram_visible_used, gtt_total, gtt_used, bar1_total, bar1_used, vram_vendor};
constexpr MetricId kClocks[] = {clock_sclk, clock_mclk, clock_fclk, clock_socclk, clock_vclk, clock_dclk, clock_dcefclk,
                                clock_sclk_xcc, clock_sm, clock_video, clock_sclk_max, clock_mclk_max, clock_sm_max,
                                clock_video_max, dpm_level_current, dpm_clock_current};
constexpr MetricId kActivity[] = {gpu_busy, memory_busy, media_busy, encoder_busy, decoder_busy,
                                  gfx_activity_accumulated, graphics_active, sm_active, sm_occupancy,
                                  tensor_active, fp64_active, fp32_active, fp16_active, dram_active,
                                  memory_active, running_processes, xcp_busy, pcie_rx_rate, pcie_tx_rate, pcie_bandwidth_average,
                                  nvlink_rx_rate, nvlink_tx_rate, xgmi_read_rate, xgmi_write_rate,
                                  violation_share};
constexpr MetricId kPcie[] = {pcie_speed, pcie_width, pcie_speed_max, pcie_width_max, pcie_bandwidth, pcie_rx, pcie_tx,
                              pcie_replay_count, pcie_nak_sent_count, pcie_nak_received_count, pcie_recovery_count};
constexpr MetricId kXgmi[] = {xgmi_link_speed, xgmi_link_width, xgmi_read_data, xgmi_write_data, xgmi_link_status, xgmi_hive_id,
                              xgmi_physical_id, nvlink_state};
constexpr MetricId kErrors[] = {ecc_mode, ecc_mode_pending, ecc_corrected_volatile, ecc_uncorrected_volatile, ecc_corrected_aggregate,
                                ecc_uncorrected_aggregate, ras_correctable, ras_uncorrectable, ras_deferred,
                                retired_pages, remapped_rows, remapped_rows_pending, remapped_rows_failed,
                                bad_pages_reserved, bad_pages_pending, bad_pages_failed, bad_page_threshold};
constexpr MetricId kThrottle[] = {throttle_status, violation_accumulation_count, violation_residency, violation_time,
                                  performance_level, performance_state, power_profile};
constexpr MetricId kFan[] = {fan_speed, fan_pwm, fan_pwm_level, fan_speed_max, fan_pwm_level_max};
constexpr MetricId kVoltage[] = {voltage_gfx, voltage_soc, voltage_memory, voltage_northbridge};
constexpr MetricId kPartition[] = {compute_partition, memory_partition, compute_partition_available,
                                   memory_partition_available, mig_mode, mig_mode_pending};

constexpr MetricGroup kGroups[] = {
    {"temperature", "Temperatures and their critical and emergency limits", kTemperature},
    {"power", "Power draw, energy and the power cap with its limits", kPower},
    {"memory", "VRAM, CPU-visible VRAM, GTT and BAR1: totals and use", kMemory},
    {"clocks", "Current clocks, their maxima and the current DPM levels", kClocks},
    {"activity", "Engine busy shares, activity counters and the activity over a window (SM, tensor, DRAM, links)", kActivity},
    {"pcie", "PCIe link now and at most, bandwidth and link error counters", kPcie},
    {"xgmi", "XGMI and NVLink links: state, speed, width and data moved", kXgmi},
    {"errors", "ECC and RAS error counts, retired and remapped memory", kErrors},
    {"throttle", "Throttle status, violation residencies and times, performance level and profile", kThrottle},
    {"fan", "Fan speed and duty cycle", kFan},
    {"voltage", "Core, SoC and memory voltages", kVoltage},
    {"partition", "Compute and memory partition modes (MIG mode)", kPartition},
};

// The values a state metric can take, as its source documents them: amdgpu's
// power_dpm_force_performance_level and pp_power_profile_mode names (the kernel's amdgpu_pm.c),
// NVML's P-states and NVLink states. Text metrics not listed take open-ended values.
constexpr std::string_view kPerformanceLevels[] = {"auto",           "low",          "high",
                                                   "manual",         "profile_standard", "profile_min_sclk",
                                                   "profile_min_mclk", "profile_peak", "perf_determinism"};
constexpr std::string_view kPowerProfiles[] = {"BOOTUP_DEFAULT", "3D_FULL_SCREEN", "POWER_SAVING", "VIDEO", "VR",
                                               "COMPUTE",        "CUSTOM",         "WINDOW_3D",    "CAPPED", "UNCAPPED"};
constexpr std::string_view kPerformanceStates[] = {"P0", "P1", "P2",  "P3",  "P4",  "P5",  "P6",  "P7",
                                                   "P8", "P9", "P10", "P11", "P12", "P13", "P14", "P15"};
constexpr std::string_view kLinkStates[] = {"active", "inactive"};

}  // namespace

std::span<const std::string_view> metric_states(MetricId id) noexcept {
  switch (id) {
    case MetricId::performance_level: return kPerformanceLevels;
    case MetricId::power_profile: return kPowerProfiles;
    case MetricId::performance_state: return kPerformanceStates;
    case MetricId::nvlink_state: return kLinkStates;
    default: return {};
  }
}

std::span<const MetricInfo> catalogue() noexcept { return kCatalogue; }

std::span<const MetricGroup> metric_groups() noexcept { return kGroups; }

const MetricGroup* find_metric_group(std::string_view name) noexcept {
  const auto it = std::find_if(std::begin(kGroups), std::end(kGroups), [name](const MetricGroup& g) { return g.name == name; });
  return it == std::end(kGroups) ? nullptr : &*it;
}

const MetricInfo* find_metric(MetricId id) noexcept {
  const auto number = static_cast<std::uint32_t>(id);
  if (number >= kIndexById.size() || kIndexById[number] < 0) return nullptr;
  return &kCatalogue[static_cast<std::size_t>(kIndexById[number])];
}

const MetricInfo* find_metric(std::string_view name) noexcept {
  const auto it =
      std::find_if(kCatalogue.begin(), kCatalogue.end(), [name](const MetricInfo& m) { return m.name == name; });
  return it == kCatalogue.end() ? nullptr : &*it;
}

namespace {

struct UnitRow {
  std::string_view name, symbol;
  UnitBase base;
};
constexpr UnitRow kUnits[] = {
#define HIPSTACK_SMI_UNIT_X(NAME, name, symbol, base_suffix, base_scale) {#name, symbol, {base_suffix, base_scale}},
    HIPSTACK_SMI_UNITS(HIPSTACK_SMI_UNIT_X)
#undef HIPSTACK_SMI_UNIT_X
};

const UnitRow& unit_row(Unit unit) noexcept {
  const auto index = static_cast<std::size_t>(unit);
  return index < std::size(kUnits) ? kUnits[index] : kUnits[0];
}

}  // namespace

std::string_view unit_symbol(Unit unit) noexcept { return unit_row(unit).symbol; }
std::string_view unit_name(Unit unit) noexcept { return unit_row(unit).name; }
UnitBase unit_base(Unit unit) noexcept { return unit_row(unit).base; }

std::string_view value_type_name(ValueType type) noexcept {
  switch (type) {
    case ValueType::integer: return "integer";
    case ValueType::real: return "real";
    case ValueType::text: return "text";
  }
  return "text";
}

std::string_view cost_name(Cost cost) noexcept {
  switch (cost) {
    case Cost::cheap: return "cheap";
    case Cost::costly: return "costly";
    case Cost::window: return "window";
    case Cost::blocking: return "blocking";
  }
  return "cheap";
}

std::string_view kind_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::identity: return "identity";
    case Kind::static_info: return "static";
    case Kind::live: return "live";
    case Kind::counter: return "counter";
    case Kind::window: return "window";
  }
  return "live";
}

std::string_view scope_name(Scope scope) noexcept {
  switch (scope) {
    case Scope::device: return "device";
    case Scope::partition: return "partition";
    case Scope::process: return "process";
    case Scope::link: return "link";
  }
  return "device";
}

std::string_view status_name(Status status) noexcept {
  switch (status) {
    case Status::ok: return "ok";
    case Status::not_supported: return "not_supported";
    case Status::unavailable: return "unavailable";
    case Status::error: return "error";
  }
  return "error";
}

std::optional<double> Reading::number() const noexcept {
  if (status != Status::ok) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::nullopt;
}

std::optional<std::string_view> Reading::text() const noexcept {
  if (status != Status::ok) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&value)) return std::string_view(*s);
  return std::nullopt;
}

namespace detail {

Status status_for_errno(int error_code) noexcept {
  switch (error_code) {
    case 0: return Status::ok;
    case ENOENT:
    case ENOTDIR:
    case EOPNOTSUPP:
    case ENODEV:
      return Status::not_supported;
    case EBUSY:
    case EAGAIN:
    case EACCES:
    case EPERM:
    case ETIMEDOUT:
    case ENODATA:
    case EINTR:
      return Status::unavailable;
    default:
      return Status::error;
  }
}

void ReadingList::failed(MetricId id, int error_code, std::string detail, std::string instance) {
  const Status status = status_for_errno(error_code);
  push(id, std::move(instance), status == Status::ok ? Status::error : status, error_code, std::monostate{},
       std::move(detail));
}

}  // namespace detail
}  // namespace hipstack::smi
