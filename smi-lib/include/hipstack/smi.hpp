// hipstack/smi.hpp: the C++ API of libhipstack-smi.
//
// A System is opened once (live /sys and /proc, or a recorded capture), discovers the GPUs of every
// available backend and answers questions about them. Every reading carries a Status: a metric the
// hardware or driver does not provide is a value (not_supported), not an exception. Methods of one
// System may be called from several threads at once.
#pragma once

#include <hipstack/smi_catalogue.h>
#include <hipstack/smi_checks.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#if defined(__GNUC__)
#define HIPSTACK_SMI_CXX_API __attribute__((visibility("default")))
#else
#define HIPSTACK_SMI_CXX_API
#endif

namespace hipstack::smi {

// One value per row of HIPSTACK_SMI_UNITS (smi_catalogue.h), in its order.
enum class Unit : std::uint8_t {
#define HIPSTACK_SMI_UNIT_X(NAME, name, symbol, base_suffix, base_scale) name,
  HIPSTACK_SMI_UNITS(HIPSTACK_SMI_UNIT_X)
#undef HIPSTACK_SMI_UNIT_X
};

enum class ValueType : std::uint8_t { integer, real, text };
enum class Scope : std::uint8_t { device, partition, process, link };
// counter: a live reading that only grows while the driver is loaded (sampled with the live ones).
// window: an average over the window between two looks at the device's counters (engine, SM,
// tensor and DRAM activity, link rates): sampled only when SampleOptions::window asks.
enum class Kind : std::uint8_t { identity, static_info, live, counter, window };
// What reading a metric costs, so a sampler can read each at its own rate (docs/performance.md,
// "Cost classes"). A class is the dearest any backend measured for the metric:
//   cheap     a file read or a driver call of microseconds: every sample
//   costly    a driver round trip of 100 µs to milliseconds on some backend (NVML's energy counter:
//             ~4 ms), for a value that changes slowly or only counts up: hipstack-smid reads it every
//             costly_interval_ms and exports the last exact value between reads
//   window    the WINDOW kind: two looks at the device's counters, at its own interval
//   blocking  the read itself waits (PCIe throughput: 20 ms to 1 s): only on request
enum class Cost : std::uint8_t { cheap, costly, window, blocking };

enum class MetricId : std::uint32_t {
#define HIPSTACK_SMI_X(id, name, unit, type, scope, kind, instance, cost, groups, limit, series, states, help) name = id,
  HIPSTACK_SMI_CATALOGUE(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
};

struct MetricInfo {
  MetricId id;
  std::string_view name;
  Unit unit;
  ValueType type;
  Scope scope;
  Kind kind;
  std::string_view instance_label;  // empty for single-valued metrics
  std::string_view help;
  Cost cost;
};

// Every metric, in catalogue order.
HIPSTACK_SMI_CXX_API std::span<const MetricInfo> catalogue() noexcept;
HIPSTACK_SMI_CXX_API const MetricInfo* find_metric(MetricId id) noexcept;
HIPSTACK_SMI_CXX_API const MetricInfo* find_metric(std::string_view name) noexcept;
// Named sets of catalogue metrics, for `-m temperature` and the like (docs/metrics.md, "Groups").
// Defined once beside the catalogue (its `groups` column); no group shares a name with a metric.
struct MetricGroup {
  std::string_view name;
  std::string_view help;
  std::span<const MetricId> members;  // what changes first (live values, counters, windows), then facts; each in catalogue order
};
HIPSTACK_SMI_CXX_API std::span<const MetricGroup> metric_groups() noexcept;
// The values a text metric that names a state can take (performance_level, power_profile,
// performance_state, nvlink_state), in the source's documented order; empty for a text metric with
// open-ended values. A newer driver may report a state not listed: callers must allow for it.
HIPSTACK_SMI_CXX_API std::span<const std::string_view> metric_states(MetricId id) noexcept;
HIPSTACK_SMI_CXX_API const MetricGroup* find_metric_group(std::string_view name) noexcept;
// The metric a value is shown and judged against (the catalogue's `limit` column): a temperature's
// critical limit, a power draw's cap, a clock's maximum, memory used's total.
enum class LimitRole : std::uint8_t {
  critical,  // the value must stay below it (temperature_edge: temperature_edge_critical)
  cap,       // the firmware holds the value at or below it (power_average: power_cap)
  maximum,   // the most the value can be (clock_sclk: clock_sclk_max)
  share_of,  // the whole the value is a part of (vram_used: vram_total)
};
struct MetricLimit {
  MetricId limit;
  LimitRole role;
};
// Nothing for a metric without a limit.
HIPSTACK_SMI_CXX_API std::optional<MetricLimit> metric_limit(MetricId value) noexcept;
// How hipstack-smid's default series profile exports a metric (the catalogue's `series` column;
// docs/daemon.md, "Series profiles"). Identity facts and texts without states are labels of
// hipstack_gpu_info whatever this says.
enum class DefaultSeries : std::uint8_t {
  full_only,   // a series only in the full profile
  series,      // a series (a state set, for a text with states) in the default profile too
  info_label,  // a label of hipstack_gpu_info in every profile (limits that never change), a series in full
};
HIPSTACK_SMI_CXX_API DefaultSeries metric_default_series(MetricId id) noexcept;
HIPSTACK_SMI_CXX_API std::string_view limit_role_name(LimitRole role) noexcept;  // "critical", "cap", "maximum", "share_of"
HIPSTACK_SMI_CXX_API std::string_view default_series_name(DefaultSeries series) noexcept;  // "full_only", "series", "info_label"
// The reasons a throttle_status value names, as the vendor documents its bits: NVML's clock-event
// reasons ("sw_power_cap", ...) on NVIDIA GPUs; on AMD GPUs of gfx_target gfx942 (MI300, SMU 13.0.6)
// the firmware's THROTTLER_* bits ("prochot", "ppt", "socket_thermal", "vr_thermal", "hbm_thermal",
// the names of violation_residency's instances). Nothing where this GPU's bits are ASIC-specific and
// undocumented: a set bit is then not attributed. Empty: no bit set. A set bit without a name is
// "bitN". docs/cli.md, "Units".
HIPSTACK_SMI_CXX_API std::optional<std::vector<std::string>> throttle_reasons(std::string_view vendor,
                                                                            std::string_view gfx_target,
                                                                            std::uint64_t bits);
HIPSTACK_SMI_CXX_API std::string_view unit_symbol(Unit unit) noexcept;  // "C", "W", "MHz", "B", ...
HIPSTACK_SMI_CXX_API std::string_view unit_name(Unit unit) noexcept;    // "celsius", "watt", ...
// A unit in the exporters' base unit (Prometheus: seconds, bytes, hertz, volts, ratios): the suffix
// a metric's name takes ("_hertz"; "" for none) and what one of `unit` is in it (MHz: 1e6).
struct UnitBase {
  std::string_view suffix;
  double scale = 1;
};
HIPSTACK_SMI_CXX_API UnitBase unit_base(Unit unit) noexcept;
HIPSTACK_SMI_CXX_API std::string_view value_type_name(ValueType type) noexcept;  // "integer", "real", "text"
HIPSTACK_SMI_CXX_API std::string_view cost_name(Cost cost) noexcept;    // "cheap", "costly", "window", "blocking"
HIPSTACK_SMI_CXX_API std::string_view kind_name(Kind kind) noexcept;    // "identity", "static", "live", "counter", "window"
HIPSTACK_SMI_CXX_API std::string_view scope_name(Scope scope) noexcept;

enum class Status : std::uint8_t {
  ok,             // value holds the reading
  not_supported,  // the device or driver does not provide this metric
  unavailable,    // provided, but not readable now (device busy, in reset, access denied, timed out)
  error,          // the read failed or the data was malformed: see error_code and detail
};
HIPSTACK_SMI_CXX_API std::string_view status_name(Status status) noexcept;

using Value = std::variant<std::monostate, std::int64_t, double, std::string>;

struct HIPSTACK_SMI_CXX_API Reading {
  MetricId id{};
  std::string instance;  // instance label value ("0", "hbm1", "smc"), empty for single values
  Status status = Status::not_supported;
  int error_code = 0;    // errno for unavailable / error
  Value value;
  std::string detail;    // where the value came from, or what went wrong and where

  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
  [[nodiscard]] std::optional<double> number() const noexcept;
  [[nodiscard]] std::optional<std::string_view> text() const noexcept;
};

// Mutations (docs/control.md). Every change goes through one guarded path: the request is
// validated, unsafe states are refused with a reason, the writes are made through the same
// root-prefixed view as the reads (so --sysfs-root works) and each write is reported to the audit
// sink before and after it is made.
enum class ControlOutcome : std::uint8_t {
  applied,  // written, and the driver shows the new state
  pending,  // written; takes effect only after next_step (e.g. a driver reload for NPS modes)
  planned,  // dry run: nothing was written; writes lists what would be
  refused,  // nothing was written (or the driver rejected the first write): see reason
  failed,   // written, but the driver did not reach the new state in time (or a later write failed)
};
enum class RefusalReason : std::uint8_t {
  none,
  needs_root,         // not privileged, or the kernel said EACCES/EPERM
  invalid_value,      // not an accepted value (unknown or unavailable mode, out of range)
  not_supported,      // the device or driver offers no such control (NVIDIA: read-only by design)
  device_busy,        // processes use the GPU (override with force), or the driver said EBUSY
  reset_in_progress,  // the driver refuses access while the GPU resets
  virtual_function,   // an SR-IOV virtual function: the host owns these settings
  driver_rejected,    // the driver rejected the write for another reason (errno in error_code)
  timed_out,          // the driver did not settle before the timeout
};
HIPSTACK_SMI_CXX_API std::string_view outcome_name(ControlOutcome outcome) noexcept;  // "applied", ...
HIPSTACK_SMI_CXX_API std::string_view reason_name(RefusalReason reason) noexcept;     // "needs_root", ...

struct ControlOptions {
  bool dry_run = false;  // validate, check and report the writes without making them
  bool force = false;    // go ahead although processes use the GPU (the driver may still say EBUSY)
  unsigned settle_timeout_ms = 30000;  // how long to wait for the driver to re-create its devices
};

struct ControlWrite {
  std::string path;   // system path ("/sys/class/drm/card0/device/current_compute_partition")
  std::string value;  // what is (or would be) written
  std::string host_path;  // where that file really is (differs under --sysfs-root)
  bool done = false;  // written successfully
  int error_code = 0; // errno of a failed write
};

struct ControlResult {
  ControlOutcome outcome = ControlOutcome::refused;
  RefusalReason reason = RefusalReason::none;
  int error_code = 0;               // errno behind a refusal or failure, 0 otherwise
  std::string action;               // "compute partition SPX -> CPX"
  std::string message;              // what happened, or why not, naming the device and file
  std::string next_step;            // what the caller must do next ("" when nothing)
  std::vector<ControlWrite> writes; // made (or planned) in order
  [[nodiscard]] bool ok() const noexcept {
    return outcome == ControlOutcome::applied || outcome == ControlOutcome::pending || outcome == ControlOutcome::planned;
  }
};

// One audit record per write attempt (and one per refusal): who, what, where, and how it went.
struct AuditRecord {
  std::uint32_t uid = 0;       // effective uid of the caller
  std::int32_t pid = 0;
  std::uint32_t device = 0;    // System index
  std::string bdf;
  std::string action;
  std::string path;            // host path written; "" for a refusal before any write
  std::string value;
  std::string result;          // "ok", "refused: <reason>", "error: <errno text>"
};
// Called while the change holds the System: it must not call back into that System.
using AuditSink = std::function<void(const AuditRecord&)>;

enum class ClockDomain : std::uint8_t { graphics, memory };
struct FanSetting {
  bool automatic = true;   // hand control back to the driver
  double percent = 0;      // manual duty cycle 0..100 when not automatic
};

struct OpenOptions {
  std::string sysfs_root;   // read in place of /sys ("" = live /sys, or $HIPSTACK_SYSFS_ROOT)
  std::string procfs_root;  // read in place of /proc ("" = live /proc, or $HIPSTACK_PROCFS_ROOT)
  std::string devfs_root;   // read in place of /dev ("" = live /dev, or derived from sysfs_root)
  std::string nvml_library;  // NVML to load ("" = $HIPSTACK_NVML_LIBRARY, else libnvidia-ml.so.1)
  bool enable_amdgpu = true;
  bool enable_nvml = true;
  // false: leave NVML initialised when the System goes, for a process that exits right after (the
  // kernel releases its GPU handles as the process ends, and nvmlShutdown costs milliseconds).
  // hipstack-smi does this; a long-lived program keeps the default.
  bool vendor_shutdown = true;
  AuditSink audit;  // receives every mutation attempt (never called for reads); may be empty
};

struct SampleOptions {
  bool identity = false;
  bool static_info = false;
  bool live = true;
  bool pcie_throughput = false;  // amdgpu pcie_bw blocks ~1 s; NVML samples 20 ms per direction
  // WINDOW-kind metrics (docs/activity.md): averages over the time since
  // this System's previous window look at the device (NVIDIA: two GPM samples; AMD: gpu_metrics
  // accumulators differenced). The first look of a System reports them unavailable, unless
  // window_ms > 0: it then takes a look, waits that long and takes the second. A look costs a
  // GPM sample (~0.2-0.7 ms) and the metrics' computation (1-6 ms) per NVIDIA GPU: ask at a slower
  // rate than the live metrics.
  bool window = false;
  unsigned window_ms = 0;
  std::vector<MetricId> metrics;  // only these (empty: all); backends skip calls nobody asked for
};

// A PCI address as hipstack writes every bdf: lowercase with a 4-digit domain ("0000:c1:00.0"), from
// "C1:00.0", the 8-digit domain of NVML and CUDA ("00000000:C1:00.0") or sysfs text with its newline.
// Compare addresses from different sources only after this.
HIPSTACK_SMI_CXX_API std::string normalise_bdf(std::string_view bdf);

// Whether a -g selector names the GPU or partition with this BDF and id (UUID): the BDF with or
// without its domain ("0000:03:00.0", "03:00.0"), the id with or without "GPU-", in any case. The
// one rule System::resolve and the CLI's partition views match by.
HIPSTACK_SMI_CXX_API bool selector_names(std::string_view selector, std::string_view bdf, std::string_view id);

// Text made safe for any output, as the library makes every string it returns (api.md, "Text"):
// valid UTF-8 stays, a backslash doubles, control characters and invalid bytes become "\xNN".
// For programs that echo what they were given (a selector in an error message).
HIPSTACK_SMI_CXX_API std::string printable_text(std::string_view raw);
// True when text holds a control character or bytes that are not valid UTF-8 (what printable_text
// writes as "\xNN"; a backslash does not count): an output's last check on text that should have
// come through an edge already (a peer's, a configuration's).
HIPSTACK_SMI_CXX_API bool holds_raw_bytes(std::string_view text) noexcept;

struct DeviceSummary {
  std::uint32_t index = 0;  // position in System::devices(), stable for one System
  std::string vendor;       // "amd", "nvidia"
  std::string backend;      // "amdgpu", "nvml"
  std::string bdf;          // normalise_bdf's form
  std::string uuid;
  std::string name;         // marketing name
  std::uint32_t partition_count = 0;
  // Why the GPU cannot be read now ("" when it can): lost by the vendor library, its handle
  // refused, its device folder gone. Such a GPU stays listed; its readings are errors naming this.
  std::string fault;
};

struct Partition {
  std::uint32_t index = 0;      // partition index within its GPU
  std::string id;               // "<gpu uuid>/<index>"
  std::string bdf;              // partition's PCI function as the driver reports it
  std::vector<Reading> readings;  // PARTITION-scope readings
};

struct ProcessInfo {
  std::int32_t pid = 0;
  std::string name;          // /proc/<pid>/comm
  std::string user;
  std::string command_line;  // /proc/<pid>/cmdline, arguments joined by spaces (at most 4 KiB read)
  // The deepest path /proc/<pid>/cgroup names (v2's unified path; on v1 the longest controller
  // path): where a container runtime put the process. "" when unreadable.
  std::string cgroup;
  std::vector<Reading> readings;  // PROCESS-scope readings for this device
};

struct Link {
  std::uint32_t from = 0;  // device indices
  std::uint32_t to = 0;
  std::vector<Reading> readings;  // LINK-scope readings
};

// A retired (or to-be-retired) memory page.
struct BadPage {
  std::uint64_t frame = 0;  // page frame number (amdgpu) or physical address (NVML retired pages)
  std::uint64_t size = 0;   // bytes; 0 when the driver does not say
  std::string state;        // reserved, pending, failed (amdgpu); retired_sbe, retired_dbe (NVML)
};

// Health checks (docs/health.md): each finding has a verdict, the reading behind it, the threshold
// and what to do.
enum class Verdict : std::uint8_t { pass, warn, fail, unknown };
HIPSTACK_SMI_CXX_API std::string_view verdict_name(Verdict verdict) noexcept;  // "PASS", "WARN", ...

// The checks (hipstack/smi_checks.h, docs/health.md). `other`: a name this library does not know
// (a finding from a newer daemon keeps its name in HealthFinding::check).
enum class HealthCheck : std::uint16_t {
  other = 0,
#define HIPSTACK_SMI_X(id, identifier, name) identifier = id,
  HIPSTACK_SMI_HEALTH_CHECKS(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
};
HIPSTACK_SMI_CXX_API std::string_view health_check_name(HealthCheck check) noexcept;  // "thermal.temperature"; "" for other
HIPSTACK_SMI_CXX_API HealthCheck find_health_check(std::string_view name) noexcept;   // other when unknown
HIPSTACK_SMI_CXX_API std::span<const HealthCheck> health_checks() noexcept;          // every check, in id order

struct HealthFinding {
  std::string check;        // health_check_name's form, e.g. "memory.uncorrectable_ecc"
  Verdict verdict = Verdict::unknown;
  std::string reading;      // what was measured, with units
  std::string threshold;    // what it was compared with
  std::string message;      // what it means
  std::string remediation;  // what to do ("" when nothing)
};

struct HealthReport {
  std::uint32_t device = 0;
  Verdict overall = Verdict::unknown;  // the worst evaluated finding; unknown when no check could be evaluated
  std::vector<HealthFinding> findings;
};

// One verdict per check (a check with several findings, e.g. one per sensor, counts once with its
// worst evaluated verdict; UNKNOWN only when none of its findings could be evaluated).
struct HealthTally {
  std::size_t pass = 0, warn = 0, fail = 0, unknown = 0;
  std::vector<std::string> not_checked;  // the UNKNOWN checks, by name
  [[nodiscard]] std::size_t evaluated() const noexcept { return pass + warn + fail; }
};
// Sets report.overall from its findings, as System::health does (for a caller that added one): FAIL
// or WARN when a finding is; PASS only when a check of the GPU itself passed (readings.plausible and
// errors.recent vouch for nothing alone); UNKNOWN otherwise.
HIPSTACK_SMI_CXX_API void settle_overall(HealthReport& report);
HIPSTACK_SMI_CXX_API HealthTally tally(const HealthReport& report);
// The one-line summary every tool prints: "every check passed (9 checks)" only when all of them
// were evaluated and passed; otherwise the counts and the checks that could not be evaluated.
HIPSTACK_SMI_CXX_API std::string health_summary(const HealthReport& report);

// True when the readings show the device answering: a reading succeeded, or none failed (every
// metric not supported, as on a sparse old card). A GPU whose every attempted read failed is not;
// its process list (read from /proc on amdgpu) does not count as the GPU answering.
HIPSTACK_SMI_CXX_API bool device_answered(const std::vector<Reading>& readings) noexcept;

// Thresholds; defaults suit data-centre GPUs. from_file reads "key = value" lines (docs/health.md).
struct HIPSTACK_SMI_CXX_API HealthPolicy {
  double thermal_margin = 5.0;             // °C below a critical limit that warns
  double throttle_share = 0.10;            // share of time throttled (firmware residency) that warns
  double power_cap_share = 0.98;           // power / cap that counts as "at the cap"
  double busy_for_clock_check = 90.0;      // % busy above which a low clock is suspicious
  double clock_low_share = 0.5;            // clock / max clock below which it is "stuck low"
  std::int64_t correctable_ecc = 1000;     // correctable errors since driver load that warn
  std::int64_t pcie_replays = 1000;        // replays since driver load that warn
  double bad_page_share = 0.9;             // retired pages / threshold that warns (1.0 fails)

