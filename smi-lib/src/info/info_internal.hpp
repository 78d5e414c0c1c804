// Internals of hipstack/info.hpp shared by the files of src/info/ and the unit tests.
#pragma once

#include <hipstack/info.hpp>

#include <sys/types.h>

#include <string>
#include <vector>

#include "../fs_view.hpp"
#include "../roots.hpp"

namespace hipstack::smi::detail::info {

// The roots, resolved by System::open's rule (../roots.hpp).
using detail::Roots;
using detail::resolve_roots;

// Every KFD node as an agent, in node order. Nodes whose properties cannot be read at all are left
// out and named in errors.
std::vector<Agent> read_kfd_agents(const FsView& fs, std::vector<std::string>& errors);

// NVIDIA GPUs of the live system: NVML and the CUDA driver API merged by PCI address.
std::vector<Agent> read_nvidia_agents(const FsView& fs, const OpenOptions& options);

// The user whose access the device-node checks judge. The real process uses access(2) (so ACLs and
// capabilities count); a test identity is judged from the mode bits as access(2) would.
struct Identity {
  bool real = true;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;   // supplementary groups of the process
  std::string user;            // login name, for /etc/group membership
};
Identity current_identity();

std::vector<InstallCheck> run_install_checks(const FsView& fs, const Roots& roots, const std::vector<Agent>& agents,
                                             const std::vector<RuntimeProbe>& runtimes, const Identity& who);

}  // namespace hipstack::smi::detail::info
