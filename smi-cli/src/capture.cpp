// `hipstack-smi capture OUT`: hipstack::smi::capture (hipstack/capture.hpp, docs/captures.md) and
// its report.
#include <hipstack/capture.hpp>

#include <csignal>
#include <cstdio>

#include "commands.hpp"

namespace hipstack::cli {

int run_capture(const std::string& sysfs_root, const std::string& procfs_root, const std::string& out_dir,
                bool with_processes, bool pcie_bw) {
  // A file-size limit (ulimit -f) must give a write error to report, not kill the process halfway.
  std::signal(SIGXFSZ, SIG_IGN);
  smi::CaptureOptions options;
  options.sysfs_root = sysfs_root;
  options.procfs_root = procfs_root;
  options.processes = with_processes;
  options.pcie_bw = pcie_bw;
  smi::CaptureResult result;
  try {
    result = smi::capture(out_dir, options);
  } catch (const smi::Error& e) {
    std::fprintf(stderr, "hipstack-smi: %s\n", e.what());
    return kExitBadArguments;
  }
  if (!result.error.empty()) {
    std::fprintf(stderr, "hipstack-smi: capture failed, %s: %s is incomplete\n", result.error.c_str(), out_dir.c_str());
    return kExitReadFailure;
  }
  std::printf("Captured %zu amdgpu card(s): %zu files copied, %zu unreadable skipped, %zu links not followed, into %s\n",
              result.cards, result.files, result.skipped, result.links, out_dir.c_str());
  return kExitOk;
}

}  // namespace hipstack::cli
