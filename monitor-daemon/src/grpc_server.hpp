// The gRPC server of hipstack-smid: hipstack.monitor.v1.Monitor, grpc.health.v1 and server
// reflection, on a unix socket (with peer credentials) or TCP (plaintext and guarded against
// floods, or TLS, optionally mutual).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "access.hpp"
#include "config.hpp"
#include "grpc_service.hpp"
#include "local_query.hpp"
#include "stream_quota.hpp"
#include "tcp_listener.hpp"
#include "unix_listener.hpp"

namespace grpc {
class Server;
class ServerCredentials;
}

namespace hipstack::smid {

class GrpcServer {
 public:
  // Binds config.grpc_listen; throws std::runtime_error naming the address when it cannot.
  GrpcServer(const Config& config, MonitorService::SamplerSource source, MonitorService::MutationRunner mutations,
             JobAccounting* jobs = nullptr);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  [[nodiscard]] const std::string& description() const noexcept { return description_; }
 private:
  // gRPC's server, built and started at the first gRPC connection (TLS: at once, as gRPC listens
  // itself), so a daemon nobody calls over gRPC has none of gRPC's threads. Thread-safe: the
  // listeners' threads call it.
  grpc::Server& server();
  std::unique_ptr<grpc::Server> build(int* tls_port);

  int max_threads_ = 0;
  std::shared_ptr<grpc::ServerCredentials> tls_credentials_;  // only for TLS
  std::string tls_address_;
  std::mutex start_mutex_;
  PeerRegistry peers_;
  Access access_;
  StreamQuota streams_;  // shared by our streams and, through an interceptor, gRPC's own
  MonitorService service_;
  LocalQueryServer queries_{service_};  // hipstack-smi's fast path on the unix socket
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixListener> unix_;
  std::unique_ptr<TcpListener> tcp_;  // plaintext TCP (TLS listens through gRPC itself)
  std::string description_;
};

}  // namespace hipstack::smid
