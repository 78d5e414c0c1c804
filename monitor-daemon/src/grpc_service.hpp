// hipstack.monitor.v1.Monitor: the gRPC API over the sampler's snapshots. Reads never touch a
// device: they answer from the latest samples, so a stuck GPU cannot delay them. Streams are
// bounded by the stream quota (stream_quota.hpp) and one message in flight each.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <semaphore>

#include "access.hpp"
#include "hipstack/monitor/v1/monitor.grpc.pb.h"
#include "sampler.hpp"
#include "stream_quota.hpp"

namespace hipstack::smid {

namespace pb = ::hipstack::monitor::v1;

// The reads of the current state as callback methods (grpc_service.cpp says why); the streams,
// GetHistory (which may wait for a build slot) and the mutations (which write and wait) stay sync.
using MonitorServiceBase = pb::Monitor::WithCallbackMethod_ListDevices<pb::Monitor::WithCallbackMethod_GetDevice<
    pb::Monitor::WithCallbackMethod_ListMetrics<pb::Monitor::WithCallbackMethod_GetMetrics<
        pb::Monitor::WithCallbackMethod_GetHealth<pb::Monitor::WithCallbackMethod_GetPartitions<pb::Monitor::Service>>>>>>;

class MonitorService final : public MonitorServiceBase {
 public:
  using SamplerSource = std::function<std::shared_ptr<const Sampler>()>;
  // Runs one change on a System opened for it, with its writes audited as done for `who`; main
  // provides it, and reloads the sampler afterwards so that reads show the new state.
  using Change = std::function<smi::ControlResult(smi::System&)>;
  using MutationRunner = std::function<smi::ControlResult(const std::string& who, const Change& change)>;
  MonitorService(SamplerSource source, const Access& access, StreamQuota& streams, MutationRunner mutations);

  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext*, const pb::ListDevicesRequest*, pb::ListDevicesResponse*) override;
  grpc::ServerUnaryReactor* GetDevice(grpc::CallbackServerContext*, const pb::GetDeviceRequest*, pb::DeviceDetail*) override;
  grpc::ServerUnaryReactor* ListMetrics(grpc::CallbackServerContext*, const pb::ListMetricsRequest*, pb::ListMetricsResponse*) override;
  grpc::ServerUnaryReactor* GetMetrics(grpc::CallbackServerContext*, const pb::GetMetricsRequest*, pb::MetricsSnapshot*) override;
  grpc::ServerUnaryReactor* GetHealth(grpc::CallbackServerContext*, const pb::GetHealthRequest*, pb::HealthSnapshot*) override;
  grpc::ServerUnaryReactor* GetPartitions(grpc::CallbackServerContext*, const pb::GetPartitionsRequest*,
                                          pb::GetPartitionsResponse*) override;
  grpc::Status GetHistory(grpc::ServerContext*, const pb::GetHistoryRequest*, pb::GetHistoryResponse*) override;
  grpc::Status WatchMetrics(grpc::ServerContext*, const pb::WatchMetricsRequest*, grpc::ServerWriter<pb::MetricsSnapshot>*) override;
  grpc::Status WatchHealth(grpc::ServerContext*, const pb::WatchHealthRequest*, grpc::ServerWriter<pb::HealthSnapshot>*) override;
  grpc::Status SetPartition(grpc::ServerContext*, const pb::SetPartitionRequest*, pb::MutationResponse*) override;
  grpc::Status SetPowerCap(grpc::ServerContext*, const pb::SetPowerCapRequest*, pb::MutationResponse*) override;
  grpc::Status ResetDevice(grpc::ServerContext*, const pb::ResetDeviceRequest*, pb::MutationResponse*) override;

 private:
  grpc::Status list_devices(const pb::ListDevicesRequest*, pb::ListDevicesResponse*);
  grpc::Status get_device(const pb::GetDeviceRequest*, pb::DeviceDetail*);
  grpc::Status list_metrics(const pb::ListMetricsRequest*, pb::ListMetricsResponse*);
  grpc::Status get_metrics(const pb::GetMetricsRequest*, pb::MetricsSnapshot*);
  grpc::Status get_health(const pb::GetHealthRequest*, pb::HealthSnapshot*);
  grpc::Status get_partitions(const pb::GetPartitionsRequest*, pb::GetPartitionsResponse*);
  // A slot of the stream quota for this caller (refused() says why when none is left).
  StreamQuota::Ticket admit_stream(grpc::ServerContext* context);
  using MutationFn = std::function<smi::ControlResult(smi::System&, std::uint32_t)>;
  // Identifies the caller, requires the admin role, resolves the device and runs the change.
  grpc::Status mutate(grpc::ServerContext& context, const std::string& device, const std::string& what,
                      const MutationFn& change, pb::MutationResponse* out);

  SamplerSource source_;
  MutationRunner mutations_;
  const Access& access_;
  StreamQuota& streams_;
  // Pages built at once: few, so that a flood of GetHistory leaves CPU to /metrics and the sampler.
  static constexpr std::ptrdiff_t kConcurrentHistoryBuilds = 2;
  static constexpr std::size_t kMaxHistoryPageBytes = 256 * 1024;  // GetHistoryResponse's page (monitor.proto)
  std::counting_semaphore<kConcurrentHistoryBuilds> history_builds_{kConcurrentHistoryBuilds};
  std::mutex mutation_mutex_;  // one mutation at a time
};

}  // namespace hipstack::smid
