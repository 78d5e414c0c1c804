// The event rules (hipstack/events.hpp): what a change between two looks at a GPU means.
#include <hipstack/events.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace hipstack::smi {
namespace {

constexpr std::string_view kEventKinds[] = {
    "device-added",       "device-removed",     "unreadable",         "readable",
    "xid",                "vm-fault",           "thermal-throttle",   "gpu-pre-reset",
    "gpu-post-reset",     "throttling-started", "throttling-stopped", "throttling-changed",
    "throttling",         "memory-errors",      "memory-errors-cleared", "counters-restarted",
    "partitions-changed", "partition-mode-changed", "cper"};

using Key = std::pair<MetricId, std::string>;  // metric and instance

std::string value_text(const Reading& r) {
  if (const auto text = r.text()) return std::string(*text);
  if (const auto number = r.number()) return fmt::format("{}", *number);
  return std::string(status_name(r.status));
}

std::string metric_label(MetricId id, const std::string& instance) {
  const std::string name(find_metric(id)->name);
  return instance.empty() ? name : fmt::format("{}[{}]", name, instance);
}

// The metrics the rules follow: the catalogue's `events` group (the rows' EVENTS column token).
std::span<const MetricId> followed_metrics() noexcept { return find_metric_group("events")->members; }

bool followed(MetricId id) {
  const auto metrics = followed_metrics();
  return std::find(metrics.begin(), metrics.end(), id) != metrics.end();
}

// The event kind of a reported count rising: "xid", or the KFD event kind's name with '-' for '_'
// (vm_fault: vm-fault), so the backend's list of kinds is the only one.
std::string reported_kind(MetricId id, const std::string& instance) {
  if (id == MetricId::xid_errors) return "xid";
  std::string kind = instance;
  std::replace(kind.begin(), kind.end(), '_', '-');
  return kind;
}

// A look's readings by metric and instance: the reported counts apart (only those read), the rest.
struct Indexed {
  std::map<Key, const Reading*> reported;
  std::map<Key, const Reading*> readings;
  bool readable = true;
};

Indexed index(const EventLook& look) {
  Indexed out;
  std::vector<Reading> answers;
  for (const Reading& r : look.readings) {
    if (!followed(r.id)) continue;
    if (needs_subscription(r.id)) {
      if (r.ok()) out.reported.emplace(Key{r.id, r.instance}, &r);
      continue;
    }
    out.readings.emplace(Key{r.id, r.instance}, &r);
    answers.push_back(r);
  }
  // The GPU answers when it is not faulted and its reads did not all fail (as hipstack_gpu_up).
  out.readable = look.device.fault.empty() && device_answered(answers);
  return out;
}

Event make(std::string_view kind, const DeviceSummary& device, std::string metric, std::string before, std::string after,
           std::string message) {
  return {std::string(kind), device, std::move(metric), std::move(before), std::move(after), std::move(message)};
}

// One event per reported count that rose (an XID code, a KFD event kind); its detail says what the
// latest one was.
void reported_events(const Indexed* before, const Indexed& after, const DeviceSummary& device, std::vector<Event>& events) {
  for (const auto& [key, now] : after.reported) {
    std::int64_t was = 0;
    if (before != nullptr) {
      if (const auto it = before->reported.find(key); it != before->reported.end()) {
        was = static_cast<std::int64_t>(it->second->number().value_or(0));
      }
    }
    const auto count = static_cast<std::int64_t>(now->number().value_or(0));
    if (count > was) {
      events.push_back(make(reported_kind(key.first, key.second), device, metric_label(key.first, key.second), std::to_string(was),
                            std::to_string(count), now->detail));
    }
  }
}

// A followed reading that changed between two looks at which both read it.
void reading_event(const Key& key, const Reading& was, const Reading& now, const DeviceSummary& device,
                   std::vector<Event>& events) {
  const MetricId id = key.first;
  const std::string label = metric_label(id, key.second);
  if (id == MetricId::compute_partition || id == MetricId::memory_partition) {
    if (was.text() != now.text()) {
      events.push_back(make("partition-mode-changed", device, label, value_text(was), value_text(now), "partition mode changed"));
    }
    return;
  }
  const double a = was.number().value_or(0);
  const double b = now.number().value_or(0);
  if (a == b) return;
  if (id == MetricId::throttle_status) {
    const std::string_view kind = a == 0 ? "throttling-started" : b == 0 ? "throttling-stopped" : "throttling-changed";
    events.push_back(make(kind, device, label, fmt::format("{:#x}", static_cast<std::uint64_t>(a)),
                          fmt::format("{:#x}", static_cast<std::uint64_t>(b)), "throttle reasons (bit mask)"));
  } else if (find_metric(id)->kind == Kind::counter && b < a) {
    events.push_back(make("counters-restarted", device, label, value_text(was), value_text(now),
                          "a counter went back: the GPU was reset or its driver reloaded"));
  } else if (id == MetricId::violation_residency) {
    if (b > a) {
      events.push_back(make("throttling", device, label, value_text(was), value_text(now),
                            fmt::format("throttled for {} more firmware samples ({})", b - a, key.second)));
    }
  } else if (id == MetricId::energy_consumed || id == MetricId::temperature_junction) {
    // Followed for counters-restarted only (energy) and kept for later rules: no event of their own.
  } else if (b > a) {
    events.push_back(make("memory-errors", device, label, value_text(was), value_text(now), fmt::format("{:g} more", b - a)));
  } else {
    events.push_back(make("memory-errors-cleared", device, label, value_text(was), value_text(now), fmt::format("{:g} fewer", a - b)));
  }
}

// The device-wide ECC total that sums the per-block counts of `id` (amdgpu's ras.cpp adds the
// blocks' ce and ue into ecc_*_volatile), or none.
std::optional<MetricId> total_of(MetricId id) {
  if (id == MetricId::ras_correctable) return MetricId::ecc_corrected_volatile;
  if (id == MetricId::ras_uncorrectable) return MetricId::ecc_uncorrected_volatile;
  return std::nullopt;
}

// One hardware change is one event: a block's count that rose also raised the ECC total summing
// it, which is then named in the block's event instead of being an event of its own.
void fold_totals_into_blocks(std::vector<Event>& events) {
  std::vector<bool> folded(events.size(), false);
  for (Event& block : events) {
    const std::size_t bracket = block.metric.find('[');
    if (bracket == std::string::npos || !block.kind.starts_with("memory-errors")) continue;
    const MetricInfo* info = find_metric(std::string_view(block.metric).substr(0, bracket));
    const auto total = info != nullptr ? total_of(info->id) : std::nullopt;
    if (!total) continue;
    const std::string total_name(find_metric(*total)->name);
    for (std::size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (folded[i] || e.metric != total_name || e.kind != block.kind) continue;
      block.message += fmt::format(" (the device's {} went from {} to {})", total_name, e.before, e.after);
      folded[i] = true;
      break;
    }
  }
  std::vector<Event> kept;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (!folded[i]) kept.push_back(std::move(events[i]));
  }
  events = std::move(kept);
}

}  // namespace

