// A DeviceSource answered by a hipstack-smid: the library's types rebuilt from hipstack.monitor.v1
// replies, whichever way they travel. Two links carry them: gRPC (`--host`, hipstack-smi-remote,
// remote_source.cpp) and the local query protocol on the node's own daemon socket (local_daemon.cpp,
// in hipstack-smi itself: no gRPC client to start).
#pragma once

#include <google/protobuf/message_lite.h>

#include <memory>
#include <string>

#include "device_source.hpp"

namespace hipstack::cli {

// One way to the daemon. call() answers a read-only unary method of hipstack.monitor.v1.Monitor.
class DaemonLink {
 public:
  struct Outcome {
    int code = 0;  // a gRPC status code: 0 OK, 5 NOT_FOUND, 3 INVALID_ARGUMENT, ...
    std::string message;
  };
  virtual ~DaemonLink() = default;
  // Throws smi::Error(read_failure) when the daemon cannot be reached or its reply is broken.
  virtual Outcome call(const char* method, const google::protobuf::MessageLite& request,
                       google::protobuf::MessageLite& response) const = 0;
};

// Lists the daemon's GPUs through `link` (throws smi::Error(read_failure) when that fails).
// `where` names the daemon in messages: "hipstack-smid at unix:/run/hipstack/smid.sock".
std::unique_ptr<DeviceSource> daemon_source(std::unique_ptr<DaemonLink> link, std::string where);

}  // namespace hipstack::cli
