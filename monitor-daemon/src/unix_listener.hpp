// The gRPC unix socket, with the peer credentials of every connection. gRPC's C++ API does not
// expose SO_PEERCRED, so the daemon accepts on its own socket, records who connected, and hands the
// connection to gRPC (AddInsecureChannelFromFd), which names that peer "fd:N".
#pragma once

#include <sys/types.h>

#include <atomic>
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

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups at connect time (SO_PEERGROUPS)
};

class PeerRegistry {
 public:
  void record(int fd, PeerCredentials credentials);
  // The credentials behind a gRPC peer string "fd:N"; nothing for any other peer.
  [[nodiscard]] std::optional<PeerCredentials> find(std::string_view grpc_peer) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<int, PeerCredentials> by_fd_;  // a reused fd number is overwritten on accept
};

class UnixListener {
 public:
  // Binds `path` (replacing a stale socket, refusing any other file), mode 0660 with `group` when
  // that group exists, and accepts into `server` on a thread of its own. Throws std::runtime_error.
  UnixListener(const std::string& path, const std::string& group, grpc::Server& server, PeerRegistry& registry);
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  [[nodiscard]] const std::string& note() const noexcept { return note_; }  // what was set up, for the log

 private:
  void accept_loop();

  std::string path_;
  std::string note_;
  grpc::Server& server_;
  PeerRegistry& registry_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  std::thread thread_;
};

}  // namespace hipstack::smid
