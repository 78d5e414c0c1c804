// The daemon's ground floor: what the sampler publishes for each device and every reader takes (the
// attribution watcher, jobs, /metrics, gRPC, D-Bus). Snapshots are immutable once published; a
// DeviceState holds the latest one and the device's history under its mutex. No other daemon header
// is needed to read them.
#pragma once

#include <hipstack/smi.hpp>

#include <bit>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "energy_estimate.hpp"

namespace hipstack::smid {

// CPER records the daemon recorded for a GPU since it started, by severity and action (/metrics'
// hipstack_gpu_cper_records_total).
struct CperCount {
  std::string severity;
  std::string action;
  std::uint64_t records = 0;
};

// What a slow sample found. Shared by every snapshot until the next slow sample: the fast samples
// in between do not copy it.
struct SlowSample {
  std::vector<smi::Reading> facts;         // identity + static
  std::vector<smi::Partition> partitions;
  smi::HealthReport health;   // with the error keeper's errors.recent finding
  std::vector<CperCount> cper_records;
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

}  // namespace hipstack::smid
