// Who is calling the gRPC API, and whether they may mutate. Reads are open to every connected
// client (the unix socket's mode and group decide who can connect). Mutations need root or the
// admin group on the unix socket, or a verified client certificate whose common name is listed in
// tls_admin_subjects on TCP.
#pragma once

#include <grpcpp/server_context.h>

#include <string>
#include <vector>

#include "config.hpp"
#include "peer_registry.hpp"

namespace hipstack::smid {

struct Caller {
  std::string who;      // for the log: "uid 1000 gid 1000 pid 4242 on the unix socket", "CN=ops on TLS"
  std::string peer;     // who holds a share of the stream quota: "uid 1000" (unix socket), "ip 10.0.0.7" (TCP)
  bool admin = false;
  std::string refusal;  // for the log: why not admin (empty when admin), naming uid and group
  std::string denial;   // for the caller: the role it lacks, without its uid or the group's name
};

class Access {
 public:
  Access(const Config& config, const PeerRegistry& peers);
  [[nodiscard]] Caller identify(const grpc::ServerContextBase& context) const;

 private:
  const PeerRegistry& peers_;
  std::string admin_group_name_;
  bool admin_group_exists_ = false;
  gid_t admin_gid_ = 0;
  std::vector<std::string> tls_admin_subjects_;
};

}  // namespace hipstack::smid
