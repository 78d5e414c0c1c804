// The gRPC server of hipstack-smid: its listeners, limits and shutdown (grpc_server.hpp).
#include "grpc_server.hpp"

#include <fmt/format.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/server_interceptor.h>

#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>
#include <stdexcept>

namespace hipstack::smid {
namespace {

constexpr int kMaxRequestBytes = 64 * 1024;  // every request fits in far less; bigger ones are hostile
constexpr int kMaxMetadataBytes = 8 * 1024;  // request headers: ours need a few hundred bytes
constexpr int kMaxStreamsPerConnection = 16; // HTTP/2 streams open at once on one connection
constexpr int kHandshakeTimeoutMs = 5000;    // a connection that has not finished TLS/HTTP/2 setup by then is closed
constexpr int kConnectionIdleMs = 300000;    // a connection with no call for 5 minutes is closed (GOAWAY)
constexpr std::size_t kMemoryQuotaBytes = 16u << 20;

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {} {}", what, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::ServerCredentials> tcp_credentials(const Config& config) {
  if (config.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(config.tls_client_ca.empty()
                                                ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!config.tls_client_ca.empty()) options.pem_root_certs = read_file(config.tls_client_ca, "tls_client_ca");
  options.pem_key_cert_pairs.push_back({read_file(config.tls_key, "tls_key"), read_file(config.tls_cert, "tls_cert")});
  return grpc::SslServerCredentials(options);
}

// Counts the streaming calls of the services gRPC brings (grpc.health.v1 Watch, server reflection)
// against the stream quota, as our own streams are: without it, idle reflection streams held every
// thread. A call refused a slot is cancelled (the client sees CANCELLED: an interceptor cannot set
// another status on a call it cancels). Our own service admits its streams itself, to answer
// RESOURCE_EXHAUSTED with the reason.
class StreamCounter final : public grpc::experimental::Interceptor {
 public:
  StreamCounter(grpc::experimental::ServerRpcInfo* info, const Access& access, StreamQuota& quota)
      : info_(info), access_(access), quota_(quota) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using Hook = grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_INITIAL_METADATA)) {
      // gRPC's health service is callback-based, reflection sync: only their common base is used.
      grpc::ServerContextBase* context = info_->server_context();
      const Caller caller = access_.identify(*context);
      const bool bidi = info_->type() == grpc::experimental::ServerRpcInfo::Type::BIDI_STREAMING;
      ticket_ = quota_.admit({caller.peer, caller.admin, bidi, [context] { context->TryCancel(); }, context->peer()});
      if (!ticket_.admitted()) context->TryCancel();
    }
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_MESSAGE)) ticket_.activity();
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  const Access& access_;
  StreamQuota& quota_;
  StreamQuota::Ticket ticket_;  // released when the call ends (gRPC destroys the interceptor then)
};

class StreamCounterFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  StreamCounterFactory(const Access& access, StreamQuota& quota) : access_(access), quota_(quota) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    const bool streaming = info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY;
    const bool ours = std::string_view(info->method()).starts_with("/hipstack.monitor.");
    if (!streaming || ours) return nullptr;
    return new StreamCounter(info, access_, quota_);
  }

 private:
  const Access& access_;
  StreamQuota& quota_;
};

}  // namespace

GrpcServer::GrpcServer(const Config& config, MonitorService::SamplerSource source, MonitorService::MutationRunner mutations,
                       JobAccounting* jobs)
    : access_(config, peers_),
      streams_(config.max_streams, config.slow_consumer_limit, config.stream_idle_limit),
      service_(std::move(source), access_, streams_, std::move(mutations), jobs) {
  max_threads_ = static_cast<int>(config.max_streams) + 16;
  const bool on_unix = config.grpc_listen.starts_with("unix:");
  // Plaintext TCP is accepted by the daemon (tcp_listener.hpp: the flood guard), and so is the unix
  // socket: gRPC starts at their first gRPC connection. TLS is accepted by gRPC, which cannot take an
  // accepted TLS connection: it starts now.
  const bool tls = !on_unix && !config.tls_cert.empty();
  const auto colon = config.grpc_listen.rfind(':');
  int tcp_port = 0;
  if (tls) {
    tls_credentials_ = tcp_credentials(config);
    tls_address_ = config.grpc_listen;
    std::lock_guard lock(start_mutex_);
    server_ = build(&tcp_port);
    if (tcp_port == 0) throw std::runtime_error(fmt::format("gRPC cannot listen on {}", config.grpc_listen));
  }
  if (!on_unix && !tls) {
    TcpGuardLimits guard;
    guard.burst_bytes = config.grpc_flood_burst_bytes;
    guard.bytes_per_second = config.grpc_flood_bytes_per_second;
    guard.refuse_for = config.grpc_flood_refuse;
    tcp_ = std::make_unique<TcpListener>(config.grpc_listen.substr(0, colon), config.grpc_listen.substr(colon + 1),
                                         [this]() -> grpc::Server& { return server(); }, peers_, guard);
    tcp_port = tcp_->port();
  }
  if (on_unix) {
    unix_ = std::make_unique<UnixListener>(config.grpc_listen.substr(5), config.grpc_socket_group,
                                           [this]() -> grpc::Server& { return server(); }, queries_, peers_);
    description_ = "unix:" + unix_->note();
  } else {
    description_ = fmt::format("{}:{} ({})", config.grpc_listen.substr(0, colon), tcp_port,
                               config.tls_cert.empty()       ? "plaintext, read-only"
                               : config.tls_client_ca.empty() ? "TLS, read-only"
                                                              : "mutual TLS");
  }
}

// Called with start_mutex_ held.
std::unique_ptr<grpc::Server> GrpcServer::build(int* tls_port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  // HTTP/2 and connection limits that gRPC 1.51 honours (docs/security.md says what each bounds,
  // and what 1.51 cannot: a cap on TCP connections, a RST_STREAM rate limit).
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, kMaxStreamsPerConnection);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kHandshakeTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, kConnectionIdleMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, kMaxMetadataBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  grpc::ResourceQuota quota("hipstack-smid");
  // Only gRPC's own sync services use these threads (a reflection stream holds one): ours are all
  // callback methods.
  quota.SetMaxThreads(max_threads_);
  // gRPC's buffers (per connection and call) come out of this; past it gRPC sheds (closes idle
  // connections, refuses calls) rather than grow: a flood of calls cannot take the daemon's memory.
  quota.Resize(kMemoryQuotaBytes);
  builder.SetResourceQuota(quota);
  if (tls_credentials_) builder.AddListeningPort(tls_address_, tls_credentials_, tls_port);
  builder.RegisterService(&service_);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<StreamCounterFactory>(access_, streams_));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) throw std::runtime_error("gRPC's server did not start");
  server->GetHealthCheckService()->SetServingStatus(true);
  server->GetHealthCheckService()->SetServingStatus(pb::Monitor::service_full_name(), true);
  return server;
}

grpc::Server& GrpcServer::server() {
  std::lock_guard lock(start_mutex_);
  if (!server_) server_ = build(nullptr);
  return *server_;
}

GrpcServer::~GrpcServer() {
  unix_.reset();  // no new connections
  tcp_.reset();
  // Streams end at once: their handlers see the cancellation within 50 ms.
  std::lock_guard lock(start_mutex_);
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
}

}  // namespace hipstack::smid
