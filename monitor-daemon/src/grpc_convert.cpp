#include "grpc_convert.hpp"

#include <algorithm>
#include <type_traits>

namespace hipstack::smid {
namespace {

pb::ReadingStatus status_of(smi::Status status) {
  switch (status) {
    case smi::Status::ok: return pb::READING_STATUS_OK;
    case smi::Status::not_supported: return pb::READING_STATUS_NOT_SUPPORTED;
    case smi::Status::unavailable: return pb::READING_STATUS_UNAVAILABLE;
    case smi::Status::error: return pb::READING_STATUS_ERROR;
  }
  return pb::READING_STATUS_UNSPECIFIED;
}

pb::Verdict verdict_of(smi::Verdict verdict) {
  switch (verdict) {
    case smi::Verdict::pass: return pb::VERDICT_PASS;
    case smi::Verdict::warn: return pb::VERDICT_WARN;
    case smi::Verdict::fail: return pb::VERDICT_FAIL;
    case smi::Verdict::unknown: return pb::VERDICT_UNKNOWN;
  }
  return pb::VERDICT_UNSPECIFIED;
}

}  // namespace

namespace {

// A new reading of `id` in `out` with what every reading carries (metric, unit, instance, status);
// nothing when the metric is not wanted or not in the catalogue.
pb::Reading* add_reading(smi::MetricId id, const std::vector<smi::MetricId>& wanted, const std::string& instance,
                         smi::Status status, int error_code, google::protobuf::RepeatedPtrField<pb::Reading>* out) {
  if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), id) == wanted.end()) return nullptr;
  const smi::MetricInfo* info = smi::find_metric(id);
  if (info == nullptr) return nullptr;
  pb::Reading* m = out->Add();
  m->set_metric_id(static_cast<std::uint32_t>(id));
  m->set_metric(std::string(info->name));
  m->set_instance(instance);
  m->set_status(status_of(status));
  m->set_unit(std::string(smi::unit_symbol(info->unit)));
  m->set_error_code(error_code);
  return m;
}

}  // namespace

void add_readings(const std::vector<smi::Reading>& readings, const std::vector<smi::MetricId>& wanted,
                  google::protobuf::RepeatedPtrField<pb::Reading>* out) {
  for (const smi::Reading& r : readings) {
    pb::Reading* m = add_reading(r.id, wanted, r.instance, r.status, r.error_code, out);
    if (m == nullptr) continue;
    m->set_detail(r.detail);
    std::visit(
        [m](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::int64_t>) m->set_integer(v);
          else if constexpr (std::is_same_v<T, double>) m->set_real(v);
          else if constexpr (std::is_same_v<T, std::string>) m->set_text(v);
        },
        r.value);
  }
}

void add_history_values(const HistoryEntry& entry, const std::vector<smi::MetricId>& wanted,
                        google::protobuf::RepeatedPtrField<pb::Reading>* out) {
  for (const HistoryValue& v : entry.values) {
    pb::Reading* m = add_reading(v.id, wanted, entry.instances->at(v.instance), v.status, v.error_code, out);
    if (m == nullptr || v.status != smi::Status::ok) continue;
    if (v.integer) {
      m->set_integer(v.as_integer());
    } else {
      m->set_real(v.as_real());
    }
  }
}

void fill_device(const Sampler::View& view, std::chrono::steady_clock::time_point now, pb::Device* out) {
  const DeviceSnapshot& snap = *view.snapshot;
  out->set_index(snap.device.index);
  out->set_vendor(snap.device.vendor);
  out->set_backend(snap.device.backend);
  out->set_name(snap.device.name);
  out->set_uuid(snap.device.uuid);
  out->set_bdf(snap.device.bdf);
  out->set_partition_count(snap.device.partition_count);
  out->set_up(Sampler::up(view));
  out->set_fault(snap.device.fault);
  out->set_sample_age_seconds(snap.have_live ? std::chrono::duration<double>(now - snap.live_at).count() : -1.0);
}

