#include "rocm_smi_compat.hpp"

#include <cstdio>

#include "commands.hpp"

namespace hipstack::cli {
int run_rocm_smi_compat(int, char**, int) {
  std::fprintf(stderr, "hipstack-smi: --rocm-smi is not available in this build\n");
  return kExitBadArguments;
}
}  // namespace hipstack::cli
