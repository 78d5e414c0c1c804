// hipstack/gpu_errors.hpp: what a GPU error means and what to do about it (docs/errors.md).
//
// NVIDIA's XIDs: the catalogue NVIDIA publishes ("Analyzing Xid Errors with the Xid Catalog",
// docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), as data: each code's mnemonic and
// description, NVIDIA's two resolution buckets (the immediate action that puts the GPU back in
// service, the investigatory one for when it recurs) and whose fault it usually is. hipstack's
// action is NVIDIA's immediate bucket in one word; a code the catalogue lacks is unknown, never
// guessed. Every output that shows an XID (event, WatchEvents, D-Bus, /metrics, health, the NPD and
// Slurm lines) takes its meaning and action from here.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hipstack::smi {

// What to do about an error, from the least to the most disruptive. The names are the tokens every
// output prints (error_action_name).
enum class ErrorAction : std::uint8_t {
  none,                  // nothing on the node (NVIDIA's IGNORE)
  investigate_software,  // the application's or the driver's bug to look into; the GPU is fine
  restart_app,           // the application's work is lost; restart it (RESTART_APP)
  see_other,             // follows another error: act on that one (XID 45, 154)
  update_software,       // driver or firmware too old for this use (UPDATE_SWFW)
  reset_gpu,             // drain the GPU and reset it (RESET_GPU; XID 48 alone)
  drain_and_reset,       // drain the node, then reset its GPUs (XID 48 with 63 or 64)
  reboot_node,           // drain the node and reboot it (RESTART_BM, RESTART_VM)
  check_hardware,        // seating, power and cables (CHECK_MECHANICALS)
  contact_support,       // field diagnostics, then the vendor: an RMA candidate (CONTACT_SUPPORT)
  unknown,               // no documented action: the catalogue has no such code, or names none
};

// Whose fault such an error usually is.
enum class ErrorFault : std::uint8_t { application, driver, hardware, system, informational, unknown };

struct XidInfo {
  std::uint32_t code;
  std::string_view mnemonic;       // NVIDIA's ("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS")
  std::string_view description;    // NVIDIA's ("GPU has fallen off the bus")
  std::string_view immediate;      // NVIDIA's immediate-action bucket, as written ("RESTART_BM"); "" if none
  std::string_view investigatory;  // NVIDIA's investigatory-action bucket, as written
  ErrorFault fault;
  std::uint8_t applies;            // XidGpu bits: the GPUs the catalogue says it applies to
  std::string_view note;           // NVIDIA's trigger text in short, where it matters for the action
};

// The catalogue's "Applies to" columns.
enum XidGpu : std::uint8_t { xid_a100 = 1, xid_h100 = 2, xid_b100 = 4, xid_gb200 = 8 };

// What to do about one XID seen `occurrences` times within the window that health looks at.
struct XidAdvice {
  std::uint32_t code = 0;
  const XidInfo* info = nullptr;  // null: a code the catalogue does not have
  ErrorAction action = ErrorAction::unknown;
  Verdict verdict = Verdict::warn;  // what health makes of it while it is recent
  std::string_view why;             // how the action was chosen, in words
};

// Every XID of the catalogue, by code.
HIPSTACK_SMI_CXX_API std::span<const XidInfo> xid_catalogue() noexcept;
// One code; null when the catalogue does not have it.
HIPSTACK_SMI_CXX_API const XidInfo* find_xid(std::uint32_t code) noexcept;
// One of NVIDIA's resolution buckets ("RESET_GPU", "CHECK_APP/CUDA") in one word, as the immediate
// action or (investigatory) as the one for a recurrence; unknown for "" and for a bucket hipstack
// does not know.
HIPSTACK_SMI_CXX_API ErrorAction bucket_action(std::string_view bucket, bool investigatory = false) noexcept;
// The advice for `code` seen `occurrences` times within the health window: NVIDIA's immediate action,
// or its investigatory one when the code recurred (NVIDIA: "used if the Xid recurs"), that action
// is at least a GPU reset and stronger, and the fault is not the application's; XID 48 with a 63 or
// 64 in the window (`with_remapping`) drains and resets.
HIPSTACK_SMI_CXX_API XidAdvice xid_advice(std::uint32_t code, std::uint32_t occurrences = 1, bool with_remapping = false) noexcept;

