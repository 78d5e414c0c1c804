// The local query protocol (wire/proto/hipstack/monitor/v1/local.proto) on the unix socket, for
// hipstack-smi's fast path (local_query.hpp).
#include "local_query.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <utility>

#include "hipstack/monitor/v1/local.pb.h"
#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until fd is ready for `events` or the deadline passes.
bool wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Reads exactly `size` bytes. False on end of stream, an error or the deadline.
bool read_exact(int fd, char* out, std::size_t size, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd, out + done, size - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0) {
      return false;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_ready(fd, POLLIN, deadline)) return false;
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

bool write_all(int fd, const std::string& bytes, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLOUT, deadline)) return false;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

std::string frame(const std::string& payload) {
  const auto size = static_cast<std::uint32_t>(payload.size());
  std::string out{static_cast<char>(size >> 24), static_cast<char>(size >> 16), static_cast<char>(size >> 8),
                  static_cast<char>(size)};
  return out + payload;
}

pb::LocalReply refusal(grpc::StatusCode code, std::string message) {
  pb::LocalReply reply;
  reply.set_code(code);
  reply.set_message(std::move(message));
  return reply;
}

// Parses the request, runs the method, packs its answer.
template <typename Request, typename Response>
pb::LocalReply call(const std::string& bytes, const char* method,
                    const std::function<grpc::Status(const Request*, Response*)>& run) {
  Request request;
  if (!request.ParseFromString(bytes)) {
    return refusal(grpc::StatusCode::INVALID_ARGUMENT, std::string(method) + ": the request does not parse");
  }
  Response response;
  const grpc::Status status = run(&request, &response);
  if (!status.ok()) return refusal(status.error_code(), status.error_message());
  pb::LocalReply reply;
  response.SerializeToString(reply.mutable_response());
  return reply;
}

}  // namespace

LocalQueryServer::LocalQueryServer(MonitorService& service, LocalQueryLimits limits) : service_(service), limits_(limits) {}

LocalQueryServer::~LocalQueryServer() {
  std::list<Connection> ending;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // Wakes every thread in poll: it sees the end of the stream and finishes.
    for (Connection& c : connections_) ::shutdown(c.fd, SHUT_RDWR);
    ending.splice(ending.end(), connections_);
  }
  for (Connection& c : ending) c.thread.join();
}

void LocalQueryServer::reap() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->finished) {
      ++it;
      continue;
    }
    it->thread.join();
    it = connections_.erase(it);
  }
}

void LocalQueryServer::serve(int fd) {
  std::lock_guard lock(mutex_);
  reap();
  if (stopping_ || connections_.size() >= limits_.max_connections) {
    ::close(fd);  // the client sees the stream end and reads the hardware itself
    return;
  }
  Connection& c = connections_.emplace_back();
  c.fd = fd;
  c.thread = std::thread([this, &c] { run(c); });
}

void LocalQueryServer::run(Connection& connection) {
  name_thread("smid-local");
  const int fd = connection.fd;
  const auto end_of_life = Clock::now() + limits_.lifetime;
  for (;;) {
    const auto deadline = std::min(end_of_life, Clock::now() + limits_.idle);
    std::array<char, 4> header{};
    if (!read_exact(fd, header.data(), header.size(), deadline)) break;
    const std::uint32_t size = (std::uint32_t{static_cast<unsigned char>(header[0])} << 24) |
                               (std::uint32_t{static_cast<unsigned char>(header[1])} << 16) |
                               (std::uint32_t{static_cast<unsigned char>(header[2])} << 8) |
                               std::uint32_t{static_cast<unsigned char>(header[3])};
    if (size > limits_.max_request_bytes) {
      pb::LocalReply reply = refusal(grpc::StatusCode::RESOURCE_EXHAUSTED, "request larger than " +
                                                                                 std::to_string(limits_.max_request_bytes) + " bytes");
      write_all(fd, frame(reply.SerializeAsString()), deadline);
      break;  // the rest of the stream cannot be framed any more
    }
    std::string payload(size, '\0');
    if (!read_exact(fd, payload.data(), payload.size(), deadline)) break;
    if (!write_all(fd, frame(answer(payload)), std::min(end_of_life, Clock::now() + limits_.idle))) break;
  }
  std::lock_guard lock(mutex_);
  ::close(fd);
  connection.finished = true;
}

std::string LocalQueryServer::answer(std::string_view bytes) const {
  pb::LocalCall local;
  pb::LocalReply reply;
  if (!local.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    reply = refusal(grpc::StatusCode::INVALID_ARGUMENT, "the call does not parse as a hipstack.monitor.v1.LocalCall");
  } else {
    MonitorService& s = service_;
    const std::string& m = local.method();
    const std::string& r = local.request();
    if (m == "ListDevices") {
      reply = call<pb::ListDevicesRequest, pb::ListDevicesResponse>(
          r, "ListDevices", [&s](const auto* q, auto* a) { return s.list_devices(q, a); });
    } else if (m == "GetDevice") {
      reply = call<pb::GetDeviceRequest, pb::DeviceDetail>(r, "GetDevice",
                                                           [&s](const auto* q, auto* a) { return s.get_device(q, a); });
    } else if (m == "ListMetrics") {
      reply = call<pb::ListMetricsRequest, pb::ListMetricsResponse>(
          r, "ListMetrics", [&s](const auto* q, auto* a) { return s.list_metrics(q, a); });
    } else if (m == "GetMetrics") {
      reply = call<pb::GetMetricsRequest, pb::MetricsSnapshot>(r, "GetMetrics",
                                                               [&s](const auto* q, auto* a) { return s.get_metrics(q, a); });
    } else if (m == "GetHealth") {
      reply = call<pb::GetHealthRequest, pb::HealthSnapshot>(r, "GetHealth",
                                                             [&s](const auto* q, auto* a) { return s.get_health(q, a); });
    } else if (m == "GetPartitions") {
      reply = call<pb::GetPartitionsRequest, pb::GetPartitionsResponse>(
          r, "GetPartitions", [&s](const auto* q, auto* a) { return s.get_partitions(q, a); });
    } else {
      // The method name is the client's data: echoed short and printable only.
      std::string name = m.substr(0, 64);
      std::replace_if(name.begin(), name.end(), [](char c) { return c < 0x20 || c > 0x7e; }, '?');
      reply = refusal(grpc::StatusCode::UNIMPLEMENTED,
                      "not a read-only method of hipstack.monitor.v1.Monitor: \"" + name + "\"");
    }
  }
  return reply.SerializeAsString();
}

}  // namespace hipstack::smid
