// A DeviceSource answered by a hipstack-smid's gRPC API, --host (remote_source.hpp).
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
#include "source_commands.hpp"
#include "fleet_source.hpp"
#include "errors_command.hpp"
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

// The gRPC target of a host: unix:PATH for unix://PATH.
std::string target_of(const std::string& host) {
  return host.starts_with("unix://") ? "unix:" + host.substr(7) : host;
}

// The credentials for a HOST:PORT host: TLS when asked.
std::shared_ptr<grpc::ChannelCredentials> credentials_for(const RemoteOptions& options) {
  if (options.tls_ca.empty()) {
    if (!options.tls_cert.empty()) throw smi::Error(smi::Error::Code::invalid_argument, "--tls-cert needs --tls-ca and a HOST:PORT");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = read_file(options.tls_ca, "--tls-ca");
  if (!options.tls_cert.empty()) {
    tls.pem_cert_chain = read_file(options.tls_cert, "--tls-cert");
    tls.pem_private_key = read_file(options.tls_key, "--tls-key");
  }
  return grpc::SslCredentials(tls);
}

// A channel to one host.
std::shared_ptr<grpc::Channel> open_channel(const std::string& host, const std::shared_ptr<grpc::ChannelCredentials>& tls) {
  const std::string target = target_of(host);
  if (target.starts_with("unix:") && ::access(target.c_str() + 5, F_OK) != 0) {
    throw smi::Error(smi::Error::Code::read_failure, fmt::format("no socket at {} (is hipstack-smid running?)", target.substr(5)));
  }
  if (target.starts_with("unix:") && tls == nullptr) {
    throw smi::Error(smi::Error::Code::invalid_argument, "--tls-cert needs --tls-ca and a HOST:PORT");
  }
  return grpc::CreateChannel(target, target.starts_with("unix:") ? grpc::InsecureChannelCredentials() : tls);
}

// hipstack.monitor.v1 over gRPC. The host has timeout_ms for its whole command: connecting and
// every call draw on that one budget (the time spent waiting for other hosts does not count), and
// nothing is asked past the command's own deadline.
class GrpcLink final : public DaemonLink {
 public:
  explicit GrpcLink(const RemoteOptions& options) : options_(options), left_(options.timeout_ms) {
    if (std::chrono::system_clock::now() >= options.command_deadline()) throw smi::Error(smi::Error::Code::read_failure, not_asked());
    const Spending connecting(*this);
    channel_ = open_channel(options.host, tls_or_null(options));
    // A connection refused (or a TLS handshake the daemon refused) fails at once rather than at
    // the deadline: a fleet of dead hosts costs no more than the silent ones.
    for (auto state = channel_->GetState(true); state != GRPC_CHANNEL_READY; state = channel_->GetState(true)) {
      if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
        throw smi::Error(smi::Error::Code::read_failure,
                         fmt::format("cannot reach hipstack-smid at {}: the connection failed (refused, no route, or TLS refused)",
                                     options.host));
      }
      if (!channel_->WaitForStateChange(state, connecting.deadline)) {
        throw smi::Error(smi::Error::Code::read_failure,
                         fmt::format("cannot reach hipstack-smid at {} within {} ms", options.host, options.timeout_ms));
      }
    }
    stub_ = pb::Monitor::NewStub(channel_);
  }

  // Why a host is not asked: the command's deadline passed while other hosts were.
  std::string not_asked() const {
    return fmt::format("not asked: the command's deadline ({} ms, {} x --host-timeout-ms) passed while other hosts were asked",
                       RemoteOptions::kCommandTimeouts * options_.timeout_ms, RemoteOptions::kCommandTimeouts);
  }

  // The credentials of one host: none needed for a unix socket (given TLS options are refused).
  static std::shared_ptr<grpc::ChannelCredentials> tls_or_null(const RemoteOptions& options) {
    if (target_of(options.host).starts_with("unix:")) return options.tls_cert.empty() ? grpc::InsecureChannelCredentials() : nullptr;
    return credentials_for(options);
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
    const Spending calling(*this);
    context.set_deadline(calling.deadline);
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

  // `errors`: one ListErrors call.
  int errors(const ErrorListOptions& options, const CommonOptions& common) const {
    grpc::ClientContext context;
    const Spending calling(*this);
    context.set_deadline(calling.deadline);
    pb::ListErrorsRequest request;
    std::string error;
    const auto since = parse_since(options.since, std::chrono::system_clock::now(), error);
    request.set_since_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(since->time_since_epoch()).count());
    request.set_limit(options.limit);
    request.set_source(options.source);
    for (const std::string& gpu : common.gpus) request.add_devices(gpu);
    pb::ListErrorsResponse response;
    const grpc::Status status = stub_->ListErrors(&context, request, &response);
    if (status.ok()) return print_errors(response, common.format);
    std::fprintf(stderr, "hipstack-smi: errors: hipstack-smid at %s: %s\n", options_.host.c_str(),
                 smi::printable_text(status.error_message()).c_str());
    switch (status.error_code()) {
      case grpc::StatusCode::INVALID_ARGUMENT: return kExitBadArguments;
      case grpc::StatusCode::NOT_FOUND: return kExitNoSuchDevice;
      case grpc::StatusCode::UNAVAILABLE: return kExitHostUnreachable;
      default: return kExitReadFailure;
    }
  }

  Outcome call(const char* method, const google::protobuf::MessageLite& request,
               google::protobuf::MessageLite& response) const override {
    if (std::chrono::system_clock::now() >= options_.command_deadline()) {
      return {static_cast<int>(grpc::StatusCode::DEADLINE_EXCEEDED), not_asked()};
    }
    const Spending calling(*this);
    if (calling.deadline <= std::chrono::system_clock::now()) {
      return {static_cast<int>(grpc::StatusCode::DEADLINE_EXCEEDED),
              fmt::format("{}: its {} ms (--host-timeout-ms, for the whole command) are used up", method, options_.timeout_ms)};
    }
    grpc::ClientContext context;
    context.set_deadline(calling.deadline);
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
  // One draw on the host's budget: `deadline` is what is left of it (and of the command's), and
  // the time until the object goes is taken from it.
  struct Spending {
    explicit Spending(const GrpcLink& of)
        : link(of),
          began(std::chrono::system_clock::now()),
          deadline(std::min(began + of.budget_left(), of.options_.command_deadline())) {}
    ~Spending() { link.spend(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now() - began)); }
    Spending(const Spending&) = delete;
    Spending& operator=(const Spending&) = delete;
    const GrpcLink& link;
    const std::chrono::system_clock::time_point began;
    const std::chrono::system_clock::time_point deadline;
  };
  std::chrono::milliseconds budget_left() const {
    std::lock_guard lock(mutex_);
    return left_;
  }
  void spend(std::chrono::milliseconds spent) const {
    std::lock_guard lock(mutex_);
    left_ = std::max(left_ - spent, std::chrono::milliseconds(0));
  }

  RemoteOptions options_;
  mutable std::mutex mutex_;
  mutable std::chrono::milliseconds left_;  // of the host's timeout_ms; guarded by mutex_
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
                const QueryOptions& query, const std::string& health_policy, const JobOptions& job, const ErrorListOptions& errors,
                char** /*argv*/) {
  if (command == "job") return GrpcLink(remote).job(job, common);
  if (command == "errors") return GrpcLink(remote).errors(errors, common);
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
