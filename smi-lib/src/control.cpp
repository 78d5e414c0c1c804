// The guarded mutation path (control.hpp): one function every change goes through.
#include "control.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "backends/backend.hpp"
#include "fs_view.hpp"

namespace hipstack::smi {

std::string_view outcome_name(ControlOutcome outcome) noexcept {
  switch (outcome) {
    case ControlOutcome::applied: return "applied";
    case ControlOutcome::pending: return "pending";
    case ControlOutcome::planned: return "planned";
    case ControlOutcome::refused: return "refused";
    case ControlOutcome::failed: return "failed";
  }
  return "unknown";
}

std::string_view reason_name(RefusalReason reason) noexcept {
  switch (reason) {
    case RefusalReason::none: return "none";
    case RefusalReason::needs_root: return "needs_root";
    case RefusalReason::invalid_value: return "invalid_value";
    case RefusalReason::not_supported: return "not_supported";
    case RefusalReason::device_busy: return "device_busy";
    case RefusalReason::reset_in_progress: return "reset_in_progress";
    case RefusalReason::virtual_function: return "virtual_function";
    case RefusalReason::driver_rejected: return "driver_rejected";
    case RefusalReason::timed_out: return "timed_out";
  }
  return "unknown";
}

}  // namespace hipstack::smi

namespace hipstack::smi::detail {
namespace {

constexpr auto kSettlePoll = std::chrono::milliseconds(50);

std::string errno_text(int error) { return fmt::format("{} ({})", std::strerror(error), error); }

// The reason a kernel errno on a write stands for. EPERM is ambiguous for root: amdgpu answers it
// while the GPU resets (then reads of its power-management files fail the same way), and the kernel
// answers it to a root without the needed capability (a restricted container, lockdown).
RefusalReason reason_for_errno(int error, const Actor& actor, bool in_reset) {
  switch (error) {
    case EACCES: return RefusalReason::needs_root;
    case EPERM: return actor.euid == 0 && in_reset ? RefusalReason::reset_in_progress : RefusalReason::needs_root;
    case EBUSY: return RefusalReason::device_busy;
    case EINVAL:
    case ERANGE: return RefusalReason::invalid_value;
    case ENOENT: return RefusalReason::not_supported;
    default: return RefusalReason::driver_rejected;
  }
}

std::string explain_errno(int error, RefusalReason reason) {
  switch (reason) {
    case RefusalReason::needs_root:
      return fmt::format("needs root: the kernel refused the write ({}); run as root, with CAP_SYS_ADMIN and outside a "
                         "restricted container",
                         errno_text(error));
    case RefusalReason::reset_in_progress:
      return fmt::format("the driver refused the write ({}): a GPU reset is in progress; retry when it ends", errno_text(error));
    case RefusalReason::device_busy:
      return fmt::format("the driver refused the write ({}): the GPU is in use; stop the processes using it", errno_text(error));
    case RefusalReason::invalid_value:
      return fmt::format("the driver rejected the value ({})", errno_text(error));
    case RefusalReason::not_supported:
      return fmt::format("the driver offers no such file ({})", errno_text(error));
    default: return fmt::format("the driver refused the write ({})", errno_text(error));
  }
}

class Guard {
 public:
  Guard(const DeviceSummary& summary, const Actor& actor, const AuditSink& audit, ControlResult& result)
      : summary_(summary), actor_(actor), audit_(audit), result_(result) {}

  void record(const std::string& path, const std::string& value, const std::string& outcome) const {
    if (!audit_) return;
    AuditRecord r;
    r.uid = actor_.euid;
    r.pid = actor_.pid;
    r.device = summary_.index;
    r.bdf = summary_.bdf;
    r.action = result_.action;
    r.path = path;
    r.value = value;
    r.result = outcome;
    try {
      audit_(r);
    } catch (...) {
      // An audit sink that throws must not leave a change half made; the record is lost.
    }
  }

  ControlResult& refuse(RefusalReason reason, int error_code, std::string message) const {
    result_.outcome = ControlOutcome::refused;
    result_.reason = reason;
    result_.error_code = error_code;
    result_.message = fmt::format("GPU {} ({}): {}", summary_.index, summary_.bdf, message);
    record({}, {}, fmt::format("refused: {}: {}", reason_name(reason), message));
    return result_;
  }

