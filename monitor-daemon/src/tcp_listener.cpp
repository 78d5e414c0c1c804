// The gRPC API on plaintext TCP, accepted by the daemon itself so that it can stop a flood
// (tcp_listener.hpp).
#include "tcp_listener.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_received (glibc's netinet/tcp.h lacks it)
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "thread_name.hpp"
#include "peer_registry.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

// TCP_INFO's count of bytes the peer has sent (received in order by the kernel, read or not);
// nothing when the kernel does not report it.
std::optional<std::uint64_t> bytes_received(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return std::nullopt;
  if (length < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) return std::nullopt;
  return info.tcpi_bytes_received;
}

struct Address {
  std::string source;     // who is refused after a flood: "10.0.0.7" (IPv4-mapped IPv6 too), "2001:db8::/64"
  std::string grpc_peer;  // as gRPC names a peer it accepted: "ipv4:10.0.0.7:50536", "ipv6:[::1]:50536"
};

Address address_of(const sockaddr_storage& from, socklen_t length) {
  char host[NI_MAXHOST] = {};
  char port[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&from), length, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return {"unknown", "ipv4:unknown:0"};
  }
  std::string text = host;
  if (from.ss_family == AF_INET6 && text.starts_with("::ffff:") && text.find('.') != std::string::npos) {
    text = text.substr(7);  // an IPv4 client of a dual-stack socket
  }
  const bool v6 = text.find(':') != std::string::npos;
  std::string source = text;
  if (v6) {
    // One IPv6 host is given a /64 to pick addresses from: refusing one address would not stop it.
    in6_addr prefix = reinterpret_cast<const sockaddr_in6&>(from).sin6_addr;
    std::memset(prefix.s6_addr + 8, 0, 8);
    char shown[INET6_ADDRSTRLEN] = {};
    if (::inet_ntop(AF_INET6, &prefix, shown, sizeof shown) != nullptr) source = std::string(shown) + "/64";
  }
  return {source, v6 ? fmt::format("ipv6:[{}]:{}", text, port) : fmt::format("ipv4:{}:{}", text, port)};
}

}  // namespace

TcpListener::TcpListener(const std::string& host, const std::string& port, std::function<grpc::Server&()> server, PeerRegistry& registry,
                         TcpGuardLimits limits)
    : server_(std::move(server)), registry_(registry), limits_(limits), spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
  std::string node = host;
  if (node.size() >= 2 && node.front() == '[' && node.back() == ']') node = node.substr(1, node.size() - 2);
  const std::string where = fmt::format("{}:{}", host, port);
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || number > 65535) {
    throw std::runtime_error(fmt::format("gRPC cannot listen on {}: the port must be a number from 0 to 65535", where));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(node.empty() ? nullptr : node.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(fmt::format("gRPC cannot listen on {}: {}", where, ::gai_strerror(rc)));
  }
  const auto fail = [&](const char* what) {
    const std::string error = fmt::format("gRPC cannot listen on {}: {}: {}", where, what, std::strerror(errno));
    for (const int fd : listen_fds_) ::close(fd);
    listen_fds_.clear();
    ::freeaddrinfo(found);
    return std::runtime_error(error);
  };
  const bool several = found != nullptr && found->ai_next != nullptr;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw fail("socket");
    listen_fds_.push_back(fd);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // IPv6 alone ("[::]") also takes IPv4 clients; beside an IPv4 address of the same name it must not.
    const int v6only = several ? 1 : 0;
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
    // Set before listen() so that accepted sockets inherit it (and the window scale fits it).
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &limits_.receive_buffer_bytes, sizeof limits_.receive_buffer_bytes);
    sockaddr_storage address{};
    std::memcpy(&address, a->ai_addr, a->ai_addrlen);
    if (port_ != 0) {  // port 0 asked: every address gets the port the first one got
      if (a->ai_family == AF_INET) reinterpret_cast<sockaddr_in&>(address).sin_port = htons(static_cast<std::uint16_t>(port_));
      if (a->ai_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(address).sin6_port = htons(static_cast<std::uint16_t>(port_));
    }
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), a->ai_addrlen) != 0) throw fail("bind");
    if (::listen(fd, 128) != 0) throw fail("listen");
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) throw fail("getsockname");
    port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(bound).sin_port
                                             : reinterpret_cast<const sockaddr_in6&>(bound).sin6_port);
  }
  ::freeaddrinfo(found);
  if (listen_fds_.empty()) throw std::runtime_error(fmt::format("gRPC cannot listen on {}: no address", where));
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { loop(); });
}

