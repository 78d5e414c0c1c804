// hipstack-smi event: follows the GPUs and prints one line (or one JSON object) per change as it
// happens: devices appearing and disappearing, throttling, ECC/RAS error counts rising, bad pages,
// partition mode changes, counters restarting (a reset or a driver reload), XID errors, and a device
// becoming unreadable or readable again. Each look re-opens the System, so devices that come and go
// are seen; one System stays open for the XIDs, which NVML queues only for a registration that lives.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <thread>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;

// What the event command looks at: live counters and states, and the partition modes.
const MetricId kFollowed[] = {MetricId::throttle_status,          MetricId::violation_residency,
                              MetricId::ecc_corrected_volatile,   MetricId::ecc_uncorrected_volatile,
                              MetricId::ras_correctable,          MetricId::ras_uncorrectable,
                              MetricId::ras_deferred,             MetricId::bad_pages_pending,
                              MetricId::bad_pages_reserved,       MetricId::bad_pages_failed,
                              MetricId::retired_pages,            MetricId::remapped_rows_pending,
                              MetricId::energy_consumed,          MetricId::compute_partition,
                              MetricId::memory_partition,         MetricId::temperature_junction};

struct DeviceState {
  smi::DeviceSummary device;
  std::map<std::pair<MetricId, std::string>, smi::Reading> readings;  // by metric and instance
  bool readable = true;  // some followed reading was ok
  std::map<std::string, smi::Reading> xids;  // xid_errors by XID code, from the long-lived System
};

struct Event {
  std::string kind;
  const smi::DeviceSummary* device = nullptr;
  std::string metric;  // "name" or "name[instance]"
  std::string before;
  std::string after;
  std::string message;
};

std::string value_text(const smi::Reading& r) {
  if (const auto text = r.text()) return std::string(*text);
  if (const auto number = r.number()) return fmt::format("{}", *number);
  return std::string(smi::status_name(r.status));
}

std::string metric_label(MetricId id, const std::string& instance) {
  const std::string name(smi::find_metric(id)->name);
  return instance.empty() ? name : fmt::format("{}[{}]", name, instance);
}

// Each GPU's XID counts (by UUID) from the System that stays registered for them.
std::map<std::string, std::map<std::string, smi::Reading>> xid_counts(const smi::System& watch) {
  smi::SampleOptions what;
  what.metrics = {MetricId::xid_errors};
  std::map<std::string, std::map<std::string, smi::Reading>> out;
  for (const smi::DeviceSummary& d : watch.devices()) {
    auto& counts = out[d.uuid];
    for (smi::Reading& r : watch.sample(d.index, what)) {
      if (r.ok()) counts.emplace(r.instance, std::move(r));
    }
  }
  return out;
}

std::map<std::string, DeviceState> look(const smi::OpenOptions& open, const CommonOptions& options, const smi::System& watch) {
  auto xids = xid_counts(watch);
  const smi::System system = smi::System::open(open);
  smi::SampleOptions what;
  what.static_info = true;
  what.live = true;
  what.metrics.assign(std::begin(kFollowed), std::end(kFollowed));
  // -g selectors that match nothing now are skipped: their GPU may have gone (device-removed).
  const std::vector<smi::DeviceSummary> devices = system.devices();
  std::vector<std::uint32_t> indices;
  for (const smi::DeviceSummary& d : devices) {
    if (options.gpus.empty()) indices.push_back(d.index);
  }
  for (const std::string& selector : options.gpus) {
    try {
      indices.push_back(system.resolve(selector));
    } catch (const smi::Error&) {
    }
  }
  std::map<std::string, DeviceState> out;
  for (const std::uint32_t index : indices) {
    DeviceState state;
    state.device = devices.at(index);
    state.readable = false;
    for (smi::Reading& r : system.sample(index, what)) {
      state.readable = state.readable || r.ok();
      state.readings.emplace(std::make_pair(r.id, r.instance), std::move(r));
    }
    if (auto it = xids.find(state.device.uuid); it != xids.end()) state.xids = std::move(it->second);
    out.emplace(state.device.uuid, std::move(state));
  }
  return out;
}

// One event per XID error that arrived since the previous look (its detail says what the code means).
void xid_events(const DeviceState& before, const DeviceState& after, std::vector<Event>& events) {
  for (const auto& [code, now] : after.xids) {
    const auto it = before.xids.find(code);
    const std::int64_t was = it == before.xids.end() ? 0 : static_cast<std::int64_t>(it->second.number().value_or(0));
    const auto count = static_cast<std::int64_t>(now.number().value_or(0));
    if (count > was) {
      events.push_back({"xid", &after.device, metric_label(MetricId::xid_errors, code), std::to_string(was),
                        std::to_string(count), now.detail});
    }
  }
}

