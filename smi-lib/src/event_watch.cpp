// EventWatch (hipstack/events.hpp): the looks `hipstack-smi event` and C programs follow GPUs with.
#include <hipstack/events.hpp>

#include <map>
#include <utility>

namespace hipstack::smi {
namespace {

// Each GPU's reported-event counts (by UUID) from the System that stays subscribed to them.
std::map<std::string, std::vector<Reading>> reported_counts(const System& watch) {
  SampleOptions what;
  what.live = true;
  for (const MetricId id : event_metrics()) {
    if (needs_subscription(id)) what.metrics.push_back(id);
  }
  std::map<std::string, std::vector<Reading>> out;
  for (const DeviceSummary& d : watch.devices()) out[d.uuid] = watch.sample(d.index, what);
  return out;
}

// A look at the chosen GPUs: the event metrics from a System opened now (so devices that come and
// go are seen), the reported-event counts from the one that stays subscribed.
std::vector<EventLook> look(const OpenOptions& options, const std::vector<std::string>& selectors, const System& watch) {
  auto reported = reported_counts(watch);
  const System system = System::open(options);
  SampleOptions what;
  what.static_info = true;
  what.live = true;
  for (const MetricId id : event_metrics()) {
    if (!needs_subscription(id)) what.metrics.push_back(id);
  }
  const std::vector<DeviceSummary> devices = system.devices();
  std::vector<std::uint32_t> indices;
  for (const DeviceSummary& d : devices) {
    if (selectors.empty()) indices.push_back(d.index);
  }
  for (const std::string& selector : selectors) {
    try {
      indices.push_back(system.resolve(selector));
    } catch (const Error&) {
    }
  }
  std::vector<EventLook> out;
  for (const std::uint32_t index : indices) {
    EventLook one{devices.at(index), system.sample(index, what)};
    if (auto it = reported.find(one.device.uuid); it != reported.end()) {
      one.readings.insert(one.readings.end(), it->second.begin(), it->second.end());
    }
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

struct EventWatch::Impl {
  OpenOptions options;
  std::vector<std::string> selectors;
  System watch;  // subscribed to XIDs and KFD events from its opening on
  std::vector<EventLook> previous;
  bool first = true;
};

EventWatch::EventWatch(const OpenOptions& options, std::vector<std::string> selectors)
    : impl_(std::make_unique<Impl>(Impl{options, std::move(selectors), System::open(options), {}, true})) {
  impl_->previous = look(impl_->options, impl_->selectors, impl_->watch);
}

EventWatch::EventWatch(EventWatch&&) noexcept = default;
EventWatch& EventWatch::operator=(EventWatch&&) noexcept = default;
EventWatch::~EventWatch() = default;

std::vector<Event> EventWatch::poll() {
  std::vector<Event> out;
  if (impl_->first) {
    // Reported events the first look found arrived after the subscription: they are news.
    impl_->first = false;
    for (const EventLook& first : impl_->previous) {
      for (Event& e : device_events(nullptr, first)) out.push_back(std::move(e));
    }
    return out;
  }
  std::vector<EventLook> current = look(impl_->options, impl_->selectors, impl_->watch);
  out = events_between(impl_->previous, current);
  impl_->previous = std::move(current);
  return out;
}

}  // namespace hipstack::smi
