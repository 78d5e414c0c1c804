// hipstack.monitor.v1.Monitor's reads: devices, metrics, history, health, partitions, attribution
// (grpc_service.hpp; streams, events, jobs and mutations have rooms of their own).
#include "grpc_service.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "grpc_convert.hpp"
#include "grpc_request.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

void fill_metrics(const Sampler& sampler, const std::vector<std::uint32_t>& devices, const std::vector<smi::MetricId>& metrics,
                  bool include_facts, pb::MetricsSnapshot* out) {
  const auto views = sampler.views();
  const auto now = Clock::now();
  for (const std::uint32_t index : devices) {
    if (index >= views.size()) continue;  // gone after a reload
    const Sampler::View& view = views[index];
    pb::DeviceMetrics* d = out->add_devices();
    fill_device(view, now, d->mutable_device());
    // Identity and static facts first, then live readings: the order hipstack-smi shows locally.
    if (include_facts) add_readings(view.snapshot->facts(), metrics, d->mutable_readings());
    // A stale device's old readings are not presented as current (as on /metrics).
    if (!view.stale && view.snapshot->have_live) {
      add_readings(view.snapshot->live, metrics, d->mutable_readings());
      d->set_sampled_at_unix_ms(unix_ms(view.snapshot->live_wall));
    }
  }
}

void fill_health_snapshot(const Sampler& sampler, const std::vector<std::uint32_t>& devices, pb::HealthSnapshot* out) {
  const auto views = sampler.views();
  const auto now = Clock::now();
  for (const std::uint32_t index : devices) {
    if (index >= views.size()) continue;
    pb::DeviceHealth* d = out->add_devices();
    fill_device(views[index], now, d->mutable_device());
    proto::to_proto(views[index].snapshot->health(), d);
  }
}

}  // namespace

MonitorService::MonitorService(SamplerSource source, const Access& access, StreamQuota& streams, MutationRunner mutations,
                               JobAccounting* jobs)
    : source_(std::move(source)), mutations_(std::move(mutations)), jobs_(jobs), access_(access), streams_(streams) {
  follow_events();
}

StreamQuota::Ticket MonitorService::admit_stream(grpc::CallbackServerContext* context) {
  const Caller caller = access_.identify(*context);
  return streams_.admit({caller.peer, caller.admin, false, [context] { context->TryCancel(); }, context->peer()});
}

grpc::Status MonitorService::list_devices(const pb::ListDevicesRequest*, pb::ListDevicesResponse* out) {
  const auto sampler = source_();
  const auto now = Clock::now();
  for (const Sampler::View& view : sampler->views()) fill_device(view, now, out->add_devices());
  return grpc::Status::OK;
}

grpc::Status MonitorService::get_device(const pb::GetDeviceRequest* request, pb::DeviceDetail* out) {
  const auto sampler = source_();
  std::uint32_t index = 0;
  if (auto status = resolve_device(*sampler, request->device(), index); !status.ok()) return status;
  const auto views = sampler->views();
  fill_device(views.at(index), Clock::now(), out->mutable_device());
  add_readings(views.at(index).snapshot->facts(), {}, out->mutable_facts());
  return grpc::Status::OK;
}

grpc::Status MonitorService::list_metrics(const pb::ListMetricsRequest*, pb::ListMetricsResponse* out) {
  for (const smi::MetricInfo& info : smi::catalogue()) fill_metric_info(info, out->add_metrics());
  return grpc::Status::OK;
}

grpc::Status MonitorService::get_metrics(const pb::GetMetricsRequest* request, pb::MetricsSnapshot* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  std::vector<smi::MetricId> metrics;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  if (auto status = select_metrics(request->metrics(), metrics); !status.ok()) return status;
  fill_metrics(*sampler, devices, metrics, request->include_facts(), out);
  return grpc::Status::OK;
}

