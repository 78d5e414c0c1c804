// The C API's lists (hipstack/smi.h, "Lists"): each getter copies one item of its kind into the
// caller's size-prefixed struct, with strings pointing into the list.
#include "c_api_internal.hpp"

namespace hipstack::smi::c_api {
namespace {

std::unique_ptr<hipstack_smi_list> readings_list(std::vector<Reading> readings) {
  auto list = std::make_unique<hipstack_smi_list>(hipstack_smi_list{HIPSTACK_SMI_LIST_READINGS, std::move(readings), true, {}});
  return list;
}

// The items of a list of this kind, or nullptr (with the thread's error set) for another kind.
template <typename T>
const std::vector<T>* items_of(const hipstack_smi_list* list, hipstack_smi_list_kind kind, std::size_t position,
                               hipstack_smi_result& result) {
  if (list == nullptr || list->kind != kind) {
    result = fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT,
                  list == nullptr ? std::string("list must not be NULL")
                                  : fmt::format("a list of kind {} has no items of kind {}", static_cast<int>(list->kind),
                                                static_cast<int>(kind)));
    return nullptr;
  }
  const auto& items = std::get<std::vector<T>>(list->items);
  if (position >= items.size()) {
    result = fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("position {} is past the list's {} items", position, items.size()));
    return nullptr;
  }
  result = HIPSTACK_SMI_OK;
  return &items;
}

}  // namespace

hipstack_smi_reading c_reading(const Reading& r) {
  hipstack_smi_reading out{};
  out.struct_size = sizeof out;
  out.metric_id = static_cast<std::uint32_t>(r.id);
  out.status = static_cast<hipstack_smi_status>(r.status);
  out.error_code = r.error_code;
  const MetricInfo* info = find_metric(r.id);
  out.type = info != nullptr ? static_cast<hipstack_smi_value_type>(info->type) : HIPSTACK_SMI_TYPE_TEXT;
  out.text = "";
  if (const auto* i = std::get_if<std::int64_t>(&r.value)) {
    out.integer = *i;
    out.real = static_cast<double>(*i);
  } else if (const auto* d = std::get_if<double>(&r.value)) {
    out.real = *d;
  } else if (const auto* s = std::get_if<std::string>(&r.value)) {
    out.text = s->c_str();
  }
  out.instance = r.instance.c_str();
  out.detail = r.detail.c_str();
  return out;
}

template <typename T>
std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind kind, std::vector<T> items) {
  auto list = std::make_unique<hipstack_smi_list>();
  list->kind = kind;
  if constexpr (requires(T t) { t.readings; }) {
    for (T& item : items) list->readings.push_back(readings_list(std::move(item.readings)));
  }
  list->items = std::move(items);
  return list;
}

template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<DeviceSummary>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<BackendStatus>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<Reading>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<Partition>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<ProcessInfo>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<Link>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<BadPage>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<HealthFinding>);
template std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind, std::vector<Event>);

std::unique_ptr<hipstack_smi_list> make_control_list(ControlResult result) {
  auto list = std::make_unique<hipstack_smi_list>();
  list->kind = HIPSTACK_SMI_LIST_CONTROL_WRITES;
  list->items = std::move(result);
  return list;
}

}  // namespace hipstack::smi::c_api

using namespace hipstack::smi;
using namespace hipstack::smi::c_api;

extern "C" {

hipstack_smi_list_kind hipstack_smi_list_get_kind(const hipstack_smi_list* list) {
  return list != nullptr ? list->kind : HIPSTACK_SMI_LIST_DEVICES;
}

size_t hipstack_smi_list_size(const hipstack_smi_list* list) {
  if (list == nullptr) return 0;
  if (const auto* control = std::get_if<ControlResult>(&list->items)) return control->writes.size();
  return std::visit([](const auto& items) -> std::size_t {
    if constexpr (requires { items.size(); }) return items.size();
    return 0;
  }, list->items);
}

void hipstack_smi_list_free(hipstack_smi_list* list) {
  if (list != nullptr && !list->nested) delete list;
}

hipstack_smi_result hipstack_smi_list_get_device(const hipstack_smi_list* list, size_t position, hipstack_smi_device_info* out) {
  hipstack_smi_result result;
  const auto* items = items_of<DeviceSummary>(list, HIPSTACK_SMI_LIST_DEVICES, position, result);
  if (items == nullptr) return result;
  const DeviceSummary& d = (*items)[position];
  const hipstack_smi_device_info info{sizeof info,  d.index,      d.vendor.c_str(),  d.backend.c_str(), d.bdf.c_str(),
                                      d.uuid.c_str(), d.name.c_str(), d.partition_count, d.fault.c_str()};
  return copy_out(info, out, "device info");
}

hipstack_smi_result hipstack_smi_list_get_backend(const hipstack_smi_list* list, size_t position, hipstack_smi_backend_info* out) {
  hipstack_smi_result result;
  const auto* items = items_of<BackendStatus>(list, HIPSTACK_SMI_LIST_BACKENDS, position, result);
  if (items == nullptr) return result;
  const BackendStatus& b = (*items)[position];
  const hipstack_smi_backend_info info{sizeof info, b.name.c_str(), b.present ? 1u : 0u, b.reason.c_str()};
  return copy_out(info, out, "backend info");
}

hipstack_smi_result hipstack_smi_list_get_reading(const hipstack_smi_list* list, size_t position, hipstack_smi_reading* out) {
  hipstack_smi_result result;
  const auto* items = items_of<Reading>(list, HIPSTACK_SMI_LIST_READINGS, position, result);
  if (items == nullptr) return result;
  return copy_out(c_reading((*items)[position]), out, "reading");
}

hipstack_smi_result hipstack_smi_list_find_reading(const hipstack_smi_list* list, uint32_t metric_id, const char* instance,
                                                   hipstack_smi_reading* out) {
  if (list == nullptr || list->kind != HIPSTACK_SMI_LIST_READINGS) {
    return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "not a list of readings");
  }
  const std::string_view wanted = instance != nullptr ? instance : "";
  for (const Reading& r : std::get<std::vector<Reading>>(list->items)) {
    if (static_cast<std::uint32_t>(r.id) == metric_id && r.instance == wanted) return copy_out(c_reading(r), out, "reading");
  }
  return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("no reading of metric {}{} in the list", metric_id,
                                                         wanted.empty() ? std::string() : fmt::format("[{}]", wanted)));
}

