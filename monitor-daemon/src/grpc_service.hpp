// hipstack.monitor.v1.Monitor: the gRPC API over the sampler's snapshots. Reads never touch a
// device: they answer from the latest samples, so a stuck GPU cannot delay them. Streams are
// bounded by the stream quota (stream_quota.hpp) and one message in flight each (snapshot_stream.hpp).
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "access.hpp"
#include "event_log.hpp"
#include "job_accounting.hpp"
#include "hipstack/monitor/v1/monitor.grpc.pb.h"
#include "sampler.hpp"
#include "snapshot_stream.hpp"
#include "stream_quota.hpp"
#include "work_queue.hpp"

namespace hipstack::smid {

namespace pb = ::hipstack::monitor::v1;

// Every method is a callback method (grpc_service.cpp says why).
class MonitorService final : public pb::Monitor::CallbackService {
 public:
  using SamplerSource = std::function<std::shared_ptr<const Sampler>()>;
  // Runs one change on a System opened for it, with its writes audited as done for `who`; main
  // provides it, and reloads the sampler afterwards so that reads show the new state.
  using Change = std::function<smi::ControlResult(smi::System&)>;
  using MutationRunner = std::function<smi::ControlResult(const std::string& who, const Change& change)>;
  // jobs: the daemon's job accounting; null when job_db is off.
  MonitorService(SamplerSource source, const Access& access, StreamQuota& streams, MutationRunner mutations,
                 JobAccounting* jobs = nullptr);

  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext*, const pb::ListDevicesRequest*, pb::ListDevicesResponse*) override;
  grpc::ServerUnaryReactor* GetDevice(grpc::CallbackServerContext*, const pb::GetDeviceRequest*, pb::DeviceDetail*) override;
  grpc::ServerUnaryReactor* ListMetrics(grpc::CallbackServerContext*, const pb::ListMetricsRequest*, pb::ListMetricsResponse*) override;
  grpc::ServerUnaryReactor* GetMetrics(grpc::CallbackServerContext*, const pb::GetMetricsRequest*, pb::MetricsSnapshot*) override;
  grpc::ServerUnaryReactor* GetHealth(grpc::CallbackServerContext*, const pb::GetHealthRequest*, pb::HealthSnapshot*) override;
  grpc::ServerUnaryReactor* GetPartitions(grpc::CallbackServerContext*, const pb::GetPartitionsRequest*,
                                          pb::GetPartitionsResponse*) override;
  grpc::ServerUnaryReactor* GetAttribution(grpc::CallbackServerContext*, const pb::GetAttributionRequest*,
                                           pb::GetAttributionResponse*) override;
  grpc::ServerUnaryReactor* GetHistory(grpc::CallbackServerContext*, const pb::GetHistoryRequest*, pb::GetHistoryResponse*) override;
  grpc::ServerWriteReactor<pb::MetricsSnapshot>* WatchMetrics(grpc::CallbackServerContext*, const pb::WatchMetricsRequest*) override;
  grpc::ServerWriteReactor<pb::HealthSnapshot>* WatchHealth(grpc::CallbackServerContext*, const pb::WatchHealthRequest*) override;
  grpc::ServerWriteReactor<pb::EventBatch>* WatchEvents(grpc::CallbackServerContext*, const pb::WatchEventsRequest*) override;
  grpc::ServerUnaryReactor* SetPartition(grpc::CallbackServerContext*, const pb::SetPartitionRequest*, pb::MutationResponse*) override;
  grpc::ServerUnaryReactor* SetPowerCap(grpc::CallbackServerContext*, const pb::SetPowerCapRequest*, pb::MutationResponse*) override;
  grpc::ServerUnaryReactor* ResetDevice(grpc::CallbackServerContext*, const pb::ResetDeviceRequest*, pb::MutationResponse*) override;
  grpc::ServerUnaryReactor* StartJob(grpc::CallbackServerContext*, const pb::StartJobRequest*, pb::Job*) override;
  grpc::ServerUnaryReactor* StopJob(grpc::CallbackServerContext*, const pb::StopJobRequest*, pb::Job*) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext*, const pb::GetJobRequest*, pb::Job*) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext*, const pb::ListJobsRequest*, pb::ListJobsResponse*) override;
  grpc::ServerUnaryReactor* ListErrors(grpc::CallbackServerContext*, const pb::ListErrorsRequest*, pb::ListErrorsResponse*) override;

  // The read-only unary methods, answered at once from the snapshots: the gRPC methods above and
  // the local query protocol (local_query.hpp) both call these.
  grpc::Status list_devices(const pb::ListDevicesRequest*, pb::ListDevicesResponse*);
  grpc::Status get_device(const pb::GetDeviceRequest*, pb::DeviceDetail*);
  grpc::Status list_metrics(const pb::ListMetricsRequest*, pb::ListMetricsResponse*);
  grpc::Status get_metrics(const pb::GetMetricsRequest*, pb::MetricsSnapshot*);
  grpc::Status get_health(const pb::GetHealthRequest*, pb::HealthSnapshot*);
  grpc::Status get_partitions(const pb::GetPartitionsRequest*, pb::GetPartitionsResponse*);
  grpc::Status get_attribution(const pb::GetAttributionRequest*, pb::GetAttributionResponse*);
  grpc::Status list_errors(const pb::ListErrorsRequest*, pb::ListErrorsResponse*);  // grpc_errors.cpp

 private:
  grpc::Status get_history(const pb::GetHistoryRequest*, pb::GetHistoryResponse*);
  class EventFollower;
  // Starts looking at the snapshots for the event log (grpc_events.cpp).
  void follow_events();
  // A slot of the stream quota for this caller (refused() says why when none is left).
  StreamQuota::Ticket admit_stream(grpc::CallbackServerContext* context);
  using MutationFn = std::function<smi::ControlResult(smi::System&, std::uint32_t)>;
  // Identifies the caller, requires the admin role, resolves the device and queues the change
  // for the mutation thread, which answers the call.
  grpc::ServerUnaryReactor* mutate(grpc::CallbackServerContext* context, const std::string& device, const std::string& what,
                                   MutationFn change, pb::MutationResponse* out);

  // The job calls (grpc_jobs.cpp): identifies the caller, requires the admin role when asked, and
  // runs `call` on the jobs queue, answering its status (a JobRequestError as its status code).
  grpc::ServerUnaryReactor* run_job_call(grpc::CallbackServerContext* context, bool needs_admin, const char* what,
                                         std::function<grpc::Status(const Caller&)> call);

  SamplerSource source_;
  MutationRunner mutations_;
  JobAccounting* jobs_;
  const Access& access_;
  StreamQuota& streams_;
  static constexpr std::size_t kMaxHistoryPageBytes = 256 * 1024;  // GetHistoryResponse's page (monitor.proto)
  EventLog events_;  // before the ticker, whose thread adds to it until the ticker is gone
  std::shared_ptr<EventFollower> follower_;
  StreamTicker ticker_;  // wakes WatchMetrics, WatchHealth and WatchEvents streams, and the event follower
  // GetHistory pages: two built at once, so that a flood leaves CPU to /metrics and the sampler
  // (each holds up to a page twice: built, serialised); up to 32 wait, 2 s at most.
  WorkQueue history_pages_{2, 32, std::chrono::seconds(2)};
  // Mutations: one at a time (they write to the device and may wait for it); a few wait.
  WorkQueue mutations_queue_{1, 4, std::chrono::seconds(60)};
  // Job calls wait on the job store's disk (its busy timeout is 2 s). Starts and stops (the admin's:
  // a prolog waits on them) have a queue of their own, so reads never hold them up; each queue one
  // at a time, 32 wait; a reader has at most kMaxReaderCallsPerPeer calls waiting or running.
  static constexpr std::size_t kMaxReaderCallsPerPeer = 4;
  WorkQueue jobs_queue_{1, 32, std::chrono::seconds(10)};
  WorkQueue job_admin_queue_{1, 32, std::chrono::seconds(10)};
  PeerSlots reader_calls_{kMaxReaderCallsPerPeer};
};

}  // namespace hipstack::smid
