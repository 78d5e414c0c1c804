// hipstack/info.hpp entry points: the roots are resolved once and every file is read through the
// same root-prefixed view as System uses.
#include <hipstack/info.hpp>

#include "info_internal.hpp"

namespace hipstack::smi {

std::string_view check_status_name(InstallCheck::Status status) noexcept {
  switch (status) {
    case InstallCheck::Status::pass: return "PASS";
    case InstallCheck::Status::warn: return "WARN";
    case InstallCheck::Status::fail: return "FAIL";
    case InstallCheck::Status::skip: return "SKIP";
  }
  return "?";
}

std::vector<Agent> read_agents(const OpenOptions& options) {
  using namespace detail::info;
  const Roots roots = resolve_roots(options);
  const detail::RootedFs fs(roots.sys, roots.proc, roots.dev);
  std::vector<std::string> errors;  // reported again by the topology.kfd check, which sees the folders
  std::vector<Agent> agents;
  if (options.enable_amdgpu) agents = read_kfd_agents(fs, errors);
  // NVIDIA GPUs only on the live system: a capture is another machine.
  if (!roots.capture) {
    for (Agent& agent : read_nvidia_agents(fs, options)) agents.push_back(std::move(agent));
  }
  return agents;
}

std::vector<InstallCheck> install_checks(const OpenOptions& options, const std::vector<Agent>& agents,
                                         const std::vector<RuntimeProbe>& runtimes) {
  using namespace detail::info;
  const Roots roots = resolve_roots(options);
  const detail::RootedFs fs(roots.sys, roots.proc, roots.dev);
  return run_install_checks(fs, roots, agents, runtimes, current_identity());
}

bool install_usable(const std::vector<InstallCheck>& checks) noexcept {
  for (const InstallCheck& check : checks) {
    if (check.status == InstallCheck::Status::fail) return false;
  }
  return true;
}

}  // namespace hipstack::smi
