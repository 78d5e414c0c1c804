// The roots an OpenOptions names, resolved by one rule for System::open and hipstack/info.hpp alike,
// so that hipstack-smi and hipstack-info always read the same files.
#pragma once

#include <hipstack/smi.hpp>

#include <string>

namespace hipstack::smi::detail {

struct Roots {
  std::string sys, proc, dev;  // "" for the live /sys, /proc, /dev
  bool capture = false;        // sysfs_root was given: the machine described is not this one
  bool dev_given = false;      // devfs_root was given explicitly: its device nodes can be judged
};

// sysfs_root and procfs_root, else $HIPSTACK_SYSFS_ROOT and $HIPSTACK_PROCFS_ROOT; devfs_root. A
// capture keeps proc/ and dev/ beside its sys/, which stand in for the ones not given (reading the
// host's /proc for a capture's GPUs would mix two machines). Throws Error(invalid_argument) naming a
// given root that is not a folder.
Roots resolve_roots(const OpenOptions& options);

// options.nvml_library, else $HIPSTACK_NVML_LIBRARY, else "libnvidia-ml.so.1".
std::string nvml_library_path(const OpenOptions& options);

}  // namespace hipstack::smi::detail
