// The gRPC unix socket: accepts, records each peer's credentials and hands the connection to gRPC
// (unix_listener.hpp).
#include "unix_listener.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <grp.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include "local_query.hpp"
#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

// Removes a socket left behind by a previous run (nothing answers on it); refuses anything else.
void remove_stale(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(fmt::format("{} exists and is not a socket: not replacing it", path));
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const bool alive = ::connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(probe);
  if (alive) throw std::runtime_error(fmt::format("{}: another daemon is listening there", path));
  ::unlink(path.c_str());
}

}  // namespace

UnixListener::UnixListener(const std::string& path, const std::string& group, std::function<grpc::Server&()> server,
                           LocalQueryServer& queries, PeerRegistry& registry, UnixLimits limits)
    : path_(path), server_(std::move(server)), queries_(queries), registry_(registry), limits_(limits), spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) throw std::runtime_error(fmt::format("{}: socket path too long", path));
  remove_stale(path);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw system_error("socket(AF_UNIX)");
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const auto error = system_error(fmt::format("cannot bind {}", path));
    ::close(listen_fd_);
    throw error;
  }
  // Readable and writable by the owner and the socket group; nobody else may connect.
  ::chmod(path.c_str(), 0660);
  note_ = fmt::format("{} (mode 0660", path);
  struct group g {};
  struct group* found = nullptr;
  std::vector<char> buffer(16384);
  if (!group.empty() && ::getgrnam_r(group.c_str(), &g, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    if (::chown(path.c_str(), static_cast<uid_t>(-1), found->gr_gid) == 0) {
      note_ += fmt::format(", group {})", group);
    } else {
      note_ += fmt::format(", group {} not set: {})", group, std::strerror(errno));
    }
  } else {
    note_ += fmt::format(", no group \"{}\" on this system: owner only)", group);
  }
  if (::listen(listen_fd_, 128) != 0) {
    const auto error = system_error(fmt::format("listen on {}", path));
    ::close(listen_fd_);
    ::unlink(path.c_str());
    throw error;
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { accept_loop(); });
}

UnixListener::~UnixListener() {
  const std::uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) {
    // The thread also stops when the socket closes below.
  }
  if (thread_.joinable()) thread_.join();
  for (const Unsorted& u : unsorted_) ::close(u.fd);
  ::close(listen_fd_);
  ::close(stop_fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
  ::unlink(path_.c_str());
}

void UnixListener::accept_loop() {
  name_thread("smid-listen");
  for (;;) {
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    auto wake = std::chrono::steady_clock::time_point::max();
    constexpr auto kPartialRetry = std::chrono::milliseconds(20);
    for (const Unsorted& u : unsorted_) {
      fds.push_back({u.fd, static_cast<short>(u.partial ? 0 : POLLIN), 0});  // POLLHUP and POLLERR still come
      wake = std::min(wake, u.partial ? std::min(u.deadline, std::chrono::steady_clock::now() + kPartialRetry) : u.deadline);
    }
    int timeout = -1;
    if (!unsorted_.empty()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(wake - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<std::int64_t>(0, left.count()));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    // Sorted, failed or late connections leave the waiting list (sort() hands on or closes them).
    const auto now = std::chrono::steady_clock::now();
    std::vector<Unsorted> still;
    for (std::size_t i = 0; i < unsorted_.size(); ++i) {
      Unsorted& u = unsorted_[i];
      if ((fds[i + 2].revents != 0 || u.partial) && sort(u)) continue;
      if (now >= u.deadline) {
        ::close(u.fd);  // said nothing in time
        continue;
      }
      still.push_back(u);
    }
    unsorted_ = std::move(still);
    if ((fds[0].revents & POLLIN) != 0) accept_one();
  }
}

bool UnixListener::sort(Unsorted& connection) {
  constexpr std::string_view kGrpcPreface = "PRI * HT";  // HTTP/2's connection preface, as gRPC sends it
  std::array<char, kLocalQueryHello.size()> first{};
  const ssize_t n = ::recv(connection.fd, first.data(), first.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  const std::string_view seen(first.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  if (n > 0 && seen.size() < first.size() &&
      (kGrpcPreface.starts_with(seen) || kLocalQueryHello.starts_with(seen))) {
    connection.partial = true;
    return false;  // a prefix of either: wait for the rest
  }
  if (seen == kGrpcPreface) {
    grpc::AddInsecureChannelFromFd(&server_(), connection.fd);  // gRPC owns fd from here
  } else if (seen == kLocalQueryHello && ::recv(connection.fd, first.data(), first.size(), MSG_DONTWAIT) == n) {
    queries_.serve(connection.fd);
  } else {
    ::close(connection.fd);  // closed by the peer, an error, or neither protocol
  }
  return true;
}

void UnixListener::accept_one() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if ((errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
      // Out of descriptors: take the waiting connection off the queue with the spare one and
      // close it, rather than leave the listener readable (a busy loop) and the client waiting.
      ::close(spare_fd_);
      if (const int shed = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC); shed >= 0) ::close(shed);
      spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    } else if (errno == EMFILE || errno == ENFILE) {
      ::usleep(10000);  // no spare either: back off, keep serving
    }
    return;
  }
  const auto credentials = credentials_of(fd);
  // Closed at once when over its share, or when too many wait to say what they are: the client
  // sees the connection end (gRPC: UNAVAILABLE; hipstack-smi reads the hardware itself).
  const auto open = credentials ? registry_.occupancy(credentials->uid) : PeerRegistry::Occupancy{};
  const std::size_t table = credentials && credentials->uid == 0 ? limits_.max_connections
                                                                 : limits_.max_connections - limits_.root_reserve;
  if (!credentials || open.total >= table || (credentials->uid != 0 && open.of_uid >= limits_.max_per_uid) ||
      unsorted_.size() >= kMaxUnsorted) {
    ::close(fd);
    return;
  }
  registry_.record(fd, *credentials);
  unsorted_.push_back({fd, std::chrono::steady_clock::now() + kFirstBytesWithin});
}

}  // namespace hipstack::smid
