// The sampler: a small pool of workers samples every device on its own schedule (fast: live
// metrics; slow: identity, static facts, health) and publishes immutable snapshots. Readers (/metrics) only
// take the latest snapshots: they never wait on a device. A device whose sample runs past the read
// deadline (a blocking sysfs read) is reported stale; the others carry on.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "attribution_watcher.hpp"
#include "config.hpp"
#include "error_keeper.hpp"
#include "self_metrics.hpp"
#include "snapshot.hpp"

namespace hipstack::smid {

struct SamplerPool;

class Sampler {
 public:
  // Takes the system; starts the sampling pool (sampler.cpp). Every device has a snapshot from the start
  // (its identity; the previous sampler's samples on a reload, matched by UUID), so a GPU stuck in
  // its first sample is still listed, as down.
  // `errors` (the daemon's, kept across reloads) is told of each XID and CPER record the samples
  // find and gives each health verdict its errors.recent finding; null: no such finding.
  Sampler(std::shared_ptr<const smi::System> system, Config config, const Sampler* previous = nullptr,
          std::shared_ptr<ErrorKeeper> errors = nullptr);
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
  // How long each sample took, by backend (kept across reloads: the previous sampler's go on).
  [[nodiscard]] std::vector<std::pair<std::string, DurationHistogram::Counts>> sample_durations() const;
  // What every device's history ring holds now, in bytes (HistoryEntry::bytes).
  [[nodiscard]] std::uint64_t history_bytes() const;
  // The daemon's kept errors; null when the sampler was made without them.
  [[nodiscard]] const std::shared_ptr<ErrorKeeper>& errors() const noexcept { return errors_; }

 private:
  // The backend's histogram: this sampler's, else the previous one's, else a new one.
  std::shared_ptr<DurationHistogram> durations_of(const std::string& backend, const Sampler* previous);

  std::shared_ptr<const smi::System> system_;
  Config config_;
  std::shared_ptr<ErrorKeeper> errors_;
  std::vector<std::pair<std::string, std::shared_ptr<DurationHistogram>>> durations_;  // by backend
  std::vector<std::shared_ptr<DeviceState>> states_;
  std::shared_ptr<SamplerPool> pool_;
  std::unique_ptr<AttributionWatcher> attribution_;  // after states_: it reads their snapshots
};

}  // namespace hipstack::smid
