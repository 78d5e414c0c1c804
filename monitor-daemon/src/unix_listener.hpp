// The gRPC unix socket, with the peer credentials of every connection. gRPC's C++ API does not
// expose SO_PEERCRED, so the daemon accepts on its own socket, records who connected, and hands the
// connection to gRPC (AddInsecureChannelFromFd), which names that peer "fd:N".
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace grpc {
class Server;
}

namespace hipstack::smid {

// The inode of the socket `fd` refers to; 0 when it refers to no socket. gRPC closes the connections
// handed to it without telling us, and the number may then name another file: a recorded inode tells
// the connection from its successor.
ino_t socket_inode(int fd);

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups at connect time (SO_PEERGROUPS)
};

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

// Connections on the unix socket: each holds a descriptor and gRPC's memory for it until the
// client closes it. root may use the whole table; everyone else shares all but `root_reserve`,
// and no uid holds more than `max_per_uid`.
struct UnixLimits {
  std::size_t max_connections = 128;
  std::size_t max_per_uid = 32;
  std::size_t root_reserve = 16;
};

class LocalQueryServer;

class UnixListener {
 public:
  // Binds `path` (replacing a stale socket, refusing any other file), mode 0660 with `group` when
  // that group exists, and accepts on a thread of its own. A connection's first bytes say what it
  // is: gRPC's preface goes to `server`, the local query hello to `queries` (local_query.hpp);
  // anything else, or nothing within kFirstBytesWithin, is closed. Throws std::runtime_error.
  UnixListener(const std::string& path, const std::string& group, grpc::Server& server, LocalQueryServer& queries,
               PeerRegistry& registry, UnixLimits limits = {});
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  [[nodiscard]] const std::string& note() const noexcept { return note_; }  // what was set up, for the log

  static constexpr std::chrono::milliseconds kFirstBytesWithin{2000};
  static constexpr std::size_t kMaxUnsorted = 64;  // connections waiting for their first bytes

 private:
  struct Unsorted {
    int fd = -1;
    std::chrono::steady_clock::time_point deadline;
    // Part of an opening has come: its bytes stay readable, so it is looked at again on a short
    // timer rather than polled for input (which would wake the loop at once, again and again).
    bool partial = false;
  };
  void accept_loop();
  void accept_one();
  // Hands the connection on when its first bytes say what it is; false while they have not all
  // come (`partial` set when some have).
  bool sort(Unsorted& connection);

  std::string path_;
  std::string note_;
  grpc::Server& server_;
  LocalQueryServer& queries_;
  std::vector<Unsorted> unsorted_;  // the accept thread's only
  PeerRegistry& registry_;
  UnixLimits limits_;
  int listen_fd_ = -1;
  int spare_fd_ = -1;  // closed to accept-and-shed when the process is out of descriptors
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace hipstack::smid
