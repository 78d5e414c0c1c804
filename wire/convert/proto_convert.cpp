// The library's values as hipstack.monitor.v1 messages and back, for both sides of the wire
// (proto_convert.hpp).
#include "proto_convert.hpp"

#include <hipstack/gpu_errors.hpp>

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

namespace hipstack::proto {
namespace {

// The enum pairs, each written once; both directions look them up.
constexpr std::array<std::pair<smi::Status, pb::ReadingStatus>, 4> kStatuses{{
    {smi::Status::ok, pb::READING_STATUS_OK},
    {smi::Status::not_supported, pb::READING_STATUS_NOT_SUPPORTED},
    {smi::Status::unavailable, pb::READING_STATUS_UNAVAILABLE},
    {smi::Status::error, pb::READING_STATUS_ERROR},
}};
constexpr std::array<std::pair<smi::Verdict, pb::Verdict>, 4> kVerdicts{{
    {smi::Verdict::pass, pb::VERDICT_PASS},
    {smi::Verdict::warn, pb::VERDICT_WARN},
    {smi::Verdict::fail, pb::VERDICT_FAIL},
    {smi::Verdict::unknown, pb::VERDICT_UNKNOWN},
}};

template <typename Pairs, typename Library>
auto wire_of(const Pairs& pairs, Library value, decltype(pairs[0].second) none) {
  const auto it = std::find_if(pairs.begin(), pairs.end(), [value](const auto& p) { return p.first == value; });
  return it == pairs.end() ? none : it->second;
}

template <typename Pairs, typename Wire>
auto library_of(const Pairs& pairs, Wire value, decltype(pairs[0].first) otherwise) {
  const auto it = std::find_if(pairs.begin(), pairs.end(), [value](const auto& p) { return p.second == value; });
  return it == pairs.end() ? otherwise : it->first;
}

}  // namespace

pb::ReadingStatus to_proto(smi::Status status) { return wire_of(kStatuses, status, pb::READING_STATUS_UNSPECIFIED); }
smi::Status from_proto(pb::ReadingStatus status) { return library_of(kStatuses, status, smi::Status::not_supported); }
pb::Verdict to_proto(smi::Verdict verdict) { return wire_of(kVerdicts, verdict, pb::VERDICT_UNSPECIFIED); }
smi::Verdict from_proto(pb::Verdict verdict) { return library_of(kVerdicts, verdict, smi::Verdict::unknown); }

pb::Reading* add_reading(smi::MetricId id, const std::vector<smi::MetricId>& wanted, const std::string& instance,
                         smi::Status status, int error_code, Readings* out) {
  if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), id) == wanted.end()) return nullptr;
  const smi::MetricInfo* info = smi::find_metric(id);
  if (info == nullptr) return nullptr;
  pb::Reading* m = out->Add();
  m->set_metric_id(static_cast<std::uint32_t>(id));
  m->set_metric(std::string(info->name));
  m->set_instance(instance);
  m->set_status(to_proto(status));
  m->set_unit(std::string(smi::unit_symbol(info->unit)));
  m->set_error_code(error_code);
  return m;
}

