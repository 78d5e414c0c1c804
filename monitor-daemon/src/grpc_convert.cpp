// The daemon's own values (sampler views, kept history, attribution) as hipstack.monitor.v1
// messages (grpc_convert.hpp).
#include "grpc_convert.hpp"

#include <algorithm>

namespace hipstack::smid {

using proto::add_reading;

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
  proto::to_proto(snap.device, out);
  out->set_up(Sampler::up(view));
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

void fill_attribution(const Attribution& a, const std::vector<std::uint32_t>& devices, pb::GetAttributionResponse* out) {
  const auto chosen = [&devices](std::uint32_t gpu) { return std::find(devices.begin(), devices.end(), gpu) != devices.end(); };
  const auto at = [](std::chrono::system_clock::time_point t) { return t == std::chrono::system_clock::time_point{} ? 0 : proto::unix_ms(t); };
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
    proto::add_readings(c.readings, {}, m->mutable_readings());
  }
}

}  // namespace hipstack::smid
