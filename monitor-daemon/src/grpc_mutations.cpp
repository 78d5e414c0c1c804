// SetPartition, SetPowerCap and ResetDevice: the caller is identified and must hold the admin role
// (access.hpp), the request is checked, and the change goes through the library's one guarded
// mutation path (System::set_*), which refuses unsafe states and audits every write. The daemon
// logs who asked for what and how it went. One mutation runs at a time, on the service's mutation
// thread; a few more may wait for it (grpc_service.hpp).
#include <fmt/format.h>

#include <cmath>

#include "grpc_request.hpp"
#include "grpc_service.hpp"

namespace hipstack::smid {
namespace {

grpc::StatusCode code_for(smi::RefusalReason reason) {
  switch (reason) {
    case smi::RefusalReason::invalid_value: return grpc::StatusCode::INVALID_ARGUMENT;
    case smi::RefusalReason::reset_in_progress: return grpc::StatusCode::UNAVAILABLE;
    case smi::RefusalReason::timed_out: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case smi::RefusalReason::driver_rejected: return grpc::StatusCode::ABORTED;
    case smi::RefusalReason::needs_root:        // the daemon itself runs without the privilege
    case smi::RefusalReason::not_supported:
    case smi::RefusalReason::device_busy:
    case smi::RefusalReason::virtual_function:
    case smi::RefusalReason::none:
      return grpc::StatusCode::FAILED_PRECONDITION;
  }
  return grpc::StatusCode::FAILED_PRECONDITION;
}

grpc::Status answer(const smi::ControlResult& result, pb::MutationResponse* out) {
  for (const smi::ControlWrite& w : result.writes) {
    pb::Write* write = out->add_writes();
    write->set_path(w.host_path.empty() ? w.path : w.host_path);
    write->set_value(w.value);
  }
  out->set_message(result.message);
  out->set_next_step(result.next_step);
  switch (result.outcome) {
    case smi::ControlOutcome::applied: out->set_outcome(pb::MutationResponse::OUTCOME_APPLIED); return grpc::Status::OK;
    case smi::ControlOutcome::pending: out->set_outcome(pb::MutationResponse::OUTCOME_PENDING); return grpc::Status::OK;
    case smi::ControlOutcome::planned: out->set_outcome(pb::MutationResponse::OUTCOME_DRY_RUN); return grpc::Status::OK;
    case smi::ControlOutcome::refused: return {code_for(result.reason), result.message};
    case smi::ControlOutcome::failed: return {grpc::StatusCode::ABORTED, result.message};
  }
  return {grpc::StatusCode::INTERNAL, "unknown outcome"};
}

}  // namespace

grpc::ServerUnaryReactor* MonitorService::mutate(grpc::CallbackServerContext* context, const std::string& device,
                                                 const std::string& what, MutationFn change, pb::MutationResponse* out) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const Caller caller = access_.identify(*context);
  std::uint32_t index = 0;
  if (auto status = resolve_device(*source_(), device, index); !status.ok()) {
    reactor->Finish(status);
    return reactor;
  }
  const std::string action = fmt::format("{} on GPU {}", what, index);
  if (!caller.admin) {
    std::fprintf(stderr, "hipstack-smid: refused %s for %s: %s\n", action.c_str(), caller.who.c_str(), caller.refusal.c_str());
    // The log names the caller; the caller learns only the role it lacks (not its uid or the group).
    reactor->Finish({grpc::StatusCode::PERMISSION_DENIED, fmt::format("{}: {}", action, caller.denial)});
    return reactor;
  }
  const grpc::Status busy{grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("{}: other changes are waiting: retry", action)};
  const bool queued = mutations_queue_.post([this, who = caller.who, action, change = std::move(change), index, out, reactor, busy](bool run) {
    if (!run) return reactor->Finish(busy);
    smi::ControlResult result;
    try {
      result = mutations_(who, [&](smi::System& system) { return change(system, index); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hipstack-smid: %s for %s failed: %s\n", action.c_str(), who.c_str(), e.what());
      return reactor->Finish({grpc::StatusCode::INTERNAL, fmt::format("{}: {}", action, e.what())});
    }
    std::fprintf(stderr, "hipstack-smid: %s for %s: %s: %s\n", action.c_str(), who.c_str(),
                 std::string(smi::outcome_name(result.outcome)).c_str(), result.message.c_str());
    reactor->Finish(answer(result, out));
  });
  if (!queued) reactor->Finish(busy);
  return reactor;
}

namespace {
grpc::ServerUnaryReactor* refuse(grpc::CallbackServerContext* context, const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}
}  // namespace

// The changes are captured by value: they run on the mutation thread, after these handlers return.
grpc::ServerUnaryReactor* MonitorService::SetPartition(grpc::CallbackServerContext* context, const pb::SetPartitionRequest* request,
                                                       pb::MutationResponse* out) {
  const bool compute = !request->compute_mode().empty();
  const bool memory = !request->memory_mode().empty();
  if (compute == memory) {
    return refuse(context, {grpc::StatusCode::INVALID_ARGUMENT,
                            "give one of compute_mode (SPX, DPX, TPX, QPX, CPX) or memory_mode (NPS1, NPS2, NPS4, NPS8)"});
  }
  const std::string mode = compute ? request->compute_mode() : request->memory_mode();
  if (mode.size() > 16) return refuse(context, {grpc::StatusCode::INVALID_ARGUMENT, "mode: longer than 16 characters"});
  smi::ControlOptions options;
  options.dry_run = request->dry_run();
  options.force = request->force();
  return mutate(context, request->device(), fmt::format("SetPartition {} {}", compute ? "compute" : "memory", mode),
                [compute, mode, options](smi::System& system, std::uint32_t index) {
                  return compute ? system.set_compute_partition(index, mode, options)
                                 : system.set_memory_partition(index, mode, options);
                },
                out);
}

grpc::ServerUnaryReactor* MonitorService::SetPowerCap(grpc::CallbackServerContext* context, const pb::SetPowerCapRequest* request,
                                                      pb::MutationResponse* out) {
  const double watts = request->watts();
  if (!std::isfinite(watts) || watts <= 0.0 || watts > 100000.0) {
    return refuse(context, {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("watts: {} is not a power cap", watts)});
  }
  smi::ControlOptions options;
  options.dry_run = request->dry_run();
  return mutate(context, request->device(), fmt::format("SetPowerCap {} W", watts),
                [watts, options](smi::System& system, std::uint32_t index) { return system.set_power_cap(index, watts, options); },
                out);
}

grpc::ServerUnaryReactor* MonitorService::ResetDevice(grpc::CallbackServerContext* context, const pb::ResetDeviceRequest* request,
                                                      pb::MutationResponse* out) {
  smi::ControlOptions options;
  options.dry_run = request->dry_run();
  options.force = request->force();
  return mutate(context, request->device(), "ResetDevice",
                [options](smi::System& system, std::uint32_t index) { return system.reset_device(index, options); }, out);
}

}  // namespace hipstack::smid
