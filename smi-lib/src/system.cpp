// hipstack::smi::System: owns the file-system view and the backends, numbers devices across
// backends and completes every sample with not_supported entries for what a backend did not report.
#include <hipstack/cper.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <array>
#include <bitset>
#include <chrono>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "backends/backend.hpp"
#include "control.hpp"
#include "fs_view.hpp"
#include "parse.hpp"
#include "plausibility.hpp"
#include "readings.hpp"
#include "roots.hpp"
#include "version.hpp"

namespace hipstack::smi {
namespace {

std::size_t catalogue_position(MetricId id) {
  static const auto positions = [] {
    std::array<std::uint16_t, detail::kMetricIdSpace> table{};
    table.fill(0xffff);
    const auto all = catalogue();
    for (std::size_t i = 0; i < all.size(); ++i) table[detail::id_slot(all[i].id)] = static_cast<std::uint16_t>(i);
    return table;
  }();
  return positions[detail::id_slot(id)];
}

bool kind_selected(Kind kind, const SampleOptions& options) {
  switch (kind) {
    case Kind::identity: return options.identity;
    case Kind::static_info: return options.static_info;
    case Kind::live:
    case Kind::counter:
      return options.live;
    case Kind::window: return options.window;
  }
  return false;
}

// The static bounds the values `options` asks for are judged by (vram_total for vram_used:
// plausibility.hpp) that the sample itself will not hold: those of a kind not asked, or not named.
std::vector<MetricId> missing_bounds(const SampleOptions& options) {
  std::vector<MetricId> bounds;
  if (options.metrics.empty()) {
    for (const MetricInfo& info : catalogue()) {
      if (info.scope == Scope::device && kind_selected(info.kind, options)) detail::add_plausibility_bounds(info.id, bounds);
    }
  } else {
    for (const MetricId id : options.metrics) detail::add_plausibility_bounds(id, bounds);
  }
  std::erase_if(bounds, [&](MetricId id) {
    const MetricInfo* info = find_metric(id);
    return options.metrics.empty() ? info != nullptr && kind_selected(info->kind, options)
                                   : std::find(options.metrics.begin(), options.metrics.end(), id) != options.metrics.end();
  });
  return bounds;
}

// The library's edge: every text that came from a file or a vendor library leaves it printable
// (detail::printable_text), so no output has to handle raw bytes.
void make_printable(std::string& text) {
  if (!detail::is_printable_text(text)) text = detail::printable_text(text);
}

void make_printable(Reading& r) {
  make_printable(r.instance);
  make_printable(r.detail);
  if (auto* text = std::get_if<std::string>(&r.value)) make_printable(*text);
}

void make_printable(std::vector<Reading>& readings) {
  for (Reading& r : readings) make_printable(r);
}

void make_printable(DeviceSummary& d) {
  for (std::string* text : {&d.vendor, &d.backend, &d.bdf, &d.uuid, &d.name, &d.fault}) make_printable(*text);
}

}  // namespace

struct System::Impl {
  std::unique_ptr<detail::FsView> fs;
  std::vector<std::unique_ptr<detail::Backend>> backends;
  std::vector<BackendStatus> statuses;
  struct Slot {
    detail::Backend* backend;
    std::size_t local;
    DeviceSummary summary;
  };
  std::vector<Slot> devices;
  AuditSink audit;
  // Readers share it; a mutation holds it alone (it may replace a backend and renumber devices).
  mutable std::shared_timed_mutex mutex;
  // Each device's static bounds (plausibility.hpp: vram_total for vram_used), read at its first
  // sample that needs them instead of at every sample (a static read of an MI300X costs about a
  // fifth of its live sample); read again when a value is judged against them, so a stale bound never
  // makes an error, and emptied when the devices are renumbered.
  mutable std::mutex bounds_mutex;
  mutable std::map<std::uint32_t, std::vector<Reading>> bounds;