  static HealthPolicy from_file(const std::string& path);  // throws Error(invalid_argument) naming file:line
};

struct BackendStatus {
  std::string name;
  bool present = false;
  std::string reason;  // why it is absent, or what it found
};

class HIPSTACK_SMI_CXX_API Error : public std::exception {
 public:
  enum class Code { no_such_device, invalid_argument, read_failure };
  Error(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  [[nodiscard]] Code code() const noexcept { return code_; }
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 private:
  Code code_;
  std::string message_;
};

struct CperRing;  // hipstack/cper.hpp

class HIPSTACK_SMI_CXX_API System {
 public:
  // Discovers devices. Never throws for a missing backend; throws Error(invalid_argument) when a
  // given root does not exist.
  static System open(const OpenOptions& options = {});

  System(System&&) noexcept;
  System& operator=(System&&) noexcept;
  ~System();

  // Each summary's `fault` is checked again on every call (one cheap probe per device).
  [[nodiscard]] std::vector<DeviceSummary> devices() const;
  // Why the device cannot be read now, "" when it can (DeviceSummary::fault); throws no_such_device.
  [[nodiscard]] std::string fault(std::uint32_t device) const;
  [[nodiscard]] std::vector<BackendStatus> backends() const;

  // Index ("0"), BDF ("0000:03:00.0" or "03:00.0") or UUID; throws Error(no_such_device).
  [[nodiscard]] std::uint32_t resolve(std::string_view selector) const;