HIPSTACK_SMI_CXX_API std::string_view error_action_name(ErrorAction action) noexcept;  // "reset_gpu"
HIPSTACK_SMI_CXX_API std::optional<ErrorAction> find_error_action(std::string_view name) noexcept;
HIPSTACK_SMI_CXX_API std::string_view error_action_help(ErrorAction action) noexcept;  // what to do, in words
HIPSTACK_SMI_CXX_API std::string_view error_fault_name(ErrorFault fault) noexcept;     // "hardware"
// The action for an `xid_errors` instance ("79": the XID code as the reading names it): the code's
// immediate action; unknown when the text is no code.
HIPSTACK_SMI_CXX_API ErrorAction xid_instance_action(std::string_view instance) noexcept;

struct Event;  // hipstack/events.hpp

// The action an error event calls for: an "xid" event's code's (NVIDIA's immediate action, as
// xid_advice(code) gives it), a "cper" event's record's (cper_error_event wrote it); none for an
// event that reports no error.
HIPSTACK_SMI_CXX_API std::optional<ErrorAction> event_action(const Event& event);

// What health makes of an error with this action and fault while it is recent (docs/errors.md):
// FAIL for a reset, reboot, drain, hardware check or support case; WARN for an unknown action, a
// software update, or an application restart the hardware caused; PASS otherwise.
HIPSTACK_SMI_CXX_API Verdict error_action_verdict(ErrorAction action, ErrorFault fault) noexcept;

// One error a GPU reported, as kept for health (hipstack-smid's error store): an XID or a CPER record.
enum class ErrorSource : std::uint8_t { xid, cper };
struct ErrorOccurrence {
  std::chrono::system_clock::time_point at;  // when it happened (CPER: the record's time) or was seen
  ErrorSource source = ErrorSource::xid;
  std::uint32_t code = 0;        // XID: the code; CPER: the record's severity (0 recoverable ... 3 informational)
  ErrorAction action = ErrorAction::unknown;  // CPER: cper_action; XID: ignored (advice from the code and its recurrences)
  std::string summary;           // what it was, in words ("CPER fatal: crashdump OAM0: fatal, UMC (memory controller)")
};
HIPSTACK_SMI_CXX_API std::string_view error_source_name(ErrorSource source) noexcept;  // "xid", "cper"

// The `errors.recent` health finding: every error younger than `max_age` at `now` (older ones no
// longer count, so a node drained for one resumes once it has aged out and the GPU passes), judged by
// its action (error_action_verdict; an XID's action from xid_advice with its recurrences and any
// row-remapping XID in the window). PASS with "none" when no error is that young. Only a caller that
// keeps the history (hipstack-smid) can make this finding: one look at a GPU cannot.
// What a caller could read of one GPU's error sources: a GPU with no recent error passes
// errors.recent only where one of them was read; otherwise the finding is UNKNOWN, with why.
struct ErrorSources {
  bool xids_read = false;        // the XID counters, from a subscription that lasts (hipstack-smid)
  std::string xids_unreadable;   // why not, when they were tried or cannot be judged
  bool cper_read = false;        // the driver's CPER ring
  std::string cper_unreadable;
};
// recent_errors_finding, UNKNOWN instead of PASS when no source was read.
HIPSTACK_SMI_CXX_API HealthFinding errors_finding(std::span<const ErrorOccurrence> errors, std::chrono::system_clock::time_point now,
                                                  std::chrono::seconds max_age, const ErrorSources& sources);
// errors.recent from one look (hipstack-smi health without a daemon): an AMD GPU's CPER ring, whose
// records carry their time; an NVIDIA GPU's XIDs cannot be judged by one look (UNKNOWN: they are
// counted only while a subscription lasts, as hipstack-smid's does).
HIPSTACK_SMI_CXX_API HealthFinding one_look_errors_finding(const System& system, std::uint32_t device,
                                                           std::chrono::system_clock::time_point now,
                                                           std::chrono::seconds max_age = std::chrono::hours(24));

// The "cper" event of a CPER record a keeper of errors found (hipstack-smid): metric
// "cper_records[<severity>]", after the severity, the message the record in words with its action.
HIPSTACK_SMI_CXX_API Event cper_error_event(const ErrorOccurrence& record, const DeviceSummary& device);

// The action an errors.recent finding names (the worst recent error's); none for another check or
// a finding with no action (PASS with no error, UNKNOWN).
HIPSTACK_SMI_CXX_API std::optional<ErrorAction> finding_action(const HealthFinding& finding);

HIPSTACK_SMI_CXX_API HealthFinding recent_errors_finding(std::span<const ErrorOccurrence> errors,
                                                         std::chrono::system_clock::time_point now,
                                                         std::chrono::seconds max_age);

}  // namespace hipstack::smi
