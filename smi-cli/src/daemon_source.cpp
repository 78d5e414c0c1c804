// A DeviceSource answered by the node's hipstack-smid over its unix socket (daemon_source.hpp).
#include "daemon_source.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <stdexcept>

#include "commands.hpp"
#include "hipstack/monitor/v1/monitor.pb.h"
#include "proto_convert.hpp"

namespace hipstack::cli {
namespace {

namespace pb = ::hipstack::monitor::v1;

constexpr int kNotFound = 5;         // gRPC NOT_FOUND
constexpr int kInvalidArgument = 3;  // gRPC INVALID_ARGUMENT

class DaemonSource final : public DeviceSource {
 public:
  DaemonSource(std::unique_ptr<DaemonLink> link, std::string where) : link_(std::move(link)), where_(std::move(where)) {
    pb::ListDevicesResponse listed;
    call("ListDevices", pb::ListDevicesRequest{}, listed);
    for (const pb::Device& d : listed.devices()) devices_.push_back(proto::from_proto(d));
  }

  [[nodiscard]] bool reads_devices() const override { return false; }
  std::vector<smi::DeviceSummary> devices() const override { return devices_; }

  std::uint32_t resolve(std::string_view selector) const override {
    pb::GetDeviceRequest request;
    request.set_device(std::string(selector));
    pb::DeviceDetail detail;
    const DaemonLink::Outcome outcome = link_->call("GetDevice", request, detail);
    if (outcome.code == kNotFound || outcome.code == kInvalidArgument) {
      throw smi::Error(smi::Error::Code::no_such_device, outcome.message);
    }
    check("GetDevice", outcome);
    return detail.device().index();
  }

  std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const override {
    return std::move(sample_all({device}, what).front());
  }

  // One GetMetrics for every device asked; a device the daemon has no current sample of fails the
  // command, naming it, as a sample of that device alone does.
  std::vector<std::vector<smi::Reading>> sample_all(const std::vector<std::uint32_t>& devices,
                                                    const smi::SampleOptions& what) const override {
    pb::GetMetricsRequest request;
    for (const std::uint32_t device : devices) request.add_devices(std::to_string(device));
    for (const smi::MetricId id : what.metrics) request.add_metrics(std::string(smi::find_metric(id)->name));
    request.set_include_facts(what.identity || what.static_info);
    pb::MetricsSnapshot snapshot;
    call("GetMetrics", request, snapshot);
    std::map<std::uint32_t, const pb::DeviceMetrics*> answered;
    for (const pb::DeviceMetrics& d : snapshot.devices()) answered.emplace(d.device().index(), &d);
    std::vector<std::vector<smi::Reading>> out;
    for (const std::uint32_t device : devices) {
      const auto it = answered.find(device);
      if (it == answered.end()) {
        throw smi::Error(smi::Error::Code::read_failure, fmt::format("{}: no answer for GPU {}", where_, device));
      }
      const pb::DeviceMetrics& d = *it->second;
      if (what.live && !d.device().up()) {
        throw smi::Error(smi::Error::Code::read_failure,
                         fmt::format("{}: GPU {} has no current sample (stuck past the read deadline)", where_, device));
      }
      auto& readings = out.emplace_back();
      for (smi::Reading& r : proto::from_proto(d.readings())) {
        if (kind_asked(smi::find_metric(r.id)->kind, what)) readings.push_back(std::move(r));
      }
      if (d.device().sample_age_seconds() >= 0) {
        std::lock_guard lock(mutex_);
        ages_[device] = d.device().sample_age_seconds();
      }
    }
    return out;
  }

  std::optional<double> sample_age_s(std::uint32_t device) const override {
    std::lock_guard lock(mutex_);
    const auto it = ages_.find(device);
    if (it == ages_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<smi::Partition> partitions(std::uint32_t device) const override {
    pb::GetPartitionsRequest request;
    request.add_devices(std::to_string(device));
    pb::GetPartitionsResponse answer;
    call("GetPartitions", request, answer);
    std::vector<smi::Partition> out;
    for (const pb::DevicePartitions& d : answer.devices()) {
      for (const pb::Partition& p : d.partitions()) {
        out.push_back(proto::from_proto(p));
      }
    }
    return out;
  }

  smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const override {
    return std::move(health_all({device}, policy_file).front());
  }

  // One GetHealth for every device asked.
  std::vector<smi::HealthReport> health_all(const std::vector<std::uint32_t>& devices,
                                            const std::string& policy_file) const override {
    if (!policy_file.empty()) {
      throw smi::Error(smi::Error::Code::invalid_argument,
                       "--config with --host: the daemon checks health with the thresholds of its own configuration");
    }
    pb::GetHealthRequest request;
    for (const std::uint32_t device : devices) request.add_devices(std::to_string(device));
    pb::HealthSnapshot answer;
    call("GetHealth", request, answer);
    std::map<std::uint32_t, const pb::DeviceHealth*> answered;
    for (const pb::DeviceHealth& d : answer.devices()) answered.emplace(d.device().index(), &d);
    std::vector<smi::HealthReport> out;
    for (const std::uint32_t device : devices) {
      const auto it = answered.find(device);
      if (it == answered.end()) {
        throw smi::Error(smi::Error::Code::read_failure, fmt::format("{}: no health answer for GPU {}", where_, device));
      }
      out.push_back(proto::from_proto(*it->second, device));
    }
    return out;
  }

 private:
  void check(const char* method, const DaemonLink::Outcome& outcome) const {
    if (outcome.code != 0) {
      throw smi::Error(smi::Error::Code::read_failure, fmt::format("{}: {}: {}", where_, method, outcome.message));
    }
  }
  void call(const char* method, const google::protobuf::MessageLite& request, google::protobuf::MessageLite& response) const {
    check(method, link_->call(method, request, response));
  }

  std::unique_ptr<DaemonLink> link_;
  std::string where_;
  std::vector<smi::DeviceSummary> devices_;
  mutable std::mutex mutex_;
  mutable std::map<std::uint32_t, double> ages_;
};

}  // namespace

std::unique_ptr<DeviceSource> daemon_source(std::unique_ptr<DaemonLink> link, std::string where) {
  return std::make_unique<DaemonSource>(std::move(link), std::move(where));
}

}  // namespace hipstack::cli
