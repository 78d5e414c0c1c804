// `hipstack-smi errors`: the GPUs' errors hipstack-smid keeps (docs/errors.md, "Kept and aged"), each
// XID and CPER record with its action, by GPU; asked of the node's daemon over gRPC (its unix socket)
// or of --host.
#pragma once

#include <string>

#include "hipstack/monitor/v1/monitor.pb.h"
#include "render.hpp"

namespace hipstack::cli {

struct ErrorListOptions {
  std::string since = "90d";  // as job list's: 30m, 12h, 7d, a UTC date or time, @UNIX_SECONDS
  std::string source;         // xid, cper; both when empty
  unsigned limit = 1000;
};

// Prints what the daemon answered; returns the exit code.
int print_errors(const ::hipstack::monitor::v1::ListErrorsResponse& answered, Format format);

}  // namespace hipstack::cli
