// StartJob, StopJob, GetJob and ListJobs: job accounting (job_accounting.hpp) over gRPC. Starting
// and stopping need the admin role, as mutations do. Every call may wait on the job store's disk,
// so they run on the service's jobs queue, never on gRPC's callback threads.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string_view>

#include "grpc_request.hpp"
#include "grpc_service.hpp"

namespace hipstack::smid {
namespace {

constexpr std::uint32_t kDefaultListLimit = 100;
constexpr std::uint32_t kMaxListLimit = 1000;
// A ListJobs reply's jobs: at most 1 MiB (1000 jobs of 8 GPUs take about 3.7 MB unbounded), well
// under the 4 MiB a gRPC client takes by default.
constexpr std::size_t kMaxListBytes = 1024 * 1024;

grpc::Status status_of(const JobRequestError& e) {
  switch (e.kind()) {
    case JobRequestError::Kind::invalid: return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
    case JobRequestError::Kind::not_found: return {grpc::StatusCode::NOT_FOUND, e.what()};
    case JobRequestError::Kind::exists: return {grpc::StatusCode::ALREADY_EXISTS, e.what()};
    case JobRequestError::Kind::unavailable: return {grpc::StatusCode::UNAVAILABLE, e.what()};
    case JobRequestError::Kind::exhausted: return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
  }
  return {grpc::StatusCode::INTERNAL, e.what()};
}

std::int64_t to_unix_ms(std::int64_t ns) { return ns / 1000000; }

// ListJobs' figures: enough for a table of jobs, small enough for 1000 jobs of 8 GPUs in a reply.
constexpr std::string_view kHeadlineFigures[] = {"wall_time", "energy", "power_mean", "busy_mean"};

// headline_only: ListJobs' GPUs carry kHeadlineFigures without their source or why.
void fill_job(const JobRecord& job, pb::Job* out, bool headline_only = false) {
  out->set_id(job.id);
  out->set_user(job.user);
  out->set_started_unix_ms(to_unix_ms(job.started_ns));
  out->set_stopped_unix_ms(to_unix_ms(job.stopped_ns));
  out->set_running(job.running());
  out->set_started_by(job.started_by);
  out->set_stopped_by(job.stopped_by);
  const std::int64_t end_ns =
      job.running() ? std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count()
                    : job.stopped_ns;
  const double wall_s = static_cast<double>(end_ns - job.started_ns) / 1e9;
  for (const JobGpuUsage& usage : job.gpus) {
    pb::JobGpu* gpu = out->add_gpus();
    gpu->set_index(usage.index);
    gpu->set_uuid(usage.uuid);
    gpu->set_bdf(usage.bdf);
    gpu->set_name(usage.name);
    gpu->set_health_start(usage.health_start);
    gpu->set_health_start_summary(usage.health_start_summary);
    gpu->set_health_end(usage.health_end);
    gpu->set_health_end_summary(usage.health_end_summary);
    gpu->set_baseline_sample_unix_ms(to_unix_ms(usage.baseline_ns));
    gpu->set_last_sample_unix_ms(usage.samples > 0 ? to_unix_ms(usage.last_sample_ns) : 0);
    for (const JobFigure& f : usage.figures(wall_s)) {
      const bool headline = f.instance.empty() && std::find(std::begin(kHeadlineFigures), std::end(kHeadlineFigures), f.name) !=
                                                      std::end(kHeadlineFigures);
      if (headline_only && !headline) continue;
      pb::JobFigure* figure = gpu->add_figures();
      figure->set_name(f.name);
      figure->set_instance(f.instance);
      figure->set_unit(f.unit);
      figure->set_known(f.value.has_value());
      figure->set_value(f.value.value_or(0));
      if (headline_only) continue;
      figure->set_source(f.source);
      figure->set_why(f.why);
    }
  }
  for (const std::string& problem : job.problems) out->add_problems(problem);
}

}  // namespace

grpc::ServerUnaryReactor* MonitorService::run_job_call(grpc::CallbackServerContext* context, bool needs_admin, const char* what,
                                                       std::function<grpc::Status(const Caller&)> call) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (jobs_ == nullptr) {
    reactor->Finish({grpc::StatusCode::UNAVAILABLE, "job accounting is off in the daemon's configuration (job_db = off)"});
    return reactor;
  }
  Caller caller = access_.identify(*context);
  if (needs_admin && !caller.admin) {
    std::fprintf(stderr, "hipstack-smid: refused %s for %s: %s\n", what, caller.who.c_str(), caller.refusal.c_str());
    reactor->Finish({grpc::StatusCode::PERMISSION_DENIED, fmt::format("{}: {}", what, caller.denial)});
    return reactor;
  }
  // Readers: at most kMaxReaderCallsPerPeer waiting or running per caller, so one client's flood
  // cannot fill the readers' queue for everyone; starts and stops have a queue of their own.
  PeerSlots::Slot slot;
  if (!needs_admin) {
    slot = reader_calls_.take(caller.peer);
    if (!slot) {
      reactor->Finish({grpc::StatusCode::RESOURCE_EXHAUSTED,
                       fmt::format("{}: this client has {} job reads waiting: retry when they are answered", what, kMaxReaderCallsPerPeer)});
      return reactor;
    }
  }
  const grpc::Status busy{grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("{}: other job calls are waiting: retry", what)};
  WorkQueue& queue = needs_admin ? job_admin_queue_ : jobs_queue_;
  const bool queued = queue.post([context, reactor, busy, what, slot, call = std::move(call), caller = std::move(caller)](bool run) {
    if (!run) return reactor->Finish(busy);
    // A call its client gave up on while it waited is not carried out: a start the prolog no
    // longer waits for would otherwise run with nobody told (a retry then finds it running).
    if (context->IsCancelled() || context->deadline() < std::chrono::system_clock::now()) {
      return reactor->Finish({grpc::StatusCode::DEADLINE_EXCEEDED, fmt::format("{}: the client gave up before it ran: nothing done", what)});
    }
    try {
      reactor->Finish(call(caller));
    } catch (const JobRequestError& e) {
      reactor->Finish(status_of(e));
    } catch (const std::exception& e) {  // the job store failed (JobStoreError), or memory ran out
      std::fprintf(stderr, "hipstack-smid: %s\n", e.what());
      reactor->Finish({grpc::StatusCode::INTERNAL, e.what()});
    }
  });
  if (!queued) reactor->Finish(busy);
  return reactor;
}

