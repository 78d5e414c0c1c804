// The capture's two ends, both treated as hostile (docs/security.md): the output folder, where
// everything is created below one directory descriptor without following a link, and the source
// trees, read only inside their roots.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hipstack::smi::detail::capture {

namespace stdfs = std::filesystem;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// The capture folder: created by us (0700), or an empty folder the caller owns that only the owner
// may write; files are made with O_EXCL | O_NOFOLLOW relative to its descriptor.
class Output {
 public:
  // Empty with `error` set when `dir` cannot be trusted.
  static std::optional<Output> open(const stdfs::path& dir, std::string& error);
  // Writes OUT/relative (a new file; its folders are made as needed). False with `error` set.
  bool write(const stdfs::path& relative, std::string_view data, mode_t mode, std::string& error);
  // Makes OUT/relative as a folder (an empty one the source has). False with `error` set.
  bool make_folder(const stdfs::path& relative, std::string& error);
  // Flushes everything written (one syncfs): a write error reported only at write-back fails here.
  bool flush(std::string& error);
  [[nodiscard]] const stdfs::path& path() const { return path_; }

 private:
  Output() = default;
  bool fail(const stdfs::path& relative, const char* what, std::string& error) const;
  Fd folder(const stdfs::path& relative, std::string& error);
  Fd root_;
  stdfs::path path_;
};

// One source tree (the real folder standing for /sys or /proc). Reads happen only inside its real
// root: a path is resolved once (links allowed while they stay inside), then opened one component
// at a time with O_NOFOLLOW, so a link swapped in meanwhile is refused; only regular files are
// read, O_NONBLOCK (a FIFO cannot hang us), up to kMaxFileBytes.
class SourceTree {
 public:
  explicit SourceTree(stdfs::path root);
  enum class Kind { absent, file, folder, link, other };
  struct Entry {
    std::string name;
    Kind kind = Kind::absent;
  };
  // The real path below the root that `relative` names, when it stays inside; empty otherwise.
  [[nodiscard]] std::optional<stdfs::path> inside(const stdfs::path& relative) const;
  // The regular file at `relative` (resolved as `inside` does). False when it is not one, is outside,
  // unreadable or over the limit.
  bool read(const stdfs::path& relative, std::string& data, mode_t& mode) const;
  // The entries of the folder at `relative` (links are entries of kind link: never followed here).
  [[nodiscard]] std::vector<Entry> entries(const stdfs::path& relative) const;
  [[nodiscard]] Kind kind(const stdfs::path& relative) const;

 private:
  Fd open_inside(const stdfs::path& real, int flags) const;
  stdfs::path root_;       // as given
  stdfs::path real_root_;  // resolved; empty when the root does not exist
};

inline constexpr std::size_t kMaxFileBytes = 1u << 20;  // sysfs attributes are one page; binary ones a few KiB

}  // namespace hipstack::smi::detail::capture
