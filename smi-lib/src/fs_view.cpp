// The root-prefixed view of /sys, /proc and /dev that every file the library reads goes through
// (fs_view.hpp).
#include "fs_view.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>

namespace hipstack::smi::detail {
namespace {

constexpr std::size_t kMaxTextBytes = 1 << 20;  // sysfs text is one page; procfs files are small

bool has_prefix(std::string_view path, std::string_view prefix) {
  return path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Reads up to max_bytes; returns errno (0 on success). With regular_only, a FIFO or device node is
// refused (EINVAL) without waiting on it; otherwise such a read blocks as a hung driver read would,
// and the System's read deadline deals with it (tests stand in for a stuck GPU with a FIFO).
int read_file(const std::string& host, std::size_t max_bytes, bool regular_only, std::string& out) {
  const int fd = ::open(host.c_str(), O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
  if (fd < 0) return errno;
  struct stat st {};
  if (regular_only && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    ::close(fd);
    return EINVAL;
  }
  out.clear();
  std::array<char, 4096> buffer{};
  int result = 0;
  while (out.size() < max_bytes) {
    const ssize_t n = ::read(fd, buffer.data(), std::min(buffer.size(), max_bytes - out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      result = errno;
      break;
    }
    if (n == 0) break;
    out.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return result;
}

// Joins a relative link target onto the folder of the link and folds "." and "..".
std::string resolve_relative(std::string_view link_path, std::string_view target) {
  std::vector<std::string_view> parts;
  auto push_all = [&parts](std::string_view path) {
    std::size_t pos = 0;
    while (pos <= path.size()) {
      std::size_t end = path.find('/', pos);
      if (end == std::string_view::npos) end = path.size();
      const std::string_view part = path.substr(pos, end - pos);
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      pos = end + 1;
    }
  };
  if (target.empty() || target.front() != '/') {
    const std::size_t slash = link_path.rfind('/');
    push_all(link_path.substr(0, slash == std::string_view::npos ? 0 : slash));
  }
  push_all(target);
  std::string out;
  for (const auto part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

}  // namespace

std::string_view trim_sysfs_text(std::string_view text) noexcept {
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos) text = text.substr(0, nul);
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const std::size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

RootedFs::RootedFs(std::string sys_root, std::string proc_root, std::string dev_root, bool regular_only)
    : sys_root_(std::move(sys_root)), proc_root_(std::move(proc_root)), dev_root_(std::move(dev_root)),
      regular_only_(regular_only) {
  for (std::string* root : {&sys_root_, &proc_root_, &dev_root_}) {
    while (root->size() > 1 && root->back() == '/') root->pop_back();
  }
}

std::string RootedFs::host_path(const std::string& path) const {
  const std::pair<std::string_view, const std::string*> mounts[] = {
      {"/sys", &sys_root_}, {"/proc", &proc_root_}, {"/dev", &dev_root_}};
  for (const auto& [prefix, root] : mounts) {
    if (!root->empty() && has_prefix(path, prefix)) return *root + path.substr(prefix.size());
  }
  return path;
}

std::string RootedFs::system_path(const std::string& host) const {
  const std::pair<std::string_view, const std::string*> mounts[] = {
      {"/sys", &sys_root_}, {"/proc", &proc_root_}, {"/dev", &dev_root_}};
  for (const auto& [prefix, root] : mounts) {
    if (root->empty()) continue;
    char* resolved = ::realpath(root->c_str(), nullptr);
    if (resolved == nullptr) continue;
    const std::string real_root = resolved;
    std::free(resolved);
    if (has_prefix(host, real_root)) return std::string(prefix) + host.substr(real_root.size());
  }
  return host;
}

FileText RootedFs::read_text(const std::string& path) const {
  FileText result;
  std::string raw;
  result.error = read_file(host_path(path), kMaxTextBytes, regular_only_, raw);
  if (result.error == 0) result.text = std::string(trim_sysfs_text(raw));
  return result;
}

FileBytes RootedFs::read_bytes(const std::string& path, std::size_t max_bytes) const {
  FileBytes result;
  std::string raw;
  result.error = read_file(host_path(path), max_bytes, regular_only_, raw);
  if (result.error == 0) result.bytes.assign(raw.begin(), raw.end());
  return result;
}

FileBytes RootedFs::read_once(const std::string& path, std::size_t size) const {
  FileBytes result;
  const int fd = ::open(host_path(path).c_str(), O_RDONLY | O_CLOEXEC | (regular_only_ ? O_NONBLOCK : 0));
  if (fd < 0) {
    result.error = errno;
    return result;
  }
  struct stat st {};
  if (regular_only_ && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    ::close(fd);
    result.error = EINVAL;
    return result;
  }
  result.bytes.resize(size);
  ssize_t n = -1;
  do {
    n = ::read(fd, result.bytes.data(), size);
  } while (n < 0 && errno == EINTR);
  result.error = n < 0 ? errno : 0;
  result.bytes.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  ::close(fd);
  return result;
}

int RootedFs::write_text(const std::string& path, std::string_view text) const {
  // No O_CREAT: a missing attribute means the driver does not offer the control. O_NOFOLLOW: an
  // attribute is a regular file; a link planted in its place is refused (ELOOP), never written through.
  const int fd = ::open(host_path(path).c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  int result = 0;
  for (;;) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) result = errno;
    else if (static_cast<std::size_t>(n) != text.size()) result = EIO;  // sysfs takes a store whole
    break;
  }
  if (::close(fd) != 0 && result == 0 && errno != EINTR) result = errno;
  return result;
}

std::vector<std::string> RootedFs::list(const std::string& path) const {
  std::vector<std::string> names;
  DIR* dir = ::opendir(host_path(path).c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool RootedFs::exists(const std::string& path) const {
  struct stat st {};
  return ::stat(host_path(path).c_str(), &st) == 0;
}

std::string RootedFs::link_target(const std::string& path) const {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::readlink(host_path(path).c_str(), buffer.data(), buffer.size() - 1);
  if (n <= 0) return {};
  const std::string_view target(buffer.data(), static_cast<std::size_t>(n));
  // An absolute target inside a capture names a live path (/sys/devices/...): keep it as is.
  if (target.front() == '/') return resolve_relative("/", target);
  // A relative target is relative to where the link really is: its folder may itself be reached
  // through links (/sys/class/drm/card0/device), so resolve the folder first.
  const std::size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
  std::string real_parent = parent;
  if (char* resolved = ::realpath(host_path(parent).c_str(), nullptr)) {
    real_parent = system_path(resolved);
    std::free(resolved);
  }
  return resolve_relative(real_parent + "/x", target);
}

}  // namespace hipstack::smi::detail