// The events between two looks at one device.
void compare(const DeviceState& before, const DeviceState& after, std::vector<Event>& events) {
  const smi::DeviceSummary* device = &after.device;
  xid_events(before, after, events);
  if (before.readable != after.readable) {
    events.push_back({after.readable ? "readable" : "unreadable", device, "", "", "",
                      after.readable ? "the device answers again"
                                     : "no reading succeeds: the GPU is gone, in reset, or its driver is stuck"});
  }
  if (before.device.partition_count != after.device.partition_count) {
    events.push_back({"partitions-changed", device, "partitions", std::to_string(before.device.partition_count),
                      std::to_string(after.device.partition_count), "the number of partitions changed"});
  }
  for (const auto& [key, now] : after.readings) {
    const auto it = before.readings.find(key);
    if (it == before.readings.end() || !it->second.ok() || !now.ok()) continue;
    const smi::Reading& was = it->second;
    const std::string label = metric_label(key.first, key.second);
    const MetricId id = key.first;
    if (id == MetricId::compute_partition || id == MetricId::memory_partition) {
      if (was.text() != now.text()) {
        events.push_back({"partition-mode-changed", device, label, value_text(was), value_text(now), "partition mode changed"});
      }
      continue;
    }
    const double a = was.number().value_or(0);
    const double b = now.number().value_or(0);
    if (a == b) continue;
    const smi::MetricInfo* info = smi::find_metric(id);
    if (id == MetricId::throttle_status) {
      const std::string kind = a == 0 ? "throttling-started" : b == 0 ? "throttling-stopped" : "throttling-changed";
      events.push_back({kind, device, label, fmt::format("{:#x}", static_cast<std::uint64_t>(a)),
                        fmt::format("{:#x}", static_cast<std::uint64_t>(b)), "throttle reasons (bit mask)"});
    } else if (info->kind == smi::Kind::counter && b < a) {
      events.push_back({"counters-restarted", device, label, value_text(was), value_text(now),
                        "a counter went back: the GPU was reset or its driver reloaded"});
    } else if (id == MetricId::violation_residency && b > a) {
      events.push_back({"throttling", device, label, value_text(was), value_text(now),
                        fmt::format("throttled for {} more firmware samples ({})", b - a, key.second)});
    } else if (id != MetricId::energy_consumed && id != MetricId::temperature_junction && b > a) {
      events.push_back({"memory-errors", device, label, value_text(was), value_text(now),
                        fmt::format("{} rose by {}", label, b - a)});
    } else if (id != MetricId::energy_consumed && id != MetricId::temperature_junction && b < a) {
      events.push_back({"memory-errors-cleared", device, label, value_text(was), value_text(now), fmt::format("{} fell", label)});
    }
  }
}

std::vector<Event> changes(const std::map<std::string, DeviceState>& before, const std::map<std::string, DeviceState>& after) {
  std::vector<Event> events;
  for (const auto& [uuid, state] : before) {
    if (!after.contains(uuid)) events.push_back({"device-removed", &state.device, "", "", "", "the GPU is no longer listed"});
  }
  for (const auto& [uuid, state] : after) {
    const auto it = before.find(uuid);
    if (it == before.end()) {
      events.push_back({"device-added", &state.device, "", "", "", "a GPU appeared"});
      xid_events(DeviceState{}, state, events);
    } else {
      compare(it->second, state, events);
    }
  }
  return events;
}

void print_event(const Event& e, const CommonOptions& options) {
  const auto now = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  const std::string time = fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", now);
  if (options.format == Format::json) {
    Json j{{"time", time},     {"event", e.kind},     {"gpu", e.device->index}, {"bdf", e.device->bdf},
           {"uuid", e.device->uuid}, {"metric", e.metric}, {"before", e.before}, {"after", e.after},
           {"message", e.message}};
    print(j.dump() + "\n");
  } else if (options.format == Format::csv) {
    print(csv_row({time, e.kind, std::to_string(e.device->index), e.device->bdf, e.device->uuid, e.metric, e.before, e.after,
                   e.message}));
  } else {
    const std::string change = e.metric.empty() ? "" : fmt::format("  {} {} -> {}", e.metric, e.before, e.after);
    print(fmt::format("{}  GPU {} {}  {}{}  {}\n", time, e.device->index, e.device->bdf, e.kind, change, e.message));
  }
  std::fflush(stdout);
}

}  // namespace

int run_event(const smi::OpenOptions& open, const CommonOptions& options, double interval_s, long looks) {
  if (options.format == Format::csv) print("time,event,device,bdf,uuid,metric,before,after,message\n");
  const smi::System watch = smi::System::open(open);  // registered for XIDs from now on
  std::map<std::string, DeviceState> previous = look(open, options, watch);
  // XIDs the first look found arrived after the registration: they are news too.
  for (const auto& [uuid, state] : previous) {
    std::vector<Event> first;
    xid_events(DeviceState{}, state, first);
    for (const Event& e : first) print_event(e, options);
  }
  const auto interval = std::chrono::duration<double>(interval_s);
  for (long n = 1; looks == 0 || n < looks; ++n) {
    std::this_thread::sleep_for(interval);
    std::map<std::string, DeviceState> current = look(open, options, watch);
    for (const Event& e : changes(previous, current)) print_event(e, options);
    previous = std::move(current);
  }
  return kExitOk;
}

}  // namespace hipstack::cli
