// The events of the GPUs the daemon samples: hipstack/events.hpp's rules (those `hipstack-smi event`
// prints by) applied to each GPU's successive snapshots, kept in a bounded ring that WatchEvents
// streams from. A GPU whose sample runs past the read deadline counts as unreadable while it does.
#pragma once

#include <hipstack/events.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sampler.hpp"

namespace hipstack::smid {

class EventLog {
 public:
  struct Entry {
    std::uint64_t sequence = 0;  // 1, 2, ... in the order found
    std::chrono::system_clock::time_point found;
    smi::Event event;
  };
  struct Page {
    std::vector<Entry> entries;  // oldest first
    std::uint64_t missed = 0;    // asked-for events no longer kept
  };

  explicit EventLog(std::size_t capacity = 1024);

  // Compares each GPU's latest snapshot with the one seen before; records what changed. A GPU's
  // first sample is its baseline (only XIDs found then are events, as for hipstack-smi event); a
  // GPU the sampler lists after the first call appeared (a reload), one it no longer lists is gone.
  // The CPER records the sampler's error keeper found since the last call are "cper" events.
  void observe(const Sampler& sampler);

  // The kept events after `sequence`, at most `max`; `missed` counts those after it that are no
  // longer kept.
  [[nodiscard]] Page after(std::uint64_t sequence, std::size_t max) const;
  // The last sequence recorded (0 before any event).
  [[nodiscard]] std::uint64_t last_sequence() const;

 private:
  struct Seen {
    std::shared_ptr<const DeviceSnapshot> snapshot;  // what the look was taken from
    bool stale = false;
    smi::EventLook look;
  };
  void record(std::vector<smi::Event> events, std::chrono::system_clock::time_point found);

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  bool observed_ = false;
  std::set<std::string> listed_;      // the UUIDs the sampler listed at the last look
  std::map<std::string, Seen> seen_;  // by UUID: those with a sample
  std::deque<Entry> ring_;
  std::uint64_t last_ = 0;
  std::uint64_t cper_sequence_ = 0;  // the error keeper's last CPER record taken
};

}  // namespace hipstack::smid
