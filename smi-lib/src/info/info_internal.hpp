// Internals of hipstack/info.hpp shared by the files of src/info/ and the unit tests.
#pragma once

#include <hipstack/info.hpp>

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "../fs_view.hpp"
#include "../roots.hpp"

namespace hipstack::smi::detail::info {

// The roots, resolved by System::open's rule (../roots.hpp).
using detail::Roots;
using detail::resolve_roots;

// KFD node properties: "key value" lines, every value an unsigned decimal. Lines that do not parse
// are named in problems ("<file>: line 3: simd_count has value 'x', not a number").
struct Properties {
  std::map<std::string, std::uint64_t> values;
  [[nodiscard]] std::uint64_t get(const std::string& key, std::uint64_t fallback = 0) const;
  [[nodiscard]] bool has(const std::string& key) const { return values.count(key) != 0; }
};
Properties parse_properties(std::string_view text, const std::string& file, std::vector<std::string>& problems);

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

// "0000:c1:00.0" from a KFD domain and location_id.
std::string bdf_from_location(std::uint64_t domain, std::uint64_t location_id);

}  // namespace hipstack::smi::detail::info
