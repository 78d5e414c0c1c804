// The C API (hipstack/smi.h): a thin layer over hipstack::smi::System that turns exceptions into
// result codes and C++ values into size-prefixed structs (the rules: c_api_internal.hpp).
#include "c_api_internal.hpp"

#include <array>
#include <cstddef>

// The System is shared with the threads of calls abandoned at the read deadline (c_api_deadline.hpp):
// closing the handle leaves it to the last of them.
struct hipstack_smi_system {
  std::shared_ptr<hipstack::smi::System> system;
  mutable hipstack::smi::c_api::ReadDeadline deadline;

  // read(system) within the deadline; `device` names the GPU the call reads (ReadDeadline::kNode for
  // the whole node), `extra` a wait the call asks for.
  template <typename Read>
  auto bounded(std::uint32_t device, Read read, std::chrono::milliseconds extra = {}) const {
    // Named only when a call fails (a poller's calls format nothing).
    const auto what = [device] {
      return device == hipstack::smi::c_api::ReadDeadline::kNode ? std::string("the node") : fmt::format("GPU {}", device);
    };
    return deadline.run(device, what, extra, [shared = system, read = std::move(read)] { return read(std::as_const(*shared)); });
  }
};

struct hipstack_smi_event_watch {
  std::shared_ptr<hipstack::smi::EventWatch> watch;
  hipstack::smi::c_api::ReadDeadline deadline;
};

namespace hipstack::smi::c_api {
namespace {

// The C enums pass through static_cast: each C constant must equal its C++ value.
#define HIPSTACK_SAME(c_value, cxx_value) static_assert(static_cast<int>(c_value) == static_cast<int>(cxx_value), #c_value)
HIPSTACK_SAME(HIPSTACK_SMI_STATUS_OK, Status::ok);
HIPSTACK_SAME(HIPSTACK_SMI_STATUS_NOT_SUPPORTED, Status::not_supported);
HIPSTACK_SAME(HIPSTACK_SMI_STATUS_UNAVAILABLE, Status::unavailable);
HIPSTACK_SAME(HIPSTACK_SMI_STATUS_ERROR, Status::error);
HIPSTACK_SAME(HIPSTACK_SMI_TYPE_INTEGER, ValueType::integer);
HIPSTACK_SAME(HIPSTACK_SMI_TYPE_REAL, ValueType::real);
HIPSTACK_SAME(HIPSTACK_SMI_TYPE_TEXT, ValueType::text);
HIPSTACK_SAME(HIPSTACK_SMI_SCOPE_DEVICE, Scope::device);
HIPSTACK_SAME(HIPSTACK_SMI_SCOPE_PARTITION, Scope::partition);
HIPSTACK_SAME(HIPSTACK_SMI_SCOPE_PROCESS, Scope::process);
HIPSTACK_SAME(HIPSTACK_SMI_SCOPE_LINK, Scope::link);
HIPSTACK_SAME(HIPSTACK_SMI_KIND_IDENTITY, Kind::identity);
HIPSTACK_SAME(HIPSTACK_SMI_KIND_STATIC, Kind::static_info);
HIPSTACK_SAME(HIPSTACK_SMI_KIND_LIVE, Kind::live);
HIPSTACK_SAME(HIPSTACK_SMI_KIND_COUNTER, Kind::counter);
HIPSTACK_SAME(HIPSTACK_SMI_KIND_WINDOW, Kind::window);
HIPSTACK_SAME(HIPSTACK_SMI_COST_CHEAP, Cost::cheap);
HIPSTACK_SAME(HIPSTACK_SMI_COST_COSTLY, Cost::costly);
HIPSTACK_SAME(HIPSTACK_SMI_COST_WINDOW, Cost::window);
HIPSTACK_SAME(HIPSTACK_SMI_COST_BLOCKING, Cost::blocking);
HIPSTACK_SAME(HIPSTACK_SMI_VERDICT_PASS, Verdict::pass);
HIPSTACK_SAME(HIPSTACK_SMI_VERDICT_WARN, Verdict::warn);
HIPSTACK_SAME(HIPSTACK_SMI_VERDICT_FAIL, Verdict::fail);
HIPSTACK_SAME(HIPSTACK_SMI_VERDICT_UNKNOWN, Verdict::unknown);
HIPSTACK_SAME(HIPSTACK_SMI_CHECK_OTHER, HealthCheck::other);
#define HIPSTACK_SMI_X(id, identifier, name) HIPSTACK_SAME(HIPSTACK_SMI_CHECK_##identifier, HealthCheck::identifier);
HIPSTACK_SMI_HEALTH_CHECKS(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
HIPSTACK_SAME(HIPSTACK_SMI_CONTROL_APPLIED, ControlOutcome::applied);
HIPSTACK_SAME(HIPSTACK_SMI_CONTROL_PENDING, ControlOutcome::pending);
HIPSTACK_SAME(HIPSTACK_SMI_CONTROL_PLANNED, ControlOutcome::planned);
HIPSTACK_SAME(HIPSTACK_SMI_CONTROL_REFUSED, ControlOutcome::refused);
HIPSTACK_SAME(HIPSTACK_SMI_CONTROL_FAILED, ControlOutcome::failed);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_NONE, RefusalReason::none);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_NEEDS_ROOT, RefusalReason::needs_root);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_INVALID_VALUE, RefusalReason::invalid_value);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_NOT_SUPPORTED, RefusalReason::not_supported);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_DEVICE_BUSY, RefusalReason::device_busy);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_RESET_IN_PROGRESS, RefusalReason::reset_in_progress);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_VIRTUAL_FUNCTION, RefusalReason::virtual_function);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_DRIVER_REJECTED, RefusalReason::driver_rejected);
HIPSTACK_SAME(HIPSTACK_SMI_REASON_TIMED_OUT, RefusalReason::timed_out);
#undef HIPSTACK_SAME

