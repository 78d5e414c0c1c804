// The sampler: a small pool of workers samples every device on its own schedule (fast: live
// metrics; slow: identity, static facts, health) and publishes immutable snapshots. Readers (/metrics) only
// take the latest snapshots: they never wait on a device. A device whose sample runs past the read
// deadline (a blocking sysfs read) is reported stale; the others carry on.
#pragma once

#include <hipstack/smi.hpp>

#include <bit>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "attribution_watcher.hpp"
#include "config.hpp"
#include "energy_estimate.hpp"

namespace hipstack::smid {

// What a slow sample found. Shared by every snapshot until the next slow sample: the fast samples
// in between do not copy it.
struct SlowSample {
  std::vector<smi::Reading> facts;         // identity + static
  std::vector<smi::Partition> partitions;
  smi::HealthReport health;
  std::chrono::steady_clock::time_point at{};

  [[nodiscard]] static const std::shared_ptr<const SlowSample>& none();  // before the first one
};

struct DeviceSnapshot {
  smi::DeviceSummary device;
  std::vector<smi::Reading> live;  // latest fast sample
  std::shared_ptr<const SlowSample> slow = SlowSample::none();  // latest slow sample; never null
  std::chrono::steady_clock::time_point live_at{};
  std::chrono::system_clock::time_point live_wall{};  // live_at on the wall clock, for clients
  bool have_live = false;

  [[nodiscard]] const std::vector<smi::Reading>& facts() const noexcept { return slow->facts; }
  [[nodiscard]] const std::vector<smi::Partition>& partitions() const noexcept { return slow->partitions; }
  [[nodiscard]] const smi::HealthReport& health() const noexcept { return slow->health; }
};

// One reading as the history ring keeps it: the number and its status, 24 bytes. Text values and
// details are the current sample's (GetMetrics); history is for plotting numbers over time.
struct HistoryValue {
  smi::MetricId id{};
  smi::Status status = smi::Status::not_supported;
  bool integer = false;        // raw holds an int64_t, else a double's bits
  std::uint16_t instance = 0;  // index into HistoryEntry::instances
  std::int32_t error_code = 0;
  std::uint64_t raw = 0;

  [[nodiscard]] std::int64_t as_integer() const noexcept { return static_cast<std::int64_t>(raw); }
  [[nodiscard]] double as_real() const noexcept { return std::bit_cast<double>(raw); }
};

// One live sample kept in the history ring.
struct HistoryEntry {
  std::chrono::system_clock::time_point at;
  std::vector<HistoryValue> values;
  // The instance labels the values name; shared with the previous entry while unchanged.
  std::shared_ptr<const std::vector<std::string>> instances;

  // Keeps `live`'s numbers; `previous` lends its instance table when it has the same labels.
  static HistoryEntry from(std::chrono::system_clock::time_point at, const std::vector<smi::Reading>& live,
                           const HistoryEntry* previous);
  [[nodiscard]] std::size_t bytes() const noexcept { return sizeof(HistoryEntry) + values.capacity() * sizeof(HistoryValue); }
};

struct DeviceState {
  std::shared_ptr<const DeviceSnapshot> snapshot;  // replaced whole, under `mutex`
  // Newest last; at most history_length entries and this device's share of history_memory.
  std::deque<std::shared_ptr<const HistoryEntry>> history;
  std::size_t history_bytes = 0;
  std::chrono::steady_clock::time_point busy_since{};  // when the running sample started (epoch: idle)
  // energy_consumed between its exact (costly) reads; only the worker sampling the device uses it.
  std::optional<EnergyEstimate> energy;
  mutable std::mutex mutex;
};

struct SamplerPool;

class Sampler {
 public:
  // Takes the system; starts the sampling pool (sampler.cpp). Every device has a snapshot from the start
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
  [[nodiscard]] std::uint64_t progress() const noexcept;
  [[nodiscard]] const Config& config() const noexcept { return config_; }
  // Whose work is on each GPU (attribution.hpp); null when attribution is off.
  [[nodiscard]] std::shared_ptr<const Attribution> attribution() const;

 private:
  std::shared_ptr<const smi::System> system_;
  Config config_;
  std::vector<std::shared_ptr<DeviceState>> states_;
  std::shared_ptr<SamplerPool> pool_;
  std::unique_ptr<AttributionWatcher> attribution_;  // after states_: it reads their snapshots
};

}  // namespace hipstack::smid