 private:
  const DeviceSummary& summary_;
  const Actor& actor_;
  const AuditSink& audit_;
  ControlResult& result_;
};

std::string busy_list(const std::vector<ProcessInfo>& processes) {
  std::string out;
  for (std::size_t i = 0; i < processes.size() && i < 8; ++i) {
    out += fmt::format("{}{} ({})", i == 0 ? "" : ", ", processes[i].pid, processes[i].name);
  }
  if (processes.size() > 8) out += fmt::format(" and {} more", processes.size() - 8);
  return out;
}

}  // namespace

Actor current_actor() { return {static_cast<std::uint32_t>(::geteuid()), static_cast<std::int32_t>(::getpid())}; }

std::string canonical_mode(std::string_view text, std::span<const std::string_view> names) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const std::string_view name : names) {
    if (upper == name) return upper;
  }
  return {};
}

ControlResult refuse_control(const DeviceSummary& summary, RefusalReason reason, int error_code, std::string message,
                             const Actor& actor, const AuditSink& audit) {
  ControlResult result;
  return Guard(summary, actor, audit, result).refuse(reason, error_code, std::move(message));
}

namespace {

// Whether the device may be changed at all: not a virtual function, no reset in progress. False
// when not: the guard's result says why.
bool may_touch(const FsView& fs, const ControlPlan& plan, const Guard& guard) {
  if (plan.virtual_function) {
    guard.refuse(RefusalReason::virtual_function, EPERM, "is an SR-IOV virtual function: the host (physical function) owns this setting");
    return false;
  }
  if (plan.reset_probe.empty()) return true;
  const FileText probe = fs.read_text(plan.reset_probe);
  if (probe.error != EPERM && probe.error != EBUSY) return true;
  guard.refuse(RefusalReason::reset_in_progress, probe.error,
               fmt::format("a GPU reset is in progress (the driver refuses to read {}: {}); retry when it ends",
                           fs.host_path(plan.reset_probe), errno_text(probe.error)));
  return false;
}

// Whether a change that needs the GPU idle finds no process on it (or is forced). False when not.
bool idle_or_forced(const Backend& backend, std::size_t local, const ControlPlan& plan, bool force, const Guard& guard) {
  if (!plan.needs_idle) return true;
  std::vector<ProcessInfo> users;
  try {
    users = backend.processes(local, 0);
  } catch (const std::exception& e) {
    guard.refuse(RefusalReason::device_busy, EIO, fmt::format("cannot tell whether processes use the GPU ({}); refusing", e.what()));
    return false;
  }
  if (users.empty() || force) return true;
  guard.refuse(RefusalReason::device_busy, EBUSY,
               fmt::format("{} process(es) use the GPU: {}; stop them, or pass force (--force) to try anyway", users.size(),
                           busy_list(users)));
  return false;
}

// The plan's writes (result.writes) in order, each audited. False when one failed: refused when it
// was the first, else failed with the device perhaps partly changed.
bool write_plan(const FsView& fs, const ControlPlan& plan, const DeviceSummary& summary, const Actor& actor,
                const Guard& guard, ControlResult& result) {
  for (std::size_t i = 0; i < result.writes.size(); ++i) {
    ControlWrite& w = result.writes[i];
    const int error = fs.write_text(w.path, w.value);
    w.error_code = error;
    w.done = error == 0;
    guard.record(w.host_path, w.value, error == 0 ? "ok" : "error: " + errno_text(error));
    if (error == 0) continue;
    const bool in_reset = error == EPERM && !plan.reset_probe.empty() && fs.read_text(plan.reset_probe).error == EPERM;
    const RefusalReason reason = reason_for_errno(error, actor, in_reset);
    const std::string where = fmt::format("writing \"{}\" to {}: {}", w.value, fs.host_path(w.path), explain_errno(error, reason));
    result.error_code = error;
    if (i == 0) {
      result.outcome = ControlOutcome::refused;
      result.reason = reason;
      result.message = fmt::format("GPU {} ({}): {}", summary.index, summary.bdf, where);
    } else {
      result.outcome = ControlOutcome::failed;
      result.reason = RefusalReason::driver_rejected;
      result.message = fmt::format("GPU {} ({}): {} after {} earlier write(s) succeeded; the device may be partly changed",
                                   summary.index, summary.bdf, where, i);
    }
    return false;
  }
  return true;
}

// After the writes: waits for the driver to show the change (within settle_timeout_ms) and reads
// back what it reports; the outcome is applied, pending (the driver still reports the old state) or
// failed (it never settled).
void settle(const FsView& fs, const Backend& backend, std::size_t local, const ControlRequest& request,
            const ControlPlan& plan, const ControlOptions& options, const DeviceSummary& summary, ControlResult& result) {
  if (plan.wait_settle) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.settle_timeout_ms);
    while (!backend.control_settled(local, request)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        result.outcome = ControlOutcome::failed;
        result.reason = RefusalReason::timed_out;
        result.error_code = ETIMEDOUT;
        result.message = fmt::format("GPU {} ({}): {} was written, but the driver did not show the new partitions within {} ms",
                                     summary.index, summary.bdf, plan.action, options.settle_timeout_ms);
        result.next_step = "check dmesg for amdgpu errors, then list the partitions again";
        return;
      }
      std::this_thread::sleep_for(kSettlePoll);
    }
  }
  if (!plan.verify_path.empty()) {
    const FileText now = fs.read_text(plan.verify_path);
    if (!now.ok() || now.text != plan.verify_value) {
      result.outcome = ControlOutcome::pending;
      result.message = fmt::format("GPU {} ({}): {} requested; the driver still reports {}", summary.index, summary.bdf,
                                   plan.action, now.ok() ? now.text : errno_text(now.error));
      result.next_step = plan.pending_step;
      return;
    }
  }
  result.outcome = ControlOutcome::applied;
  result.message = fmt::format("GPU {} ({}): {}: done", summary.index, summary.bdf, plan.action);
}

}  // namespace

