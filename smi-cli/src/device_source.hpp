// Where hipstack-smi's device data comes from: the library on this machine, or a hipstack-smid
// reached with --host (remote_source.cpp, built into hipstack-smi-remote only, so the local tool
// does not load gRPC). The commands that work both ways take a DeviceSource.
#pragma once

#include <hipstack/cper.hpp>
#include <hipstack/smi.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::cli {

// Whether the catalogue kind is one that `what` asks for (identity, static, live and counters, window),
// as the library selects readings for a sample.
inline bool kind_asked(smi::Kind kind, const smi::SampleOptions& what) {
  switch (kind) {
    case smi::Kind::identity: return what.identity;
    case smi::Kind::static_info: return what.static_info;
    case smi::Kind::live:
    case smi::Kind::counter: return what.live;
    case smi::Kind::window: return what.window;
  }
  return false;
}

class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  // A device's handle, which the calls below take, is its position in devices(); its summary's
  // `index` is the GPU's number on its own machine (the same, unless the source spans hosts).
  [[nodiscard]] virtual std::vector<smi::DeviceSummary> devices() const = 0;
  // Index, BDF or UUID; throws smi::Error(no_such_device).
  [[nodiscard]] virtual std::uint32_t resolve(std::string_view selector) const = 0;
  [[nodiscard]] virtual std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const = 0;
  // Several devices' readings, in the order of `devices`: one sample each, or one call to a daemon
  // for all of them (a round trip per GPU was most of a short command's time).
  [[nodiscard]] virtual std::vector<std::vector<smi::Reading>> sample_all(const std::vector<std::uint32_t>& devices,
                                                                          const smi::SampleOptions& what) const {
    std::vector<std::vector<smi::Reading>> out;
    out.reserve(devices.size());
    for (const std::uint32_t device : devices) out.push_back(sample(device, what));
    return out;
  }
  [[nodiscard]] virtual std::vector<smi::Partition> partitions(std::uint32_t device) const = 0;
  // Several devices' partitions, in the order of `devices` (a fleet asks every host at once).
  [[nodiscard]] virtual std::vector<std::vector<smi::Partition>> partitions_all(const std::vector<std::uint32_t>& devices) const {
    std::vector<std::vector<smi::Partition>> out;
    out.reserve(devices.size());
    for (const std::uint32_t device : devices) out.push_back(partitions(device));
    return out;
  }
  // policy_file: health thresholds ("" = defaults); a remote source uses the daemon's.
  [[nodiscard]] virtual smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const = 0;
  // Several devices' reports, in the order of `devices` (one call to a daemon for all of them).
  [[nodiscard]] virtual std::vector<smi::HealthReport> health_all(const std::vector<std::uint32_t>& devices,
                                                                  const std::string& policy_file) const {
    std::vector<smi::HealthReport> out;
    out.reserve(devices.size());
    for (const std::uint32_t device : devices) out.push_back(health(device, policy_file));
    return out;
  }
  // Every device a -g selector names: the one resolve() finds, on one machine. A source over several
  // hosts (fleet_source.hpp) answers the GPU so named on each host (`-g 0`: every host's GPU 0).
  [[nodiscard]] virtual std::vector<std::uint32_t> resolve_all(std::string_view selector) const { return {resolve(selector)}; }
  // The host holding a device when the source spans several hosts (`--host a,b`, `--hostfile`),
  // which the outputs then name first; "" for a source of one machine.
  [[nodiscard]] virtual bool spans_hosts() const { return false; }
  [[nodiscard]] virtual std::string host_of(std::uint32_t /*device*/) const { return {}; }
  // Before a sample with what.window: start each device's window and wait window_ms, so the sample
  // reports the averages over that window. A remote source answers from the daemon's own windows.
  virtual void open_windows(const std::vector<std::uint32_t>& /*devices*/, const smi::SampleOptions& /*what*/,
                            unsigned /*window_ms*/) const {}
  // Whether sample() reads the devices in this process (false: it asks a daemon), so timing it
  // measures what reading a metric costs (`metric -v`).
  [[nodiscard]] virtual bool reads_devices() const { return true; }
  // How old the device's latest live sample was when sample() answered, in seconds: a daemon's
  // sample (`sample_age_s` in JSON); nothing for a source that read the device just now.
  [[nodiscard]] virtual std::optional<double> sample_age_s(std::uint32_t /*device*/) const { return std::nullopt; }
};

// The library on this machine, each read bounded by a deadline: a read that hangs (a wedged driver,
// a FIFO in a capture) makes that GPU's readings errors (ETIMEDOUT) and its summary a fault, and
// the command goes on with the other GPUs. The stuck read is left on a thread of its own; the
// command then ends with _Exit, so nothing waits for it (local_source.cpp).
class LocalSource final : public DeviceSource {
 public:
  static constexpr std::chrono::milliseconds kDefaultDeadline{10000};
  explicit LocalSource(const smi::System& system, std::chrono::milliseconds deadline = kDefaultDeadline);

  [[nodiscard]] std::vector<smi::DeviceSummary> devices() const override;
  [[nodiscard]] std::uint32_t resolve(std::string_view selector) const override { return system_.resolve(selector); }
  [[nodiscard]] std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const override;
  [[nodiscard]] std::vector<smi::Partition> partitions(std::uint32_t device) const override;
  [[nodiscard]] smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const override;
  // Takes every device's first look, then waits once (not once per device).
  void open_windows(const std::vector<std::uint32_t>& devices, const smi::SampleOptions& what,
                    unsigned window_ms) const override;
  // Local only (the daemon does not serve these): nothing when the read did not return in time;
  // stuck_fault() then says why. A process scan may take interval_ms more than the deadline.
  [[nodiscard]] std::optional<std::vector<smi::ProcessInfo>> processes(std::uint32_t device, unsigned interval_ms) const;
  [[nodiscard]] std::optional<std::vector<smi::BadPage>> bad_pages(std::uint32_t device) const;
  [[nodiscard]] std::optional<smi::CperRing> cper_ring(std::uint32_t device) const;
  // The links between GPUs come from files of the whole node (KFD topology): stuck_fault(kNode).
  [[nodiscard]] std::optional<std::vector<smi::Link>> links() const;
  static constexpr std::uint32_t kNode = UINT32_MAX;
  [[nodiscard]] std::string stuck_fault(std::uint32_t device) const;  // "" unless that GPU's (or kNode's) read hung

  [[nodiscard]] const smi::System& system() const noexcept { return system_; }
  // Some read did not return in time: a thread is still blocked in it.
  [[nodiscard]] bool any_stuck() const;

 private:
  template <typename T, typename Read>
  std::optional<T> bounded(std::uint32_t device, Read read, std::chrono::milliseconds extra = {}) const;

  const smi::System& system_;
  std::chrono::milliseconds deadline_;
  mutable std::mutex mutex_;
  mutable std::set<std::uint32_t> stuck_;
};

}  // namespace hipstack::cli
