// The local query protocol (proto/hipstack/monitor/v1/local.proto): hipstack-smi's fast path on the
// daemon's unix socket. The unix listener tells these connections from gRPC ones by their first
// bytes and hands them here; each is served on a thread of its own, bounded in number, size, idle
// time and lifetime, so a client that stalls or floods holds one slot for seconds at most.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "grpc_service.hpp"

namespace hipstack::smid {

// The 8 bytes a local query client sends first (gRPC clients send "PRI * HTTP/2.0...").
inline constexpr std::string_view kLocalQueryHello = "HSQUERY1";

struct LocalQueryLimits {
  std::size_t max_connections = 16;                   // served at once; more are closed at once
  std::size_t max_request_bytes = 64 * 1024;          // a LocalCall; every real one is far smaller
  std::chrono::milliseconds idle{5000};               // between calls, and for one frame to arrive
  std::chrono::milliseconds lifetime{30000};          // of one connection, whatever it does
};

class LocalQueryServer {
 public:
  explicit LocalQueryServer(MonitorService& service, LocalQueryLimits limits = {});
  ~LocalQueryServer();  // ends every connection and waits for its thread
  LocalQueryServer(const LocalQueryServer&) = delete;
  LocalQueryServer& operator=(const LocalQueryServer&) = delete;

  // Takes fd (its hello already read): served on a thread, or closed at once when every slot is busy.
  void serve(int fd);

  // One call: the serialized LocalCall in, the serialized LocalReply out (public for the tests).
  [[nodiscard]] std::string answer(std::string_view call) const;

 private:
  struct Connection {
    int fd = -1;
    bool finished = false;
    std::thread thread;
  };
  void run(Connection& connection);
  void reap();  // joins the threads of finished connections; mutex_ held

  MonitorService& service_;
  LocalQueryLimits limits_;
  std::mutex mutex_;
  bool stopping_ = false;
  std::list<Connection> connections_;
};

}  // namespace hipstack::smid
