// The one guarded mutation path (docs/control.md). Backends only plan: they validate a request
// against what the driver offers and say which files get which values. Everything else happens
// here, once, for every kind of change: the privilege check, the unsafe-state checks, the audit
// records, the writes through the FsView, the mapping of the kernel's errno to a reason, and the
// wait for the driver to settle.
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hipstack::smi::detail {

class FsView;
class Backend;

struct ControlRequest {
  enum class Kind : std::uint8_t {
    compute_partition,
    memory_partition,
    power_cap,
    performance_level,
    power_profile,
    clock_range,
    fan,
    reset
  };
  Kind kind = Kind::compute_partition;
  std::string text;     // mode, level or profile
  double value = 0;     // watts, minimum MHz, fan percent
  double value2 = 0;    // maximum MHz
  ClockDomain clock = ClockDomain::graphics;
  FanSetting fan;
};

// What a backend says about a request, before anything is written.
struct ControlPlan {
  std::string action;                 // "compute partition SPX -> CPX"
  RefusalReason refusal = RefusalReason::none;
  int error_code = 0;
  std::string message;                // why refused
  std::vector<ControlWrite> writes;   // in order; empty with no refusal = nothing to change
  std::string unchanged;              // set when the device is already in the requested state
  bool needs_idle = false;            // refuse while processes use the GPU (unless force)
  bool virtual_function = false;      // an SR-IOV VF: refuse
  std::string reset_probe;            // a file the driver refuses to read (EPERM) during a reset
  // After the writes: wait until the backend's settled() says so (partition re-creation), or read
  // verify_path and compare with verify_value (pending when it differs: the driver applies it later).
  bool wait_settle = false;
  std::string verify_path;
  std::string verify_value;
  std::string pending_step;           // next step when verify_value is not shown yet
};

// Who asks: the effective uid decides privilege (root only; the kernel has the last word).
struct Actor {
  std::uint32_t euid = 0;
  std::int32_t pid = 0;
};
Actor current_actor();

// Runs a planned change on one device of a backend. summary names the device in messages and
// audit records. Never throws; the result says what happened.
ControlResult guarded_control(const FsView& fs, const Backend& backend, std::size_t local, const DeviceSummary& summary,
                              const ControlRequest& request, const ControlOptions& options, const Actor& actor,
                              const AuditSink& audit);

// A refusal before any plan (the System could not be held): recorded like every other refusal.
ControlResult refuse_control(const DeviceSummary& summary, RefusalReason reason, int error_code, std::string message,
                             const Actor& actor, const AuditSink& audit);

// "SPX" for "spx", "" when text is not one of the names.
std::string canonical_mode(std::string_view text, std::span<const std::string_view> names);

}  // namespace hipstack::smi::detail