thread_local std::string t_last_error;

hipstack_smi_metric_info c_metric(const MetricInfo& m) {
  // The catalogue's string_views point at string literals, so .data() is NUL-terminated.
  return {sizeof(hipstack_smi_metric_info),
          static_cast<std::uint32_t>(m.id),
          m.name.data(),
          unit_name(m.unit).data(),
          unit_symbol(m.unit).data(),
          static_cast<hipstack_smi_value_type>(m.type),
          static_cast<hipstack_smi_scope>(m.scope),
          static_cast<hipstack_smi_kind>(m.kind),
          static_cast<hipstack_smi_cost>(m.cost),
          m.instance_label.data(),
          m.help.data()};
}

std::string text_or_empty(const char* s) { return s != nullptr ? s : ""; }

// The C options as the C++ ones and the read deadline; the audit callback is wrapped so it sees C strings.
hipstack_smi_result open_options(const hipstack_smi_open_options* in, OpenOptions& out, std::chrono::milliseconds& deadline) {
  deadline = std::chrono::milliseconds(HIPSTACK_SMI_DEFAULT_READ_DEADLINE_MS);
  if (in == nullptr) return HIPSTACK_SMI_OK;
  hipstack_smi_open_options c{};
  if (const auto r = copy_in(in, c, "open options"); r != HIPSTACK_SMI_OK) return r;
  if (c.read_deadline_ms == HIPSTACK_SMI_NO_READ_DEADLINE) {
    deadline = std::chrono::milliseconds(0);
  } else if (c.read_deadline_ms != 0) {
    deadline = std::chrono::milliseconds(c.read_deadline_ms);
  }
  out.sysfs_root = text_or_empty(c.sysfs_root);
  out.procfs_root = text_or_empty(c.procfs_root);
  out.devfs_root = text_or_empty(c.devfs_root);
  out.nvml_library = text_or_empty(c.nvml_library);
  out.enable_amdgpu = (c.flags & HIPSTACK_SMI_OPEN_NO_AMDGPU) == 0;
  out.enable_nvml = (c.flags & HIPSTACK_SMI_OPEN_NO_NVML) == 0;
  out.vendor_shutdown = (c.flags & HIPSTACK_SMI_OPEN_KEEP_VENDOR_INIT) == 0;
  if (c.audit != nullptr) {
    out.audit = [fn = c.audit, user = c.audit_user_data](const AuditRecord& a) {
      const hipstack_smi_audit_record record{sizeof record,    a.uid,          a.pid,           a.device,        a.bdf.c_str(),
                                             a.action.c_str(), a.path.c_str(), a.value.c_str(), a.result.c_str()};
      fn(&record, user);
    };
  }
  return HIPSTACK_SMI_OK;
}

