// org.hipstack.Monitor1 on D-Bus (sd-bus): properties, methods and signals over the sampler's
// snapshots (dbus_service.hpp).
#include "dbus_service.hpp"

#include <fmt/format.h>
#include <systemd/sd-bus.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "event_log.hpp"
#include "thread_name.hpp"

namespace hipstack::smid {

struct DbusService::Impl {
  SamplerSource source;
  sd_bus* bus = nullptr;
  sd_bus_slot* slot = nullptr;
  std::map<std::string, smi::Verdict> verdicts;  // last verdict seen per GPU UUID
  EventLog events;                 // what changed, by the library's rules (docs/events.md)
  std::uint64_t events_sent = 0;   // the last sequence signalled

  ~Impl() {
    sd_bus_slot_unref(slot);
    sd_bus_flush_close_unref(bus);
  }
};

namespace {

using Impl = DbusService::Impl;
constexpr std::size_t kMaxItems = 1024;
constexpr const char* kNoSuchDevice = "org.hipstack.Monitor1.Error.NoSuchDevice";

// A caller's text as error messages show it: printable (sd-bus drops a reply that is not valid
// UTF-8, so the caller would wait for its timeout) and cut to `max` bytes on a character boundary.
std::string shown(std::string_view text, std::size_t max = 64) {
  std::string out = smi::printable_text(text.substr(0, 4 * max));
  if (out.size() > max) {
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    out.resize(cut);
    out += "...";
  }
  return out;
}

int read_strings(sd_bus_message* m, std::vector<std::string>& out, sd_bus_error* error, const char* what) {
  int r = sd_bus_message_enter_container(m, 'a', "s");
  if (r < 0) return r;
  const char* text = nullptr;
  while ((r = sd_bus_message_read(m, "s", &text)) > 0) {
    if (out.size() == kMaxItems) return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%s: at most %zu", what, kMaxItems);
    out.emplace_back(text);
  }
  if (r < 0) return r;
  return sd_bus_message_exit_container(m);
}

// Device indices for the selectors (index, BDF or UUID); every device when there are none.
int select(const Sampler& sampler, const std::vector<std::string>& selectors, std::vector<std::uint32_t>& out, sd_bus_error* error) {
  const std::size_t count = sampler.views().size();
  if (selectors.empty()) {
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(i);
    return 0;
  }
  for (const std::string& selector : selectors) {
    try {
      const std::uint32_t index = sampler.system().resolve(selector);
      if (index >= count) throw smi::Error(smi::Error::Code::no_such_device, "not sampled");
      if (std::find(out.begin(), out.end(), index) == out.end()) out.push_back(index);  // each GPU once
    } catch (const smi::Error& e) {
      return sd_bus_error_setf(error, kNoSuchDevice, "device \"%s\": %s", shown(selector).c_str(),
                               e.code() == smi::Error::Code::no_such_device ? "no such device" : shown(e.what(), 200).c_str());
    }
  }
  return 0;
}

int append_value(sd_bus_message* reply, const smi::Reading& reading) {
  return std::visit(
      [reply](const auto& v) -> int {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) return sd_bus_message_append(reply, "v", "x", v);
        else if constexpr (std::is_same_v<T, double>) return sd_bus_message_append(reply, "v", "d", v);
        else if constexpr (std::is_same_v<T, std::string>) return sd_bus_message_append(reply, "v", "s", v.c_str());
        else return sd_bus_message_append(reply, "v", "s", "");
      },
      reading.value);
}

int append_readings(sd_bus_message* reply, std::uint32_t index, const std::vector<smi::Reading>& readings,
                    const std::vector<smi::MetricId>& wanted) {
  for (const smi::Reading& reading : readings) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), reading.id) == wanted.end()) continue;
    const smi::MetricInfo* info = smi::find_metric(reading.id);
    if (info == nullptr) continue;
    int r = sd_bus_message_open_container(reply, 'r', "usssvss");
    if (r >= 0) r = sd_bus_message_append(reply, "usss", index, std::string(info->name).c_str(), reading.instance.c_str(),
                                          std::string(smi::status_name(reading.status)).c_str());
    if (r >= 0) r = append_value(reply, reading);
    if (r >= 0) r = sd_bus_message_append(reply, "ss", std::string(smi::unit_symbol(info->unit)).c_str(), reading.detail.c_str());
    if (r >= 0) r = sd_bus_message_close_container(reply);
    if (r < 0) return r;
  }
  return 0;
}

