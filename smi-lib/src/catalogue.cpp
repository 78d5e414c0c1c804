// The runtime form of the metric catalogue (hipstack/smi_catalogue.h) and the small enums' names.
#include <hipstack/smi.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
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

// The values a state metric can take, as its source documents them (the catalogue's `states`
// column): amdgpu's power_dpm_force_performance_level and pp_power_profile_mode names (the kernel's
// amdgpu_pm.c), NVML's P-states and NVLink states.
constexpr std::string_view kPerformanceLevels[] = {"auto",           "low",          "high",
                                                   "manual",         "profile_standard", "profile_min_sclk",
                                                   "profile_min_mclk", "profile_peak", "perf_determinism"};
constexpr std::string_view kPowerProfiles[] = {"BOOTUP_DEFAULT", "3D_FULL_SCREEN", "POWER_SAVING", "VIDEO", "VR",
                                               "COMPUTE",        "CUSTOM",         "WINDOW_3D",    "CAPPED", "UNCAPPED"};
constexpr std::string_view kPerformanceStates[] = {"P0", "P1", "P2",  "P3",  "P4",  "P5",  "P6",  "P7",
                                                   "P8", "P9", "P10", "P11", "P12", "P13", "P14", "P15"};
constexpr std::string_view kLinkStates[] = {"active", "inactive"};

// The tokens of the catalogue's later columns, a namespace each (the rows write them bare).
namespace cost_column {
constexpr Cost CHEAP = Cost::cheap, COSTLY = Cost::costly, WINDOW = Cost::window, BLOCKING = Cost::blocking;
}
namespace group_column {
enum : std::uint32_t {
  NO_GROUP = 0,
  TEMPERATURE = 1U << 0,
  POWER = 1U << 1,
  MEMORY = 1U << 2,
  CLOCKS = 1U << 3,
  ACTIVITY = 1U << 4,
  PCIE = 1U << 5,
  XGMI = 1U << 6,
  ERRORS = 1U << 7,
  THROTTLE = 1U << 8,
  FAN = 1U << 9,
  VOLTAGE = 1U << 10,
  PARTITION = 1U << 11,
  EVENTS = 1U << 12,
};
}
namespace series_column {
constexpr DefaultSeries DEFAULT = DefaultSeries::series, FULL = DefaultSeries::full_only, LABEL = DefaultSeries::info_label;
}
namespace states_column {
using States = std::span<const std::string_view>;
constexpr States NO_STATES{}, PERFORMANCE_LEVELS{kPerformanceLevels}, POWER_PROFILES{kPowerProfiles},
    PERFORMANCE_STATES{kPerformanceStates}, LINK_STATES{kLinkStates};
}

// What the catalogue says of a metric beyond MetricInfo (a C++ value type, frozen within a SOVERSION:
// docs/api.md, "ABI"), generated from the same rows.
struct Uses {
  std::uint32_t groups;
  std::optional<MetricLimit> limit;
  DefaultSeries series;
  std::span<const std::string_view> states;
};

