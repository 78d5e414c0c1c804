// hipstack-smi's fast path: the local query protocol to the node's hipstack-smid
// (local_daemon.hpp).
#include "local_daemon.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "daemon_source.hpp"
#include "hipstack/monitor/v1/local.pb.h"

namespace hipstack::cli {
namespace {

namespace pb = ::hipstack::monitor::v1;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kHello = "HSQUERY1";           // local.proto
constexpr std::uint32_t kMaxReplyBytes = 64u << 20;       // a reply for hundreds of GPUs fits in far less

smi::Error failure(const std::string& socket, const std::string& what) {
  return smi::Error(smi::Error::Code::read_failure, fmt::format("hipstack-smid at unix:{}: {}", socket, what));
}

class LocalLink final : public DaemonLink {
 public:
  LocalLink(std::string socket, unsigned first_answer_ms, unsigned call_timeout_ms)
      : socket_(std::move(socket)), timeout_(first_answer_ms), later_timeout_(call_timeout_ms) {
    sockaddr_un address{};
    if (socket_.size() >= sizeof address.sun_path) throw failure(socket_, "socket path too long");
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) throw failure(socket_, std::strerror(errno));
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_.c_str(), socket_.size() + 1);
    // A unix socket connects at once or not at all (EAGAIN: its backlog is full).
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      throw failure(socket_, std::strerror(error));
    }
    if (!send_all(std::string(kHello), Clock::now() + timeout_)) throw failure(socket_, "the hello was not taken");
  }
  ~LocalLink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  LocalLink(const LocalLink&) = delete;
  LocalLink& operator=(const LocalLink&) = delete;

  Outcome call(const char* method, const google::protobuf::MessageLite& request,
               google::protobuf::MessageLite& response) const override {
    pb::LocalCall local;
    local.set_method(method);
    request.SerializeToString(local.mutable_request());
    const std::string payload = local.SerializeAsString();
    const auto size = static_cast<std::uint32_t>(payload.size());
    const std::string frame = std::string{static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                                          static_cast<char>(size >> 8), static_cast<char>(size)} + payload;
    const auto deadline = Clock::now() + timeout_;
    if (!send_all(frame, deadline)) throw failure(socket_, fmt::format("{}: the call could not be sent", method));
    std::array<unsigned char, 4> header{};
    if (!receive(header.data(), header.size(), deadline)) {
      throw failure(socket_, fmt::format("{}: no answer within {} ms", method, timeout_.count()));
    }
    const std::uint32_t length = (std::uint32_t{header[0]} << 24) | (std::uint32_t{header[1]} << 16) |
                                 (std::uint32_t{header[2]} << 8) | std::uint32_t{header[3]};
    if (length > kMaxReplyBytes) throw failure(socket_, fmt::format("{}: a reply of {} bytes is not taken", method, length));
    std::string bytes(length, '\0');
    if (!receive(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), deadline)) {
      throw failure(socket_, fmt::format("{}: the answer was cut short", method));
    }
    pb::LocalReply reply;
    if (!reply.ParseFromString(bytes)) throw failure(socket_, fmt::format("{}: the answer does not parse", method));
    if (reply.code() == 0 && !response.ParseFromString(reply.response())) {
      throw failure(socket_, fmt::format("{}: the answer's {} does not parse", method, response.GetTypeName()));
    }
    timeout_ = later_timeout_;  // the daemon answered: later calls may take longer (a big node)
    return {reply.code(), reply.message()};
  }

 private:
  bool wait(short events, Clock::time_point deadline) const {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(left));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) return false;
    }
  }
  bool send_all(const std::string& bytes, Clock::time_point deadline) const {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n > 0) done += static_cast<std::size_t>(n);
      else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!wait(POLLOUT, deadline)) return false;
      } else if (!(n < 0 && errno == EINTR)) {
        return false;
      }
    }
    return true;
  }
  bool receive(unsigned char* out, std::size_t size, Clock::time_point deadline) const {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::recv(fd_, out + done, size - done, 0);
      if (n > 0) done += static_cast<std::size_t>(n);
      else if (n == 0) return false;
      else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!wait(POLLIN, deadline)) return false;
      } else if (errno != EINTR) {
        return false;
      }
    }
    return true;
  }

  std::string socket_;
  int fd_ = -1;
  mutable std::chrono::milliseconds timeout_;
  std::chrono::milliseconds later_timeout_;
};

}  // namespace

std::string local_daemon_socket() {
  const char* given = std::getenv("HIPSTACK_SMID_SOCKET");
  return given != nullptr && *given != '\0' ? given : "/run/hipstack/smid.sock";
}

std::unique_ptr<DeviceSource> connect_local_daemon(const std::string& socket, std::string& why_not,
                                                   unsigned first_answer_ms, unsigned call_timeout_ms) {
  if (::access(socket.c_str(), F_OK) != 0) {
    why_not = fmt::format("no hipstack-smid socket at {}", socket);
    return nullptr;
  }
  try {
    auto link = std::make_unique<LocalLink>(socket, first_answer_ms, call_timeout_ms);
    return daemon_source(std::move(link), "hipstack-smid at unix:" + socket);  // lists the GPUs: the first answer
  } catch (const smi::Error& e) {
    why_not = e.what();
    return nullptr;
  }
}

}  // namespace hipstack::cli