hipstack_smi_result null_argument(const char* what) {
  return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, fmt::format("{} must not be NULL", what));
}

// Runs make() and hands its list to *out (nullptr first, so a failed call leaves no stale pointer).
template <typename Make>
hipstack_smi_result give_list(const hipstack_smi_system* system, hipstack_smi_list** out, Make&& make) {
  if (out == nullptr) return null_argument("the list pointer");
  *out = nullptr;
  if (system == nullptr) return null_argument("system");
  return guarded([&] {
    *out = make().release();
    return HIPSTACK_SMI_OK;
  });
}

HealthPolicy policy_of(const hipstack_smi_health_policy& c) {
  HealthPolicy p;
  p.thermal_margin = c.thermal_margin;
  p.throttle_share = c.throttle_share;
  p.power_cap_share = c.power_cap_share;
  p.busy_for_clock_check = c.busy_for_clock_check;
  p.clock_low_share = c.clock_low_share;
  p.correctable_ecc = c.correctable_ecc;
  p.pcie_replays = c.pcie_replays;
  p.bad_page_share = c.bad_page_share;
  return p;
}

hipstack_smi_health_policy c_policy(const HealthPolicy& p) {
  return {sizeof(hipstack_smi_health_policy), p.thermal_margin, p.throttle_share,  p.power_cap_share, p.busy_for_clock_check,
          p.clock_low_share,                 p.correctable_ecc, p.pcie_replays,    p.bad_page_share};
}

ControlResult run_control(System& system, std::uint32_t device, const hipstack_smi_control_request& request) {
  const std::string text = text_or_empty(request.text);
  ControlOptions options;
  options.dry_run = (request.flags & HIPSTACK_SMI_CONTROL_DRY_RUN) != 0;
  options.force = (request.flags & HIPSTACK_SMI_CONTROL_FORCE) != 0;
  if (request.settle_timeout_ms != 0) options.settle_timeout_ms = request.settle_timeout_ms;
  switch (request.kind) {
    case HIPSTACK_SMI_CONTROL_COMPUTE_PARTITION: return system.set_compute_partition(device, text, options);
    case HIPSTACK_SMI_CONTROL_MEMORY_PARTITION: return system.set_memory_partition(device, text, options);
    case HIPSTACK_SMI_CONTROL_POWER_CAP: return system.set_power_cap(device, request.value, options);
    case HIPSTACK_SMI_CONTROL_PERFORMANCE_LEVEL: return system.set_performance_level(device, text, options);
    case HIPSTACK_SMI_CONTROL_POWER_PROFILE: return system.set_power_profile(device, text, options);
    case HIPSTACK_SMI_CONTROL_GRAPHICS_CLOCK_RANGE:
      return system.set_clock_range(device, ClockDomain::graphics, request.value, request.value2, options);
    case HIPSTACK_SMI_CONTROL_MEMORY_CLOCK_RANGE:
      return system.set_clock_range(device, ClockDomain::memory, request.value, request.value2, options);
    case HIPSTACK_SMI_CONTROL_FAN:
      return system.set_fan(device, FanSetting{request.value < 0, request.value < 0 ? 0 : request.value}, options);
    case HIPSTACK_SMI_CONTROL_RESET: return system.reset_device(device, options);
  }
  throw Error(Error::Code::invalid_argument, fmt::format("unknown control kind {}", static_cast<int>(request.kind)));
}

}  // namespace

