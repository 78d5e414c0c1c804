// Who is calling the gRPC API, and whether they may mutate (access.hpp): the admin and read rules.
#include "access.hpp"

#include <fmt/format.h>
#include <grp.h>

#include <algorithm>

namespace hipstack::smid {

Access::Access(const Config& config, const PeerRegistry& peers)
    : peers_(peers), admin_group_name_(config.admin_group), tls_admin_subjects_(config.tls_admin_subjects) {
  struct group g {};
  struct group* found = nullptr;
  std::vector<char> buffer(16384);
  if (!admin_group_name_.empty() &&
      ::getgrnam_r(admin_group_name_.c_str(), &g, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    admin_group_exists_ = true;
    admin_gid_ = found->gr_gid;
  }
}

namespace {

// "ip 127.0.0.1" from gRPC's "ipv4:127.0.0.1:50536", "ip ::1" from "ipv6:[::1]:50536": the address
// without the port, which changes with every connection.
std::string address_of(const std::string& grpc_peer) {
  std::string rest = grpc_peer.substr(grpc_peer.find(':') + 1);
  if (const auto colon = rest.rfind(':'); colon != std::string::npos) rest.resize(colon);
  if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') rest = rest.substr(1, rest.size() - 2);
  return "ip " + rest;
}

}  // namespace

Caller Access::identify(const grpc::ServerContextBase& context) const {
  Caller caller;
  const std::string reported = context.peer();  // "fd:N" for a connection the daemon accepted itself
  if (const auto credentials = peers_.find(reported)) {
    caller.peer = fmt::format("uid {}", credentials->uid);
    caller.who = fmt::format("uid {} gid {} pid {} on the unix socket", credentials->uid, credentials->gid, credentials->pid);
    const bool in_group = admin_group_exists_ &&
                          (credentials->gid == admin_gid_ ||
                           std::find(credentials->groups.begin(), credentials->groups.end(), admin_gid_) != credentials->groups.end());
    caller.admin = credentials->uid == 0 || in_group;
    if (!caller.admin) {
      caller.refusal = admin_group_exists_
                           ? fmt::format("uid {} is neither root nor in the admin group \"{}\"", credentials->uid, admin_group_name_)
                           : fmt::format("uid {} is not root (admin group \"{}\" does not exist)", credentials->uid, admin_group_name_);
      caller.denial = "needs the admin role: root or the daemon's admin group, on the unix socket";
    }
    return caller;
  }
  const std::string peer = peers_.find_tcp(reported).value_or(reported);
  caller.peer = address_of(peer);
  const auto auth = context.auth_context();
  if (auth && auth->IsPeerAuthenticated()) {
    std::string subject;
    for (const auto& value : auth->FindPropertyValues("x509_common_name")) subject.assign(value.data(), value.size());
    caller.who = fmt::format("client certificate CN={} from {}", subject, peer);
    caller.admin = !subject.empty() &&
                   std::find(tls_admin_subjects_.begin(), tls_admin_subjects_.end(), subject) != tls_admin_subjects_.end();
    if (!caller.admin) {
      caller.refusal = fmt::format("client certificate CN={} is not in tls_admin_subjects", subject);
      caller.denial = "needs the admin role: a client certificate with the admin role";
    }
    return caller;
  }
  caller.who = fmt::format("{} without a client certificate", peer);
  caller.refusal = "mutations over TCP need mutual TLS with an admin client certificate";
  caller.denial = caller.refusal;
  return caller;
}

}  // namespace hipstack::smid
