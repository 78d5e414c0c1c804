// The C API: a thin wrapper over hipstack::smi::System that turns exceptions into result codes.
#include <hipstack/smi.h>
#include <hipstack/smi.hpp>

#include <array>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct hipstack_smi_system {
  hipstack::smi::System system;
};

struct hipstack_smi_sample {
  std::vector<hipstack::smi::Reading> readings;
  std::vector<hipstack_smi_reading> views;
};

namespace {

using namespace hipstack::smi;

// The C API passes the C++ enums through static_cast: each C constant must equal its C++ value.
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

hipstack_smi_result fail(hipstack_smi_result result, std::string message) {
  t_last_error = std::move(message);
  return result;
}

// Runs fn, mapping every exception to a result code and the thread's error message.
template <typename Fn>
hipstack_smi_result guarded(Fn&& fn) noexcept {
  try {
    t_last_error.clear();
    return fn();
  } catch (const Error& e) {
    switch (e.code()) {
      case Error::Code::no_such_device: return fail(HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE, e.what());
      case Error::Code::invalid_argument: return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, e.what());
      case Error::Code::read_failure: return fail(HIPSTACK_SMI_ERROR_READ_FAILURE, e.what());
    }
    return fail(HIPSTACK_SMI_ERROR_INTERNAL, e.what());
  } catch (const std::bad_alloc&) {
    return fail(HIPSTACK_SMI_ERROR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(HIPSTACK_SMI_ERROR_INTERNAL, e.what());
  }
}

const std::vector<hipstack_smi_metric_info>& c_catalogue() {
  static const std::vector<hipstack_smi_metric_info> entries = [] {
    std::vector<hipstack_smi_metric_info> out;
    for (const MetricInfo& m : catalogue()) {
      // The catalogue's string_views point at string literals, so .data() is NUL-terminated.
      out.push_back({static_cast<std::uint32_t>(m.id), m.name.data(), unit_name(m.unit).data(),
                     unit_symbol(m.unit).data(), static_cast<hipstack_smi_value_type>(m.type),
                     static_cast<hipstack_smi_scope>(m.scope), static_cast<hipstack_smi_kind>(m.kind),
                     m.instance_label.data(), m.help.data()});
    }
    return out;
  }();
  return entries;
}

template <std::size_t N>
void copy_text(char (&dest)[N], const std::string& text) {
  const std::size_t n = std::min(text.size(), N - 1);
  std::memcpy(dest, text.data(), n);
  dest[n] = '\0';
}

}  // namespace