// The one path of every change: plan, refuse what is unsafe, write, settle (docs/control.md).
ControlResult guarded_control(const FsView& fs, const Backend& backend, std::size_t local, const DeviceSummary& summary,
                              const ControlRequest& request, const ControlOptions& options, const Actor& actor,
                              const AuditSink& audit) {
  ControlResult result;
  Guard guard(summary, actor, audit, result);
  ControlPlan plan;
  try {
    plan = backend.plan_control(local, request);
  } catch (const std::exception& e) {
    return guard.refuse(RefusalReason::driver_rejected, EIO, fmt::format("could not read the current state: {}", e.what()));
  }
  result.action = plan.action;
  if (plan.refusal != RefusalReason::none) return guard.refuse(plan.refusal, plan.error_code, plan.message);
  if (!may_touch(fs, plan, guard)) return result;
  if (plan.unchanged.empty() && plan.writes.empty()) plan.unchanged = "nothing to change";
  if (!plan.unchanged.empty()) {
    result.outcome = options.dry_run ? ControlOutcome::planned : ControlOutcome::applied;
    result.message = fmt::format("GPU {} ({}): {}; nothing to write", summary.index, summary.bdf, plan.unchanged);
    return result;
  }
  if (!idle_or_forced(backend, local, plan, options.force, guard)) return result;
  result.writes = plan.writes;
  for (ControlWrite& w : result.writes) w.host_path = fs.host_path(w.path);
  if (options.dry_run) {
    result.outcome = ControlOutcome::planned;
    result.message = fmt::format("GPU {} ({}): {}: dry run, nothing written", summary.index, summary.bdf, plan.action);
    if (actor.euid != 0) result.message += "; the change itself needs root";
    return result;
  }
  if (actor.euid != 0) {
    return guard.refuse(RefusalReason::needs_root, EACCES,
                        fmt::format("needs root: {} writes {}; run as root", plan.action, fs.host_path(plan.writes.front().path)));
  }
  if (write_plan(fs, plan, summary, actor, guard, result)) settle(fs, backend, local, request, plan, options, summary, result);
  return result;
}

}  // namespace hipstack::smi::detail

namespace hipstack::smi::detail {

CperRing Backend::cper_ring(std::size_t) const {
  CperRing ring;
  ring.unavailable = fmt::format("the {} backend has no CPER records (NVIDIA GPUs report XIDs: `hipstack-smi event`)", name());
  return ring;
}

ControlPlan Backend::plan_control(std::size_t, const ControlRequest&) const {
  ControlPlan plan;
  plan.action = "change";
  plan.refusal = RefusalReason::not_supported;
  plan.error_code = EOPNOTSUPP;
  plan.message = fmt::format("the {} backend is read-only: hipstack never changes settings of these GPUs (MIG, clocks, power limits and resets stay as they are)", name());
  return plan;
}

bool Backend::control_settled(std::size_t, const ControlRequest&) const { return true; }

}  // namespace hipstack::smi::detail
