// `hipstack-smi --nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`: nvidia-smi's
// query for scripts written for NVIDIA nodes, answered for every GPU (docs/nvidia-smi-compat.md).
#pragma once

#include <hipstack/smi.hpp>

#include <optional>
#include <string>
#include <vector>

#include "device_source.hpp"

namespace hipstack::cli {

struct NvidiaSmiField;
struct NvidiaSmiRequest {
  std::vector<const NvidiaSmiField*> fields;  // --query-gpu, in order
  bool header = true;                         // --format=csv without noheader
  bool units = true;                          // --format=csv without nounits
  std::vector<std::string> ids;               // -i / --id
  smi::OpenOptions open;                      // --sysfs-root, --procfs-root
};

// argv[compat_flag] is "--nvidia-smi". The reason when the arguments are not a query we answer.
std::optional<std::string> parse_nvidia_smi_args(int argc, char** argv, int compat_flag, NvidiaSmiRequest& request);
int nvidia_smi_usage(const std::string& what);  // prints what and the supported form; exit 2
int run_nvidia_smi_query(const LocalSource& source, const NvidiaSmiRequest& request);

}  // namespace hipstack::cli
