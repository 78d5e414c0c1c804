// hipstack-smi's fast path: the hipstack-smid of this node, asked through the local query protocol
// (wire/proto/hipstack/monitor/v1/local.proto) on its unix socket, so that a read-only
// command answers from the daemon's latest samples without opening the GPUs or starting gRPC.
#pragma once

#include <memory>
#include <string>

#include "device_source.hpp"

namespace hipstack::cli {

// The daemon's socket: $HIPSTACK_SMID_SOCKET, else /run/hipstack/smid.sock (grpc_listen's default).
std::string local_daemon_socket();

// The daemon's answers, or nothing when no daemon answers there within first_answer_ms (no socket,
// nobody listening, a daemon without the protocol): `why_not` then says what was found, and the
// caller reads the hardware itself. Later calls wait at most call_timeout_ms each and throw
// smi::Error(read_failure) when the daemon fails them.
std::unique_ptr<DeviceSource> connect_local_daemon(const std::string& socket, std::string& why_not,
                                                   unsigned first_answer_ms = 1000, unsigned call_timeout_ms = 5000);

}  // namespace hipstack::cli