extern "C" {

const char* hipstack_smi_version(void) { return library_version().data(); }

const char* hipstack_smi_result_string(hipstack_smi_result result) {
  switch (result) {
    case HIPSTACK_SMI_OK: return "ok";
    case HIPSTACK_SMI_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE: return "no such device";
    case HIPSTACK_SMI_ERROR_READ_FAILURE: return "read failure";
    case HIPSTACK_SMI_ERROR_NO_MEMORY: return "out of memory";
    case HIPSTACK_SMI_ERROR_INTERNAL: return "internal error";
  }
  return "unknown result";
}

const char* hipstack_smi_last_error(void) { return t_last_error.c_str(); }

size_t hipstack_smi_catalogue_size(void) { return c_catalogue().size(); }

const hipstack_smi_metric_info* hipstack_smi_catalogue_entry(size_t position) {
  const auto& entries = c_catalogue();
  return position < entries.size() ? &entries[position] : nullptr;
}

const hipstack_smi_metric_info* hipstack_smi_metric_by_id(uint32_t id) {
  for (const auto& entry : c_catalogue()) {
    if (entry.id == id) return &entry;
  }
  return nullptr;
}

const hipstack_smi_metric_info* hipstack_smi_metric_by_name(const char* name) {
  if (name == nullptr) return nullptr;
  for (const auto& entry : c_catalogue()) {
    if (std::strcmp(entry.name, name) == 0) return &entry;
  }
  return nullptr;
}

hipstack_smi_result hipstack_smi_open(const hipstack_smi_open_options* options, hipstack_smi_system** system) {
  if (system == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "system must not be NULL");
  *system = nullptr;
  return guarded([&] {
    OpenOptions open;
    if (options != nullptr && options->sysfs_root != nullptr) open.sysfs_root = options->sysfs_root;
    if (options != nullptr && options->procfs_root != nullptr) open.procfs_root = options->procfs_root;
    *system = new hipstack_smi_system{System::open(open)};
    return HIPSTACK_SMI_OK;
  });
}

void hipstack_smi_close(hipstack_smi_system* system) { delete system; }

hipstack_smi_result hipstack_smi_device_count(const hipstack_smi_system* system, uint32_t* count) {
  if (system == nullptr || count == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "NULL argument");
  return guarded([&] {
    *count = static_cast<uint32_t>(system->system.devices().size());
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_device_get_info(const hipstack_smi_system* system, uint32_t device,
                                                 hipstack_smi_device_info* info) {
  if (system == nullptr || info == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "NULL argument");
  return guarded([&] {
    const auto devices = system->system.devices();
    if (device >= devices.size()) {
      return fail(HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE, "no device " + std::to_string(device));
    }
    const DeviceSummary& d = devices[device];
    *info = hipstack_smi_device_info{};
    info->index = d.index;
    copy_text(info->vendor, d.vendor);
    copy_text(info->backend, d.backend);
    copy_text(info->bdf, d.bdf);
    copy_text(info->uuid, d.uuid);
    copy_text(info->name, d.name);
    info->partition_count = d.partition_count;
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_device_resolve(const hipstack_smi_system* system, const char* selector,
                                                uint32_t* device) {
  if (system == nullptr || selector == nullptr || device == nullptr) {
    return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "NULL argument");
  }
  return guarded([&] {
    *device = system->system.resolve(selector);
    return HIPSTACK_SMI_OK;
  });
}

hipstack_smi_result hipstack_smi_sample_device(const hipstack_smi_system* system, uint32_t device, unsigned what,
                                               hipstack_smi_sample** sample) {
  if (system == nullptr || sample == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "NULL argument");
  *sample = nullptr;
  return guarded([&] {
    SampleOptions options;
    options.identity = (what & HIPSTACK_SMI_SAMPLE_IDENTITY) != 0;
    options.static_info = (what & HIPSTACK_SMI_SAMPLE_STATIC) != 0;
    options.live = (what & HIPSTACK_SMI_SAMPLE_LIVE) != 0;
    options.pcie_throughput = (what & HIPSTACK_SMI_SAMPLE_PCIE_THROUGHPUT) != 0;
    options.window = (what & HIPSTACK_SMI_SAMPLE_WINDOW) != 0;
    auto result = std::make_unique<hipstack_smi_sample>();
    result->readings = system->system.sample(device, options);
    result->views.reserve(result->readings.size());
    for (const Reading& r : result->readings) {
      hipstack_smi_reading view{};
      view.metric_id = static_cast<uint32_t>(r.id);
      view.status = static_cast<hipstack_smi_status>(r.status);
      view.error_code = r.error_code;
      const MetricInfo* info = find_metric(r.id);
      view.type = info != nullptr ? static_cast<hipstack_smi_value_type>(info->type) : HIPSTACK_SMI_TYPE_TEXT;
      view.text = "";
      if (const auto* i = std::get_if<std::int64_t>(&r.value)) {
        view.integer = *i;
        view.real = static_cast<double>(*i);
      } else if (const auto* d = std::get_if<double>(&r.value)) {
        view.real = *d;
      } else if (const auto* s = std::get_if<std::string>(&r.value)) {
        view.text = s->c_str();
      }
      view.instance = r.instance.c_str();
      view.detail = r.detail.c_str();
      result->views.push_back(view);
    }
    *sample = result.release();
    return HIPSTACK_SMI_OK;
  });
}

size_t hipstack_smi_sample_size(const hipstack_smi_sample* sample) { return sample ? sample->views.size() : 0; }

const hipstack_smi_reading* hipstack_smi_sample_reading(const hipstack_smi_sample* sample, size_t position) {
  if (sample == nullptr || position >= sample->views.size()) return nullptr;
  return &sample->views[position];
}

void hipstack_smi_sample_free(hipstack_smi_sample* sample) { delete sample; }

hipstack_smi_result hipstack_smi_control(hipstack_smi_system* system, uint32_t device, hipstack_smi_control_kind kind,
                                         const char* text, double value, double value2, unsigned flags,
                                         hipstack_smi_control_result* result) {
  return guarded([&]() -> hipstack_smi_result {
    if (system == nullptr || result == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "system and result must not be NULL");
    const std::string t = text != nullptr ? text : "";
    ControlOptions options;
    options.dry_run = (flags & HIPSTACK_SMI_CONTROL_DRY_RUN) != 0;
    options.force = (flags & HIPSTACK_SMI_CONTROL_FORCE) != 0;
    ControlResult r;
    switch (kind) {
      case HIPSTACK_SMI_CONTROL_COMPUTE_PARTITION: r = system->system.set_compute_partition(device, t, options); break;
      case HIPSTACK_SMI_CONTROL_MEMORY_PARTITION: r = system->system.set_memory_partition(device, t, options); break;
      case HIPSTACK_SMI_CONTROL_POWER_CAP: r = system->system.set_power_cap(device, value, options); break;
      case HIPSTACK_SMI_CONTROL_PERFORMANCE_LEVEL: r = system->system.set_performance_level(device, t, options); break;
      case HIPSTACK_SMI_CONTROL_POWER_PROFILE: r = system->system.set_power_profile(device, t, options); break;
      case HIPSTACK_SMI_CONTROL_GRAPHICS_CLOCK_RANGE:
        r = system->system.set_clock_range(device, ClockDomain::graphics, value, value2, options);
        break;
      case HIPSTACK_SMI_CONTROL_MEMORY_CLOCK_RANGE:
        r = system->system.set_clock_range(device, ClockDomain::memory, value, value2, options);
        break;
      case HIPSTACK_SMI_CONTROL_FAN: r = system->system.set_fan(device, FanSetting{value < 0, value < 0 ? 0 : value}, options); break;
      case HIPSTACK_SMI_CONTROL_RESET: r = system->system.reset_device(device, options); break;
      default: return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, "unknown control kind " + std::to_string(static_cast<int>(kind)));
    }
    *result = {};
    result->outcome = static_cast<hipstack_smi_control_outcome>(r.outcome);
    result->reason = static_cast<int>(r.reason);
    result->error_code = r.error_code;
    result->write_count = 0;
    for (const ControlWrite& w : r.writes) result->write_count += (w.done || options.dry_run) ? 1u : 0u;
    copy_text(result->action, r.action);
    copy_text(result->message, r.message);
    copy_text(result->next_step, r.next_step);
    return HIPSTACK_SMI_OK;
  });
}

}  // extern "C"