grpc::ServerUnaryReactor* MonitorService::StartJob(grpc::CallbackServerContext* context, const pb::StartJobRequest* request, pb::Job* out) {
  std::vector<std::uint32_t> devices;
  const auto sampler = source_();
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }
  return run_job_call(context, true, "StartJob", [this, request, out, devices = std::move(devices)](const Caller& caller) {
    bool again = false;
    const JobRecord job = jobs_->start(request->id(), devices, request->user(), caller.who, again);
    if (!again) std::fprintf(stderr, "hipstack-smid: job %s started for %s on %zu GPU(s)\n", job.id.c_str(), caller.who.c_str(), job.gpus.size());
    fill_job(job, out);
    out->set_already_running(again);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* MonitorService::StopJob(grpc::CallbackServerContext* context, const pb::StopJobRequest* request, pb::Job* out) {
  return run_job_call(context, true, "StopJob", [this, request, out](const Caller& caller) {
    bool already = false;
    const JobRecord job = jobs_->stop(request->id(), caller.who, already);
    if (!already) std::fprintf(stderr, "hipstack-smid: job %s stopped for %s\n", job.id.c_str(), caller.who.c_str());
    fill_job(job, out);
    out->set_already_stopped(already);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* MonitorService::GetJob(grpc::CallbackServerContext* context, const pb::GetJobRequest* request, pb::Job* out) {
  return run_job_call(context, false, "GetJob", [this, request, out](const Caller&) {
    fill_job(jobs_->get(request->id()), out);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* MonitorService::ListJobs(grpc::CallbackServerContext* context, const pb::ListJobsRequest* request,
                                                   pb::ListJobsResponse* out) {
  const std::uint32_t limit = request->limit() == 0 ? kDefaultListLimit : request->limit();
  if (limit > kMaxListLimit) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish({grpc::StatusCode::INVALID_ARGUMENT, fmt::format("limit: {} is over {}", limit, kMaxListLimit)});
    return reactor;
  }
  return run_job_call(context, false, "ListJobs", [this, request, out, limit](const Caller&) {
    bool truncated = false;
    const std::int64_t since_ns = request->since_unix_ms() <= 0 ? 0
                                  : request->since_unix_ms() > std::numeric_limits<std::int64_t>::max() / 1000000
                                      ? std::numeric_limits<std::int64_t>::max()
                                      : request->since_unix_ms() * 1000000;
    // A page of at most kMaxListBytes, whatever the jobs hold: the rest is `truncated`, as past the limit.
    std::size_t bytes = 0;
    for (const JobRecord& job : jobs_->list(since_ns, limit, truncated)) {
      pb::Job one;
      fill_job(job, &one, true);
      bytes += one.ByteSizeLong();
      if (bytes > kMaxListBytes && out->jobs_size() > 0) {
        truncated = true;
        break;
      }
      *out->add_jobs() = std::move(one);
    }
    out->set_truncated(truncated);
    return grpc::Status::OK;
  });
}

}  // namespace hipstack::smid
