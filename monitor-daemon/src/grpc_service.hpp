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

class MonitorService final : public pb::Monitor::Service {
 public:
  using SamplerSource = std::function<std::shared_ptr<const Sampler>()>;
  // Runs one change on a System opened for it, with its writes audited as done for `who`; main
  // provides it, and reloads the sampler afterwards so that reads show the new state.
  using Change = std::function<smi::ControlResult(smi::System&)>;
  using MutationRunner = std::function<smi::ControlResult(const std::string& who, const Change& change)>;
  MonitorService(SamplerSource source, const Access& access, StreamQuota& streams, MutationRunner mutations);

  grpc::Status ListDevices(grpc::ServerContext*, const pb::ListDevicesRequest*, pb::ListDevicesResponse*) override;
  grpc::Status GetDevice(grpc::ServerContext*, const pb::GetDeviceRequest*, pb::DeviceDetail*) override;
  grpc::Status ListMetrics(grpc::ServerContext*, const pb::ListMetricsRequest*, pb::ListMetricsResponse*) override;
  grpc::Status GetMetrics(grpc::ServerContext*, const pb::GetMetricsRequest*, pb::MetricsSnapshot*) override;
  grpc::Status GetHistory(grpc::ServerContext*, const pb::GetHistoryRequest*, pb::GetHistoryResponse*) override;
  grpc::Status WatchMetrics(grpc::ServerContext*, const pb::WatchMetricsRequest*, grpc::ServerWriter<pb::MetricsSnapshot>*) override;
  grpc::Status GetHealth(grpc::ServerContext*, const pb::GetHealthRequest*, pb::HealthSnapshot*) override;
  grpc::Status WatchHealth(grpc::ServerContext*, const pb::WatchHealthRequest*, grpc::ServerWriter<pb::HealthSnapshot>*) override;
  grpc::Status GetPartitions(grpc::ServerContext*, const pb::GetPartitionsRequest*, pb::GetPartitionsResponse*) override;
  grpc::Status SetPartition(grpc::ServerContext*, const pb::SetPartitionRequest*, pb::MutationResponse*) override;
  grpc::Status SetPowerCap(grpc::ServerContext*, const pb::SetPowerCapRequest*, pb::MutationResponse*) override;
  grpc::Status ResetDevice(grpc::ServerContext*, const pb::ResetDeviceRequest*, pb::MutationResponse*) override;

 private:
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
  static constexpr std::ptrdiff_t kConcurrentHistoryBuilds = 4;
  static constexpr std::size_t kMaxHistoryPageBytes = 256 * 1024;  // GetHistoryResponse's page (monitor.proto)
  std::counting_semaphore<kConcurrentHistoryBuilds> history_builds_{kConcurrentHistoryBuilds};
  std::mutex mutation_mutex_;  // one mutation at a time
};

}  // namespace hipstack::smid
