// `hipstack-smi --rocm-smi ...`: the read-only rocm-smi flags people have in scripts, answered from
// libhipstack-smi with rocm-smi's wording and JSON keys (docs/rocm-smi-compat.md).
#pragma once

namespace hipstack::cli {
// argv[compat_flag] is "--rocm-smi"; every other argument is a rocm-smi flag.
int run_rocm_smi_compat(int argc, char** argv, int compat_flag);
}
