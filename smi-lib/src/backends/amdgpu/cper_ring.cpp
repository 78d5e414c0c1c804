// amdgpu's CPER ring (hipstack/cper.hpp, docs/errors.md): the records the driver keeps, read from
// debugfs through the root view, so captures and tests carry them as files.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "../../fs_view.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

// The ring is 4 MiB (amdgpu_cper.h's 0x100000 dwords) behind a 12-byte prefix of pointers; the
// debugfs file says exactly that size. One read of all of it (FsView::read_once says why).
constexpr std::size_t kRingFileSize = 12 + (std::size_t{4} << 20);

}  // namespace

CperRing read_cper_ring(const FsView& fs, const AmdGpu& gpu) {
  CperRing ring;
  if (gpu.card < 0) {
    ring.unavailable = "no DRM card: the driver's debugfs folder is named by it";
    return ring;
  }
  // Linux names a device's debugfs folder by its DRM minor (dri/0) and, since 6.x, also by its PCI
  // address: the first that has the file.
  const std::string candidates[] = {fmt::format("/sys/kernel/debug/dri/{}/amdgpu_ring_cper", gpu.address.text()),
                                    fmt::format("/sys/kernel/debug/dri/{}/amdgpu_ring_cper", gpu.card)};
  int first_error = 0;
  for (const std::string& path : candidates) {
    FileBytes file = fs.read_once(path, kRingFileSize);
    if (file.error == ENOENT) continue;
    if (!file.ok()) {
      if (first_error == 0) first_error = file.error;
      ring.source = fs.host_path(path);
      continue;
    }
    ring.source = fs.host_path(path);
    ring.scan = scan_cper(file.bytes);
    return ring;
  }
  if (first_error != 0) {
    ring.unavailable = fmt::format("{}: {}{}", ring.source, std::strerror(first_error),
                                   first_error == EACCES || first_error == EPERM ? " (debugfs is root's)" : "");
  } else if (!fs.exists("/sys/kernel/debug/dri")) {
    ring.unavailable = fmt::format("{}: no debugfs (mount it at /sys/kernel/debug; as root)", fs.host_path("/sys/kernel/debug/dri"));
  } else {
    ring.unavailable = fmt::format("{}: no CPER ring (Linux 6.15 or later with RAS on this GPU)", fs.host_path(candidates[1]));
  }
  return ring;
}

CperRing AmdgpuBackend::cper_ring(std::size_t device) const { return read_cper_ring(fs_, gpus_.at(device)); }

}  // namespace hipstack::smi::detail::amdgpu
