// hipstack/capture.hpp: record what libhipstack-smi reads of a machine's AMD GPUs into a folder that
// OpenOptions::sysfs_root (OUT/sys) reads back (docs/captures.md).
//
// A capture holds every file the library read while it discovered the GPUs and read all of their
// metrics, partitions, links, bad pages, KFD topology and hipstack-info's agents (through the same
// root view, so a later read of the capture finds what it needs), plus each amdgpu card's device
// folder as a whole for bug reports. Root runs this: reads stay inside the source roots (no link
// leading out is followed, only regular files are read, bounded in size and count) and every write
// goes below the output folder's descriptor, never through a link (docs/security.md).
#pragma once

#include <hipstack/smi.hpp>

#include <cstddef>
#include <string>

namespace hipstack::smi {

struct CaptureOptions {
  std::string sysfs_root;    // the source: "" = the live /sys (or $HIPSTACK_SYSFS_ROOT, as System::open)
  std::string procfs_root;   // "" = the live /proc (or beside sysfs_root, as System::open)
  bool processes = false;    // also the KFD and DRM fdinfo view of the processes that use a GPU
  bool pcie_bw = false;      // also pcie_bw, which the driver takes a second to answer
};

struct CaptureResult {
  std::size_t cards = 0;     // amdgpu cards recorded
  std::size_t files = 0;     // files copied (MANIFEST not counted)
  std::size_t skipped = 0;   // unreadable, over the size limit, outside the source root, or not a regular file
  std::size_t links = 0;     // links below a device folder, not followed
  std::string error;         // the first write error: the capture is incomplete; "" when it is whole
};

// Creates out_dir (owner-only) or takes an empty owner-only folder of this user, and records into it
// (OUT/sys, OUT/proc, OUT/MANIFEST with each file's SHA-256, size and mode). Throws
// Error(invalid_argument) when out_dir cannot be trusted or a source root is not a folder; a write
// failure is returned in CaptureResult::error.
HIPSTACK_SMI_CXX_API CaptureResult capture(const std::string& out_dir, const CaptureOptions& options = {});

}  // namespace hipstack::smi
