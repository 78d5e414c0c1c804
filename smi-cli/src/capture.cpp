// `hipstack-smi capture OUT`: records what libhipstack-smi reads into a flat folder that
// `--sysfs-root OUT/sys` reads back: every amdgpu card's device folder (its files, plus hwmon,
// fw_version, xgmi_hive_info, ras and gpu_od), the KFD topology, /sys/module/amdgpu, and
// optionally the KFD and DRM fdinfo view of processes.
//
// Root runs this (docs/captures.md), so both sides are treated as hostile (docs/security.md):
// - Reads: only the known entry points are resolved through links (class/drm/cardN/device,
//   class/kfd/kfd, /proc/PID), and only when they stay inside the source root; below them no link
//   is followed (live sysfs links `device`, `driver`, `subsystem` back up the tree), only regular
//   files are read, opened with O_NOFOLLOW, and the walk is bounded in depth and file count.
// - Writes: OUT is created by this command, owner-only (or is an empty folder the caller owns that
//   nobody else may write); every folder and file below it is made relative to OUT's descriptor
//   with O_NOFOLLOW and O_EXCL, so a planted link is refused, never written through. Every write
//   is checked, files keep their owner-only modes, and OUT/MANIFEST lists each file's SHA-256,
//   size and mode.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "sha256.hpp"

namespace hipstack::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxFileBytes = 1u << 20;  // sysfs attributes are one page; binary ones a few KiB
constexpr std::size_t kMaxFiles = 200000;         // a hostile tree cannot make a capture endless
constexpr int kMaxDepth = 12;