  // Appends to `out` the bounds of `device` among `wanted`, from the copy or (`fresh`) read now.
  void append_static_bounds(std::uint32_t device, const Slot& slot, bool fresh, const std::vector<MetricId>& wanted,
                            std::vector<Reading>& out) const {
    const std::lock_guard lock(bounds_mutex);
    auto it = bounds.find(device);
    if (it == bounds.end() || fresh) {
      SampleOptions statics;
      statics.live = false;
      statics.static_info = true;
      detail::add_all_plausibility_bounds(statics.metrics);
      std::vector<Reading> read;
      slot.backend->sample(slot.local, statics, read);
      std::erase_if(read, [&statics](const Reading& r) {
        return std::find(statics.metrics.begin(), statics.metrics.end(), r.id) == statics.metrics.end();
      });
      it = bounds.insert_or_assign(device, std::move(read)).first;
    }
    for (const Reading& b : it->second) {
      if (std::find(wanted.begin(), wanted.end(), b.id) != wanted.end()) out.push_back(b);
    }
  }

  void number_devices() {
    {
      const std::lock_guard lock(bounds_mutex);
      bounds.clear();
    }
    devices.clear();
    for (const auto& backend : backends) {
      for (std::size_t i = 0; i < backend->device_count(); ++i) {
        DeviceSummary summary = backend->summary(i);
        make_printable(summary);
        summary.index = static_cast<std::uint32_t>(devices.size());
        devices.push_back({backend.get(), i, std::move(summary)});
      }
    }
  }

  // After a partition change: a fresh amdgpu discovery replaces the old one. Whole GPUs keep their
  // indices as long as the driver keeps its cards (it does: partitions are KFD nodes, not cards).
  void rediscover_amdgpu(ControlResult& result) {
    std::vector<std::string> before;
    for (const Slot& s : devices) before.push_back(s.summary.bdf);
    detail::BackendProbe probe = detail::probe_amdgpu(*fs);
    for (auto& backend : backends) {
      if (backend->name() != "amdgpu") continue;
      if (probe.backend) backend = std::move(probe.backend);
    }
    number_devices();
    std::vector<std::string> after;
    for (const Slot& s : devices) after.push_back(s.summary.bdf);
    if (before != after) {
      result.message += fmt::format("; note: the device list changed from {} to {} GPU(s) (indices may have moved)",
                                    before.size(), after.size());
    }
  }

  ControlResult control(std::uint32_t device, const detail::ControlRequest& request, const ControlOptions& options) {
    // A read stuck in the kernel (a wedged driver) holds the shared lock for good: a change gives up
    // after the settle timeout instead of waiting on it forever (the C API abandons such reads).
    std::unique_lock lock(mutex, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::milliseconds(options.settle_timeout_ms))) {
      const std::shared_lock readers(mutex);  // shared with the stuck read: no wait on it
      return detail::refuse_control(slot(device).summary, RefusalReason::timed_out, ETIMEDOUT,
                                    fmt::format("other calls held the GPUs for {} ms (a read stuck in a hung driver?); "
                                                "nothing was written",
                                                options.settle_timeout_ms),
                                    detail::current_actor(), audit);
    }
    const Slot& target = slot(device);
    ControlResult result = detail::guarded_control(*fs, *target.backend, target.local, target.summary, request, options,
                                                   detail::current_actor(), audit);
    const bool partition = request.kind == detail::ControlRequest::Kind::compute_partition ||
                           request.kind == detail::ControlRequest::Kind::memory_partition;
    const bool wrote = std::any_of(result.writes.begin(), result.writes.end(), [](const ControlWrite& w) { return w.done; });
    if (partition && wrote && target.backend->name() == "amdgpu") rediscover_amdgpu(result);
    return result;
  }

  const Slot& slot(std::uint32_t device) const {
    if (device >= devices.size()) {
      throw Error(Error::Code::no_such_device,
                  fmt::format("no device {} (there are {})", device, devices.size()));
    }
    return devices[device];
  }
};