constexpr std::array kCatalogue = {
#define HIPSTACK_SMI_X(id, name, unit, type, scope, kind, instance, cost_class, groups, limit, series_use, state_set, help) \
  MetricInfo{MetricId::name, #name, u::unit, t::type, s::scope, k::kind, instance, help, cost_column::cost_class},
    HIPSTACK_SMI_CATALOGUE(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
};

#define CRITICAL(m) MetricLimit{MetricId::m, LimitRole::critical}
#define CAP(m) MetricLimit{MetricId::m, LimitRole::cap}
#define MAXIMUM(m) MetricLimit{MetricId::m, LimitRole::maximum}
#define SHARE_OF(m) MetricLimit{MetricId::m, LimitRole::share_of}
#define NO_LIMIT std::nullopt
constexpr std::array<Uses, kCatalogue.size()> kUses = {{
#define HIPSTACK_SMI_X(id, name, unit, type, scope, kind, instance, cost_class, groups, limit, series_use, state_set, help) \
  Uses{[] { using namespace group_column; return std::uint32_t{groups}; }(), limit, series_column::series_use, states_column::state_set},
    HIPSTACK_SMI_CATALOGUE(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
}};
#undef CRITICAL
#undef CAP
#undef MAXIMUM
#undef SHARE_OF
#undef NO_LIMIT

// Each class in its place: WINDOW is the window kind's cost, and a costly read is one a sampler
// may put off, so only live values and counters are costly.
constexpr bool costs_fit_kinds() {
  for (const MetricInfo& m : kCatalogue) {
    if ((m.cost == Cost::window) != (m.kind == Kind::window)) return false;
    if (m.cost == Cost::costly && m.kind != Kind::live && m.kind != Kind::counter) return false;
  }
  return true;
}
static_assert(costs_fit_kinds(), "cost WINDOW goes with kind WINDOW, and a COSTLY metric is LIVE or COUNTER");

// A state set names the values of a text; a limit is a single value of the same unit.
constexpr bool uses_fit_metrics() {
  for (std::size_t i = 0; i < kCatalogue.size(); ++i) {
    if (!kUses[i].states.empty() && kCatalogue[i].type != ValueType::text) return false;
    if (!kUses[i].limit) continue;
    const auto limit = std::find_if(kCatalogue.begin(), kCatalogue.end(),
                                    [&](const MetricInfo& m) { return m.id == kUses[i].limit->limit; });
    if (limit == kCatalogue.end() || limit->unit != kCatalogue[i].unit || !limit->instance_label.empty()) return false;
  }
  return true;
}
static_assert(uses_fit_metrics(), "states belong to text metrics; a limit is a single metric of the value's unit");

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

constexpr bool changes(Kind kind) { return kind != Kind::identity && kind != Kind::static_info; }

// The members of a group in the order tables list them: the values that change (live values,
// counters, windows) first, then the facts they are read against, each in catalogue order.
template <std::uint32_t Bit>
constexpr auto members_of() {
  constexpr std::size_t count = [] {
    std::size_t n = 0;
    for (const Uses& u : kUses) n += (u.groups & Bit) != 0 ? 1 : 0;
    return n;
  }();
  std::array<MetricId, count> members{};
  std::size_t next = 0;
  for (const bool changing : {true, false}) {
    for (std::size_t i = 0; i < kCatalogue.size(); ++i) {
      if ((kUses[i].groups & Bit) != 0 && changes(kCatalogue[i].kind) == changing) members[next++] = kCatalogue[i].id;
    }
  }
  return members;
}
template <std::uint32_t Bit>
constexpr auto kMembers = members_of<Bit>();

// The groups of `-m GROUP` (a metric may be in several: the rows' `groups` column).
constexpr MetricGroup kGroups[] = {
    {"temperature", "Temperatures and their critical and emergency limits", kMembers<group_column::TEMPERATURE>},
    {"power", "Power draw, energy and the power cap with its limits", kMembers<group_column::POWER>},
    {"memory", "VRAM, CPU-visible VRAM, GTT and BAR1: totals and use", kMembers<group_column::MEMORY>},
    {"clocks", "Current clocks, their maxima and the current DPM levels", kMembers<group_column::CLOCKS>},
    {"activity", "Engine busy shares, activity counters and the activity over a window (SM, tensor, DRAM, links)",
     kMembers<group_column::ACTIVITY>},
    {"pcie", "PCIe link now and at most, bandwidth and link error counters", kMembers<group_column::PCIE>},
    {"xgmi", "XGMI and NVLink links: state, speed, width and data moved", kMembers<group_column::XGMI>},
    {"errors", "ECC and RAS error counts, retired and remapped memory", kMembers<group_column::ERRORS>},
    {"throttle", "Throttle status, violation residencies and times, performance level and profile", kMembers<group_column::THROTTLE>},
    {"fan", "Fan speed and duty cycle", kMembers<group_column::FAN>},
    {"voltage", "Core, SoC and memory voltages", kMembers<group_column::VOLTAGE>},
    {"partition", "Compute and memory partition modes (MIG mode)", kMembers<group_column::PARTITION>},
    {"events", "What the event rules follow (events.md): error counts, throttling, partition modes, XIDs, KFD events",
     kMembers<group_column::EVENTS>},
};
static_assert(std::size(kGroups) == std::bit_width(std::uint32_t{group_column::EVENTS}), "one kGroups entry per group bit");
static_assert([] {
  for (const MetricGroup& g : kGroups) {
    if (g.members.empty()) return false;
  }
  return true;
}(), "every group has members");

const Uses* uses_of(MetricId id) noexcept {
  const auto number = static_cast<std::uint32_t>(id);
  if (number >= kIndexById.size() || kIndexById[number] < 0) return nullptr;
  return &kUses[static_cast<std::size_t>(kIndexById[number])];
}

}  // namespace

std::span<const std::string_view> metric_states(MetricId id) noexcept {
  const Uses* uses = uses_of(id);
  return uses == nullptr ? std::span<const std::string_view>{} : uses->states;
}

std::optional<MetricLimit> metric_limit(MetricId value) noexcept {
  const Uses* uses = uses_of(value);
  return uses == nullptr ? std::nullopt : uses->limit;
}

DefaultSeries metric_default_series(MetricId id) noexcept {
  const Uses* uses = uses_of(id);
  return uses == nullptr ? DefaultSeries::full_only : uses->series;
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

std::string_view limit_role_name(LimitRole role) noexcept {
  switch (role) {
    case LimitRole::critical: return "critical";
    case LimitRole::cap: return "cap";
    case LimitRole::maximum: return "maximum";
    case LimitRole::share_of: return "share_of";
  }
  return "critical";
}

std::string_view default_series_name(DefaultSeries series) noexcept {
  switch (series) {
    case DefaultSeries::full_only: return "full_only";
    case DefaultSeries::series: return "series";
    case DefaultSeries::info_label: return "info_label";
  }
  return "full_only";
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