hipstack_smi_result fail(hipstack_smi_result result, std::string message) {
  t_last_error = std::move(message);
  return result;
}

void clear_error() { t_last_error.clear(); }

}  // namespace hipstack::smi::c_api

using namespace hipstack::smi;
using namespace hipstack::smi::c_api;

extern "C" {

const char* hipstack_smi_version(void) { return library_version().data(); }

uint32_t hipstack_smi_api_version(void) { return HIPSTACK_SMI_API_VERSION; }

const char* hipstack_smi_result_string(hipstack_smi_result result) {
  switch (result) {
    case HIPSTACK_SMI_OK: return "ok";
    case HIPSTACK_SMI_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE: return "no such device";
    case HIPSTACK_SMI_ERROR_READ_FAILURE: return "read failure";
    case HIPSTACK_SMI_ERROR_NO_MEMORY: return "out of memory";
    case HIPSTACK_SMI_ERROR_INTERNAL: return "internal error";
    case HIPSTACK_SMI_ERROR_INSUFFICIENT_SIZE: return "buffer too small";
    case HIPSTACK_SMI_ERROR_NOT_FOUND: return "not found";
    case HIPSTACK_SMI_ERROR_TIMED_OUT: return "timed out";
  }
  return "unknown result";
}

const char* hipstack_smi_last_error(void) { return t_last_error.c_str(); }

size_t hipstack_smi_catalogue_size(void) { return catalogue().size(); }

hipstack_smi_result hipstack_smi_catalogue_get(size_t position, hipstack_smi_metric_info* info) {
  clear_error();
  const auto all = catalogue();
  if (position >= all.size()) return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("the catalogue has {} metrics", all.size()));
  return copy_out(c_metric(all[position]), info, "metric info");
}

hipstack_smi_result hipstack_smi_metric_by_id(uint32_t id, hipstack_smi_metric_info* info) {
  clear_error();
  const MetricInfo* m = find_metric(static_cast<MetricId>(id));
  if (m == nullptr) return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("no metric has id {}", id));
  return copy_out(c_metric(*m), info, "metric info");
}

hipstack_smi_result hipstack_smi_metric_by_name(const char* name, hipstack_smi_metric_info* info) {
  clear_error();
  if (name == nullptr) return null_argument("name");
  const MetricInfo* m = find_metric(std::string_view(name));
  if (m == nullptr) return fail(HIPSTACK_SMI_ERROR_NOT_FOUND, fmt::format("no metric is named '{}'", printable_text(name)));
  return copy_out(c_metric(*m), info, "metric info");
}

const char* hipstack_smi_health_check_name(hipstack_smi_health_check check) {
  return health_check_name(static_cast<HealthCheck>(check)).data();  // literals, or "" (also a literal)
}

const char* hipstack_smi_verdict_name(hipstack_smi_verdict verdict) {
  return verdict_name(static_cast<Verdict>(verdict)).data();
}

hipstack_smi_result hipstack_smi_open(const hipstack_smi_open_options* options, hipstack_smi_system** system) {
  if (system == nullptr) return null_argument("system");
  *system = nullptr;
  return guarded([&] {
    OpenOptions open;
    std::chrono::milliseconds limit{};
    if (const auto r = open_options(options, open, limit); r != HIPSTACK_SMI_OK) return r;
    ReadDeadline deadline(limit);
    auto opened = deadline.run(ReadDeadline::kNode, [] { return "finding the GPUs"; }, {},
                               [open] {
                                 // Not make_shared: each call's caller counts an owner more and less, and the
                                 // count beside the System in one cache line would make the reading
                                 // thread's every look at the System miss.
                                 return std::shared_ptr<System>(std::make_unique<System>(System::open(open)));
                               });
    *system = new hipstack_smi_system{std::move(opened), std::move(deadline)};
    return HIPSTACK_SMI_OK;
  });
}

