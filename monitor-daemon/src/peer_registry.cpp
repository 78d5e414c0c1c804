// Who is on each connection handed to gRPC: SO_PEERCRED and the registry of peers (peer_registry.hpp).
#include "peer_registry.hpp"

#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>

namespace hipstack::smid {

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

ino_t socket_inode(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? st.st_ino : 0;
}

void PeerRegistry::record(int fd, PeerCredentials credentials) {
  const ino_t inode = socket_inode(fd);
  std::lock_guard lock(mutex_);
  by_fd_[fd] = Entry{std::move(credentials), {}, inode};
}

void PeerRegistry::record_tcp(int fd, std::string address) {
  const ino_t inode = socket_inode(fd);
  std::lock_guard lock(mutex_);
  by_fd_[fd] = Entry{std::nullopt, std::move(address), inode};
}

PeerRegistry::Occupancy PeerRegistry::occupancy(uid_t uid) {
  std::lock_guard lock(mutex_);
  Occupancy out;
  for (auto it = by_fd_.begin(); it != by_fd_.end();) {
    if (it->second.socket_inode == 0 || socket_inode(it->first) != it->second.socket_inode) {
      it = by_fd_.erase(it);
      continue;
    }
    if (!it->second.credentials) {
      ++it;  // TCP: not counted against the unix socket's table
      continue;
    }
    ++out.total;
    if (it->second.credentials->uid == uid) ++out.of_uid;
    ++it;
  }
  return out;
}

const PeerRegistry::Entry* PeerRegistry::entry(std::string_view grpc_peer) const {
  if (!grpc_peer.starts_with("fd:")) return nullptr;
  int fd = -1;
  const auto digits = grpc_peer.substr(3);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return nullptr;
  const auto it = by_fd_.find(fd);
  return it == by_fd_.end() ? nullptr : &it->second;
}

std::optional<PeerCredentials> PeerRegistry::find(std::string_view grpc_peer) const {
  std::lock_guard lock(mutex_);
  const Entry* found = entry(grpc_peer);
  return found != nullptr ? found->credentials : std::nullopt;
}

std::optional<std::string> PeerRegistry::find_tcp(std::string_view grpc_peer) const {
  std::lock_guard lock(mutex_);
  const Entry* found = entry(grpc_peer);
  if (found == nullptr || found->credentials) return std::nullopt;
  return found->tcp_address;
}

}  // namespace hipstack::smid
