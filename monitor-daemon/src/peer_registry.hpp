// Who is on each connection the daemon hands to gRPC: the credentials of a unix-socket peer, the
// address of a TCP peer, found again by gRPC's peer name "fd:N". Written by the listeners
// (unix_listener.hpp, tcp_listener.hpp), read by access control (access.hpp) and the services.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hipstack::smid {

// The inode of the socket `fd` refers to; 0 when it refers to no socket. gRPC closes the connections
// handed to it without telling us, and the number may then name another file: a recorded inode tells
// the connection from its successor.
ino_t socket_inode(int fd);

// Who is at the other end of a unix-socket connection (SO_PEERCRED, SO_PEERGROUPS): nothing when
// `fd` is no connected unix socket.
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups at connect time (SO_PEERGROUPS)
};
std::optional<PeerCredentials> credentials_of(int fd);

// The connections the daemon accepted itself and handed to gRPC, which names each peer "fd:N":
// unix-socket connections with their credentials, TCP connections (tcp_listener.hpp) with their
// address.
class PeerRegistry {
 public:
  void record(int fd, PeerCredentials credentials);
  // `address` in gRPC's own form: "ipv4:10.0.0.7:50536", "ipv6:[::1]:50536".
  void record_tcp(int fd, std::string address);
  // The credentials behind a gRPC peer string "fd:N" of a unix-socket connection; nothing for any
  // other peer.
  [[nodiscard]] std::optional<PeerCredentials> find(std::string_view grpc_peer) const;
  // The address behind "fd:N" of a TCP connection; nothing for any other peer.
  [[nodiscard]] std::optional<std::string> find_tcp(std::string_view grpc_peer) const;

  struct Occupancy {
    std::size_t total = 0;   // connections open now
    std::size_t of_uid = 0;  // of them, those of one uid
  };
  // Counts the connections still open (gRPC closes them without telling us: an fd that no longer
  // refers to the socket recorded is forgotten here).
  [[nodiscard]] Occupancy occupancy(uid_t uid);

 private:
  struct Entry {
    std::optional<PeerCredentials> credentials;  // a unix-socket connection
    std::string tcp_address;                     // a TCP connection
    ino_t socket_inode = 0;  // tells the recorded socket from another file that reuses its fd number
  };
  [[nodiscard]] const Entry* entry(std::string_view grpc_peer) const;  // with mutex_ held
  mutable std::mutex mutex_;
  std::unordered_map<int, Entry> by_fd_;  // a reused fd number is overwritten on accept
};

}  // namespace hipstack::smid
