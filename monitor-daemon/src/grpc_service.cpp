#include "grpc_service.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "grpc_convert.hpp"
#include "grpc_request.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kIdle = Clock::time_point::max();

// Sleeps until `until`, waking early when the call is cancelled. False when cancelled.
bool wait_until(grpc::ServerContext& context, Clock::time_point until) {
  while (Clock::now() < until) {
    if (context.IsCancelled()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
  }
  return !context.IsCancelled();
}

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
    if (include_facts) add_readings(view.snapshot->facts, metrics, d->mutable_readings());
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
    fill_health(views[index].snapshot->health, d);
  }
}

}  // namespace

// One open stream: counted against max_streams, and watched for writes that stall.
class MonitorService::StreamSlot {
 public:
  StreamSlot(MonitorService& service, grpc::ServerContext* context) : service_(service), context_(context) {
    std::lock_guard lock(service_.streams_mutex_);
    if (service_.streams_.size() >= service_.max_streams_) return;
    service_.streams_.emplace(context_, kIdle);
    admitted_ = true;
  }
  ~StreamSlot() {
    if (!admitted_) return;
    std::lock_guard lock(service_.streams_mutex_);
    service_.streams_.erase(context_);
  }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

  [[nodiscard]] bool admitted() const noexcept { return admitted_; }

  // One message in flight at most: Write returns once the transport took it, so a slow consumer
  // holds back this loop (which then sends the newest sample) rather than a queue.
  template <typename Message>
  bool write(grpc::ServerWriter<Message>* writer, const Message& message) {
    mark(Clock::now());
    const bool ok = writer->Write(message);
    mark(kIdle);
    return ok;
  }

 private:
  void mark(Clock::time_point at) {
    std::lock_guard lock(service_.streams_mutex_);
    service_.streams_[context_] = at;
  }
  MonitorService& service_;
  grpc::ServerContext* context_;
  bool admitted_ = false;
};

MonitorService::MonitorService(SamplerSource source, const Config& config, const Access& access, MutationRunner mutations)
    : source_(std::move(source)),
      mutations_(std::move(mutations)),
      access_(access),
      max_streams_(config.max_streams),
      slow_consumer_limit_(config.slow_consumer_limit),
      reaper_([this] { reap_stalled_streams(); }) {}

MonitorService::~MonitorService() {
  {
    std::lock_guard lock(streams_mutex_);
    stopping_ = true;
  }
  stop_reaper_.notify_all();
  reaper_.join();
}

void MonitorService::reap_stalled_streams() {
  std::unique_lock lock(streams_mutex_);
  while (!stop_reaper_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; })) {
    const auto now = Clock::now();
    for (auto& [context, began] : streams_) {
      if (began != kIdle && now - began > slow_consumer_limit_) {
        std::fprintf(stderr, "hipstack-smid: dropping a stream to %s: a write has waited over %lld ms\n",
                     context->peer().c_str(), static_cast<long long>(slow_consumer_limit_.count()));
        context->TryCancel();
        began = kIdle;
      }
    }
  }
}

grpc::Status MonitorService::ListDevices(grpc::ServerContext*, const pb::ListDevicesRequest*, pb::ListDevicesResponse* out) {
  const auto sampler = source_();
  const auto now = Clock::now();
  for (const Sampler::View& view : sampler->views()) fill_device(view, now, out->add_devices());
  return grpc::Status::OK;
}

grpc::Status MonitorService::GetDevice(grpc::ServerContext*, const pb::GetDeviceRequest* request, pb::DeviceDetail* out) {
  const auto sampler = source_();
  std::uint32_t index = 0;
  if (auto status = resolve_device(*sampler, request->device(), index); !status.ok()) return status;
  const auto views = sampler->views();
  fill_device(views.at(index), Clock::now(), out->mutable_device());
  add_readings(views.at(index).snapshot->facts, {}, out->mutable_facts());
  return grpc::Status::OK;
}

grpc::Status MonitorService::ListMetrics(grpc::ServerContext*, const pb::ListMetricsRequest*, pb::ListMetricsResponse* out) {
  for (const smi::MetricInfo& info : smi::catalogue()) fill_metric_info(info, out->add_metrics());
  return grpc::Status::OK;
}

grpc::Status MonitorService::GetMetrics(grpc::ServerContext*, const pb::GetMetricsRequest* request, pb::MetricsSnapshot* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  std::vector<smi::MetricId> metrics;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  if (auto status = select_metrics(request->metrics(), metrics); !status.ok()) return status;
  fill_metrics(*sampler, devices, metrics, request->include_facts(), out);
  return grpc::Status::OK;
}

