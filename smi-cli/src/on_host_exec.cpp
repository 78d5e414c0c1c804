// run_on_host for hipstack-smi: the gRPC client is a separate program, hipstack-smi-remote, so that
// this one starts without loading gRPC. It is run with the same arguments.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "commands.hpp"
#include "remote_source.hpp"

namespace hipstack::cli {

int run_on_host(const RemoteOptions& /*remote*/, const std::string& /*command*/, const CommonOptions& /*common*/,
                const QueryOptions& /*query*/, const std::string& /*health_policy*/, const JobOptions& /*job*/,
                const ErrorListOptions& /*errors*/, char** argv) {
  std::vector<std::filesystem::path> candidates;
  if (const char* given = std::getenv("HIPSTACK_SMI_REMOTE")) candidates.emplace_back(given);
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(self.parent_path() / "hipstack-smi-remote");
    candidates.push_back(self.parent_path().parent_path() / "libexec/hipstack/hipstack-smi-remote");
  }
  for (const auto& path : candidates) {
    if (::access(path.c_str(), X_OK) == 0) {
      ::execv(path.c_str(), argv);
      std::fprintf(stderr, "hipstack-smi: cannot run %s: %s\n", path.c_str(), std::strerror(errno));
      return kExitReadFailure;
    }
  }
  std::fprintf(stderr, "hipstack-smi: --host and job need hipstack-smi-remote (next to hipstack-smi, in ../libexec/hipstack, "
                       "or named by HIPSTACK_SMI_REMOTE): not found\n");
  return kExitReadFailure;
}

}  // namespace hipstack::cli
