// hipstack/events.hpp: what changed on a GPU between two looks at it, as events (docs/events.md).
// One set of rules for every tool: `hipstack-smi event` prints these events and hipstack-smid's
// WatchEvents streams them, so both say the same thing about the same change.
//
// A look is a GPU's identity and its readings of event_metrics() (facts and live readings; the
// XID and KFD event counts where the backend subscribes to them). Events compare two looks of the
// same GPU (by UUID): counters rising (ECC/RAS errors, bad pages, retired or pending rows, XIDs, KFD
// events: VM faults, thermal throttling, GPU resets), throttling
// starting, stopping or changing, throttled firmware samples, counters going back (a reset or a
// driver reload), partition modes and counts changing, the GPU becoming unreadable or readable,
// and GPUs appearing and disappearing.
#pragma once

#include <hipstack/smi.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smi {

// One GPU at one look.
struct EventLook {
  DeviceSummary device;
  std::vector<Reading> readings;  // of event_metrics(); other metrics are ignored
};

struct Event {
  std::string kind;     // one of event_kinds()
  DeviceSummary device;  // as the later look saw it (the earlier one for "device-removed")
  std::string metric;   // "name" or "name[instance]"; "" for events about the whole GPU
  std::string before;   // the value at the earlier look ("" when none)
  std::string after;    // the value at the later look
  std::string message;  // what it means, in words
};

// The metrics a look needs: read these (the partition modes are facts, the rest live readings).
HIPSTACK_SMI_CXX_API std::span<const MetricId> event_metrics() noexcept;

// Whether a metric counts events a driver reports only to a live subscriber (XIDs, KFD events): a
// look must read it from a System that stays open, or the counts start again at every look.
HIPSTACK_SMI_CXX_API bool needs_subscription(MetricId id) noexcept;

// Every event kind, in the order docs/events.md explains them.
HIPSTACK_SMI_CXX_API std::span<const std::string_view> event_kinds() noexcept;

// The events between two looks at one GPU. `before` null: the first look, whose XID and KFD event
// counts are news (the subscription to them began at or before it), and nothing else is.
HIPSTACK_SMI_CXX_API std::vector<Event> device_events(const EventLook* before, const EventLook& after);

// The events between two looks at all GPUs, matched by UUID: "device-removed" for a GPU only the
// earlier look has, "device-added" (with its XIDs) for one only the later look has, then
// device_events for the rest.
HIPSTACK_SMI_CXX_API std::vector<Event> events_between(const std::vector<EventLook>& before,
                                                       const std::vector<EventLook>& after);

// Follows GPUs as `hipstack-smi event` does: subscribes to the events drivers report only to a live
// subscriber (a System that stays open) and takes looks. Each look opens the System again, so GPUs
// that come and go are seen. Selectors (index, BDF or UUID; empty: every GPU) that match nothing at a
// look are skipped: their GPU may have gone ("device-removed"). Used by one thread at a time.
class HIPSTACK_SMI_CXX_API EventWatch {
 public:
  // Subscribes and takes the first look; throws Error like System::open.
  explicit EventWatch(const OpenOptions& options, std::vector<std::string> selectors = {});
  EventWatch(EventWatch&&) noexcept;
  EventWatch& operator=(EventWatch&&) noexcept;
  ~EventWatch();

  // The first call: the first look's news (reported events since the subscription). Later calls
  // take a new look and give the events since the previous one.
  std::vector<Event> poll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hipstack::smi