grpc::Status MonitorService::get_history(const pb::GetHistoryRequest* request, pb::GetHistoryResponse* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  std::vector<smi::MetricId> metrics;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  if (auto status = select_metrics(request->metrics(), metrics); !status.ok()) return status;
  HistoryCursor cursor;
  if (auto status = parse_history_cursor(request->page_token(), devices.size(), cursor); !status.ok()) return status;
  const auto views = sampler->views();
  const auto now = Clock::now();
  std::size_t bytes = 0;
  for (std::size_t position = cursor.device; position < devices.size(); ++position) {
    const std::uint32_t index = devices[position];
    pb::DeviceHistory* d = nullptr;
    const auto kept = sampler->history(index);
    const std::size_t skip = request->max_samples() != 0 && kept.size() > request->max_samples() ? kept.size() - request->max_samples() : 0;
    for (std::size_t i = skip; i < kept.size(); ++i) {
      const std::uint64_t at = unix_ms(kept[i]->at);
      if (position == cursor.device && at <= cursor.after_unix_ms) continue;  // sent on an earlier page
      pb::DeviceMetrics sample;
      add_history_values(*kept[i], metrics, sample.mutable_readings());
      sample.set_sampled_at_unix_ms(at);
      const std::size_t size = sample.ByteSizeLong();
      if (bytes > 0 && bytes + size > kMaxHistoryPageBytes) {
        // The next page resumes after the last sample sent of this device (or where this page began).
        const std::uint64_t after = d != nullptr ? unix_ms(kept[i - 1]->at) : position == cursor.device ? cursor.after_unix_ms : 0;
        out->set_next_page_token(format_history_cursor({position, after}));
        return grpc::Status::OK;
      }
      if (d == nullptr) {
        d = out->add_devices();
        fill_device(views.at(index), now, d->mutable_device());
      }
      *sample.mutable_device() = d->device();
      bytes += size + d->device().ByteSizeLong();
      *d->add_samples() = std::move(sample);
    }
  }
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<pb::MetricsSnapshot>* MonitorService::WatchMetrics(grpc::CallbackServerContext* context,
                                                                            const pb::WatchMetricsRequest* request) {
  using Refused = RefusedStream<pb::MetricsSnapshot>;
  const auto first = source_();
  std::vector<std::uint32_t> devices;
  std::vector<smi::MetricId> metrics;
  if (auto status = select_devices(*first, request->devices(), devices); !status.ok()) return new Refused(status);
  if (auto status = select_metrics(request->metrics(), metrics); !status.ok()) return new Refused(status);
  std::chrono::milliseconds interval = first->config().fast_interval;
  if (auto status = watch_interval(request->interval_ms(), interval); !status.ok()) return new Refused(status);
  StreamQuota::Ticket slot = admit_stream(context);
  if (!slot.admitted()) return new Refused({grpc::StatusCode::RESOURCE_EXHAUSTED, slot.refused()});
  auto build = [this, devices = std::move(devices), metrics = std::move(metrics), sequence = std::uint64_t{0}](pb::MetricsSnapshot& message) mutable {
    message.set_sequence(++sequence);
    fill_metrics(*source_(), devices, metrics, false, &message);
    return true;
  };
  return SnapshotStream<pb::MetricsSnapshot>::start(ticker_, std::move(slot), interval, request->max_messages(), std::move(build));
}

grpc::Status MonitorService::get_health(const pb::GetHealthRequest* request, pb::HealthSnapshot* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  fill_health_snapshot(*sampler, devices, out);
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<pb::HealthSnapshot>* MonitorService::WatchHealth(grpc::CallbackServerContext* context,
                                                                          const pb::WatchHealthRequest* request) {
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*source_(), request->devices(), devices); !status.ok()) {
    return new RefusedStream<pb::HealthSnapshot>(status);
  }
  StreamQuota::Ticket slot = admit_stream(context);
  if (!slot.admitted()) return new RefusedStream<pb::HealthSnapshot>({grpc::StatusCode::RESOURCE_EXHAUSTED, slot.refused()});
  // Looks every 250 ms; sends the first state and then changes only. The device fields that move
  // every sample (age) are left out of the comparison.
  auto build = [this, devices = std::move(devices), last_sent = std::string()](pb::HealthSnapshot& message) mutable {
    fill_health_snapshot(*source_(), devices, &message);
    pb::HealthSnapshot comparable = message;
    for (pb::DeviceHealth& d : *comparable.mutable_devices()) d.mutable_device()->clear_sample_age_seconds();
    std::string key = comparable.SerializeAsString();
    if (key == last_sent) return false;
    last_sent = std::move(key);
    return true;
  };
  return SnapshotStream<pb::HealthSnapshot>::start(ticker_, std::move(slot), std::chrono::milliseconds(250), 0, std::move(build));
}

