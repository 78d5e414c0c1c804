// hipstack.monitor.v1.Monitor: the gRPC API over the sampler's snapshots. Reads never touch a
// device: they answer from the latest samples, so a stuck GPU cannot delay them. Streams are
// bounded (max_streams at once, one message in flight each, stalled consumers dropped).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "access.hpp"
#include "hipstack/monitor/v1/monitor.grpc.pb.h"
#include "sampler.hpp"

namespace hipstack::smid {

namespace pb = ::hipstack::monitor::v1;

class MonitorService final : public pb::Monitor::Service {
 public:
  using SamplerSource = std::function<std::shared_ptr<const Sampler>()>;
  // Runs one change on a System opened for it, with its writes audited as done for `who`; main
  // provides it, and reloads the sampler afterwards so that reads show the new state.
  using Change = std::function<smi::ControlResult(smi::System&)>;
  using MutationRunner = std::function<smi::ControlResult(const std::string& who, const Change& change)>;
  MonitorService(SamplerSource source, const Config& config, const Access& access, MutationRunner mutations);
  ~MonitorService() override;

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
  class StreamSlot;
  void reap_stalled_streams();
  using MutationFn = std::function<smi::ControlResult(smi::System&, std::uint32_t)>;
  // Identifies the caller, requires the admin role, resolves the device and runs the change.
  grpc::Status mutate(grpc::ServerContext& context, const std::string& device, const std::string& what,
                      const MutationFn& change, pb::MutationResponse* out);

  SamplerSource source_;
  MutationRunner mutations_;
  const Access& access_;
  std::size_t max_streams_;
  std::chrono::milliseconds slow_consumer_limit_;
  std::mutex streams_mutex_;
  // Open streams and when their current write began (time_point::max() when none is in flight).
  std::map<grpc::ServerContext*, std::chrono::steady_clock::time_point> streams_;
  std::condition_variable stop_reaper_;
  bool stopping_ = false;
  std::mutex mutation_mutex_;  // one mutation at a time
  std::thread reaper_;
};

}  // namespace hipstack::smid