std::span<const MetricId> event_metrics() noexcept { return followed_metrics(); }

std::span<const std::string_view> event_kinds() noexcept { return kEventKinds; }

bool needs_subscription(MetricId id) noexcept { return id == MetricId::xid_errors || id == MetricId::kfd_events; }

std::vector<Event> device_events(const EventLook* before, const EventLook& after) {
  std::vector<Event> events;
  const Indexed now = index(after);
  const DeviceSummary& device = after.device;
  if (before == nullptr) {
    reported_events(nullptr, now, device, events);
    return events;
  }
  const Indexed was = index(*before);
  reported_events(&was, now, device, events);
  if (was.readable != now.readable) {
    events.push_back(make(now.readable ? "readable" : "unreadable", device, "", "", "",
                          now.readable ? "the device answers again"
                                       : "no reading succeeds: the GPU is gone, in reset, or its driver is stuck"));
  }
  if (before->device.partition_count != device.partition_count) {
    events.push_back(make("partitions-changed", device, "partitions", std::to_string(before->device.partition_count),
                          std::to_string(device.partition_count), "the number of partitions changed"));
  }
  for (const auto& [key, reading] : now.readings) {
    const auto it = was.readings.find(key);
    if (it == was.readings.end() || !it->second->ok() || !reading->ok()) continue;
    reading_event(key, *it->second, *reading, device, events);
  }
  fold_totals_into_blocks(events);
  return events;
}

std::vector<Event> events_between(const std::vector<EventLook>& before, const std::vector<EventLook>& after) {
  auto find = [](const std::vector<EventLook>& looks, const std::string& uuid) -> const EventLook* {
    for (const EventLook& look : looks) {
      if (look.device.uuid == uuid) return &look;
    }
    return nullptr;
  };
  std::vector<Event> events;
  for (const EventLook& look : before) {
    if (find(after, look.device.uuid) == nullptr) {
      events.push_back(make("device-removed", look.device, "", "", "", "the GPU is no longer listed"));
    }
  }
  for (const EventLook& look : after) {
    const EventLook* earlier = find(before, look.device.uuid);
    if (earlier == nullptr) events.push_back(make("device-added", look.device, "", "", "", "a GPU appeared"));
    auto more = device_events(earlier, look);
    events.insert(events.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return events;
}

}  // namespace hipstack::smi
