// The events of the GPUs the daemon samples: what changed between snapshots, kept in a bounded log
// (event_log.hpp).
#include "event_log.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <set>

namespace hipstack::smid {
namespace {

// Whether the event rules look at a reading: a table by metric id (catalogue ids are below 1024),
// as every reading of every GPU is asked once a second.
bool followed(const smi::Reading& r) {
  static const auto table = [] {
    std::array<bool, 1024> out{};
    for (const smi::MetricId id : smi::event_metrics()) out[static_cast<std::uint32_t>(id) % 1024] = true;
    return out;
  }();
  const auto number = static_cast<std::uint32_t>(r.id);
  return number < table.size() && table[number];
}

// A GPU as the event rules see it in one snapshot: its facts (the partition modes) and live
// readings of the event metrics. A sample past the read deadline makes it unreadable meanwhile.
smi::EventLook look_at(const Sampler::View& view) {
  const DeviceSnapshot& snapshot = *view.snapshot;
  smi::EventLook look;
  look.device = snapshot.device;
  if (view.stale && look.device.fault.empty()) look.device.fault = "its sample runs past the read deadline";
  for (const auto* readings : {&snapshot.facts(), &snapshot.live}) {
    std::copy_if(readings->begin(), readings->end(), std::back_inserter(look.readings), followed);
  }
  return look;
}

}  // namespace

EventLog::EventLog(std::size_t capacity) : capacity_(std::max<std::size_t>(1, capacity)) {}

void EventLog::observe(const Sampler& sampler) {
  const auto views = sampler.views();
  const auto found = std::chrono::system_clock::now();
  std::lock_guard lock(mutex_);
  std::vector<smi::Event> events;
  std::map<std::string, Seen> now;
  std::set<std::string> listed;
  for (const Sampler::View& view : views) {
    const std::string& uuid = view.snapshot->device.uuid;
    listed.insert(uuid);
    const auto before = seen_.find(uuid);
    const bool unchanged = before != seen_.end() && before->second.snapshot == view.snapshot && before->second.stale == view.stale;
    // Before its first sample a GPU has nothing to compare: it is looked at once it has one.
    if (unchanged || (!view.snapshot->have_live && !view.stale)) {
      if (before != seen_.end()) now.insert(seen_.extract(before));
      continue;
    }
    Seen seen{view.snapshot, view.stale, look_at(view)};
    std::vector<smi::Event> more;
    if (before != seen_.end()) {
      more = smi::device_events(&before->second.look, seen.look);
    } else if (observed_ && !listed_.contains(uuid)) {
      more = smi::events_between({}, {seen.look});  // a GPU that appeared (at a reload)
    } else {
      more = smi::device_events(nullptr, seen.look);  // its first look: its XIDs only
    }
    events.insert(events.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    now.emplace(uuid, std::move(seen));
  }
  // GPUs no longer listed (gone at a reload).
  std::vector<smi::EventLook> gone;
  for (auto& [uuid, seen] : seen_) {
    if (!listed.contains(uuid)) gone.push_back(std::move(seen.look));
  }
  if (!gone.empty()) {
    auto removed = smi::events_between(gone, {});
    events.insert(events.begin(), std::make_move_iterator(removed.begin()), std::make_move_iterator(removed.end()));
  }
  seen_ = std::move(now);
  listed_ = std::move(listed);
  observed_ = true;
  record(std::move(events), found);
  // The CPER records the sampler found since the last look (the error keeper numbers them).
  if (const auto& errors = sampler.errors()) {
    for (const KeptError& k : errors->cper_after(cper_sequence_, capacity_)) {
      cper_sequence_ = k.sequence;
      smi::DeviceSummary device;
      for (const Sampler::View& view : views) {
        if (view.snapshot->device.uuid == k.uuid) device = view.snapshot->device;
      }
      if (device.uuid.empty()) {  // gone at a reload since
        device.uuid = k.uuid;
        device.bdf = k.bdf;
      }
      record({smi::cper_error_event(k.occurrence, device)}, k.seen);
    }
  }
}

void EventLog::record(std::vector<smi::Event> events, std::chrono::system_clock::time_point found) {
  for (smi::Event& e : events) {
    ring_.push_back({++last_, found, std::move(e)});
    if (ring_.size() > capacity_) ring_.pop_front();
  }
}

EventLog::Page EventLog::after(std::uint64_t sequence, std::size_t max) const {
  std::lock_guard lock(mutex_);
  Page page;
  if (ring_.empty() || sequence >= last_) return page;
  const std::uint64_t oldest = ring_.front().sequence;
  if (sequence + 1 < oldest) {
    page.missed = oldest - sequence - 1;
    sequence = oldest - 1;
  }
  for (auto it = ring_.begin() + static_cast<std::ptrdiff_t>(sequence + 1 - oldest); it != ring_.end() && page.entries.size() < max; ++it) {
    page.entries.push_back(*it);
  }
  return page;
}

std::uint64_t EventLog::last_sequence() const {
  std::lock_guard lock(mutex_);
  return last_;
}

}  // namespace hipstack::smid