System::System(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
System::System(System&&) noexcept = default;
System& System::operator=(System&&) noexcept = default;
System::~System() = default;

System System::open(const OpenOptions& options) {
  const detail::Roots roots = detail::resolve_roots(options);

  auto impl = std::make_unique<Impl>();
  impl->audit = options.audit;
  impl->fs = std::make_unique<detail::RootedFs>(roots.sys, roots.proc, roots.dev);
  if (options.enable_amdgpu) {
    detail::BackendProbe probe = detail::probe_amdgpu(*impl->fs);
    impl->statuses.push_back({"amdgpu", probe.backend != nullptr, probe.reason});
    if (probe.backend) impl->backends.push_back(std::move(probe.backend));
  } else {
    impl->statuses.push_back({"amdgpu", false, "disabled by the caller"});
  }
  if (options.enable_nvml) {
    detail::BackendProbe probe = detail::probe_nvml(*impl->fs, detail::nvml_library_path(options), options.vendor_shutdown);
    impl->statuses.push_back({"nvml", probe.backend != nullptr, probe.reason});
    if (probe.backend) impl->backends.push_back(std::move(probe.backend));
  } else {
    impl->statuses.push_back({"nvml", false, "disabled by the caller"});
  }
  impl->number_devices();
  return System(std::move(impl));
}

std::vector<DeviceSummary> System::devices() const {
  std::shared_lock lock(impl_->mutex);
  std::vector<DeviceSummary> out;
  out.reserve(impl_->devices.size());
  for (const auto& slot : impl_->devices) {
    out.push_back(slot.summary);
    out.back().fault = slot.backend->fault(slot.local, nullptr);
    make_printable(out.back().fault);
  }
  return out;
}

std::string System::fault(std::uint32_t device) const {
  std::shared_lock lock(impl_->mutex);
  const auto& slot = impl_->slot(device);
  std::string fault = slot.backend->fault(slot.local, nullptr);
  make_printable(fault);
  return fault;
}

std::vector<BackendStatus> System::backends() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->statuses;
}

namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool selector_names(std::string_view selector, std::string_view bdf, std::string_view id) {
  const std::string wanted = lowercase(selector), b = lowercase(bdf), i = lowercase(id);
  const bool by_bdf = !b.empty() && (wanted == b || (b.size() > 5 && wanted == b.substr(5)));
  const bool by_id = !i.empty() && (wanted == i || (i.starts_with("gpu-") && wanted == i.substr(4)));
  return by_bdf || by_id;
}

std::uint32_t System::resolve(std::string_view selector) const {
  std::shared_lock lock(impl_->mutex);
  if (selector.empty()) throw Error(Error::Code::invalid_argument, "empty device selector");
  if (std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (selector.size() > 9) throw Error(Error::Code::no_such_device, fmt::format("no device {}", selector));
    const auto index = static_cast<std::uint32_t>(std::stoul(std::string(selector)));
    impl_->slot(index);
    return index;
  }
  const std::string wanted = lowercase(selector);
  for (const auto& slot : impl_->devices) {
    if (selector_names(selector, slot.summary.bdf, slot.summary.uuid)) return slot.summary.index;
    const std::string uuid = lowercase(slot.summary.uuid);
    // rocminfo's and hipstack-info's form of an AMD GPU: "GPU-" and the 16 hex digits of its unique
    // id, which are the last 16 of hipstack's UUID (backends/amdgpu/discovery.cpp, make_uuid).
    std::string digits = uuid.rfind("gpu-", 0) == 0 ? uuid.substr(4) : std::string();
    std::erase(digits, '-');
    if (slot.summary.vendor == "amd" && digits.size() == 32 && (wanted == "gpu-" + digits.substr(16))) {
      return slot.summary.index;
    }
  }
  // A partition's BDF or id ("GPU-.../3", a MIG instance) stands for the GPU it is part of. Names
  // only: a selector must never wait on a partition's files (a stuck read would hang -g).
  for (const auto& slot : impl_->devices) {
    if (!slot.summary.fault.empty()) continue;
    std::vector<Partition> partitions;
    try {
      partitions = slot.backend->partition_names(slot.local);
    } catch (const Error&) {
      continue;  // a GPU whose partitions cannot be named is not the one asked for by a partition's name
    }
    for (const Partition& p : partitions) {
      if (selector_names(selector, p.bdf, p.id)) return slot.summary.index;
    }
  }
  throw Error(Error::Code::no_such_device,
              fmt::format("no device matches \"{}\" (index, BDF or UUID of a GPU or of a partition)", selector));
}

