// ListErrors: the errors the daemon keeps (error_keeper.hpp), answered from memory.
#include <fmt/format.h>
#include <hipstack/cper.hpp>

#include <limits>
#include <map>

#include "grpc_request.hpp"
#include "proto_convert.hpp"
#include "grpc_service.hpp"

namespace hipstack::smid {
namespace {

constexpr std::uint32_t kDefaultErrorLimit = 1000;
constexpr std::uint32_t kMaxErrorLimit = 10000;

void fill_error(const KeptError& k, const std::map<std::string, std::uint32_t>& indices, std::chrono::system_clock::time_point now,
                std::chrono::seconds max_age, pb::GpuError* out) {
  const smi::ErrorOccurrence& e = k.occurrence;
  const auto index = indices.find(k.uuid);
  out->set_device_index(index != indices.end() ? index->second : 0);
  out->set_gone(index == indices.end());
  out->set_bdf(k.bdf);
  out->set_uuid(k.uuid);
  out->set_source(std::string(smi::error_source_name(e.source)));
  out->set_code(e.code);
  const bool cper = e.source == smi::ErrorSource::cper;
  if (cper && e.code <= 3) out->set_severity(std::string(smi::cper_severity_name(static_cast<smi::CperSeverity>(e.code))));
  out->set_action(std::string(smi::error_action_name(e.action)));
  const smi::Verdict verdict = cper ? smi::error_action_verdict(e.action, smi::ErrorFault::hardware) : smi::xid_advice(e.code).verdict;
  out->set_verdict(std::string(smi::verdict_name(verdict)));
  out->set_summary(e.summary);
  out->set_time_unix_ms(proto::unix_ms(e.at));
  out->set_seen_unix_ms(proto::unix_ms(k.seen));
  out->set_recent(e.at <= now && now - e.at < max_age);
}

}  // namespace

grpc::Status MonitorService::list_errors(const pb::ListErrorsRequest* request, pb::ListErrorsResponse* out) {
  const auto sampler = source_();
  const std::uint32_t limit = request->limit() == 0 ? kDefaultErrorLimit : request->limit();
  if (limit > kMaxErrorLimit) return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("limit: {} is over {}", limit, kMaxErrorLimit)};
  if (!request->source().empty() && request->source() != "xid" && request->source() != "cper") {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            fmt::format("source: \"{}\" is neither xid nor cper", smi::printable_text(request->source().substr(0, 64)))};
  }
  const std::shared_ptr<ErrorKeeper>& errors = sampler->errors();
  if (!errors) return {grpc::StatusCode::FAILED_PRECONDITION, "this daemon keeps no errors"};
  std::vector<std::uint32_t> devices;
  if (auto status = select_devices(*sampler, request->devices(), devices); !status.ok()) return status;
  const auto views = sampler->views();
  std::map<std::string, std::uint32_t> indices;
  for (std::uint32_t i = 0; i < views.size(); ++i) indices.emplace(views[i].snapshot->device.uuid, views[i].snapshot->device.index);
  std::set<std::string> uuids;
  if (!request->devices().empty()) {
    for (const std::uint32_t d : devices) uuids.insert(views.at(d).snapshot->device.uuid);
  }
  const std::int64_t since_ms = std::max<std::int64_t>(0, request->since_unix_ms());
  const auto since = std::chrono::system_clock::time_point(std::chrono::milliseconds(since_ms));
  const auto now = std::chrono::system_clock::now();
  const auto max_age = errors->options().max_age;
  bool truncated = false;
  // The source filter is applied here: the keeper's list is bounded by its memory, so asking for
  // kMaxErrorLimit of every kind and keeping one kind stays bounded.
  for (const KeptError& k : errors->list(since, uuids, kMaxErrorLimit, truncated)) {
    if (!request->source().empty() && request->source() != smi::error_source_name(k.occurrence.source)) continue;
    if (static_cast<std::uint32_t>(out->errors_size()) == limit) {
      truncated = true;
      break;
    }
    fill_error(k, indices, now, max_age, out->add_errors());
  }
  out->set_truncated(truncated);
  out->set_max_age_seconds(max_age.count());
  out->set_store(errors->unavailable().empty() ? errors->options().db_path : std::string());
  out->set_store_problem(errors->unavailable());
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* MonitorService::ListErrors(grpc::CallbackServerContext* context, const pb::ListErrorsRequest* request,
                                                     pb::ListErrorsResponse* out) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(context->IsCancelled() ? grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client") : list_errors(request, out));
  return reactor;
}

}  // namespace hipstack::smid
