// A DeviceSource answered by the library itself: the System opened in this process
// (device_source.hpp).
#include <fmt/format.h>

#include <cerrno>
#include <future>
#include <memory>
#include <thread>

#include "device_source.hpp"

namespace hipstack::cli {
namespace {

// The catalogue's kinds that `what` asks for (as the library selects them).
bool asked_for(const smi::MetricInfo& info, const smi::SampleOptions& what) {
  if (info.scope != smi::Scope::device) return false;
  if (!what.metrics.empty()) return std::find(what.metrics.begin(), what.metrics.end(), info.id) != what.metrics.end();
  return kind_asked(info.kind, what);
}

}  // namespace

LocalSource::LocalSource(const smi::System& system, std::chrono::milliseconds deadline) : system_(system), deadline_(deadline) {}

// Runs `read` on a thread of its own and waits up to the deadline. Nothing when it did not return
// in time (the device is then stuck for the rest of the command) or when the device is stuck already.
template <typename T, typename Read>
std::optional<T> LocalSource::bounded(std::uint32_t device, Read read, std::chrono::milliseconds extra) const {
  if (!stuck_fault(device).empty()) return std::nullopt;
  auto task = std::make_shared<std::packaged_task<T()>>(std::move(read));
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(deadline_ + extra) == std::future_status::ready) return result.get();  // rethrows the read's error
  std::lock_guard lock(mutex_);
  stuck_.insert(device);
  return std::nullopt;
}

std::string LocalSource::stuck_fault(std::uint32_t device) const {
  std::lock_guard lock(mutex_);
  if (!stuck_.contains(device)) return {};
  if (device == kNode) {
    return fmt::format("no answer within {} ms: a read of the node's topology files is stuck (a hung driver?)", deadline_.count());
  }
  return fmt::format("no answer within {} ms: a read of this GPU's files is stuck (a hung driver?)", deadline_.count());
}

bool LocalSource::any_stuck() const {
  std::lock_guard lock(mutex_);
  return !stuck_.empty();
}

std::vector<smi::DeviceSummary> LocalSource::devices() const {
  auto out = system_.devices();
  for (smi::DeviceSummary& d : out) {
    if (d.fault.empty()) d.fault = stuck_fault(d.index);
  }
  return out;
}

void LocalSource::open_windows(const std::vector<std::uint32_t>& devices, const smi::SampleOptions& what,
                               unsigned window_ms) const {
  smi::SampleOptions first;
  first.live = false;
  first.window = true;
  for (const smi::MetricId id : what.metrics) {
    if (smi::find_metric(id)->kind == smi::Kind::window) first.metrics.push_back(id);
  }
  if (!what.metrics.empty() && first.metrics.empty()) return;
  for (const std::uint32_t device : devices) (void)sample(device, first);  // the readings say "needs two looks"
  std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
}

std::vector<smi::Reading> LocalSource::sample(std::uint32_t device, const smi::SampleOptions& what) const {
  if (auto readings = bounded<std::vector<smi::Reading>>(device, [this, device, what] { return system_.sample(device, what); })) {
    return std::move(*readings);
  }
  std::vector<smi::Reading> out;
  for (const smi::MetricInfo& info : smi::catalogue()) {
    if (!asked_for(info, what)) continue;
    smi::Reading r;
    r.id = info.id;
    r.status = smi::Status::error;
    r.error_code = ETIMEDOUT;
    r.detail = stuck_fault(device);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<smi::Partition> LocalSource::partitions(std::uint32_t device) const {
  auto found = bounded<std::vector<smi::Partition>>(device, [this, device] { return system_.partitions(device); });
  return found ? std::move(*found) : std::vector<smi::Partition>{};
}

std::optional<std::vector<smi::ProcessInfo>> LocalSource::processes(std::uint32_t device, unsigned interval_ms) const {
  return bounded<std::vector<smi::ProcessInfo>>(
      device, [this, device, interval_ms] { return system_.processes(device, interval_ms); }, std::chrono::milliseconds(interval_ms));
}

std::optional<std::vector<smi::BadPage>> LocalSource::bad_pages(std::uint32_t device) const {
  return bounded<std::vector<smi::BadPage>>(device, [this, device] { return system_.bad_pages(device); });
}

std::optional<smi::CperRing> LocalSource::cper_ring(std::uint32_t device) const {
  return bounded<smi::CperRing>(device, [this, device] { return system_.cper_ring(device); });
}

std::optional<std::vector<smi::Link>> LocalSource::links() const {
  return bounded<std::vector<smi::Link>>(kNode, [this] { return system_.links(); });
}

smi::HealthReport LocalSource::health(std::uint32_t device, const std::string& policy_file) const {
  const smi::HealthPolicy policy = policy_file.empty() ? smi::HealthPolicy{} : smi::HealthPolicy::from_file(policy_file);
  if (auto report = bounded<smi::HealthReport>(device, [this, device, policy] { return system_.health(device, policy); })) {
    return std::move(*report);
  }
  smi::HealthReport report;
  report.device = device;
  report.overall = smi::Verdict::fail;
  report.findings.push_back({"device.readable", smi::Verdict::fail, "no answer", fmt::format("an answer within {} ms", deadline_.count()),
                             stuck_fault(device), "check the kernel log (dmesg) for a hung GPU or driver; reset or reboot"});
  return report;
}

}  // namespace hipstack::cli
