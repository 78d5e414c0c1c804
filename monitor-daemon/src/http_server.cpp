// The small HTTP/1.1 server for /metrics, /healthz and /readyz (http_server.hpp).
#include "http_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <vector>
#include <thread>

#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxRequest = 8192;
constexpr int kReadTimeoutMs = 2000;   // to receive a whole request once it has begun
constexpr int kIdleTimeoutMs = 10000;  // a kept-alive connection may wait this long for its next request
constexpr int kSendTimeoutMs = 10000;  // to hand one whole answer to a client (Prometheus' scrape timeout)

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Internal Server Error";
  }
}

// Sends one answer (head, then the body's parts) on a non-blocking socket within kSendTimeoutMs:
// a client that does not read loses its connection rather than holding its slot. False when the
// answer did not go out whole (timeout, client gone).
bool respond(int fd, const HttpResponse& r, bool keep_alive = false, bool head_only = false) {
  std::size_t body_size = r.body.size();
  for (const auto& part : r.shared_parts) body_size += part ? part->size() : 0;
  const std::string head = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
                                       r.status, reason(r.status), r.content_type, body_size,
                                       keep_alive ? "keep-alive" : "close");
  std::vector<std::string_view> parts{head};
  if (!head_only) {
    for (const auto& part : r.shared_parts) {
      if (part) parts.emplace_back(*part);
    }
    parts.emplace_back(r.body);
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(kSendTimeoutMs);
  // writev of what is left of the parts, without joining them into one buffer.
  std::size_t sent = 0;
  std::size_t total = 0;
  for (const std::string_view part : parts) total += part.size();
  std::vector<iovec> left(parts.size());  // refilled for each sendmsg, allocated once
  while (sent < total) {
    std::size_t count = 0;
    std::size_t skip = sent;
    for (const std::string_view part : parts) {
      if (skip >= part.size()) {
        skip -= part.size();
        continue;
      }
      left[count++] = {const_cast<char*>(part.data() + skip), part.size() - skip};
      skip = 0;
    }
    msghdr message{};
    message.msg_iov = left.data();
    message.msg_iovlen = count;
    const ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{fd, POLLOUT, 0};
      if (remaining.count() <= 0 || ::poll(&p, 1, static_cast<int>(remaining.count())) <= 0) return false;
      continue;
    }
    if (n <= 0) return false;  // the client went away
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Ends a connection whose client may still be sending: stop writing, then read and drop what
// arrives for a moment (at most 64 KiB, 200 ms), so the close does not reset the connection and
// destroy the answer before the client has read it.
void close_gently(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  std::size_t dropped = 0;
  char buffer[4096];
  while (dropped < 64 * 1024) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    dropped += static_cast<std::size_t>(n);
  }
}

// The value of header `name` (lower case) in a request head, lower-cased; "" when absent.
std::string header_value(const std::string& head, std::string_view name) {
  std::size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    const std::size_t start = pos + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string_view line(head.data() + start, (end == std::string::npos ? head.size() : end) - start);
    const std::size_t colon = line.find(':');
    if (colon == name.size()) {
      bool same = true;
      for (std::size_t i = 0; i < colon && same; ++i) same = std::tolower(static_cast<unsigned char>(line[i])) == name[i];
      if (same) {
        std::string value(line.substr(colon + 1));
        for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return value;
      }
    }
    pos = end;
  }
  return {};
}

// The peer's address without its port ("127.0.0.1", "::1"); an IPv4-mapped IPv6 address as IPv4.
std::string peer_address(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = {};
  if (peer.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
  } else if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      ::inet_ntop(AF_INET, a.s6_addr + 12, text, sizeof text);
    } else {
      ::inet_ntop(AF_INET6, &a, text, sizeof text);
    }
  }
  return text;
}

void serve(int client, const HttpServer::Handler& handler, detail::ConnectionTable& table);

}  // namespace

namespace detail {

// The open connections: who holds them, and which are idle (waiting for a request, nothing of it
// received yet). Every member is called with a connection's fd while that fd is still open.
class ConnectionTable {
 public:
  explicit ConnectionTable(HttpLimits limits) : limits_(limits) {}

  enum class Admission { admitted, peer_full, full };

  Admission admit(int fd, const std::string& peer) {
    std::lock_guard lock(mutex_);
    int own = 0;
    int live = 0;
    std::map<std::string, int> held;
    for (const auto& [other, c] : open_) {
      if (c.evicted) continue;  // its thread is on its way out
      ++live;
      ++held[c.peer];
      if (c.peer == peer) ++own;
    }
    if (own >= limits_.max_per_peer) return Admission::peer_full;
    if (live >= limits_.max_connections) {
      // The connection idle longest goes first (it only waits); else the oldest of the address
      // holding the most, when that address holds at least two more than the newcomer's (a slot
      // taken from an address holding about as many would only move the unfairness around).
      Connection* victim = nullptr;
      for (auto& [other, c] : open_) {
        if (!c.evicted && c.idle && (victim == nullptr || c.idle_since < victim->idle_since)) victim = &c;
      }
      int most = 0;
      for (const auto& [p, n] : held) most = std::max(most, n);
      for (auto& [other, c] : open_) {
        if (victim != nullptr && victim->idle) break;
        if (c.evicted || most <= own + 1 || held[c.peer] != most) continue;
        if (victim == nullptr || c.opened < victim->opened) victim = &c;
      }
      if (victim == nullptr) return Admission::full;
      victim->evicted = true;
      ::shutdown(victim->fd, SHUT_RDWR);  // its thread's poll/recv/send return at once
    }
    open_[fd] = Connection{fd, peer, Clock::now(), Clock::now(), true, false};
    return Admission::admitted;
  }

