// The gRPC unix socket, with the peer credentials of every connection. gRPC's C++ API does not
// expose SO_PEERCRED, so the daemon accepts on its own socket, records who connected, and hands the
// connection to gRPC (AddInsecureChannelFromFd), which names that peer "fd:N".
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "peer_registry.hpp"

namespace grpc {
class Server;
}

namespace hipstack::smid {

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
  UnixListener(const std::string& path, const std::string& group, std::function<grpc::Server&()> server, LocalQueryServer& queries,
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
  std::function<grpc::Server&()> server_;  // gRPC's server, started at its first call (grpc_server.hpp)
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