// Replies to `m` with an array of `element` filled by fill(reply) (which returns < 0 on failure).
template <typename Fill>
int reply_array(sd_bus_message* m, const char* element, Fill&& fill) {
  sd_bus_message* reply = nullptr;
  int r = sd_bus_message_new_method_return(m, &reply);
  if (r >= 0) r = sd_bus_message_open_container(reply, 'a', element);
  if (r >= 0) r = fill(reply);
  if (r >= 0) r = sd_bus_message_close_container(reply);
  if (r >= 0) r = sd_bus_send(nullptr, reply, nullptr);
  sd_bus_message_unref(reply);
  return r;
}

int get_metrics(sd_bus_message* m, void* userdata, sd_bus_error* error) {
  const Impl& impl = *static_cast<Impl*>(userdata);
  std::vector<std::string> selectors;
  std::vector<std::string> names;
  int r = read_strings(m, selectors, error, "devices");
  if (r >= 0) r = read_strings(m, names, error, "metrics");
  if (r < 0) return r;
  std::vector<smi::MetricId> wanted;
  for (const std::string& name : names) {
    const smi::MetricInfo* info = smi::find_metric(name);
    if (info == nullptr) return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "unknown metric \"%s\"", shown(name).c_str());
    wanted.push_back(info->id);
  }
  const auto sampler = impl.source();
  std::vector<std::uint32_t> devices;
  if ((r = select(*sampler, selectors, devices, error)) < 0) return r;
  const auto views = sampler->views();
  return reply_array(m, "(usssvss)", [&](sd_bus_message* reply) {
    for (const std::uint32_t index : devices) {
      // A stale device's old readings are not presented as current.
      if (views[index].stale || !views[index].snapshot->have_live) continue;
      if (const int failed = append_readings(reply, index, views[index].snapshot->live, wanted); failed < 0) return failed;
    }
    return 0;
  });
}

int get_health(sd_bus_message* m, void* userdata, sd_bus_error* error) {
  const Impl& impl = *static_cast<Impl*>(userdata);
  std::vector<std::string> selectors;
  int r = read_strings(m, selectors, error, "devices");
  if (r < 0) return r;
  const auto sampler = impl.source();
  std::vector<std::uint32_t> devices;
  if ((r = select(*sampler, selectors, devices, error)) < 0) return r;
  const auto views = sampler->views();
  return reply_array(m, "(ussa(ssssss))", [&](sd_bus_message* reply) {
    int status = 0;
    for (const std::uint32_t index : devices) {
      const DeviceSnapshot& snap = *views[index].snapshot;
      if (status >= 0) status = sd_bus_message_open_container(reply, 'r', "ussa(ssssss)");
      if (status >= 0) status = sd_bus_message_append(reply, "uss", index, snap.device.uuid.c_str(),
                                                      std::string(smi::verdict_name(snap.health().overall)).c_str());
      if (status >= 0) status = sd_bus_message_open_container(reply, 'a', "(ssssss)");
      for (const smi::HealthFinding& f : snap.health().findings) {
        if (status >= 0) {
          status = sd_bus_message_append(reply, "(ssssss)", f.check.c_str(), std::string(smi::verdict_name(f.verdict)).c_str(),
                                         f.reading.c_str(), f.threshold.c_str(), f.message.c_str(), f.remediation.c_str());
        }
      }
      if (status >= 0) status = sd_bus_message_close_container(reply);
      if (status >= 0) status = sd_bus_message_close_container(reply);
    }
    return status;
  });
}

int get_devices(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply, void* userdata, sd_bus_error*) {
  const Impl& impl = *static_cast<Impl*>(userdata);
  int r = sd_bus_message_open_container(reply, 'a', "(usssssb)");
  for (const Sampler::View& view : impl.source()->views()) {
    const smi::DeviceSummary& d = view.snapshot->device;
    const int up = Sampler::up(view) ? 1 : 0;
    if (r >= 0) r = sd_bus_message_append(reply, "(usssssb)", d.index, d.vendor.c_str(), d.backend.c_str(), d.name.c_str(),
                                          d.uuid.c_str(), d.bdf.c_str(), up);
  }
  if (r >= 0) r = sd_bus_message_close_container(reply);
  return r;
}

