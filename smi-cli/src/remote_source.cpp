#include "remote_source.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include "commands.hpp"
#include "daemon_source.hpp"
#include "fleet_source.hpp"
#include "job_command.hpp"
#include "hipstack/monitor/v1/monitor.grpc.pb.h"
#include "proto_convert.hpp"

namespace hipstack::cli {
namespace {

namespace pb = ::hipstack::monitor::v1;

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw smi::Error(smi::Error::Code::invalid_argument, fmt::format("cannot read {} {}", what, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// hipstack.monitor.v1 over gRPC, with TLS for HOST:PORT when asked.
class GrpcLink final : public DaemonLink {
 public:
  explicit GrpcLink(const RemoteOptions& options) : options_(options) {
    std::string target = options.host;
    if (target.starts_with("unix://")) target = "unix:" + target.substr(7);  // unix:///run/... -> unix:/run/...
    if (target.starts_with("unix:") && ::access(target.c_str() + 5, F_OK) != 0) {
      throw smi::Error(smi::Error::Code::read_failure,
                       fmt::format("no socket at {} (is hipstack-smid running?)", target.substr(5)));
    }
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (target.starts_with("unix:") || options.tls_ca.empty()) {
      if (!options.tls_cert.empty()) throw smi::Error(smi::Error::Code::invalid_argument, "--tls-cert needs --tls-ca and a HOST:PORT");
      credentials = grpc::InsecureChannelCredentials();
    } else {
      grpc::SslCredentialsOptions tls;
      tls.pem_root_certs = read_file(options.tls_ca, "--tls-ca");
      if (!options.tls_cert.empty()) {
        tls.pem_cert_chain = read_file(options.tls_cert, "--tls-cert");
        tls.pem_private_key = read_file(options.tls_key, "--tls-key");
      }
      credentials = grpc::SslCredentials(tls);
    }
    channel_ = grpc::CreateChannel(target, credentials);
    if (!channel_->WaitForConnected(deadline())) {
      throw smi::Error(smi::Error::Code::read_failure,
                       fmt::format("cannot reach hipstack-smid at {} within {} ms", options.host, options.timeout_ms));
    }
    stub_ = pb::Monitor::NewStub(channel_);
  }

  // Prints the daemon's events as they come (WatchEvents), until the stream ends: an error then.
  // With several hosts' streams at once (`fleet`), each event is printed whole under `print`, with
  // the host first.
  int watch_events(const CommonOptions& common, std::mutex& print, bool fleet) const {
    grpc::ClientContext context;  // no deadline: it runs until interrupted
    pb::WatchEventsRequest request;
    for (const std::string& gpu : common.gpus) request.add_devices(gpu);
    auto stream = stub_->WatchEvents(&context, request);
    pb::EventBatch batch;
    while (stream->Read(&batch)) {
      std::lock_guard lock(print);
      if (batch.missed() > 0) {
        std::fprintf(stderr, "hipstack-smi: %llu event(s) of hipstack-smid at %s not received (no longer kept)\n",
                     static_cast<unsigned long long>(batch.missed()), options_.host.c_str());
      }
      for (const pb::Event& e : batch.events()) {
        print_event(proto::from_proto(e), common, proto::found_at(e), fleet ? std::string_view(options_.host) : std::string_view());
      }
    }
    const grpc::Status status = stream->Finish();
    std::lock_guard lock(print);
    std::fprintf(stderr, "hipstack-smi: hipstack-smid at %s ended the event stream: %s%s%s\n", options_.host.c_str(),
                 smi::printable_text(status.error_code() == grpc::StatusCode::OK ? "OK" : "error").c_str(),
                 status.error_message().empty() ? "" : ": ", smi::printable_text(status.error_message()).c_str());
    return status.error_code() == grpc::StatusCode::NOT_FOUND || status.error_code() == grpc::StatusCode::INVALID_ARGUMENT
               ? kExitBadArguments
               : kExitReadFailure;
  }

  // `job start|stop|show|list`: one call; its refusal is printed with the daemon's reason.
  int job(const JobOptions& options, const CommonOptions& common) const {
    grpc::ClientContext context;
    context.set_deadline(deadline());
    grpc::Status status;
    if (options.action == "list") {
      pb::ListJobsRequest request;
      std::string error;
      const auto since = parse_since(options.since, std::chrono::system_clock::now(), error);
      request.set_since_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(since->time_since_epoch()).count());
      request.set_limit(options.limit);
      pb::ListJobsResponse response;
      status = stub_->ListJobs(&context, request, &response);
      if (status.ok()) return print_job_list(response, common.format);
    } else {
      pb::Job response;
      if (options.action == "start") {
        pb::StartJobRequest request;
        request.set_id(options.id);
        request.set_user(options.user);
        for (const std::string& gpu : common.gpus) request.add_devices(gpu);
        status = stub_->StartJob(&context, request, &response);
      } else if (options.action == "stop") {
        pb::StopJobRequest request;
        request.set_id(options.id);
        status = stub_->StopJob(&context, request, &response);
      } else {
        pb::GetJobRequest request;
        request.set_id(options.id);
        status = stub_->GetJob(&context, request, &response);
      }
      if (status.ok()) return print_job(response, options, common.format);
    }
    std::fprintf(stderr, "hipstack-smi: job %s: hipstack-smid at %s: %s\n", options.action.c_str(), options_.host.c_str(),
                 smi::printable_text(status.error_message()).c_str());
    switch (status.error_code()) {
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::ALREADY_EXISTS: return kExitBadArguments;
      case grpc::StatusCode::NOT_FOUND: return kExitNoSuchDevice;
      case grpc::StatusCode::PERMISSION_DENIED: return kExitNeedsRoot;
      case grpc::StatusCode::UNAVAILABLE: return kExitRefused;
      default: return kExitReadFailure;
    }
  }

  Outcome call(const char* method, const google::protobuf::MessageLite& request,
               google::protobuf::MessageLite& response) const override {
    grpc::ClientContext context;
    context.set_deadline(deadline());
    const grpc::Status status = invoke(context, method, request, response);
    return {static_cast<int>(status.error_code()), status.error_message()};
  }

 private:
  // The request and response types are the method's (daemon_source.cpp passes them so).
  grpc::Status invoke(grpc::ClientContext& c, std::string_view method, const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite& response) const {
    if (method == "ListDevices") {
      return stub_->ListDevices(&c, dynamic_cast<const pb::ListDevicesRequest&>(request),
                                &dynamic_cast<pb::ListDevicesResponse&>(response));
    }
    if (method == "GetDevice") {
      return stub_->GetDevice(&c, dynamic_cast<const pb::GetDeviceRequest&>(request), &dynamic_cast<pb::DeviceDetail&>(response));
    }
    if (method == "GetMetrics") {
      return stub_->GetMetrics(&c, dynamic_cast<const pb::GetMetricsRequest&>(request),
                               &dynamic_cast<pb::MetricsSnapshot&>(response));
    }
    if (method == "GetPartitions") {
      return stub_->GetPartitions(&c, dynamic_cast<const pb::GetPartitionsRequest&>(request),
                                  &dynamic_cast<pb::GetPartitionsResponse&>(response));
    }
    if (method == "GetHealth") {
      return stub_->GetHealth(&c, dynamic_cast<const pb::GetHealthRequest&>(request),
                              &dynamic_cast<pb::HealthSnapshot&>(response));
    }
    return {grpc::StatusCode::UNIMPLEMENTED, fmt::format("hipstack-smi does not call {} over gRPC", method)};
  }
  std::chrono::system_clock::time_point deadline() const {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  }

  RemoteOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Monitor::Stub> stub_;
};

// `--host a,b event`: every host's stream at once, a thread each; a host that cannot be reached,
// or whose stream ends, is named on stderr and the others go on. Returns once every stream has
// ended: 2 when a host refused the request (an unknown -g), else 9 (no host is followed any more).
int watch_fleet_events(const RemoteOptions& remote, const CommonOptions& common) {
  print_event_header(common, fmt::format("on {} hosts' hipstack-smid", remote.fleet.size()), true);
  std::mutex print;
  std::atomic<bool> refused{false};
  // Every stream runs at once: as many threads as hosts (main.cpp allows at most kMaxEventHosts).
  for_each_parallel(remote.fleet.size(), remote.fleet.size(), [&](std::size_t i) {
    RemoteOptions one = remote;
    one.host = remote.fleet[i];
    one.fleet.clear();
    try {
      if (GrpcLink(one).watch_events(common, print, true) == kExitBadArguments) refused = true;
    } catch (const std::exception& e) {
      std::lock_guard lock(print);
      std::fprintf(stderr, "host %s: NO ANSWER: %s\n", one.host.c_str(), smi::printable_text(e.what()).c_str());
    }
  });
  return refused ? kExitBadArguments : kExitHostUnreachable;
}

}  // namespace

std::unique_ptr<DeviceSource> connect_remote(const RemoteOptions& options) {
  return daemon_source(std::make_unique<GrpcLink>(options), "hipstack-smid at " + options.host);
}

int run_on_host(const RemoteOptions& remote, const std::string& command, const CommonOptions& common,
                const QueryOptions& query, const std::string& health_policy, const JobOptions& job, char** /*argv*/) {
  if (command == "job") return GrpcLink(remote).job(job, common);
  if (!remote.fleet.empty() && command == "event") return watch_fleet_events(remote, common);
  if (!remote.fleet.empty()) {
    const FleetSource fleet(remote.fleet, [&remote](const std::string& host) {
      RemoteOptions one = remote;
      one.host = host;
      one.fleet.clear();
      return connect_remote(one);
    });
    return run_through_fleet(fleet, command, common, query, health_policy);
  }
  std::mutex print;
  if (command == "event") {
    print_event_header(common, fmt::format("through hipstack-smid at {}", smi::printable_text(remote.host)));
    return GrpcLink(remote).watch_events(common, print, false);
  }
  const auto source = connect_remote(remote);
  return run_through_daemon(*source, command, common, query, health_policy, "hipstack-smid at " + remote.host);
}

}  // namespace hipstack::cli
