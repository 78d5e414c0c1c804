// The sampler: one worker per device samples it on its own schedule (fast: live metrics; slow:
// identity, static facts, health) and publishes an immutable snapshot. Readers (/metrics) only
// take the latest snapshots: they never wait on a device. A device whose sample runs past the read
// deadline (a blocking sysfs read) is reported stale; the others carry on.
#pragma once

#include <hipstack/smi.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "config.hpp"

namespace hipstack::smid {

struct DeviceSnapshot {
  smi::DeviceSummary device;
  std::vector<smi::Reading> live;      // latest fast sample
  std::vector<smi::Reading> facts;     // latest slow sample (identity + static)
  std::vector<smi::Partition> partitions;  // latest slow sample
  smi::HealthReport health;
  std::chrono::steady_clock::time_point live_at{};
  std::chrono::system_clock::time_point live_wall{};  // live_at on the wall clock, for clients
  std::chrono::steady_clock::time_point facts_at{};
  bool have_live = false;
};

// One live sample kept in the history ring.
struct HistoryEntry {
  std::chrono::system_clock::time_point at;
  std::vector<smi::Reading> live;
};

struct DeviceState {
  std::shared_ptr<const DeviceSnapshot> snapshot;  // replaced whole, under `mutex`
  std::deque<std::shared_ptr<const HistoryEntry>> history;  // newest last, at most history_length
  std::chrono::steady_clock::time_point busy_since{};  // when the running sample started (epoch: idle)
  mutable std::mutex mutex;
};

struct StopSignal;

class Sampler {
 public:
  // Takes the system; starts one worker per device. Every device has a snapshot from the start
  // (its identity; the previous sampler's samples on a reload, matched by UUID), so a GPU stuck in
  // its first sample is still listed, as down.
  Sampler(std::shared_ptr<const smi::System> system, Config config, const Sampler* previous = nullptr);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  struct View {
    std::shared_ptr<const DeviceSnapshot> snapshot;
    bool stale = false;  // the current sample has run past the read deadline
  };
  [[nodiscard]] std::vector<View> views() const;
  // The one definition of "up" for /metrics, gRPC and D-Bus: a live sample finished within the
  // read deadline, the device has no fault (lost, gone) and it answered that sample.
  [[nodiscard]] static bool up(const View& view) noexcept;
  // The kept samples of one device (index into views()), oldest first.
  [[nodiscard]] std::vector<std::shared_ptr<const HistoryEntry>> history(std::size_t device) const;
  [[nodiscard]] const smi::System& system() const noexcept { return *system_; }
  // True once every device has published a first sample or gone stale.
  [[nodiscard]] bool ready() const;
  // Increments on every finished sample: the watchdog pings only while this moves.
  [[nodiscard]] std::uint64_t progress() const noexcept { return progress_->load(); }
  [[nodiscard]] const Config& config() const noexcept { return config_; }

 private:
  struct Shared;
  std::shared_ptr<const smi::System> system_;
  Config config_;
  std::vector<std::shared_ptr<DeviceState>> states_;
  std::shared_ptr<StopSignal> stop_;
  std::shared_ptr<std::atomic<std::uint64_t>> progress_;
};

}  // namespace hipstack::smid
