// Root-prefixed view of /sys, /proc and /dev. Every file the library reads goes through
// one FsView, so the same code serves the live system, a recorded capture and a test fake.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smi::detail {

// Outcome of one read: errno-style code (0 = ok) and the data.
struct FileText {
  int error = 0;      // 0, ENOENT when absent, else the errno of the failure
  std::string text;   // NUL padding and trailing whitespace removed
  [[nodiscard]] bool ok() const noexcept { return error == 0; }
};

struct FileBytes {
  int error = 0;
  std::vector<std::uint8_t> bytes;
  [[nodiscard]] bool ok() const noexcept { return error == 0; }
};

class FsView {
 public:
  virtual ~FsView() = default;
  // Paths are absolute paths of the live system ("/sys/class/drm"); the view maps them.
  [[nodiscard]] virtual FileText read_text(const std::string& path) const = 0;
  [[nodiscard]] virtual FileBytes read_bytes(const std::string& path, std::size_t max_bytes) const = 0;
  // The file in one read() of `size` bytes from its start, for a kernel file that must not be read
  // in pieces (amdgpu's CPER ring before Linux's 2026 fix: a read smaller than the ring overran the
  // caller's buffer, a read from past its start used stale pointers). By default read_bytes.
  [[nodiscard]] virtual FileBytes read_once(const std::string& path, std::size_t size) const { return read_bytes(path, size); }
  // Entry names, sorted; empty when the folder is absent.
  [[nodiscard]] virtual std::vector<std::string> list(const std::string& path) const = 0;
  [[nodiscard]] virtual bool exists(const std::string& path) const = 0;
  // Target of a symbolic link as the system path it names (live layout), "" when not a link.
  [[nodiscard]] virtual std::string link_target(const std::string& path) const = 0;
  // The host path a system path maps to (for messages and for tools that copy trees).
  [[nodiscard]] virtual std::string host_path(const std::string& path) const = 0;
  // Writes text to an existing file in one write(), as `echo -n text > file` does; returns 0 or the
  // errno of the open or the write (sysfs reports the driver's verdict there: EINVAL, EBUSY, ...).
  // Only the guarded mutation path (control.cpp) calls it.
  [[nodiscard]] virtual int write_text(const std::string& path, std::string_view text) const = 0;
  // Whether the files are a recorded tree (a capture) rather than the running system's: they do not
  // move in time, so nothing measured over a window of real time can be read from them.
  [[nodiscard]] virtual bool recorded() const = 0;
};

// The real file system, with /sys, /proc and /dev each optionally replaced by a folder.
class RootedFs final : public FsView {
 public:
  // regular_only: reads refuse anything but a regular file (EINVAL) instead of waiting on a FIFO
  // (hipstack::smi::capture, which has no read deadline).
  RootedFs(std::string sys_root, std::string proc_root, std::string dev_root, bool regular_only = false);
  [[nodiscard]] FileText read_text(const std::string& path) const override;
  [[nodiscard]] FileBytes read_bytes(const std::string& path, std::size_t max_bytes) const override;
  [[nodiscard]] FileBytes read_once(const std::string& path, std::size_t size) const override;
  [[nodiscard]] std::vector<std::string> list(const std::string& path) const override;
  [[nodiscard]] bool exists(const std::string& path) const override;
  [[nodiscard]] std::string link_target(const std::string& path) const override;
  [[nodiscard]] std::string host_path(const std::string& path) const override;
  [[nodiscard]] int write_text(const std::string& path, std::string_view text) const override;
  [[nodiscard]] bool recorded() const override { return !sys_root_.empty(); }  // as Roots::capture

 private:
  // The system path of a host path inside one of the roots (inverse of host_path).
  [[nodiscard]] std::string system_path(const std::string& host) const;
  std::string sys_root_;   // "" = /sys
  std::string proc_root_;
  std::string dev_root_;
  bool regular_only_ = false;
};

// Removes NUL padding (captures pad files to 4096 bytes) and surrounding whitespace.
std::string_view trim_sysfs_text(std::string_view text) noexcept;

}  // namespace hipstack::smi::detail
