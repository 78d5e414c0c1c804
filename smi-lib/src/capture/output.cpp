// The capture's two ends, both treated as hostile: the tree read and the archive written
// (output.hpp).
#include "output.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace hipstack::smi::detail::capture {
namespace {

std::vector<std::string> names_of(int dir_fd) {
  std::vector<std::string> names;
  DIR* listing = ::fdopendir(::dup(dir_fd));
  if (listing == nullptr) return names;
  while (const dirent* e = ::readdir(listing)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  ::closedir(listing);
  std::sort(names.begin(), names.end());
  return names;
}

SourceTree::Kind kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return SourceTree::Kind::link;
  if (S_ISDIR(mode)) return SourceTree::Kind::folder;
  if (S_ISREG(mode)) return SourceTree::Kind::file;
  return SourceTree::Kind::other;
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<Output> Output::open(const stdfs::path& dir, std::string& error) {
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
  if (!names_of(out.root_.get()).empty()) {
    error = fmt::format("{} is not empty: choose a new or empty folder", dir.string());
    return std::nullopt;
  }
  out.path_ = dir;
  return out;
}

bool Output::write(const stdfs::path& relative, std::string_view data, mode_t mode, std::string& error) {
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

bool Output::make_folder(const stdfs::path& relative, std::string& error) { return folder(relative, error).ok(); }

bool Output::flush(std::string& error) {
  if (::syncfs(root_.get()) == 0) return true;
  error = fmt::format("cannot write {} to disk: {}", path_.string(), std::strerror(errno));
  return false;
}

bool Output::fail(const stdfs::path& relative, const char* what, std::string& error) const {
  error = fmt::format("cannot {} {}: {}", what, (path_ / relative).string(), std::strerror(errno));
  return false;
}

// Opens (making as needed) a folder below the root, one component at a time, never through a link.
Fd Output::folder(const stdfs::path& relative, std::string& error) {
  Fd current(::dup(root_.get()));
  for (const stdfs::path& part : relative) {
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

SourceTree::SourceTree(stdfs::path root) : root_(std::move(root)) {
  std::error_code ec;
  real_root_ = stdfs::canonical(root_, ec);
  if (ec) real_root_.clear();
}

std::optional<stdfs::path> SourceTree::inside(const stdfs::path& relative) const {
  if (real_root_.empty()) return std::nullopt;
  std::error_code ec;
  const stdfs::path real = stdfs::canonical(root_ / relative, ec);
  if (ec) return std::nullopt;
  const auto mismatch = std::mismatch(real_root_.begin(), real_root_.end(), real.begin(), real.end());
  if (mismatch.first != real_root_.end()) return std::nullopt;  // outside the root: not read
  return real;
}

Fd SourceTree::open_inside(const stdfs::path& real, int flags) const {
  Fd current(::open(real_root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const stdfs::path below = real.lexically_relative(real_root_);
  if (below.empty() || below == ".") return current;
  auto last = std::prev(below.end());
  for (auto part = below.begin(); current.ok() && part != below.end(); ++part) {
    const int step = part == last ? flags : O_RDONLY | O_DIRECTORY;
    current = Fd(::openat(current.get(), part->c_str(), step | O_NOFOLLOW | O_CLOEXEC));
  }
  return current;
}

bool SourceTree::read(const stdfs::path& relative, std::string& data, mode_t& mode) const {
  const auto real = inside(relative);
  if (!real) return false;
  const Fd file = open_inside(*real, O_RDONLY | O_NONBLOCK);
  struct stat st {};
  if (!file.ok() || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  mode = st.st_mode;
  data.clear();
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

std::vector<SourceTree::Entry> SourceTree::entries(const stdfs::path& relative) const {
  std::vector<Entry> out;
  const auto real = inside(relative);
  if (!real) return out;
  const Fd dir = open_inside(*real, O_RDONLY | O_DIRECTORY);
  if (!dir.ok()) return out;
  for (std::string& name : names_of(dir.get())) {
    struct stat st {};
    const Kind kind = ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? kind_of(st.st_mode) : Kind::absent;
    out.push_back({std::move(name), kind});
  }
  return out;
}

SourceTree::Kind SourceTree::kind(const stdfs::path& relative) const {
  const auto parent = inside(relative.parent_path());
  if (!parent) return Kind::absent;
  const Fd dir = open_inside(*parent, O_RDONLY | O_DIRECTORY);
  struct stat st {};
  if (!dir.ok() || ::fstatat(dir.get(), relative.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Kind::absent;
  return kind_of(st.st_mode);
}

}  // namespace hipstack::smi::detail::capture
