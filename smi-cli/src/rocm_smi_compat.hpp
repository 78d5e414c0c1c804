// `hipstack-smi --rocm-smi ...`: the read-only rocm-smi flags people have in scripts, answered from
// libhipstack-smi with rocm-smi's wording and JSON keys (docs/rocm-smi-compat.md).
#pragma once

#include <string>
#include <vector>

namespace hipstack::cli {
// argv[compat_flag] is "--rocm-smi"; every other argument is a rocm-smi flag. With no flag to show
// (rocm-smi's own default is its summary), fills default_view_args with the hipstack-smi arguments
// of the default view (--sysfs-root, --procfs-root, -g for -d) and returns kRocmSmiDefaultView.
constexpr int kRocmSmiDefaultView = -1;
int run_rocm_smi_compat(int argc, char** argv, int compat_flag, std::vector<std::string>& default_view_args);
}
