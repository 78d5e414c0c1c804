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

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace hipstack::smid {
namespace {

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

std::optional<PeerCredentials> credentials_of(int fd) {
  ucred cred{};
  socklen_t length = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return std::nullopt;
  PeerCredentials out{cred.pid, cred.uid, cred.gid, {}};
  std::vector<gid_t> groups(64);
  length = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &length) != 0 && errno == ERANGE) {
    groups.resize(length / sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &length) != 0) length = 0;
  }
  groups.resize(length / sizeof(gid_t));
  out.groups = std::move(groups);
  return out;
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

ino_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? st.st_ino : 0;
}

}  // namespace

void PeerRegistry::record(int fd, PeerCredentials credentials) {
  const ino_t inode = inode_of(fd);
  std::lock_guard lock(mutex_);
  by_fd_[fd] = Entry{std::move(credentials), inode};
}

PeerRegistry::Occupancy PeerRegistry::occupancy(uid_t uid) {
  std::lock_guard lock(mutex_);
  Occupancy out;
  for (auto it = by_fd_.begin(); it != by_fd_.end();) {
    if (it->second.socket_inode == 0 || inode_of(it->first) != it->second.socket_inode) {
      it = by_fd_.erase(it);
      continue;
    }
    ++out.total;
    if (it->second.credentials.uid == uid) ++out.of_uid;
    ++it;
  }
  return out;
}

std::optional<PeerCredentials> PeerRegistry::find(std::string_view grpc_peer) const {
  if (!grpc_peer.starts_with("fd:")) return std::nullopt;
  int fd = -1;
  const auto digits = grpc_peer.substr(3);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  std::lock_guard lock(mutex_);
  const auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second.credentials;
}

UnixListener::UnixListener(const std::string& path, const std::string& group, grpc::Server& server, PeerRegistry& registry,
                           UnixLimits limits)
    : path_(path), server_(server), registry_(registry), limits_(limits), spare_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
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
  ::close(listen_fd_);
  ::close(stop_fd_);
  if (spare_fd_ >= 0) ::close(spare_fd_);
  ::unlink(path_.c_str());
}

void UnixListener::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
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
      continue;
    }
    const auto credentials = credentials_of(fd);
    if (!credentials) {
      ::close(fd);
      continue;
    }
    // Closed at once when over its share: the client sees the connection end (UNAVAILABLE).
    const auto open = registry_.occupancy(credentials->uid);
    const std::size_t table = credentials->uid == 0 ? limits_.max_connections : limits_.max_connections - limits_.root_reserve;
    if (open.total >= table || (credentials->uid != 0 && open.of_uid >= limits_.max_per_uid)) {
      ::close(fd);
      continue;
    }
    registry_.record(fd, *credentials);
    grpc::AddInsecureChannelFromFd(&server_, fd);  // gRPC owns fd from here
  }
}

}  // namespace hipstack::smid
