// The gRPC API on plaintext TCP, accepted by the daemon itself so that it can stop a flood that
// gRPC 1.51 cannot: a client opening and resetting calls as fast as it can (HTTP/2 rapid reset,
// CVE-2023-44487) makes gRPC read and start calls faster than they can be retired, and the daemon
// has no hook inside gRPC to refuse them. What it can see is the bytes each connection sends
// (TCP_INFO): every request of this API is small, so a connection that sends more than a burst
// and then more than a steady rate is a flood. It is shut down, and its source address is refused
// for a while, so that reconnecting does not restart the flood. Each connection is handed to gRPC
// (AddInsecureChannelFromFd: plaintext only, so TLS listens through gRPC and is not guarded).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace grpc {
class Server;
}

namespace hipstack::smid {

class PeerRegistry;

struct TcpGuardLimits {
  std::uint64_t burst_bytes = 64 * 1024;      // at once: the largest request gRPC accepts (kMaxRequestBytes)
  std::uint64_t bytes_per_second = 16 * 1024;  // sustained: some 250 small calls a second; 0: no guard
  std::chrono::milliseconds check_every{100};  // while a connection is open; no wake-ups without one
  std::chrono::seconds refuse_for{10};         // a flooding source's new connections are closed at once
  int receive_buffer_bytes = 16 * 1024;        // SO_RCVBUF (Linux doubles it): what a flood can queue
                                               // unseen while the daemon is descheduled
};

class TcpListener {
 public:
  // Binds every address `host` resolves to (numeric or a name; "[::]" for IPv6) on `port` ("0":
  // one free port, the same on each address). Throws std::runtime_error naming the address.
  TcpListener(const std::string& host, const std::string& port, std::function<grpc::Server&()> server, PeerRegistry& registry,
              TcpGuardLimits limits = {});
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }

  static constexpr std::size_t kMaxRefusedSources = 4096;  // the refusal list's bound

 private:
  struct Connection {
    int fd = -1;
    ino_t inode = 0;     // the accepted socket: gRPC closes fd without telling us, and the number is reused
    std::string source;  // an IPv4 address, or an IPv6 /64
    std::chrono::steady_clock::time_point opened;
    std::uint64_t received_at_open = 0;
    std::uint64_t received = 0;  // TCP_INFO's bytes received at the last check
    double allowance = 0;  // bytes it may still send now (a token bucket)
    std::chrono::steady_clock::time_point checked;
  };
  void loop();
  void accept_from(int listen_fd);
  void check_connections();

  std::function<grpc::Server&()> server_;  // gRPC's server, started at its first call (grpc_server.hpp)
  PeerRegistry& registry_;
  TcpGuardLimits limits_;
  std::vector<int> listen_fds_;
  int port_ = 0;
  int stop_fd_ = -1;
  int spare_fd_ = -1;  // closed to accept-and-shed when the process is out of descriptors
  std::vector<Connection> connections_;  // the thread's only
  std::map<std::string, std::chrono::steady_clock::time_point> refused_until_;  // the thread's only
  std::thread thread_;
};

}  // namespace hipstack::smid
