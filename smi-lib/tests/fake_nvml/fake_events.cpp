// Events: event sets, the event types a device supports, registration, and waits that deliver the
// script's XIDs. `N.xid_events = 79, 13 | 48` gives device N's XIDs in batches: every wait delivers
// the next XID of the current batch of the first registered device that has one; a wait that finds
// none returns TIMEOUT (at once, whatever the timeout) and moves every device to its next batch. So a
// reader that drains until TIMEOUT sees one batch per drain.
#include <memory>

#include "fake_state.hpp"

namespace fake_nvml {

using namespace detail;

namespace {

nvmlEventSet_st* live_set(EventSet set) {
  auto it = state().event_sets.find(set);
  return it == state().event_sets.end() ? nullptr : it->second.get();
}

}  // namespace

extern "C" Return fake_nvml_impl_event_set_create(EventSet* set) {
  FAKE_NVML_ENTER_GLOBAL();
  if (!set) return kErrorInvalidArgument;
  if (Return e = decode_return(find("event_set_create.error"))) return e;
  auto owned = std::make_unique<nvmlEventSet_st>();
  *set = owned.get();
  state().event_sets.emplace(owned.get(), std::move(owned));
  return kSuccess;
}

extern "C" Return fake_nvml_impl_event_set_free(EventSet set) {
  FAKE_NVML_ENTER_GLOBAL();
  auto it = state().event_sets.find(set);
  if (it == state().event_sets.end()) return kErrorInvalidArgument;
  for (const nvmlDevice_st* d : it->second->registered) state().xid_queues.erase(d);
  state().event_sets.erase(it);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_supported_event_types(Device device, unsigned long long* types) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!types) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("supported_event_types");
  return read_uint(d, "supported_events", types);
}

extern "C" Return fake_nvml_impl_register_events(Device device, unsigned long long types, EventSet set) {
  FAKE_NVML_ENTER_DEVICE(device);
  nvmlEventSet_st* s = live_set(set);
  if (!s) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("register_events");
  unsigned long long supported = 0;
  if (read_uint(d, "supported_events", &supported) != kSuccess || (types & ~supported) != 0) return kErrorNotSupported;
  s->registered.push_back(d);
  State::XidQueue queue;
  if (const std::string* v = find(d, "xid_events")) queue.batches = *parse_xid_batches(*v);
  state().xid_queues[d] = std::move(queue);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_event_set_wait(EventSet set, EventData* data, unsigned /*timeout_ms*/) {
  FAKE_NVML_ENTER_GLOBAL();
  nvmlEventSet_st* s = live_set(set);
  if (!s || !data) return kErrorInvalidArgument;
  if (Return e = decode_return(find("event_set_wait.error"))) return e;
  for (const nvmlDevice_st* d : s->registered) {
    State::XidQueue& q = state().xid_queues[d];
    if (q.batch < q.batches.size() && q.delivered < q.batches[q.batch].size()) {
      *data = EventData{};
      data->device = const_cast<Device>(d);
      data->eventType = kEventXidCriticalError;
      data->eventData = q.batches[q.batch][q.delivered++];
      data->gpuInstanceId = data->computeInstanceId = kInvalidInstanceId;
      return kSuccess;
    }
  }
  for (const nvmlDevice_st* d : s->registered) {
    State::XidQueue& q = state().xid_queues[d];
    if (q.batch < q.batches.size()) {
      ++q.batch;
      q.delivered = 0;
    }
  }
  return kErrorTimeout;
}

#define FAKE_NVML_DEFINED_HERE_event_set_create FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_event_set_free FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_supported_event_types FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_register_events FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_event_set_wait FAKE_NVML_PROBE()
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE)

}  // namespace fake_nvml
