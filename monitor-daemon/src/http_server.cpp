#include "http_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace hipstack::smid {
namespace {

constexpr std::size_t kMaxRequest = 8192;
constexpr int kReadTimeoutMs = 2000;
constexpr int kMaxConnections = 64;

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

void write_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away
    sent += static_cast<std::size_t>(n);
  }
}

void respond(int fd, const HttpResponse& r) {
  write_all(fd, fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                            r.status, reason(r.status), r.content_type, r.body.size(), r.body));
}

}  // namespace

HttpServer::HttpServer(const std::string& listen, Handler handler)
    : handler_(std::make_shared<const Handler>(std::move(handler))) {
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
}

void HttpServer::serve_ready() {
  for (;;) {
    const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;  // EAGAIN: nothing more waiting
    // Each connection gets its own thread, so a slow or silent client holds only itself; the
    // number of them is capped so a flood cannot exhaust the daemon.
    if (active_->load() >= kMaxConnections) {
      respond(client, {503, "text/plain", "too many connections\n"});
      ::close(client);
      continue;
    }
    active_->fetch_add(1);
    std::thread([client, handler = handler_, active = active_] {
      serve(client, *handler);
      ::close(client);
      active->fetch_sub(1);
    }).detach();
  }
}

void HttpServer::serve(int client, const Handler& handler) {
  std::string request;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReadTimeoutMs);
  while (request.find("\r\n\r\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return respond(client, {408, "text/plain", "request timeout\n"});
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[2048];
    const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<std::size_t>(n));
    const auto end = request.find("\r\n\r\n");
    if ((end == std::string::npos ? request.size() : end + 4) > kMaxRequest) {
      return respond(client, {431, "text/plain", "request too large\n"});
    }
  }
  const auto line_end = request.find("\r\n");
  const std::string line = request.substr(0, line_end);
  const auto first = line.find(' ');
  const auto second = first == std::string::npos ? std::string::npos : line.find(' ', first + 1);
  if (second == std::string::npos || line.compare(second + 1, 5, "HTTP/") != 0) {
    return respond(client, {400, "text/plain", "bad request line\n"});
  }
  const std::string method = line.substr(0, first);
  std::string path = line.substr(first + 1, second - first - 1);
  if (const auto query = path.find('?'); query != std::string::npos) path.resize(query);
  if (method != "GET" && method != "HEAD") return respond(client, {405, "text/plain", "only GET\n"});
  HttpResponse response;
  try {
    response = handler(path);
  } catch (const std::exception& e) {
    response = {500, "text/plain", std::string(e.what()) + "\n"};
  }
  if (method == "HEAD") {
    write_all(client, fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                  response.status, reason(response.status), response.content_type, response.body.size()));
    return;
  }
  respond(client, response);
}

}  // namespace hipstack::smid