hipstack_smi_result hipstack_smi_list_get_partition(const hipstack_smi_list* list, size_t position, hipstack_smi_partition* out) {
  hipstack_smi_result result;
  const auto* items = items_of<Partition>(list, HIPSTACK_SMI_LIST_PARTITIONS, position, result);
  if (items == nullptr) return result;
  const Partition& p = (*items)[position];
  const hipstack_smi_partition info{sizeof info, p.index, p.id.c_str(), p.bdf.c_str(), list->readings[position].get()};
  return copy_out(info, out, "partition");
}

hipstack_smi_result hipstack_smi_list_get_process(const hipstack_smi_list* list, size_t position, hipstack_smi_process* out) {
  hipstack_smi_result result;
  const auto* items = items_of<ProcessInfo>(list, HIPSTACK_SMI_LIST_PROCESSES, position, result);
  if (items == nullptr) return result;
  const ProcessInfo& p = (*items)[position];
  const hipstack_smi_process info{sizeof info,           p.pid,          p.name.c_str(), p.user.c_str(),
                                  p.command_line.c_str(), p.cgroup.c_str(), list->readings[position].get()};
  return copy_out(info, out, "process");
}

hipstack_smi_result hipstack_smi_list_get_link(const hipstack_smi_list* list, size_t position, hipstack_smi_link* out) {
  hipstack_smi_result result;
  const auto* items = items_of<Link>(list, HIPSTACK_SMI_LIST_LINKS, position, result);
  if (items == nullptr) return result;
  const Link& l = (*items)[position];
  const hipstack_smi_link info{sizeof info, l.from, l.to, list->readings[position].get()};
  return copy_out(info, out, "link");
}

hipstack_smi_result hipstack_smi_list_get_bad_page(const hipstack_smi_list* list, size_t position, hipstack_smi_bad_page* out) {
  hipstack_smi_result result;
  const auto* items = items_of<BadPage>(list, HIPSTACK_SMI_LIST_BAD_PAGES, position, result);
  if (items == nullptr) return result;
  const BadPage& p = (*items)[position];
  const hipstack_smi_bad_page info{sizeof info, p.frame, p.size, p.state.c_str()};
  return copy_out(info, out, "bad page");
}

hipstack_smi_result hipstack_smi_list_get_finding(const hipstack_smi_list* list, size_t position,
                                                  hipstack_smi_health_finding* out) {
  hipstack_smi_result result;
  const auto* items = items_of<HealthFinding>(list, HIPSTACK_SMI_LIST_HEALTH_FINDINGS, position, result);
  if (items == nullptr) return result;
  const HealthFinding& f = (*items)[position];
  const hipstack_smi_health_finding info{sizeof info,
                                         static_cast<hipstack_smi_health_check>(find_health_check(f.check)),
                                         f.check.c_str(),
                                         static_cast<hipstack_smi_verdict>(f.verdict),
                                         f.reading.c_str(),
                                         f.threshold.c_str(),
                                         f.message.c_str(),
                                         f.remediation.c_str()};
  return copy_out(info, out, "health finding");
}

hipstack_smi_result hipstack_smi_list_get_event(const hipstack_smi_list* list, size_t position, hipstack_smi_event* out) {
  hipstack_smi_result result;
  const auto* items = items_of<Event>(list, HIPSTACK_SMI_LIST_EVENTS, position, result);
  if (items == nullptr) return result;
  const Event& e = (*items)[position];
  const hipstack_smi_event info{sizeof info,       e.kind.c_str(),   e.device.index,  e.device.bdf.c_str(), e.device.uuid.c_str(),
                                e.metric.c_str(), e.before.c_str(), e.after.c_str(), e.message.c_str()};
  return copy_out(info, out, "event");
}

hipstack_smi_result hipstack_smi_list_get_control_write(const hipstack_smi_list* list, size_t position,
                                                        hipstack_smi_control_write* out) {
  if (list == nullptr || list->kind != HIPSTACK_SMI_LIST_CONTROL_WRITES) {
    return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "not a list of control writes");
  }
  const auto& writes = std::get<ControlResult>(list->items).writes;
  if (position >= writes.size()) {
    return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("position {} is past the list's {} items", position, writes.size()));
  }
  const ControlWrite& w = writes[position];
  const hipstack_smi_control_write info{sizeof info, w.path.c_str(), w.value.c_str(), w.host_path.c_str(), w.done ? 1u : 0u,
                                        w.error_code};
  return copy_out(info, out, "control write");
}

}  // extern "C"