  void set_idle(int fd, bool idle) {
    std::lock_guard lock(mutex_);
    Connection& c = open_.at(fd);
    if (idle && !c.idle) c.idle_since = Clock::now();
    c.idle = idle;
  }

  // Before the fd is closed: a reused fd number must not find this entry.
  void remove(int fd) {
    std::lock_guard lock(mutex_);
    open_.erase(fd);
  }

 private:
  struct Connection {
    int fd = -1;
    std::string peer;
    Clock::time_point opened;
    Clock::time_point idle_since;
    bool idle = true;
    bool evicted = false;
  };
  HttpLimits limits_;
  std::mutex mutex_;
  std::map<int, Connection> open_;
};

}  // namespace detail

HttpServer::HttpServer(const std::string& listen, Handler handler, HttpLimits limits)
    : spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)),
      handler_(std::make_shared<const Handler>(std::move(handler))),
      connections_(std::make_shared<detail::ConnectionTable>(limits)) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("listen address must be host:port: " + listen);
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(fmt::format("cannot resolve {}: {}", listen, ::gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
      sockaddr_storage bound{};
      socklen_t length = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
      port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                          : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot listen on {}: {}", listen, last_error));
}

HttpServer::~HttpServer() {
  if (fd_ >= 0) ::close(fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
}

void HttpServer::serve_ready() {
  for (;;) {
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (client < 0 && (errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
      // Out of descriptors: the waiting connection would keep the listener readable (a busy
      // loop) and everyone waiting. Free the spare one to take it off the queue and close it.
      ::close(spare_fd_);
      client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) ::close(client);
      spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      continue;
    }
    if (client < 0) return;  // EAGAIN: nothing more waiting
    // Each connection gets its own thread, so a slow or silent client holds only itself; the
    // table caps them (see HttpLimits).
    const std::string peer = peer_address(client);
    if (const auto admission = connections_->admit(client, peer); admission != detail::ConnectionTable::Admission::admitted) {
      const char* refusal = admission == detail::ConnectionTable::Admission::peer_full ? "too many connections from your address\n"
                                                                                       : "too many connections\n";
      // One try, never a wait: this is the accepting thread.
      const std::string answer = fmt::format("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n"
                                             "Connection: close\r\n\r\n{}", std::strlen(refusal), refusal);
      [[maybe_unused]] const ssize_t sent = ::send(client, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(client);
      continue;
    }
    std::thread([client, handler = handler_, table = connections_] {
      name_thread("smid-http");
      serve(client, *handler, *table);
      table->remove(client);
      ::close(client);
    }).detach();
  }
}

namespace {

void serve(int client, const HttpServer::Handler& handler, detail::ConnectionTable& table) {
  std::string received;  // may hold the start of the next request (pipelining)
  for (bool first = true;; first = false) {
    // The first request must arrive within the read timeout; a kept-alive connection may idle
    // longer before its next one, but then that request too must arrive promptly.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(first ? kReadTimeoutMs : kIdleTimeoutMs);
    bool begun = !received.empty();
    table.set_idle(client, !begun);  // idle: the first to go when the table is full
    while (received.find("\r\n\r\n") == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        if (begun || first) respond(client, plain_text(408, "request timeout\n"));
        return;
      }
      pollfd p{client, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[2048];
      const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return;
      if (!begun) {
        begun = true;
        table.set_idle(client, false);
        deadline = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(kReadTimeoutMs));
      }
      received.append(buffer, static_cast<std::size_t>(n));
      const auto end = received.find("\r\n\r\n");
      if ((end == std::string::npos ? received.size() : end + 4) > kMaxRequest) {
        respond(client, plain_text(431, "request too large\n"));
        return;
      }
    }
    const std::size_t head_end = received.find("\r\n\r\n") + 4;
    const std::string head = received.substr(0, head_end);
    received.erase(0, head_end);  // requests we serve have no body
    const auto line_end = head.find("\r\n");
    const std::string line = head.substr(0, line_end);
    const auto first_space = line.find(' ');
    const auto second = first_space == std::string::npos ? std::string::npos : line.find(' ', first_space + 1);
    if (second == std::string::npos || line.compare(second + 1, 5, "HTTP/") != 0) {
      respond(client, plain_text(400, "bad request line\n"));
      return;
    }
    const std::string method = line.substr(0, first_space);
    std::string path = line.substr(first_space + 1, second - first_space - 1);
    if (const auto query = path.find('?'); query != std::string::npos) path.resize(query);
    // HTTP/1.1 keeps the connection unless asked to close; HTTP/1.0 only when asked to keep it.
    const std::string connection = header_value(head, "connection");
    const bool http11 = line.compare(second + 1, 8, "HTTP/1.1") == 0;
    const bool keep_alive = http11 ? connection.find("close") == std::string::npos
                                   : connection.find("keep-alive") != std::string::npos;
    if (method != "GET" && method != "HEAD") {
      respond(client, plain_text(405, "only GET\n"));
      return;
    }
    // GET and HEAD carry no body. A request that announces one is refused and the connection
    // closed, rather than its body being read as the next request (a proxy would disagree with us
    // about where requests start: request smuggling).
    std::string length = header_value(head, "content-length");
    std::erase_if(length, [](char c) { return c == ' ' || c == '\t'; });
    if (!header_value(head, "transfer-encoding").empty() || (!length.empty() && length != "0")) {
      respond(client, plain_text(400, "a GET request has no body\n"));
      return close_gently(client);
    }
    HttpResponse response;
    try {
      response = handler(path);
    } catch (const std::exception& e) {
      response = plain_text(500, std::string(e.what()) + "\n");
    }
    if (!respond(client, response, keep_alive, method == "HEAD") || !keep_alive) return;
  }
}

}  // namespace

}  // namespace hipstack::smid