TcpListener::~TcpListener() {
  const std::uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) {
    // Cannot fail on a fresh eventfd; the join below would then wait for the next wake-up.
  }
  if (thread_.joinable()) thread_.join();
  for (const int fd : listen_fds_) ::close(fd);
  ::close(stop_fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
}

void TcpListener::loop() {
  name_thread("smid-tcp");
  auto next_check = Clock::now() + limits_.check_every;
  for (;;) {
    std::vector<pollfd> fds;
    for (const int fd : listen_fds_) fds.push_back({fd, POLLIN, 0});
    fds.push_back({stop_fd_, POLLIN, 0});
    int timeout = -1;  // nothing to watch: sleep until a connection comes
    if (!connections_.empty()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_check - Clock::now());
      timeout = static_cast<int>(std::max<std::int64_t>(0, left.count()));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    if ((fds.back().revents & POLLIN) != 0) return;
    for (std::size_t i = 0; i < listen_fds_.size(); ++i) {
      if ((fds[i].revents & POLLIN) != 0) accept_from(listen_fds_[i]);
    }
    if (Clock::now() >= next_check || connections_.empty()) {
      check_connections();
      next_check = Clock::now() + limits_.check_every;
    }
  }
}

void TcpListener::accept_from(int listen_fd) {
  sockaddr_storage from{};
  socklen_t length = sizeof from;
  const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&from), &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
      // Out of descriptors: take the waiting connection off the queue with the spare one and close
      // it, rather than leave the listener readable (a busy loop) and the client waiting.
      ::close(spare_fd_);
      if (const int shed = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC); shed >= 0) ::close(shed);
      spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    } else if (errno == EMFILE || errno == ENFILE) {
      ::usleep(10000);  // no spare either: back off, keep serving
    }
    return;
  }
  const Address address = address_of(from, length);
  const auto now = Clock::now();
  if (const auto refused = refused_until_.find(address.source); refused != refused_until_.end()) {
    if (now < refused->second) {
      ::close(fd);  // a source that flooded: its reconnections do not reach gRPC
      return;
    }
    refused_until_.erase(refused);
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as gRPC sets on the sockets it accepts
  std::erase_if(connections_, [fd](const Connection& c) { return c.fd == fd; });  // closed by gRPC, number reused
  if (limits_.bytes_per_second > 0) {  // guarded: watched from now on
    const std::uint64_t received = bytes_received(fd).value_or(0);
    connections_.push_back({fd, socket_inode(fd), address.source, now, received, received, static_cast<double>(limits_.burst_bytes), now});
  }
  registry_.record_tcp(fd, address.grpc_peer);  // before gRPC can start a call on it
  grpc::AddInsecureChannelFromFd(&server_(), fd);  // gRPC owns fd from here: it closes it
}

void TcpListener::check_connections() {
  const auto now = Clock::now();
  std::erase_if(refused_until_, [now](const auto& entry) { return entry.second <= now; });
  std::erase_if(connections_, [&](Connection& c) {
    if (c.inode == 0 || socket_inode(c.fd) != c.inode) return true;  // gRPC has closed it
    const auto received = bytes_received(c.fd);
    if (!received) return true;  // no byte count from this kernel: not guarded
    const double seconds = std::chrono::duration<double>(now - c.checked).count();
    c.allowance = std::min(static_cast<double>(limits_.burst_bytes), c.allowance + seconds * static_cast<double>(limits_.bytes_per_second));
    c.allowance -= static_cast<double>(*received - c.received);
    c.received = *received;
    c.checked = now;
    if (c.allowance >= 0) return false;
    if (refused_until_.size() >= kMaxRefusedSources) {
      refused_until_.erase(std::min_element(refused_until_.begin(), refused_until_.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
    refused_until_[c.source] = now + limits_.refuse_for;
    std::fprintf(stderr,
                 "hipstack-smid: closed a gRPC connection from %s: it sent %llu bytes in %.1f s, past %llu at once and "
                 "%llu a second (a flood of calls, such as HTTP/2 rapid reset); new connections from %s are refused for %lld s\n",
                 c.source.c_str(), static_cast<unsigned long long>(*received - c.received_at_open),
                 std::chrono::duration<double>(now - c.opened).count(), static_cast<unsigned long long>(limits_.burst_bytes),
                 static_cast<unsigned long long>(limits_.bytes_per_second), c.source.c_str(),
                 static_cast<long long>(limits_.refuse_for.count()));
    // Said before it is done, so the log names the closing before the client can see it.
    // gRPC sees the end of the connection and closes it (and its calls); the number stays gRPC's.
    ::shutdown(c.fd, SHUT_RDWR);
    return true;
  });
}

}  // namespace hipstack::smid