void hipstack_smi_close(hipstack_smi_system* system) { delete system; }

hipstack_smi_result hipstack_smi_get_devices(const hipstack_smi_system* system, hipstack_smi_list** devices) {
  return give_list(system, devices, [&] {
    return make_list(HIPSTACK_SMI_LIST_DEVICES, system->bounded(ReadDeadline::kNode, [](const System& s) { return s.devices(); }));
  });
}

hipstack_smi_result hipstack_smi_get_backends(const hipstack_smi_system* system, hipstack_smi_list** backends) {
  return give_list(system, backends, [&] { return make_list(HIPSTACK_SMI_LIST_BACKENDS, system->system->backends()); });
}

hipstack_smi_result hipstack_smi_device_count(const hipstack_smi_system* system, uint32_t* count) {
  if (system == nullptr || count == nullptr) return null_argument("system and count");
  return guarded([&] {
    *count = static_cast<uint32_t>(system->bounded(ReadDeadline::kNode, [](const System& s) { return s.devices(); }).size());
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_device_resolve(const hipstack_smi_system* system, const char* selector, uint32_t* device) {
  if (system == nullptr || selector == nullptr || device == nullptr) return null_argument("system, selector and device");
  return guarded([&] {
    *device = system->system->resolve(selector);
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_device_get_fault(const hipstack_smi_system* system, uint32_t device, char* buffer, size_t* size) {
  if (system == nullptr || size == nullptr) return null_argument("system and size");
  return guarded([&] {
    const std::string fault = system->bounded(device, [device](const System& s) { return s.fault(device); });
    const std::size_t needed = fault.size() + 1;
    const std::size_t capacity = buffer != nullptr ? *size : 0;
    *size = needed;
    if (capacity < needed) {
      return fail(HIPSTACK_SMI_ERROR_INSUFFICIENT_SIZE, fmt::format("the fault text needs {} bytes, the buffer has {}", needed, capacity));
    }
    std::memcpy(buffer, fault.c_str(), needed);
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_sample_device(const hipstack_smi_system* system, uint32_t device,
                                               const hipstack_smi_sample_options* options, hipstack_smi_list** readings) {
  hipstack_smi_sample_options c{sizeof c, HIPSTACK_SMI_SAMPLE_LIVE, 0, nullptr, 0};
  if (options != nullptr) {
    if (const auto r = copy_in(options, c, "sample options"); r != HIPSTACK_SMI_OK) {
      if (readings != nullptr) *readings = nullptr;
      return r;
    }
  }
  return give_list(system, readings, [&] {
    const std::uint32_t what = c.what != 0 ? c.what : std::uint32_t{HIPSTACK_SMI_SAMPLE_LIVE};
    SampleOptions o;
    o.identity = (what & HIPSTACK_SMI_SAMPLE_IDENTITY) != 0;
    o.static_info = (what & HIPSTACK_SMI_SAMPLE_STATIC) != 0;
    o.live = (what & HIPSTACK_SMI_SAMPLE_LIVE) != 0;
    o.pcie_throughput = (what & HIPSTACK_SMI_SAMPLE_PCIE_THROUGHPUT) != 0;
    o.window = (what & HIPSTACK_SMI_SAMPLE_WINDOW) != 0;
    o.window_ms = c.window_ms;
    if (c.metric_count > 0 && c.metrics == nullptr) {
      throw Error(Error::Code::invalid_argument, "sample options: metric_count > 0 with metrics NULL");
    }
    for (std::size_t i = 0; i < c.metric_count; ++i) {
      if (find_metric(static_cast<MetricId>(c.metrics[i])) == nullptr) {
        throw Error(Error::Code::invalid_argument, fmt::format("sample options: metrics[{}] = {} is no metric's id", i, c.metrics[i]));
      }
      o.metrics.push_back(static_cast<MetricId>(c.metrics[i]));
    }
    // amdgpu's pcie_bw read blocks one second; a first window look waits window_ms.
    const auto extra = std::chrono::milliseconds(o.window_ms) + (o.pcie_throughput ? std::chrono::seconds(1) : std::chrono::seconds(0));
    return make_list(HIPSTACK_SMI_LIST_READINGS, system->bounded(device, [device, o](const System& s) { return s.sample(device, o); }, extra));
  });
}

namespace {

// The kinds of metrics a read of values asks for (its sample's options).
struct ValueKinds {
  bool identity = false;
  bool static_info = false;
  bool live = false;
};

// metrics[i] as a metric read_values reads, its kind added to `kinds`; else invalid_argument.
MetricId value_metric(const uint32_t* metrics, std::size_t i, ValueKinds& kinds) {
  const MetricInfo* info = find_metric(static_cast<MetricId>(metrics[i]));
  if (info == nullptr) throw Error(Error::Code::invalid_argument, fmt::format("metrics[{}] = {} is no metric's id", i, metrics[i]));
  if (info->scope != Scope::device || !info->instance_label.empty() || info->type == ValueType::text || info->cost == Cost::window ||
      info->cost == Cost::blocking) {
    throw Error(Error::Code::invalid_argument, fmt::format("metrics[{}] = {} ({}): not a single-valued, numeric GPU metric read at once; "
                                                           "read it with hipstack_smi_sample_device",
                                                           i, metrics[i], info->name));
  }
  kinds.identity = kinds.identity || info->kind == Kind::identity;
  kinds.static_info = kinds.static_info || info->kind == Kind::static_info;
  kinds.live = kinds.live || info->kind == Kind::live || info->kind == Kind::counter;
  return info->id;
}

// On the reading thread: each metric's value from one sample of them (the readings are made and
// freed there), values[i] that of ids[i].
void read_values_of(const System& s, std::uint32_t device, const MetricId* ids, std::size_t count, ValueKinds kinds,
                    hipstack_smi_value* values) {
  SampleOptions o;
  o.identity = kinds.identity;
  o.static_info = kinds.static_info;
  o.live = kinds.live;
  o.metrics.assign(ids, ids + count);
  const std::vector<Reading> readings = s.sample(device, o);
  for (std::size_t i = 0; i < count; ++i) {
    const MetricId id = ids[i];
    hipstack_smi_value v{HIPSTACK_SMI_STATUS_NOT_SUPPORTED, static_cast<hipstack_smi_value_type>(find_metric(id)->type), 0, 0.0};
    const auto r = std::find_if(readings.begin(), readings.end(), [id](const Reading& x) { return x.id == id && x.instance.empty(); });
    if (r != readings.end()) {
      const hipstack_smi_reading c = c_reading(*r);  // the sample's conversion, so both calls give the same number
      v.status = c.status;
      if (c.status == HIPSTACK_SMI_STATUS_OK) {
        v.integer = c.integer;
        v.real = c.real;
      }
    }
    values[i] = v;
  }
}

// A poller's read of a few values crosses to the reading thread and back in fixed arrays: nothing is
// allocated on one thread and freed on the other (a free into the other thread's arena takes its lock).
constexpr std::size_t kFewValues = 4;
struct FewValues {
  std::array<hipstack_smi_value, kFewValues> values;
};

}  // namespace

hipstack_smi_result hipstack_smi_read_values(const hipstack_smi_system* system, uint32_t device, const uint32_t* metrics,
                                             size_t count, hipstack_smi_value* values) {
  return guarded([&] {
    if (system == nullptr) throw Error(Error::Code::invalid_argument, "system must not be NULL");
    if (metrics == nullptr || values == nullptr) throw Error(Error::Code::invalid_argument, "metrics and values must not be NULL");
    if (count == 0 || count > catalogue().size()) {
      throw Error(Error::Code::invalid_argument, fmt::format("count {}: between 1 and the catalogue's {} metrics", count, catalogue().size()));
    }
    ValueKinds kinds;
    if (count <= kFewValues) {
      std::array<MetricId, kFewValues> ids{};
      for (std::size_t i = 0; i < count; ++i) ids[i] = value_metric(metrics, i, kinds);
      const FewValues found = system->bounded(device, [device, ids, count, kinds](const System& s) {
        FewValues out{};  // only the first `count` are read: the rest stay zero, never indeterminate
        read_values_of(s, device, ids.data(), count, kinds, out.values.data());
        return out;
      });
      std::copy_n(found.values.begin(), count, values);
      return HIPSTACK_SMI_OK;
    }
    std::vector<MetricId> ids(count);
    for (std::size_t i = 0; i < count; ++i) ids[i] = value_metric(metrics, i, kinds);
    const auto found = system->bounded(device, [device, ids = std::move(ids), kinds](const System& s) {
      std::vector<hipstack_smi_value> out(ids.size());
      read_values_of(s, device, ids.data(), ids.size(), kinds, out.data());
      return out;
    });
    std::copy(found.begin(), found.end(), values);
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_get_partitions(const hipstack_smi_system* system, uint32_t device, hipstack_smi_list** partitions) {
  return give_list(system, partitions, [&] {
    return make_list(HIPSTACK_SMI_LIST_PARTITIONS, system->bounded(device, [device](const System& s) { return s.partitions(device); }));
  });
}

hipstack_smi_result hipstack_smi_get_processes(const hipstack_smi_system* system, uint32_t device, uint32_t interval_ms,
                                               hipstack_smi_list** processes) {
  return give_list(system, processes, [&] {
    return make_list(HIPSTACK_SMI_LIST_PROCESSES,
                     system->bounded(device, [device, interval_ms](const System& s) { return s.processes(device, interval_ms); },
                                     std::chrono::milliseconds(interval_ms)));
  });
}

hipstack_smi_result hipstack_smi_get_links(const hipstack_smi_system* system, hipstack_smi_list** links) {
  return give_list(system, links, [&] {
    return make_list(HIPSTACK_SMI_LIST_LINKS, system->bounded(ReadDeadline::kNode, [](const System& s) { return s.links(); }));
  });
}

hipstack_smi_result hipstack_smi_get_bad_pages(const hipstack_smi_system* system, uint32_t device, hipstack_smi_list** bad_pages) {
  return give_list(system, bad_pages, [&] {
    return make_list(HIPSTACK_SMI_LIST_BAD_PAGES, system->bounded(device, [device](const System& s) { return s.bad_pages(device); }));
  });
}

hipstack_smi_result hipstack_smi_health_policy_init(hipstack_smi_health_policy* policy) {
  clear_error();
  return copy_out(c_policy(HealthPolicy{}), policy, "health policy");
}

hipstack_smi_result hipstack_smi_health_policy_load(const char* path, hipstack_smi_health_policy* policy) {
  if (path == nullptr) return null_argument("path");
  if (const auto r = check_size(policy, "health policy"); r != HIPSTACK_SMI_OK) return r;
  return guarded([&] { return copy_out(c_policy(HealthPolicy::from_file(path)), policy, "health policy"); });
}

hipstack_smi_result hipstack_smi_check_health(const hipstack_smi_system* system, uint32_t device,
                                              const hipstack_smi_health_policy* policy, hipstack_smi_verdict* overall,
                                              hipstack_smi_list** findings) {
  hipstack_smi_health_policy c = c_policy(HealthPolicy{});
  if (policy != nullptr) {
    if (const auto r = copy_in(policy, c, "health policy"); r != HIPSTACK_SMI_OK) {
      if (findings != nullptr) *findings = nullptr;
      return r;
    }
  }
  if (overall == nullptr) return null_argument("overall");
  return give_list(system, findings, [&] {
    HealthReport report =
        system->bounded(device, [device, policy = policy_of(c)](const System& s) { return s.health(device, policy); });
    *overall = static_cast<hipstack_smi_verdict>(report.overall);
    return make_list(HIPSTACK_SMI_LIST_HEALTH_FINDINGS, std::move(report.findings));
  });
}

hipstack_smi_result hipstack_smi_event_watch_open(const hipstack_smi_open_options* options, const char* const* selectors,
                                                  size_t selector_count, hipstack_smi_event_watch** watch) {
  if (watch == nullptr) return null_argument("watch");
  *watch = nullptr;
  if (selector_count > 0 && selectors == nullptr) return null_argument("selectors (with selector_count > 0)");
  return guarded([&] {
    OpenOptions open;
    std::chrono::milliseconds limit{};
    if (const auto r = open_options(options, open, limit); r != HIPSTACK_SMI_OK) return r;
    std::vector<std::string> chosen;
    for (std::size_t i = 0; i < selector_count; ++i) {
      if (selectors[i] == nullptr) return null_argument("a selector");
      chosen.emplace_back(selectors[i]);
    }
    ReadDeadline deadline(limit);
    auto opened = deadline.run(ReadDeadline::kNode, [] { return "the event watch's first look"; }, {},
                               [open, chosen] { return std::make_shared<EventWatch>(open, chosen); });
    *watch = new hipstack_smi_event_watch{std::move(opened), std::move(deadline)};
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_event_watch_poll(hipstack_smi_event_watch* watch, hipstack_smi_list** events) {
  if (events == nullptr) return null_argument("the list pointer");
  *events = nullptr;
  if (watch == nullptr) return null_argument("watch");
  return guarded([&] {
    auto news = watch->deadline.run(ReadDeadline::kNode, [] { return "the event watch's look"; }, {}, [shared = watch->watch] { return shared->poll(); });
    *events = make_list(HIPSTACK_SMI_LIST_EVENTS, std::move(news)).release();
    return HIPSTACK_SMI_OK;
  });
}

void hipstack_smi_event_watch_close(hipstack_smi_event_watch* watch) { delete watch; }

hipstack_smi_result hipstack_smi_control(hipstack_smi_system* system, uint32_t device, const hipstack_smi_control_request* request,
                                         hipstack_smi_control_result* result, hipstack_smi_list** writes) {
  if (writes == nullptr) return null_argument("writes");
  *writes = nullptr;
  if (system == nullptr) return null_argument("system");
  hipstack_smi_control_request c{};
  if (const auto r = copy_in(request, c, "control request"); r != HIPSTACK_SMI_OK) return r;
  if (const auto r = check_size(result, "control result"); r != HIPSTACK_SMI_OK) return r;
  return guarded([&] {
    // Not bounded: a write abandoned half-way would leave the caller not knowing the GPU's state;
    // settle_timeout_ms bounds the wait for the driver.
    auto list = make_control_list(run_control(*system->system, device, c));
    const ControlResult& r = std::get<ControlResult>(list->items);
    const hipstack_smi_control_result filled{sizeof filled,
                                             static_cast<hipstack_smi_control_outcome>(r.outcome),
                                             static_cast<hipstack_smi_refusal_reason>(r.reason),
                                             r.error_code,
                                             r.action.c_str(),
                                             r.message.c_str(),
                                             r.next_step.c_str()};
    copy_out(filled, result, "control result");
    *writes = list.release();
    return HIPSTACK_SMI_OK;
  });
}

const char* hipstack_smi_outcome_name(hipstack_smi_control_outcome outcome) {
  return outcome_name(static_cast<ControlOutcome>(outcome)).data();
}

const char* hipstack_smi_reason_name(hipstack_smi_refusal_reason reason) {
  return reason_name(static_cast<RefusalReason>(reason)).data();
}

}  // extern "C"
