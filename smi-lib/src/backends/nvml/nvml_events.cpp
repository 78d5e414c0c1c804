// XID errors of NVIDIA GPUs through NVML's event API: one event set registered for XID
// critical-error events on every GPU that supports them, drained (without waiting) whenever XID
// readings are asked for. NVML queues events only after registration, so the counts are "since this
// program registered", which the catalogue's help says.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <hipstack/gpu_errors.hpp>

#include <cstdint>

#include "../../readings.hpp"
#include "nvml_backend.hpp"

namespace hipstack::smi::detail::nvml {
namespace {

// At most this many events per drain: a storm cannot hold a sample for long (the rest wait in
// NVML's queue for the next drain).
constexpr int kMaxEventsPerDrain = 1024;

// What the XID means and what to do, from NVIDIA's XID catalogue (hipstack/gpu_errors.hpp).
std::string describe_xid(unsigned long long xid) {
  // NVML's own code for an error it could not decode: not one of the catalogue's.
  if (xid == 999) return "XID 999: NVML could not decode the error (see the kernel log); action: unknown";
  const XidAdvice advice = xid_advice(static_cast<std::uint32_t>(std::min<unsigned long long>(xid, UINT32_MAX)));
  if (advice.info == nullptr) return fmt::format("XID {}: not in NVIDIA's XID catalogue; action: unknown", xid);
  return fmt::format("XID {} ({}): {}; action: {}", xid, advice.info->mnemonic, advice.info->description,
                     error_action_name(advice.action));
}

}  // namespace

XidWatch::XidWatch(const Library& lib, const std::vector<NvidiaGpu>& gpus) : library_(lib), devices_(gpus.size()) {
  const Api& api = lib.api();
  for (std::size_t i = 0; i < gpus.size(); ++i) handles_.push_back(gpus[i].handle);
  if (api.event_set_create == nullptr || api.event_set_free == nullptr || api.register_events == nullptr ||
      api.event_set_wait == nullptr) {
    for (Xids& d : devices_) d.unavailable = fmt::format("NVML events: not in {}", lib.path());
    return;
  }
  if (const Return code = api.event_set_create(&set_); code != kSuccess) {
    set_ = nullptr;
    for (Xids& d : devices_) d.unavailable = "nvmlEventSetCreate: " + lib.describe(code);
    for (Xids& d : devices_) d.error_code = errno_for(code);
    return;
  }
  const auto since = std::chrono::system_clock::now();
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    Xids& d = devices_[i];
    if (gpus[i].handle == nullptr) {
      d.unavailable = gpus[i].fault;
      d.error_code = ENXIO;
      continue;
    }
    unsigned long long types = 0;
    if (api.supported_event_types != nullptr) {
      if (const Return code = api.supported_event_types(gpus[i].handle, &types); code != kSuccess) {
        d.unavailable = "nvmlDeviceGetSupportedEventTypes: " + lib.describe(code);
        d.error_code = code == kErrorNotSupported ? ENOENT : errno_for(code);
        continue;
      }
      if ((types & kEventXidCriticalError) == 0) {
        d.unavailable = "nvmlDeviceGetSupportedEventTypes: this GPU reports no XID events";
        d.error_code = ENOENT;
        continue;
      }
    }
    if (const Return code = api.register_events(gpus[i].handle, kEventXidCriticalError, set_); code != kSuccess) {
      d.unavailable = "nvmlDeviceRegisterEvents(XID): " + lib.describe(code);
      d.error_code = code == kErrorNotSupported ? ENOENT : errno_for(code);
      continue;
    }
    d.registered = true;
    d.since = since;
  }
}

XidWatch::~XidWatch() {
  if (set_ != nullptr) library_.api().event_set_free(set_);
}

void XidWatch::drain() {
  if (set_ == nullptr) return;
  const Api& api = library_.api();
  for (int n = 0; n < kMaxEventsPerDrain; ++n) {
    EventData event{};
    const Return code = api.event_set_wait(set_, &event, 0);
    if (code == kErrorTimeout) return;  // the queue is empty
    if (code != kSuccess) {
      drain_error_ = "nvmlEventSetWait: " + library_.describe(code);
      drain_errno_ = errno_for(code);
      return;
    }
    drain_error_.clear();
    if ((event.eventType & kEventXidCriticalError) == 0) continue;
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      if (handles_[i] != event.device || !devices_[i].registered) continue;
      Xids& d = devices_[i];
      ++d.counts[event.eventData];
      d.last = event.eventData;
      d.last_at = std::chrono::system_clock::now();
      d.any = true;
    }
  }
}

void XidWatch::read(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) {
  if (!asked_for(options, MetricId::xid_errors) && !asked_for(options, MetricId::xid_last) &&
      !asked_for(options, MetricId::xid_last_time)) {
    return;
  }
  const std::lock_guard lock(mutex_);
  drain();
  ReadingList list(out);
  const Xids& d = devices_.at(device);
  auto fail_all = [&](int error_code, const std::string& why) {
    for (const MetricId id : {MetricId::xid_errors, MetricId::xid_last, MetricId::xid_last_time}) {
      if (asked_for(options, id)) list.failed(id, error_code, why);
    }
  };
  if (!d.registered) return fail_all(d.error_code != 0 ? d.error_code : ENOENT, d.unavailable);
  if (!drain_error_.empty()) return fail_all(drain_errno_, drain_error_);
  const std::string since = fmt::format("since {:%Y-%m-%dT%H:%M:%S}Z", std::chrono::time_point_cast<std::chrono::seconds>(d.since));
  if (asked_for(options, MetricId::xid_errors)) {
    for (const auto& [xid, count] : d.counts) {
      list.integer(MetricId::xid_errors, count, fmt::format("{} (nvmlEventSetWait, {})", describe_xid(xid), since),
                   std::to_string(xid));
    }
    if (d.counts.empty()) list.failed(MetricId::xid_errors, ENODATA, "no XID error " + since + " (NVML events)");
  }
  if (!d.any) {
    const std::string none = "no XID error " + since + " (NVML events)";
    if (asked_for(options, MetricId::xid_last)) list.failed(MetricId::xid_last, ENODATA, none);
    if (asked_for(options, MetricId::xid_last_time)) list.failed(MetricId::xid_last_time, ENODATA, none);
    return;
  }
  if (asked_for(options, MetricId::xid_last)) {
    list.integer(MetricId::xid_last, static_cast<std::int64_t>(d.last), describe_xid(d.last) + " (nvmlEventSetWait)");
  }
  if (asked_for(options, MetricId::xid_last_time)) {
    list.real(MetricId::xid_last_time, std::chrono::duration<double>(d.last_at.time_since_epoch()).count(),
              "when hipstack drained the event from NVML's queue");
  }
}

}  // namespace hipstack::smi::detail::nvml
