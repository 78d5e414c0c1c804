// A client of the kubelet's pod-resources API (v1) on its unix socket (kubelet_client.hpp).
#include "kubelet_client.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <hipstack/smi.hpp>

#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "kubelet/podresources/v1/api.grpc.pb.h"

namespace hipstack::smid {
namespace {

// The kubelet is a peer: every name it sends leaves here printable (smi::printable_text), as text
// from files leaves the library, so no output (page, gRPC reply, terminal) carries its raw bytes.
std::vector<ContainerDevices> containers_of(const v1::PodResources& pod) {
  const auto text = [](const std::string& raw) { return smi::printable_text(raw); };
  std::vector<ContainerDevices> out;
  for (const v1::ContainerResources& container : pod.containers()) {
    ContainerDevices held{text(pod.name()), text(pod.namespace_()), text(container.name()), {}};
    for (const v1::ContainerDevices& devices : container.devices()) {
      for (const std::string& id : devices.device_ids()) held.devices.push_back({text(devices.resource_name()), text(id), "", "", {}});
    }
    for (const v1::DynamicResource& claim : container.dynamic_resources()) {
      for (const v1::ClaimResource& resource : claim.claim_resources()) {
        HeldDevice device{text(resource.driver_name()), text(resource.device_name()),
                          text(fmt::format("{}/{}", claim.claim_namespace(), claim.claim_name())), text(resource.pool_name()), {}};
        for (const v1::CDIDevice& cdi : resource.cdi_devices()) device.cdi_devices.push_back(text(cdi.name()));
        held.devices.push_back(std::move(device));
      }
    }
    if (!held.devices.empty()) out.push_back(std::move(held));
  }
  return out;
}

// The kubelet's error message as our errors quote it: printable, and no longer than a line or two.
std::string peer_message(const grpc::Status& status) {
  constexpr std::size_t kMaxBytes = 512;
  const std::string& message = status.error_message();
  return smi::printable_text(message.substr(0, kMaxBytes)) + (message.size() > kMaxBytes ? "..." : "");
}

}  // namespace

struct KubeletClient::Stub {
  std::unique_ptr<v1::PodResourcesLister::Stub> lister;
};

KubeletClient::KubeletClient(std::string socket_path, std::chrono::milliseconds deadline)
    : socket_path_(std::move(socket_path)), deadline_(deadline), stub_(std::make_unique<Stub>()) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxReplyBytes);
  // A local socket: a kubelet restarting is back within seconds, so do not wait gRPC's default
  // two minutes between attempts to reconnect.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  stub_->lister = v1::PodResourcesLister::NewStub(
      grpc::CreateCustomChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials(), arguments));
}

KubeletClient::~KubeletClient() = default;

std::vector<ContainerDevices> KubeletClient::list() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline_);
  v1::ListPodResourcesResponse reply;
  const grpc::Status status = stub_->lister->List(&context, v1::ListPodResourcesRequest(), &reply);
  if (!status.ok()) {
    throw std::runtime_error(fmt::format("kubelet pod-resources List on {}: {} ({})", socket_path_,
                                         peer_message(status), static_cast<int>(status.error_code())));
  }
  std::vector<ContainerDevices> out;
  for (const v1::PodResources& pod : reply.pod_resources()) {
    for (ContainerDevices& held : containers_of(pod)) out.push_back(std::move(held));
  }
  return out;
}

std::optional<std::vector<ContainerDevices>> KubeletClient::get(const std::string& pod, const std::string& namespace_name) {
  PodAnswer answer = std::move(get_all({{pod, namespace_name}}).front());
  if (!answer.error.empty()) throw std::runtime_error(answer.error);
  return std::move(answer.found);
}

std::vector<PodAnswer> KubeletClient::get_all(const std::vector<PodName>& pods) {
  struct Call {
    grpc::ClientContext context;
    v1::GetPodResourcesRequest request;
    v1::GetPodResourcesResponse reply;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  std::mutex mutex;
  std::condition_variable all_done;
  std::size_t done = 0;
  const auto deadline = std::chrono::system_clock::now() + deadline_;
  for (const PodName& pod : pods) {
    auto call = std::make_unique<Call>();
    call->context.set_deadline(deadline);
    call->request.set_pod_name(pod.pod);
    call->request.set_pod_namespace(pod.namespace_name);
    Call& c = *call;
    calls.push_back(std::move(call));
    stub_->lister->async()->Get(&c.context, &c.request, &c.reply, [&c, &mutex, &all_done, &done](grpc::Status status) {
      std::lock_guard lock(mutex);
      c.status = std::move(status);
      ++done;
      all_done.notify_one();
    });
  }
  {
    // Each call ends by its deadline; should gRPC be late, the calls are cancelled, and the wait
    // goes on until every callback has run (they use this frame).
    std::unique_lock lock(mutex);
    if (!all_done.wait_until(lock, deadline + std::chrono::seconds(1), [&] { return done == calls.size(); })) {
      for (const auto& call : calls) call->context.TryCancel();
      all_done.wait(lock, [&] { return done == calls.size(); });
    }
  }
  std::vector<PodAnswer> answers;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const grpc::Status& status = calls[i]->status;
    // The kubelet answers an unknown pod, and a Get its feature gate turns off, with plain errors
    // (status UNKNOWN): their messages tell them apart.
    const std::string& message = status.error_message();
    PodAnswer answer;
    if (status.ok()) {
      answer.found = containers_of(calls[i]->reply.pod_resources());
    } else if (status.error_code() == grpc::StatusCode::NOT_FOUND ||
               (status.error_code() == grpc::StatusCode::UNKNOWN && message.find("not found") != std::string::npos)) {
      answer.found = std::nullopt;
    } else {
      get_unimplemented_ = get_unimplemented_ || status.error_code() == grpc::StatusCode::UNIMPLEMENTED ||
                           (status.error_code() == grpc::StatusCode::UNKNOWN && message.find("disabled") != std::string::npos);
      answer.error = fmt::format("kubelet pod-resources Get {}/{} on {}: {} ({})", smi::printable_text(pods[i].namespace_name),
                                 smi::printable_text(pods[i].pod), socket_path_, peer_message(status),
                                 static_cast<int>(status.error_code()));
    }
    answers.push_back(std::move(answer));
  }
  return answers;
}

}  // namespace hipstack::smid