// Never read: reads that block or act (pcie_bw sleeps a second; PCI config, BARs and ROM are not
// telemetry) or that are large binary dumps.
const std::set<std::string, std::less<>> kSkipped = {"config", "rom", "remove", "rescan", "reset", "resource",
                                                     "resource0", "resource1", "resource2", "resource3",
                                                     "resource4", "resource5", "resource0_wc", "resource2_wc",
                                                     "pcie_bw", "amdgpu_reset_level", "driver_override", "new_id",
                                                     "remove_id", "bind", "unbind"};

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
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// The capture folder: everything is created below one directory descriptor, link-free.
class Output {
 public:
  // Creates `dir` (0700), or takes an empty folder the caller owns that only the owner may write.
  static std::optional<Output> open(const fs::path& dir, std::string& error) {
    if (::mkdir(dir.c_str(), 0700) != 0) {
      if (errno != EEXIST) {
        error = fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno));
        return std::nullopt;
      }
      struct stat st {};
      if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = fmt::format("{} exists and is not a folder (a link is not followed)", dir.string());
        return std::nullopt;
      }
      if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
        error = fmt::format("{} exists but is not an owner-only folder of this user (uid {}, mode {:o}): choose a new path",
                            dir.string(), st.st_uid, st.st_mode & 07777);
        return std::nullopt;
      }
    }
    Output out;
    out.root_ = Fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!out.root_.ok()) {
      error = fmt::format("cannot open {}: {}", dir.string(), std::strerror(errno));
      return std::nullopt;
    }
    DIR* listing = ::fdopendir(::dup(out.root_.get()));
    bool empty = true;
    if (listing != nullptr) {
      while (const dirent* e = ::readdir(listing)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
      }
      ::closedir(listing);
    }
    if (!empty) {
      error = fmt::format("{} is not empty: choose a new or empty folder", dir.string());
      return std::nullopt;
    }
    out.path_ = dir;
    return out;
  }

  // Writes OUT/relative (a new file; its folders are made as needed). False with `error` set.
  bool write(const fs::path& relative, std::string_view data, mode_t mode, std::string& error) {
    Fd dir = folder(relative.parent_path(), error);
    if (!dir.ok()) return false;
    const std::string name = relative.filename();
    Fd file(::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0666));
    if (!file.ok()) return fail(relative, "create", error);
    for (std::size_t done = 0; done < data.size();) {
      const ssize_t n = ::write(file.get(), data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(relative, "write", error);
      done += static_cast<std::size_t>(n);
    }
    if (::close(file.release()) != 0) return fail(relative, "close", error);
    return true;
  }

  // Flushes everything written: a write error the kernel reports only at write-back (no space,
  // I/O error) fails the capture here rather than going unnoticed. One syncfs, not one fsync per file.
  bool flush(std::string& error) {
    if (::syncfs(root_.get()) == 0) return true;
    error = fmt::format("cannot write {} to disk: {}", path_.string(), std::strerror(errno));
    return false;
  }

  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  Output() = default;

  bool fail(const fs::path& relative, const char* what, std::string& error) const {
    error = fmt::format("cannot {} {}: {}", what, (path_ / relative).string(), std::strerror(errno));
    return false;
  }

  // Opens (making as needed) a folder below the root, one component at a time, never through a link.
  Fd folder(const fs::path& relative, std::string& error) {
    Fd current(::dup(root_.get()));
    for (const fs::path& part : relative) {
      const std::string name = part.string();
      if (name.empty() || name == "." || name == "..") {
        error = fmt::format("refusing path component \"{}\" in {}", name, relative.string());
        return Fd();
      }
      if (::mkdirat(current.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
        fail(relative, "create folder", error);
        return Fd();
      }
      Fd next(::openat(current.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!next.ok()) {
        fail(relative, "open folder (a link is not followed)", error);
        return Fd();
      }
      current = std::move(next);
    }
    return current;
  }

  Fd root_;
  fs::path path_;
};

struct Manifest {
  std::string text = "# sha256\tbytes\tmode\tpath (hipstack-smi capture; docs/captures.md)\n";
  void add(const fs::path& path, std::string_view data, mode_t mode) {
    text += fmt::format("{}\t{}\t{:04o}\t{}\n", sha256_hex(data), data.size(), mode & 0666, path.string());
  }
};

// One source tree (stands for /sys or /proc) copied into OUT/<prefix>.
class Recorder {
 public:
  Recorder(fs::path source_root, fs::path prefix, Output& out, Manifest& manifest, bool pcie_bw)
      : source_root_(std::move(source_root)), prefix_(std::move(prefix)), out_(out), manifest_(manifest), pcie_bw_(pcie_bw) {
    std::error_code ec;
    real_root_ = fs::canonical(source_root_, ec);
  }

  std::size_t copied = 0;
  std::size_t skipped = 0;      // unreadable, over the size limit, or not a regular file
  std::size_t links = 0;        // links below an entry point: not followed
  std::string error;            // the first write error: the capture failed

  // The real folder an entry point names (links allowed), when it stays inside the source root.
  std::optional<fs::path> entry(const fs::path& relative) const {
    std::error_code ec;
    const fs::path real = fs::canonical(source_root_ / relative, ec);
    if (ec || real_root_.empty()) return std::nullopt;
    const auto inside = std::mismatch(real_root_.begin(), real_root_.end(), real.begin(), real.end());
    if (inside.first != real_root_.end()) return std::nullopt;  // outside the root: not read
    return real;
  }

  // Copies the regular files of the entry point `relative`; descends into real sub-folders that
  // `subfolders` names, or into every one when `deep`.
  void copy_folder(const fs::path& relative, const std::set<std::string, std::less<>>& subfolders, bool deep) {
    const auto real = entry(relative);
    if (!real) return;
    Fd dir(::open(real->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.ok()) walk(std::move(dir), relative, subfolders, deep, 0);
  }

  // Copies one file of an entry point's folder (`relative` = entry point / name).
  void copy_file(const fs::path& relative) {
    const auto real = entry(relative.parent_path());
    if (!real) return;
    Fd dir(::open(real->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.ok()) copy_at(dir.get(), relative.filename(), relative);
  }

  // The text of a small file of an entry point (for choosing what to copy); "" when unreadable.
  std::string peek(const fs::path& relative) const {
    const auto real = entry(relative.parent_path());
    if (!real) return {};
    Fd dir(::open(real->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    std::string data;
    mode_t mode = 0;
    return dir.ok() && read_at(dir.get(), relative.filename(), data, mode) ? data : std::string();
  }

  // Entry names of an entry point's folder (links included: they are names, not followed).
  std::vector<std::string> names(const fs::path& relative) const {
    std::vector<std::string> out;
    const auto real = entry(relative);
    if (!real) return out;
    DIR* listing = ::opendir(real->c_str());
    if (listing == nullptr) return out;
    while (const dirent* e = ::readdir(listing)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
    }
    ::closedir(listing);
    return out;
  }

  [[nodiscard]] const fs::path& source_root() const { return source_root_; }

 private:
  void walk(Fd dir, const fs::path& relative, const std::set<std::string, std::less<>>& subfolders, bool deep, int depth) {
    if (depth > kMaxDepth) return;
    std::vector<std::string> entries;
    DIR* listing = ::fdopendir(::dup(dir.get()));
    if (listing == nullptr) return;
    while (const dirent* e = ::readdir(listing)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) entries.emplace_back(e->d_name);
    }
    ::closedir(listing);
    for (const std::string& name : entries) {
      if (!error.empty() || copied + skipped >= kMaxFiles) return;
      struct stat st {};
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        ++skipped;
        continue;
      }
      if (S_ISLNK(st.st_mode)) {
        ++links;  // device, driver, subsystem, ...: they lead back up the tree or out of it
      } else if (S_ISDIR(st.st_mode)) {
        if (!deep && subfolders.count(name) == 0) continue;
        Fd child(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (child.ok()) walk(std::move(child), relative / name, {}, true, depth + 1);
      } else if (S_ISREG(st.st_mode)) {
        if (kSkipped.count(name) != 0 && !(pcie_bw_ && name == "pcie_bw")) continue;
        copy_at(dir.get(), name, relative / name);
      } else {
        ++skipped;  // FIFOs, sockets, devices: never opened
      }
    }
  }

  static bool read_at(int dir, const std::string& name, std::string& data, mode_t& mode) {
    // O_NONBLOCK: a FIFO swapped in after the walk's look cannot hang the capture.
    Fd file(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!file.ok() || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    mode = st.st_mode;
    std::array<char, 4096> buffer{};
    for (;;) {
      const ssize_t n = ::read(file.get(), buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      if (n == 0) return true;
      data.append(buffer.data(), static_cast<std::size_t>(n));
      if (data.size() > kMaxFileBytes) return false;
    }
  }

  void copy_at(int dir, const std::string& name, const fs::path& relative) {
    std::string data;
    mode_t mode = 0;
    if (!read_at(dir, name, data, mode)) {
      ++skipped;
      return;
    }
    const fs::path target = prefix_ / relative;
    if (!out_.write(target, data, mode, error)) return;
    manifest_.add(target, data, mode);
    ++copied;
  }

  fs::path source_root_;
  fs::path real_root_;
  fs::path prefix_;
  Output& out_;
  Manifest& manifest_;
  bool pcie_bw_;
};

bool is_card(const std::string& name) {
  return name.rfind("card", 0) == 0 && name.size() > 4 && name.find('-') == std::string::npos;
}

// The processes that use a GPU: KFD clients and DRM fdinfo holders, with their comm/status/cmdline.
void record_processes(Recorder& sys, Recorder& proc) {
  sys.copy_folder("class/kfd/kfd/proc", {}, true);
  std::set<std::string> kfd_pids;
  for (const std::string& pid : sys.names("class/kfd/kfd/proc")) kfd_pids.insert(pid);
  for (const std::string& pid : proc.names(".")) {
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    bool gpu_user = kfd_pids.count(pid) != 0;
    for (const std::string& fd : proc.names(fs::path(pid) / "fdinfo")) {
      // Live: only fds on /dev/dri (the fd link is read, never followed). A capture has fdinfo
      // without fd links: keep the DRM ones.
      std::error_code link_ec;
      const fs::path target = fs::read_symlink(proc.source_root() / pid / "fd" / fd, link_ec);
      if (!link_ec && target.string().rfind("/dev/dri/", 0) != 0) continue;
      const fs::path info = fs::path(pid) / "fdinfo" / fd;
      if (proc.peek(info).find("drm-driver:") == std::string::npos) continue;
      gpu_user = true;
      proc.copy_file(info);
    }
    if (gpu_user) {
      for (const char* file : {"comm", "status", "cmdline"}) proc.copy_file(fs::path(pid) / file);
    }
  }
}

}  // namespace

int run_capture(const std::string& sysfs_root, const std::string& procfs_root, const std::string& out_dir,
                bool with_processes, bool pcie_bw) {
  // A file-size limit (ulimit -f) must give a write error to report, not kill the process halfway.
  std::signal(SIGXFSZ, SIG_IGN);
  std::string error;
  std::optional<Output> out = Output::open(out_dir, error);
  if (!out) {
    std::fprintf(stderr, "hipstack-smi: %s\n", error.c_str());
    return kExitBadArguments;
  }
  Manifest manifest;
  Recorder sys(sysfs_root.empty() ? fs::path("/sys") : fs::path(sysfs_root), "sys", *out, manifest, pcie_bw);
  std::size_t cards = 0;
  for (const std::string& name : sys.names("class/drm")) {
    if (!is_card(name)) continue;
    const fs::path device = fs::path("class/drm") / name / "device";
    if (sys.peek(device / "uevent").find("DRIVER=amdgpu") == std::string::npos) continue;
    sys.copy_folder(device, {"hwmon", "fw_version", "xgmi_hive_info", "ras", "gpu_od"}, false);
    sys.copy_file(fs::path("class/drm") / name / "dev");
    ++cards;
  }
  sys.copy_folder("class/kfd/kfd/topology", {}, true);
  sys.copy_folder("module/amdgpu", {}, false);
  Recorder proc(procfs_root.empty() ? fs::path("/proc") : fs::path(procfs_root), "proc", *out, manifest, false);
  if (with_processes) record_processes(sys, proc);
  for (const Recorder* r : {&sys, &proc}) {
    if (error.empty()) error = r->error;
  }
  if (error.empty() && out->write("MANIFEST", manifest.text, 0644, error)) out->flush(error);
  if (!error.empty()) {
    std::fprintf(stderr, "hipstack-smi: capture failed, %s: %s is incomplete\n", error.c_str(), out_dir.c_str());
    return kExitReadFailure;
  }
  std::printf("Captured %zu amdgpu card(s): %zu files copied, %zu unreadable skipped, %zu links not followed, into %s\n",
              cards, sys.copied + proc.copied, sys.skipped + proc.skipped, sys.links + proc.links, out_dir.c_str());
  return kExitOk;
}

}  // namespace hipstack::cli