  // DEVICE-scope readings: every catalogue metric of the requested kinds appears at least once,
  // with status not_supported when the device does not provide it.
  [[nodiscard]] std::vector<Reading> sample(std::uint32_t device, const SampleOptions& options = {}) const;
  [[nodiscard]] Reading read(std::uint32_t device, MetricId id) const;

  [[nodiscard]] std::vector<Partition> partitions(std::uint32_t device) const;
  // Busy percentages need two looks at each process: the first call on a System reports
  // not_supported for them unless interval_ms > 0, in which case it sleeps that long between looks.
  [[nodiscard]] std::vector<ProcessInfo> processes(std::uint32_t device, unsigned interval_ms = 0) const;
  [[nodiscard]] std::vector<Link> links() const;
  [[nodiscard]] std::vector<BadPage> bad_pages(std::uint32_t device) const;
  // The error records the driver keeps (AMD: the CPER ring, hipstack/cper.hpp; include it to call
  // this). Never throws for a GPU without them: CperRing::unavailable says why.
  [[nodiscard]] CperRing cper_ring(std::uint32_t device) const;
  [[nodiscard]] HealthReport health(std::uint32_t device, const HealthPolicy& policy = {}) const;
  // The same checks on readings the caller already sampled (identity, static and live kinds of
  // `device`), so a sampler that has them need not read the device again.
  [[nodiscard]] HealthReport health(std::uint32_t device, const std::vector<Reading>& readings,
                                    const HealthPolicy& policy = {}) const;
  // The same, with the errors.recent finding the caller made (a keeper of the GPU's errors over time,
  // hipstack-smid: hipstack/gpu_errors.hpp) in place of one look's (one_look_errors_finding).
  [[nodiscard]] HealthReport health(std::uint32_t device, const std::vector<Reading>& readings, const HealthPolicy& policy,
                                    HealthFinding errors) const;