grpc::Status MonitorService::get_partitions(const pb::GetPartitionsRequest* request,
                                           pb::GetPartitionsResponse* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  const auto views = sampler->views();
  const auto now = Clock::now();
  for (const std::uint32_t index : devices) {
    pb::DevicePartitions* d = out->add_devices();
    fill_device(views.at(index), now, d->mutable_device());
    for (const smi::Partition& p : views.at(index).snapshot->partitions()) proto::to_proto(p, d->add_partitions());
  }
  return grpc::Status::OK;
}

grpc::Status MonitorService::get_attribution(const pb::GetAttributionRequest* request, pb::GetAttributionResponse* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  const auto attribution = sampler->attribution();
  if (!attribution) return {grpc::StatusCode::FAILED_PRECONDITION, "attribution is off in the daemon's configuration (attribution = off)"};
  fill_attribution(*attribution, devices, out);
  return grpc::Status::OK;
}

// Every method is a callback method: none holds a thread of a sync server's pool, so a flood of
// calls opened and reset at once (HTTP/2 rapid reset, CVE-2023-44487) or of idle streams has no
// pool to exhaust and no queue of calls to grow. The reads of the current state are quick (they
// read snapshots) and run on gRPC's own threads; GetHistory pages and mutations, which take long
// or wait, run on the service's work queues; streams wait on the ticker (snapshot_stream.hpp).
namespace {
// Answers `answer()`, or CANCELLED without building the answer when the client has already reset
// the call (a flood of reset calls then costs gRPC's work only).
template <typename Answer>
grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* context, Answer&& answer) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(context->IsCancelled() ? grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client") : answer());
  return reactor;
}
}  // namespace

grpc::ServerUnaryReactor* MonitorService::GetHistory(grpc::CallbackServerContext* context, const pb::GetHistoryRequest* request,
                                                     pb::GetHistoryResponse* out) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const grpc::Status busy{grpc::StatusCode::RESOURCE_EXHAUSTED, "too many GetHistory calls at once: retry"};
  const bool queued = history_pages_.post([this, context, request, out, reactor, busy](bool run) {
    if (!run) return reactor->Finish(busy);
    if (context->IsCancelled()) return reactor->Finish({grpc::StatusCode::CANCELLED, "cancelled by the client"});
    reactor->Finish(get_history(request, out));
  });
  if (!queued) reactor->Finish(busy);
  return reactor;
}

grpc::ServerUnaryReactor* MonitorService::ListDevices(grpc::CallbackServerContext* context, const pb::ListDevicesRequest* request,
                                                      pb::ListDevicesResponse* out) {
  return finish(context, [&] { return list_devices(request, out); });
}
grpc::ServerUnaryReactor* MonitorService::GetDevice(grpc::CallbackServerContext* context, const pb::GetDeviceRequest* request,
                                                    pb::DeviceDetail* out) {
  return finish(context, [&] { return get_device(request, out); });
}
grpc::ServerUnaryReactor* MonitorService::ListMetrics(grpc::CallbackServerContext* context, const pb::ListMetricsRequest* request,
                                                      pb::ListMetricsResponse* out) {
  return finish(context, [&] { return list_metrics(request, out); });
}
grpc::ServerUnaryReactor* MonitorService::GetMetrics(grpc::CallbackServerContext* context, const pb::GetMetricsRequest* request,
                                                     pb::MetricsSnapshot* out) {
  return finish(context, [&] { return get_metrics(request, out); });
}
grpc::ServerUnaryReactor* MonitorService::GetHealth(grpc::CallbackServerContext* context, const pb::GetHealthRequest* request,
                                                    pb::HealthSnapshot* out) {
  return finish(context, [&] { return get_health(request, out); });
}
grpc::ServerUnaryReactor* MonitorService::GetAttribution(grpc::CallbackServerContext* context,
                                                         const pb::GetAttributionRequest* request, pb::GetAttributionResponse* out) {
  return finish(context, [&] { return get_attribution(request, out); });
}

grpc::ServerUnaryReactor* MonitorService::GetPartitions(grpc::CallbackServerContext* context,
                                                        const pb::GetPartitionsRequest* request, pb::GetPartitionsResponse* out) {
  return finish(context, [&] { return get_partitions(request, out); });
}

}  // namespace hipstack::smid