std::vector<Reading> System::sample(std::uint32_t device, const SampleOptions& options) const {
  std::shared_lock lock(impl_->mutex);
  const auto& slot = impl_->slot(device);
  std::vector<Reading> readings;
  // A sample of a few named metrics (a poller's) holds about as many readings; a whole one ~160.
  readings.reserve(options.metrics.empty() ? 160 : options.metrics.size() + 8);
  const std::string fault = slot.backend->fault(slot.local, &options);
  if (fault.empty()) {
    slot.backend->sample(slot.local, options, readings);
    // Judged with the bounds the sample lacks, from the copy; a value found impossible against the
    // copy is judged again with bounds read now. The bounds leave with the verdict.
    const std::vector<MetricId> missing = missing_bounds(options);
    const std::size_t asked = readings.size();
    if (!missing.empty()) impl_->append_static_bounds(device, slot, false, missing, readings);
    auto changed = detail::mark_implausible(readings);
    if (!changed.empty() && !missing.empty()) {
      for (auto& [index, original] : changed) readings[index] = std::move(original);
      readings.resize(asked);
      impl_->append_static_bounds(device, slot, true, missing, readings);
      static_cast<void>(detail::mark_implausible(readings));
    }
    readings.resize(asked);
  }
  std::bitset<detail::kMetricIdSpace> seen;
  for (const Reading& r : readings) seen[detail::id_slot(r.id)] = true;
  // The metrics asked for as a table by id, the backends' own: a sampler that names its metrics
  // (hipstack-smid names ~130) pays one look per reading, not a search.
  const detail::AskedFor asked(options);
  auto requested = [&asked](MetricId id) { return asked({id}); };
  if (!options.metrics.empty()) std::erase_if(readings, [&](const Reading& r) { return !requested(r.id); });
  make_printable(readings);
  // Each metric of the kinds asked that no reading answers: "not supported", or why the GPU cannot be
  // read. A sample of named metrics (a poller's) looks at those, not at the whole catalogue.
  std::string unsupported;  // made when first needed
  auto pad = [&](const MetricInfo& info) {
    if (info.scope != Scope::device || !kind_selected(info.kind, options) || !requested(info.id)) return;
    auto answered = seen[detail::id_slot(info.id)];
    if (answered) return;
    answered = true;  // a metric named twice is padded once
    Reading r;
    r.id = info.id;
    if (fault.empty()) {
      if (unsupported.empty()) unsupported = fmt::format("the {} backend does not provide it", slot.summary.backend);
      r.status = Status::not_supported;
      r.detail = unsupported;
    } else {
      // Every reading of a GPU that cannot be read says why, rather than "not supported".
      r.status = Status::error;
      r.error_code = ENXIO;
      r.detail = fault;
      make_printable(r.detail);
    }
    readings.push_back(std::move(r));
  };
  if (options.metrics.empty()) {
    for (const MetricInfo& info : catalogue()) pad(info);
  } else {
    for (const MetricId id : options.metrics) {
      if (const MetricInfo* info = find_metric(id)) pad(*info);
    }
  }
  // Into catalogue order (stable: a metric's instances keep the backend's order). The positions
  // are sorted, not the readings: a reading is moved once, not at every step of the sort.
  if (readings.size() < 2) return readings;  // in order already (a poller's one-metric sample)
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (catalogue position, index in readings)
  order.reserve(readings.size());
  for (std::size_t i = 0; i < readings.size(); ++i) order.emplace_back(catalogue_position(readings[i].id), i);
  if (std::is_sorted(order.begin(), order.end())) return readings;
  std::sort(order.begin(), order.end());  // pairs are unique (the index): sorted is stable
  std::vector<Reading> sorted;
  sorted.reserve(readings.size());
  for (const auto& [position, index] : order) sorted.push_back(std::move(readings[index]));
  return sorted;
}