  // Mutations (docs/control.md). None throws for a refusal: the result says why. They throw
  // Error(no_such_device) for a bad index only. A compute partition change waits for the driver to
  // re-create the GPU's partitions and re-enumerates: devices() and partitions() show the new
  // partitions when it returns; whole-GPU indices stay the same, partition ids are
  // "<gpu uuid>/<partition index>". A mutation holds the System exclusively: readers on other
  // threads wait until it returns.
  ControlResult set_compute_partition(std::uint32_t device, std::string_view mode, const ControlOptions& options = {});
  ControlResult set_memory_partition(std::uint32_t device, std::string_view mode, const ControlOptions& options = {});
  ControlResult set_power_cap(std::uint32_t device, double watts, const ControlOptions& options = {});
  ControlResult set_performance_level(std::uint32_t device, std::string_view level, const ControlOptions& options = {});
  ControlResult set_power_profile(std::uint32_t device, std::string_view profile, const ControlOptions& options = {});
  ControlResult set_clock_range(std::uint32_t device, ClockDomain domain, double min_mhz, double max_mhz,
                                const ControlOptions& options = {});
  ControlResult set_fan(std::uint32_t device, const FanSetting& fan, const ControlOptions& options = {});
  ControlResult reset_device(std::uint32_t device, const ControlOptions& options = {});

 private:
  struct Impl;
  explicit System(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

HIPSTACK_SMI_CXX_API std::string_view library_version() noexcept;

}  // namespace hipstack::smi