grpc::Status MonitorService::GetHistory(grpc::ServerContext*, const pb::GetHistoryRequest* request, pb::GetHistoryResponse* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  std::vector<smi::MetricId> metrics;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  if (auto status = select_metrics(request->metrics(), metrics); !status.ok()) return status;
  const auto views = sampler->views();
  const auto now = Clock::now();
  for (const std::uint32_t index : devices) {
    pb::DeviceHistory* d = out->add_devices();
    fill_device(views.at(index), now, d->mutable_device());
    auto kept = sampler->history(index);
    const std::size_t skip = request->max_samples() != 0 && kept.size() > request->max_samples() ? kept.size() - request->max_samples() : 0;
    for (std::size_t i = skip; i < kept.size(); ++i) {
      pb::DeviceMetrics* sample = d->add_samples();
      *sample->mutable_device() = d->device();
      add_readings(kept[i]->live, metrics, sample->mutable_readings());
      sample->set_sampled_at_unix_ms(unix_ms(kept[i]->at));
    }
  }
  return grpc::Status::OK;
}

grpc::Status MonitorService::WatchMetrics(grpc::ServerContext* context, const pb::WatchMetricsRequest* request,
                                          grpc::ServerWriter<pb::MetricsSnapshot>* writer) {
  const auto first = source_();
  std::vector<std::uint32_t> devices;
  std::vector<smi::MetricId> metrics;
  if (auto status = select_devices(*first, request->devices(), devices); !status.ok()) return status;
  if (auto status = select_metrics(request->metrics(), metrics); !status.ok()) return status;
  std::chrono::milliseconds interval = first->config().fast_interval;
  if (auto status = watch_interval(request->interval_ms(), interval); !status.ok()) return status;
  StreamSlot slot(*this, context);
  if (!slot.admitted()) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("too many streams open (max_streams = {})", max_streams_)};
  }
  auto next = Clock::now();
  for (std::uint64_t sequence = 1; wait_until(*context, next); ++sequence) {
    pb::MetricsSnapshot message;
    message.set_sequence(sequence);
    fill_metrics(*source_(), devices, metrics, false, &message);
    if (!slot.write(writer, message)) break;
    if (request->max_messages() != 0 && sequence >= request->max_messages()) return grpc::Status::OK;
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // fell behind: the next message carries the newest sample
  }
  return {grpc::StatusCode::CANCELLED, "stream ended: cancelled by the client, or dropped as a stalled consumer"};
}

grpc::Status MonitorService::GetHealth(grpc::ServerContext*, const pb::GetHealthRequest* request, pb::HealthSnapshot* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  fill_health_snapshot(*sampler, devices, out);
  return grpc::Status::OK;
}

grpc::Status MonitorService::WatchHealth(grpc::ServerContext* context, const pb::WatchHealthRequest* request,
                                         grpc::ServerWriter<pb::HealthSnapshot>* writer) {
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*source_(), request->devices(), devices); !status.ok()) return status;
  StreamSlot slot(*this, context);
  if (!slot.admitted()) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("too many streams open (max_streams = {})", max_streams_)};
  }
  std::string last_sent;
  auto next = Clock::now();
  while (wait_until(*context, next)) {
    pb::HealthSnapshot message;
    fill_health_snapshot(*source_(), devices, &message);
    // Changes are what matter here: the device fields that move every sample (age) are left out
    // of the comparison.
    pb::HealthSnapshot comparable = message;
    for (pb::DeviceHealth& d : *comparable.mutable_devices()) d.mutable_device()->clear_sample_age_seconds();
    std::string key = comparable.SerializeAsString();
    if (key != last_sent) {
      if (!slot.write(writer, message)) break;
      last_sent = std::move(key);
    }
    next = Clock::now() + std::chrono::milliseconds(250);
  }
  return {grpc::StatusCode::CANCELLED, "stream ended: cancelled by the client, or dropped as a stalled consumer"};
}

grpc::Status MonitorService::GetPartitions(grpc::ServerContext*, const pb::GetPartitionsRequest* request,
                                           pb::GetPartitionsResponse* out) {
  const auto sampler = source_();
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  const auto views = sampler->views();
  const auto now = Clock::now();
  for (const std::uint32_t index : devices) {
    pb::DevicePartitions* d = out->add_devices();
    fill_device(views.at(index), now, d->mutable_device());
    for (const smi::Partition& p : views.at(index).snapshot->partitions) fill_partition(p, d->add_partitions());
  }
  return grpc::Status::OK;
}

}  // namespace hipstack::smid