void fill_metric_info(const smi::MetricInfo& info, pb::MetricInfo* out) {
  out->set_id(static_cast<std::uint32_t>(info.id));
  out->set_name(std::string(info.name));
  out->set_unit(std::string(smi::unit_symbol(info.unit)));
  out->set_type(std::string(smi::value_type_name(info.type)));
  out->set_scope(std::string(smi::scope_name(info.scope)));
  out->set_kind(std::string(smi::kind_name(info.kind)));
  out->set_instance_label(std::string(info.instance_label));
  out->set_help(std::string(info.help));
}

void fill_health(const smi::HealthReport& report, pb::DeviceHealth* out) {
  out->set_verdict(verdict_of(report.overall));
  for (const smi::HealthFinding& f : report.findings) {
    pb::HealthFinding* m = out->add_findings();
    m->set_check(f.check);
    m->set_verdict(verdict_of(f.verdict));
    m->set_reading(f.reading);
    m->set_threshold(f.threshold);
    m->set_message(f.message);
    m->set_remediation(f.remediation);
  }
}

void fill_partition(const smi::Partition& partition, pb::Partition* out) {
  out->set_index(partition.index);
  out->set_id(partition.id);
  out->set_bdf(partition.bdf);
  add_readings(partition.readings, {}, out->mutable_readings());
}

std::int64_t unix_ms(std::chrono::system_clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
}

void fill_attribution(const Attribution& a, const std::vector<std::uint32_t>& devices, pb::GetAttributionResponse* out) {
  const auto chosen = [&devices](std::uint32_t gpu) { return std::find(devices.begin(), devices.end(), gpu) != devices.end(); };
  const auto at = [](std::chrono::system_clock::time_point t) { return t == std::chrono::system_clock::time_point{} ? 0 : unix_ms(t); };
  out->set_kubelet(a.kubelet);
  out->set_kubelet_ok(a.kubelet_ok);
  out->set_kubelet_error(a.kubelet_error);
  out->set_kubelet_at_unix_ms(at(a.kubelet_at));
  out->set_looked_at_unix_ms(at(a.looked_at));
  out->set_processes(a.processes);
  out->set_processes_at_unix_ms(at(a.processes_at));
  out->set_directory_error(a.directory_error);
  for (const GpuHolder& h : a.holders) {
    if (!chosen(h.target.gpu)) continue;
    pb::GpuHolder* m = out->add_holders();
    m->set_device_index(h.target.gpu);
    m->set_whole_gpu(!h.target.partition);
    m->set_partition(h.target.partition.value_or(0));
    m->set_pod(h.pod);
    m->set_namespace_(h.namespace_name);
    m->set_container(h.container);
    m->set_resource(h.resource);
    m->set_device_id(h.device_id);
    m->set_claim(h.claim);
  }
  for (const UnmatchedDevice& u : a.unmatched) {  // they name no device, so every request gets them
    pb::UnmatchedDevice* m = out->add_unmatched();
    m->set_pod(u.pod);
    m->set_namespace_(u.namespace_name);
    m->set_container(u.container);
    m->set_resource(u.device.resource);
    m->set_device_id(u.device.id);
    m->set_claim(u.device.claim);
    m->set_reason(u.why);
  }
  for (const ContainerUse& c : a.containers) {
    if (!chosen(c.gpu)) continue;
    pb::ContainerUse* m = out->add_containers();
    m->set_device_index(c.gpu);
    m->set_pod_uid(c.ref.pod_uid);
    m->set_container_id(c.ref.container_id);
    m->set_runtime(c.ref.runtime);
    m->set_named(c.name.has_value());
    if (c.name) {
      m->set_pod(c.name->pod);
      m->set_namespace_(c.name->namespace_name);
      m->set_container(c.name->container);
    }
    for (const std::int32_t pid : c.pids) m->add_pids(pid);
    add_readings(c.readings, {}, m->mutable_readings());
  }
}

}  // namespace hipstack::smid