void add_readings(const std::vector<smi::Reading>& readings, const std::vector<smi::MetricId>& wanted, Readings* out) {
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

std::string peer_text(const std::string& text) { return smi::holds_raw_bytes(text) ? smi::printable_text(text) : text; }

std::optional<smi::Reading> from_proto(const pb::Reading& r) {
  const smi::MetricInfo* info = smi::find_metric(r.metric());
  if (info == nullptr) return std::nullopt;
  smi::Reading reading;
  reading.id = info->id;
  reading.instance = peer_text(r.instance());
  reading.status = from_proto(r.status());
  reading.error_code = r.error_code();
  reading.detail = peer_text(r.detail());
  switch (r.value_case()) {
    case pb::Reading::kInteger: reading.value = static_cast<std::int64_t>(r.integer()); break;
    case pb::Reading::kReal: reading.value = r.real(); break;
    case pb::Reading::kText: reading.value = peer_text(r.text()); break;
    case pb::Reading::VALUE_NOT_SET: break;
  }
  return reading;
}

std::vector<smi::Reading> from_proto(const Readings& readings) {
  std::vector<smi::Reading> out;
  out.reserve(static_cast<std::size_t>(readings.size()));
  for (const pb::Reading& r : readings) {
    if (auto reading = from_proto(r)) out.push_back(std::move(*reading));
  }
  return out;
}

void to_proto(const smi::DeviceSummary& device, pb::Device* out) {
  out->set_index(device.index);
  out->set_vendor(device.vendor);
  out->set_backend(device.backend);
  out->set_name(device.name);
  out->set_uuid(device.uuid);
  out->set_bdf(device.bdf);
  out->set_partition_count(device.partition_count);
  out->set_fault(device.fault);
}

smi::DeviceSummary from_proto(const pb::Device& device) {
  smi::DeviceSummary s;
  s.index = device.index();
  s.vendor = peer_text(device.vendor());
  s.backend = peer_text(device.backend());
  s.bdf = peer_text(device.bdf());
  s.uuid = peer_text(device.uuid());
  s.name = peer_text(device.name());
  s.fault = peer_text(device.fault());
  s.partition_count = device.partition_count();
  return s;
}

void to_proto(const smi::HealthReport& report, pb::DeviceHealth* out) {
  out->set_verdict(to_proto(report.overall));
  for (const smi::HealthFinding& f : report.findings) {
    pb::HealthFinding* m = out->add_findings();
    m->set_check(f.check);
    m->set_verdict(to_proto(f.verdict));
    m->set_reading(f.reading);
    m->set_threshold(f.threshold);
    m->set_message(f.message);
    m->set_remediation(f.remediation);
  }
}

smi::HealthReport from_proto(const pb::DeviceHealth& health, std::uint32_t device) {
  smi::HealthReport report;
  report.device = device;
  report.overall = from_proto(health.verdict());
  for (const pb::HealthFinding& f : health.findings()) {
    report.findings.push_back({peer_text(f.check()), from_proto(f.verdict()), peer_text(f.reading()), peer_text(f.threshold()),
                               peer_text(f.message()), peer_text(f.remediation())});
  }
  return report;
}

void to_proto(const smi::Partition& partition, pb::Partition* out) {
  out->set_index(partition.index);
  out->set_id(partition.id);
  out->set_bdf(partition.bdf);
  add_readings(partition.readings, {}, out->mutable_readings());
}

smi::Partition from_proto(const pb::Partition& partition) {
  return {partition.index(), peer_text(partition.id()), peer_text(partition.bdf()), from_proto(partition.readings())};
}

void to_proto(const smi::Event& event, std::chrono::system_clock::time_point found, std::uint64_t sequence, pb::Event* out) {
  out->set_sequence(sequence);
  out->set_time_unix_ms(unix_ms(found));
  out->set_kind(event.kind);
  out->set_device_index(event.device.index);
  out->set_bdf(event.device.bdf);
  out->set_uuid(event.device.uuid);
  out->set_metric(event.metric);
  out->set_before(event.before);
  out->set_after(event.after);
  out->set_message(event.message);
  if (const auto action = smi::event_action(event)) out->set_action(std::string(smi::error_action_name(*action)));
}

smi::Event from_proto(const pb::Event& e) {
  smi::Event event{peer_text(e.kind()), {}, peer_text(e.metric()), peer_text(e.before()), peer_text(e.after()), peer_text(e.message())};
  event.device.index = e.device_index();
  event.device.bdf = peer_text(e.bdf());
  event.device.uuid = peer_text(e.uuid());
  return event;
}

std::chrono::system_clock::time_point found_at(const pb::Event& event) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(event.time_unix_ms()));
}

std::int64_t unix_ms(std::chrono::system_clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
}

}  // namespace hipstack::proto