const sd_bus_vtable kVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Devices", "a(usssssb)", get_devices, 0, 0),
    SD_BUS_METHOD_WITH_NAMES("GetMetrics", "asas", SD_BUS_PARAM(devices) SD_BUS_PARAM(metrics), "a(usssvss)",
                             SD_BUS_PARAM(readings), get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetHealth", "as", SD_BUS_PARAM(devices), "a(ussa(ssssss))", SD_BUS_PARAM(health), get_health,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("HealthChanged", "ussss",
                             SD_BUS_PARAM(index) SD_BUS_PARAM(uuid) SD_BUS_PARAM(bdf) SD_BUS_PARAM(verdict) SD_BUS_PARAM(summary), 0),
    SD_BUS_SIGNAL_WITH_NAMES("Event", "sussssss",
                             SD_BUS_PARAM(kind) SD_BUS_PARAM(index) SD_BUS_PARAM(uuid) SD_BUS_PARAM(bdf) SD_BUS_PARAM(metric)
                                 SD_BUS_PARAM(before) SD_BUS_PARAM(after) SD_BUS_PARAM(message), 0),
    SD_BUS_VTABLE_END};

std::string summary_of(const smi::HealthReport& report) {
  for (const smi::Verdict level : {smi::Verdict::fail, smi::Verdict::warn}) {
    for (const smi::HealthFinding& f : report.findings) {
      if (f.verdict == level) return fmt::format("{}: {}", f.check, f.message);
    }
  }
  return report.overall == smi::Verdict::pass ? "every check passes" : "could not be checked";
}

// Signals every GPU whose verdict changed since the last look (the first look only remembers).
void emit_health_changes(Impl& impl) {
  for (const Sampler::View& view : impl.source()->views()) {
    const DeviceSnapshot& snap = *view.snapshot;
    const auto [it, first] = impl.verdicts.try_emplace(snap.device.uuid, snap.health().overall);
    if (first || it->second == snap.health().overall) continue;
    it->second = snap.health().overall;
    sd_bus_emit_signal(impl.bus, DbusService::kPath, DbusService::kName, "HealthChanged", "ussss", snap.device.index,
                       snap.device.uuid.c_str(), snap.device.bdf.c_str(), std::string(smi::verdict_name(snap.health().overall)).c_str(),
                       summary_of(snap.health()).c_str());
  }
}

// Signals each event found since the last look (the first look is the baseline: only XIDs).
void emit_events(Impl& impl) {
  impl.events.observe(*impl.source());
  for (;;) {
    const EventLog::Page page = impl.events.after(impl.events_sent, 256);
    if (page.entries.empty()) return;
    for (const EventLog::Entry& entry : page.entries) {
      const smi::Event& e = entry.event;
      sd_bus_emit_signal(impl.bus, DbusService::kPath, DbusService::kName, "Event", "sussssss", e.kind.c_str(), e.device.index,
                         e.device.uuid.c_str(), e.device.bdf.c_str(), e.metric.c_str(), e.before.c_str(), e.after.c_str(),
                         e.message.c_str());
      impl.events_sent = entry.sequence;
    }
  }
}

}  // namespace

DbusService::DbusService(const std::string& bus, SamplerSource source) : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  int r = bus == "session" ? sd_bus_open_user(&impl_->bus) : sd_bus_open_system(&impl_->bus);
  if (r < 0) throw std::runtime_error(fmt::format("cannot connect to the {} bus: {}", bus, std::strerror(-r)));
  r = sd_bus_add_object_vtable(impl_->bus, &impl_->slot, kPath, kName, kVtable, impl_.get());
  if (r < 0) throw std::runtime_error(fmt::format("cannot register {} on the {} bus: {}", kPath, bus, std::strerror(-r)));
  r = sd_bus_request_name(impl_->bus, kName, 0);
  if (r < 0) {
    throw std::runtime_error(fmt::format("cannot own {} on the {} bus: {}{}", kName, bus, std::strerror(-r),
                                         r == -EACCES ? " (the bus policy, org.hipstack.Monitor1.conf, does not allow it)" : ""));
  }
  emit_health_changes(*impl_);  // remember the verdicts as they are now
  emit_events(*impl_);
  thread_ = std::thread([this] {
    name_thread("smid-dbus");
    while (!stop_.load()) {
      const int processed = sd_bus_process(impl_->bus, nullptr);
      if (processed < 0) {
        std::fprintf(stderr, "hipstack-smid: D-Bus connection lost: %s\n", std::strerror(-processed));
        return;
      }
      if (processed > 0) continue;
      emit_health_changes(*impl_);
      emit_events(*impl_);
      sd_bus_wait(impl_->bus, 250'000);
    }
  });
}

DbusService::~DbusService() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

}  // namespace hipstack::smid
