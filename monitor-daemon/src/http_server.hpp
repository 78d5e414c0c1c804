// A small HTTP/1.1 server for /metrics, /healthz and /readyz: GET and HEAD only, keep-alive (as
// Prometheus and load generators use it), bounded request size, read time and idle time, so a slow
// or hostile client cannot hold the daemon.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hipstack::smid {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Sent before `body`, in order: page parts shared by many responses are not copied for each.
  std::vector<std::shared_ptr<const std::string>> shared_parts;
};

// A text/plain answer.
inline HttpResponse plain_text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

// How many connections the server holds at once (each has a thread). A new connection that finds
// the table full takes the slot of the connection idle longest (waiting for a request), else of the
// oldest connection of the address holding the most, when that address holds at least two more
// than the newcomer's; an address never holds more than max_per_peer. So a flood from a few
// addresses cannot keep out a client from another one.
struct HttpLimits {
  int max_connections = 64;
  int max_per_peer = 16;
};

namespace detail {
class ConnectionTable;
}

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& path)>;
  // Binds host:port (throws std::runtime_error with the reason); port 0 picks a free port.
  HttpServer(const std::string& listen, Handler handler, HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] int port() const noexcept { return port_; }
  // Accepts the connections waiting now (call when fd() is readable) and answers each on its own
  // thread. The handler must be safe to call from several threads.
  void serve_ready();

 private:
  int fd_ = -1;
  int port_ = 0;
  int spare_fd_ = -1;  // closed to accept-and-shed when the process is out of descriptors
  std::shared_ptr<const Handler> handler_;
  // Shared with the connection threads, which may outlive a server replaced by a reload.
  std::shared_ptr<detail::ConnectionTable> connections_;
};

}  // namespace hipstack::smid
