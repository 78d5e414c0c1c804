#include "remote_source.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "commands.hpp"
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

smi::Status status_of(pb::ReadingStatus status) {
  switch (status) {
    case pb::READING_STATUS_OK: return smi::Status::ok;
    case pb::READING_STATUS_UNAVAILABLE: return smi::Status::unavailable;
    case pb::READING_STATUS_ERROR: return smi::Status::error;
    default: return smi::Status::not_supported;
  }
}

smi::Verdict verdict_of(pb::Verdict verdict) {
  switch (verdict) {
    case pb::VERDICT_PASS: return smi::Verdict::pass;
    case pb::VERDICT_WARN: return smi::Verdict::warn;
    case pb::VERDICT_FAIL: return smi::Verdict::fail;
    default: return smi::Verdict::unknown;
  }
}

smi::DeviceSummary summary_of(const pb::Device& d) {
  smi::DeviceSummary s;
  s.index = d.index();
  s.vendor = d.vendor();
  s.backend = d.backend();
  s.bdf = d.bdf();
  s.uuid = d.uuid();
  s.name = d.name();
  s.fault = d.fault();
  s.partition_count = d.partition_count();
  return s;
}

// Readings of metrics this build's catalogue knows (a newer daemon may know more).
std::vector<smi::Reading> readings_of(const google::protobuf::RepeatedPtrField<pb::Reading>& in) {
  std::vector<smi::Reading> out;
  for (const pb::Reading& r : in) {
    const smi::MetricInfo* info = smi::find_metric(r.metric());
    if (info == nullptr) continue;
    smi::Reading reading;
    reading.id = info->id;
    reading.instance = r.instance();
    reading.status = status_of(r.status());
    reading.error_code = r.error_code();
    reading.detail = r.detail();
    switch (r.value_case()) {
      case pb::Reading::kInteger: reading.value = static_cast<std::int64_t>(r.integer()); break;
      case pb::Reading::kReal: reading.value = r.real(); break;
      case pb::Reading::kText: reading.value = r.text(); break;
      case pb::Reading::VALUE_NOT_SET: break;
    }
    out.push_back(std::move(reading));
  }
  return out;
}

bool kind_wanted(smi::Kind kind, const smi::SampleOptions& what) {
  switch (kind) {
    case smi::Kind::identity: return what.identity;
    case smi::Kind::static_info: return what.static_info;
    case smi::Kind::live:
    case smi::Kind::counter: return what.live;
    case smi::Kind::window: return what.window;
  }
  return false;
}

class RemoteSource final : public DeviceSource {
 public:
  [[nodiscard]] bool reads_devices() const override { return false; }
  explicit RemoteSource(const RemoteOptions& options) : options_(options) {
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
    pb::ListDevicesResponse listed;
    call("ListDevices", [&](grpc::ClientContext& c) { return stub_->ListDevices(&c, pb::ListDevicesRequest{}, &listed); });
    for (const pb::Device& d : listed.devices()) devices_.push_back(summary_of(d));
  }

  std::vector<smi::DeviceSummary> devices() const override { return devices_; }

  std::uint32_t resolve(std::string_view selector) const override {
    pb::GetDeviceRequest request;
    request.set_device(std::string(selector));
    pb::DeviceDetail detail;
    grpc::ClientContext context;
    context.set_deadline(deadline());
    const grpc::Status status = stub_->GetDevice(&context, request, &detail);
    if (status.error_code() == grpc::StatusCode::NOT_FOUND || status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      throw smi::Error(smi::Error::Code::no_such_device, status.error_message());
    }
    check("GetDevice", status);
    return detail.device().index();
  }

  std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const override {
    pb::GetMetricsRequest request;
    request.add_devices(std::to_string(device));
    for (const smi::MetricId id : what.metrics) request.add_metrics(std::string(smi::find_metric(id)->name));
    request.set_include_facts(what.identity || what.static_info);
    pb::MetricsSnapshot snapshot;
    call("GetMetrics", [&](grpc::ClientContext& c) { return stub_->GetMetrics(&c, request, &snapshot); });
    std::vector<smi::Reading> out;
    for (const pb::DeviceMetrics& d : snapshot.devices()) {
      for (smi::Reading& r : readings_of(d.readings())) {
        if (kind_wanted(smi::find_metric(r.id)->kind, what)) out.push_back(std::move(r));
      }
    }
    if (what.live && snapshot.devices_size() == 1 && !snapshot.devices(0).device().up()) {
      throw smi::Error(smi::Error::Code::read_failure,
                       fmt::format("hipstack-smid at {}: GPU {} has no current sample (stuck past the read deadline)",
                                   options_.host, device));
    }
    return out;
  }

  std::vector<smi::Partition> partitions(std::uint32_t device) const override {
    pb::GetPartitionsRequest request;
    request.add_devices(std::to_string(device));
    pb::GetPartitionsResponse answer;
    call("GetPartitions", [&](grpc::ClientContext& c) { return stub_->GetPartitions(&c, request, &answer); });
    std::vector<smi::Partition> out;
    for (const pb::DevicePartitions& d : answer.devices()) {
      for (const pb::Partition& p : d.partitions()) {
        out.push_back({p.index(), p.id(), p.bdf(), readings_of(p.readings())});
      }
    }
    return out;
  }

  smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const override {
    if (!policy_file.empty()) {
      throw smi::Error(smi::Error::Code::invalid_argument,
                       "--config with --host: the daemon checks health with the thresholds of its own configuration");
    }
    pb::GetHealthRequest request;
    request.add_devices(std::to_string(device));
    pb::HealthSnapshot answer;
    call("GetHealth", [&](grpc::ClientContext& c) { return stub_->GetHealth(&c, request, &answer); });
    smi::HealthReport report;
    report.device = device;
    for (const pb::DeviceHealth& d : answer.devices()) {
      report.overall = verdict_of(d.verdict());
      for (const pb::HealthFinding& f : d.findings()) {
        report.findings.push_back({f.check(), verdict_of(f.verdict()), f.reading(), f.threshold(), f.message(), f.remediation()});
      }
    }
    return report;
  }

 private:
  std::chrono::system_clock::time_point deadline() const {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  }
  void check(const char* rpc, const grpc::Status& status) const {
    if (!status.ok()) {
      throw smi::Error(smi::Error::Code::read_failure,
                       fmt::format("hipstack-smid at {}: {}: {}", options_.host, rpc, status.error_message()));
    }
  }
  template <typename Call>
  void call(const char* rpc, Call&& invoke) const {
    grpc::ClientContext context;
    context.set_deadline(deadline());
    check(rpc, invoke(context));
  }

  RemoteOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Monitor::Stub> stub_;
  std::vector<smi::DeviceSummary> devices_;
};

}  // namespace

std::unique_ptr<DeviceSource> connect_remote(const RemoteOptions& options) { return std::make_unique<RemoteSource>(options); }

int run_on_host(const RemoteOptions& remote, const std::string& command, const CommonOptions& common,
                const QueryOptions& query, const std::string& health_policy, char** /*argv*/) {
  const auto source = connect_remote(remote);
  if (command.empty()) return run_overview(*source, nullptr, common, "hipstack-smid at " + remote.host);
  if (command == "list") return run_list(*source, common);
  if (command == "static") return run_static(*source, common);
  if (command == "metric") return run_metric(*source, common);
  if (command == "query") return run_query(*source, common, query);
  if (command == "ras") return run_ras(*source, common);
  if (command == "health") return run_health(*source, common, health_policy);
  return run_partition(*source, common);
}

}  // namespace hipstack::cli
