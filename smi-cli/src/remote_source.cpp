#include "remote_source.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "daemon_source.hpp"
#include "fleet_source.hpp"
#include "hipstack/monitor/v1/monitor.grpc.pb.h"

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
  int watch_events(const CommonOptions& common) const {
    grpc::ClientContext context;  // no deadline: it runs until interrupted
    pb::WatchEventsRequest request;
    for (const std::string& gpu : common.gpus) request.add_devices(gpu);
    auto stream = stub_->WatchEvents(&context, request);
    print_event_header(common);
    pb::EventBatch batch;
    while (stream->Read(&batch)) {
      if (batch.missed() > 0) {
        std::fprintf(stderr, "hipstack-smi: %llu event(s) of hipstack-smid at %s not received (no longer kept)\n",
                     static_cast<unsigned long long>(batch.missed()), options_.host.c_str());
      }
      for (const pb::Event& e : batch.events()) {
        smi::Event event{e.kind(), {}, e.metric(), e.before(), e.after(), e.message()};
        event.device.index = e.device_index();
        event.device.bdf = e.bdf();
        event.device.uuid = e.uuid();
        print_event(event, common, std::chrono::system_clock::time_point(std::chrono::milliseconds(e.time_unix_ms())));
      }
    }
    const grpc::Status status = stream->Finish();
    std::fprintf(stderr, "hipstack-smi: hipstack-smid at %s ended the event stream: %s%s%s\n", options_.host.c_str(),
                 smi::printable_text(status.error_code() == grpc::StatusCode::OK ? "OK" : "error").c_str(),
                 status.error_message().empty() ? "" : ": ", smi::printable_text(status.error_message()).c_str());
    return status.error_code() == grpc::StatusCode::NOT_FOUND || status.error_code() == grpc::StatusCode::INVALID_ARGUMENT
               ? kExitBadArguments
               : kExitReadFailure;
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

}  // namespace

std::unique_ptr<DeviceSource> connect_remote(const RemoteOptions& options) {
  return daemon_source(std::make_unique<GrpcLink>(options), "hipstack-smid at " + options.host);
}

int run_on_host(const RemoteOptions& remote, const std::string& command, const CommonOptions& common,
                const QueryOptions& query, const std::string& health_policy, char** /*argv*/) {
  if (!remote.fleet.empty()) {
    const FleetSource fleet(remote.fleet, [&remote](const std::string& host) {
      RemoteOptions one = remote;
      one.host = host;
      one.fleet.clear();
      return connect_remote(one);
    });
    return run_through_fleet(fleet, command, common, query, health_policy);
  }
  if (command == "event") return GrpcLink(remote).watch_events(common);
  const auto source = connect_remote(remote);
  return run_through_daemon(*source, command, common, query, health_policy, "hipstack-smid at " + remote.host);
}

}  // namespace hipstack::cli