Reading System::read(std::uint32_t device, MetricId id) const {
  const MetricInfo* info = find_metric(id);
  if (info == nullptr || info->scope != Scope::device) {
    throw Error(Error::Code::invalid_argument, fmt::format("metric {} is not a device metric", static_cast<std::uint32_t>(id)));
  }
  SampleOptions options;
  options.identity = info->kind == Kind::identity;
  options.static_info = info->kind == Kind::static_info;
  options.live = info->kind == Kind::live || info->kind == Kind::counter;
  options.window = info->kind == Kind::window;
  for (Reading& r : sample(device, options)) {
    if (r.id == id) return std::move(r);
  }
  Reading absent;
  absent.id = id;
  return absent;
}

std::vector<Partition> System::partitions(std::uint32_t device) const {
  std::shared_lock lock(impl_->mutex);
  const auto& slot = impl_->slot(device);
  std::vector<Partition> partitions = slot.backend->partitions(slot.local);
  for (Partition& p : partitions) {
    make_printable(p.id);
    make_printable(p.bdf);
    make_printable(p.readings);
  }
  return partitions;
}

std::vector<ProcessInfo> System::processes(std::uint32_t device, unsigned interval_ms) const {
  std::shared_lock lock(impl_->mutex);
  const auto& slot = impl_->slot(device);
  std::vector<ProcessInfo> processes = slot.backend->processes(slot.local, interval_ms);
  for (ProcessInfo& p : processes) {
    make_printable(p.name);  // a process's comm is chosen by whoever started it
    make_printable(p.user);
    make_printable(p.command_line);  // so are its arguments
    make_printable(p.readings);
  }
  return processes;
}

std::vector<BadPage> System::bad_pages(std::uint32_t device) const {
  std::shared_lock lock(impl_->mutex);
  const auto& slot = impl_->slot(device);
  std::vector<BadPage> pages = slot.backend->bad_pages(slot.local);
  for (BadPage& page : pages) make_printable(page.state);
  return pages;
}

CperRing System::cper_ring(std::uint32_t device) const {
  std::shared_lock lock(impl_->mutex);
  const auto& slot = impl_->slot(device);
  return slot.backend->cper_ring(slot.local);
}

std::vector<Link> System::links() const {
  std::shared_lock lock(impl_->mutex);
  std::vector<Link> out;
  for (const auto& backend : impl_->backends) {
    // Translate the backend's device numbers into System indices.
    std::vector<std::uint32_t> global;
    for (const auto& slot : impl_->devices) {
      if (slot.backend == backend.get()) global.push_back(slot.summary.index);
    }
    for (Link& link : backend->links()) {
      link.from = global.at(link.from);
      link.to = global.at(link.to);
      make_printable(link.readings);
      out.push_back(std::move(link));
    }
  }
  return out;
}

ControlResult System::set_compute_partition(std::uint32_t device, std::string_view mode, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::compute_partition;
  request.text = mode;
  return impl_->control(device, request, options);
}

ControlResult System::set_memory_partition(std::uint32_t device, std::string_view mode, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::memory_partition;
  request.text = mode;
  return impl_->control(device, request, options);
}

ControlResult System::set_power_cap(std::uint32_t device, double watts, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::power_cap;
  request.value = watts;
  return impl_->control(device, request, options);
}

ControlResult System::set_performance_level(std::uint32_t device, std::string_view level, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::performance_level;
  request.text = level;
  return impl_->control(device, request, options);
}

ControlResult System::set_power_profile(std::uint32_t device, std::string_view profile, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::power_profile;
  request.text = profile;
  return impl_->control(device, request, options);
}

ControlResult System::set_clock_range(std::uint32_t device, ClockDomain domain, double min_mhz, double max_mhz,
                                      const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::clock_range;
  request.clock = domain;
  request.value = min_mhz;
  request.value2 = max_mhz;
  return impl_->control(device, request, options);
}

ControlResult System::set_fan(std::uint32_t device, const FanSetting& fan, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::fan;
  request.fan = fan;
  return impl_->control(device, request, options);
}

ControlResult System::reset_device(std::uint32_t device, const ControlOptions& options) {
  detail::ControlRequest request;
  request.kind = detail::ControlRequest::Kind::reset;
  return impl_->control(device, request, options);
}

std::string_view library_version() noexcept { return detail::kVersion; }

}  // namespace hipstack::smi
