// hipstack-smi event: follows the GPUs and prints one line (or one JSON object) per change as it
// happens: devices appearing and disappearing, throttling, ECC/RAS error counts rising, bad pages,
// partition mode changes, counters restarting (a reset or a driver reload), XID errors, KFD events
// (VM faults, thermal throttling, GPU resets), and a device becoming unreadable or readable again.
// Each look re-opens the System, so devices that come and go are seen; one System stays open for the
// reported events (XIDs, KFD events), which the drivers queue only for a subscription that lives.
// The rules are the library's (hipstack/events.hpp), which hipstack-smid's WatchEvents streams too.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include <hipstack/events.hpp>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

using smi::MetricId;

// Each GPU's reported-event counts (by UUID) from the System that stays subscribed to them.
std::map<std::string, std::vector<smi::Reading>> reported_counts(const smi::System& watch) {
  smi::SampleOptions what;
  what.live = true;
  for (const MetricId id : smi::event_metrics()) {
    if (smi::needs_subscription(id)) what.metrics.push_back(id);
  }
  std::map<std::string, std::vector<smi::Reading>> out;
  for (const smi::DeviceSummary& d : watch.devices()) out[d.uuid] = watch.sample(d.index, what);
  return out;
}

// A look at the chosen GPUs: the event metrics from a System opened now (so devices that come and
// go are seen), the reported-event counts from the one that stays subscribed.
std::vector<smi::EventLook> look(const smi::OpenOptions& open, const CommonOptions& options, const smi::System& watch) {
  auto reported = reported_counts(watch);
  const smi::System system = smi::System::open(open);
  smi::SampleOptions what;
  what.static_info = true;
  what.live = true;
  for (const MetricId id : smi::event_metrics()) {
    if (!smi::needs_subscription(id)) what.metrics.push_back(id);
  }
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
  std::vector<smi::EventLook> out;
  for (const std::uint32_t index : indices) {
    smi::EventLook look{devices.at(index), system.sample(index, what)};
    if (auto it = reported.find(look.device.uuid); it != reported.end()) {
      look.readings.insert(look.readings.end(), it->second.begin(), it->second.end());
    }
    out.push_back(std::move(look));
  }
  return out;
}

}  // namespace

void print_event_header(const CommonOptions& options, bool hosts) {
  if (options.format == Format::csv) print(std::string(hosts ? "host," : "") + "time,event,device,bdf,uuid,metric,before,after,message\n");
}

void print_event(const smi::Event& e, const CommonOptions& options, std::chrono::system_clock::time_point when,
                 std::string_view host) {
  const std::string time = fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::time_point_cast<std::chrono::milliseconds>(when));
  if (options.format == Format::json) {
    Json j;
    if (!host.empty()) j["host"] = std::string(host);
    j.update(Json{{"time", time},     {"event", e.kind},     {"gpu", e.device.index}, {"bdf", e.device.bdf},
                  {"uuid", e.device.uuid}, {"metric", e.metric}, {"before", e.before}, {"after", e.after},
                  {"message", e.message}});
    print(j.dump() + "\n");
  } else if (options.format == Format::csv) {
    std::vector<std::string> row = {time, e.kind, std::to_string(e.device.index), e.device.bdf, e.device.uuid, e.metric,
                                    e.before, e.after, e.message};
    if (!host.empty()) row.insert(row.begin(), std::string(host));
    print(csv_row(row));
  } else {
    const std::string change = e.metric.empty() ? "" : fmt::format("  {} {} -> {}", e.metric, e.before, e.after);
    const std::string who = host.empty() ? std::string() : fmt::format("host {}  ", host);
    print(fmt::format("{}{}  GPU {} {}  {}{}  {}\n", who, time, e.device.index, e.device.bdf, e.kind, change, e.message));
  }
  std::fflush(stdout);
}

int run_event(const smi::OpenOptions& open, const CommonOptions& options, double interval_s, long looks) {
  print_event_header(options);
  const smi::System watch = smi::System::open(open);  // subscribed to XIDs and KFD events from now on
  std::vector<smi::EventLook> previous = look(open, options, watch);
  // XIDs the first look found arrived after the registration: they are news too.
  for (const smi::EventLook& first : previous) {
    for (const smi::Event& e : smi::device_events(nullptr, first)) print_event(e, options, std::chrono::system_clock::now());
  }
  const auto interval = std::chrono::duration<double>(interval_s);
  for (long n = 1; looks == 0 || n < looks; ++n) {
    std::this_thread::sleep_for(interval);
    std::vector<smi::EventLook> current = look(open, options, watch);
    for (const smi::Event& e : smi::events_between(previous, current)) print_event(e, options, std::chrono::system_clock::now());
    previous = std::move(current);
  }
  return kExitOk;
}

}  // namespace hipstack::cli
