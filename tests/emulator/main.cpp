// amdgpu-emulator: copies a capture to a writable folder and mounts it with FUSE, playing the amdgpu
// driver's part when a file is written (driver_model.hpp, README.md).
//
//   amdgpu-emulator [--settle-ms N] CAPTURE WORKDIR MOUNTPOINT
//
// CAPTURE holds sys/ (and proc/); WORKDIR receives the copy (WORKDIR/backing) and the original KFD
// nodes (WORKDIR/pristine-nodes); MOUNTPOINT then shows sys/, proc/ and .emulator/control. Runs in
// the foreground until SIGTERM or SIGINT, then unmounts. Exit 77 when FUSE is unavailable.
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "driver_model.hpp"

namespace {

namespace fs = std::filesystem;
using hipstack::emulator::DriverModel;

constexpr const char* kControlDir = "/.emulator";
constexpr const char* kControlFile = "/.emulator/control";

struct Emulator {
  std::string backing;
  std::unique_ptr<DriverModel> model;
};

Emulator& self() { return *static_cast<Emulator*>(fuse_get_context()->private_data); }
std::string host(const char* path) { return self().backing + path; }

void* on_init(fuse_conn_info*, fuse_config* cfg) {
  // No caching anywhere: the driver changes files and folders behind the kernel's back.
  cfg->entry_timeout = 0;
  cfg->attr_timeout = 0;
  cfg->negative_timeout = 0;
  cfg->direct_io = 1;
  cfg->kernel_cache = 0;
  return fuse_get_context()->private_data;
}

int on_getattr(const char* path, struct stat* st, fuse_file_info*) {
  if (std::strcmp(path, kControlDir) == 0) {
    *st = {};
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return 0;
  }
  if (std::strcmp(path, kControlFile) == 0) {
    *st = {};
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    return 0;
  }
  return ::lstat(host(path).c_str(), st) == 0 ? 0 : -errno;
}

int on_readlink(const char* path, char* buffer, size_t size) {
  const ssize_t n = ::readlink(host(path).c_str(), buffer, size - 1);
  if (n < 0) return -errno;
  buffer[n] = '\0';
  return 0;
}

int on_readdir(const char* path, void* buffer, fuse_fill_dir_t fill, off_t, fuse_file_info*, fuse_readdir_flags) {
  if (std::strcmp(path, kControlDir) == 0) {
    fill(buffer, ".", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    fill(buffer, "..", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    fill(buffer, "control", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    return 0;
  }
  DIR* dir = ::opendir(host(path).c_str());
  if (dir == nullptr) return -errno;
  while (const dirent* entry = ::readdir(dir)) {
    // The model's own scratch folders (.nodes.new, .nodes.old) are not part of the tree.
    if (entry->d_name[0] == '.' && std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) continue;
    fill(buffer, entry->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  }
  ::closedir(dir);
  if (std::strcmp(path, "/") == 0) fill(buffer, kControlDir + 1, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  return 0;
}

int on_open(const char* path, fuse_file_info* fi) {
  if (std::strcmp(path, kControlFile) == 0) return 0;
  struct stat st {};
  if (::lstat(host(path).c_str(), &st) != 0) return -errno;
  if ((fi->flags & O_ACCMODE) != O_RDONLY && !self().model->writable(path)) return -EACCES;  // kernfs: no store
  return 0;
}

int on_read(const char* path, char* buffer, size_t size, off_t offset, fuse_file_info*) {
  if (std::strcmp(path, kControlFile) == 0) return 0;
  if (const int error = self().model->check_read(path); error != 0) return error;
  const int fd = ::open(host(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  const ssize_t n = ::pread(fd, buffer, size, offset);
  const int error = errno;
  ::close(fd);
  return n < 0 ? -error : static_cast<int>(n);
}

int on_write(const char* path, const char* buffer, size_t size, off_t, fuse_file_info*) {
  const std::string_view value(buffer, size);
  const int error = std::strcmp(path, kControlFile) == 0 ? self().model->control(value) : self().model->store(path, value);
  return error != 0 ? error : static_cast<int>(size);
}

int on_truncate(const char* path, off_t, fuse_file_info*) {
  // `echo x > attr` truncates first; sysfs ignores it for attributes with a store method.
  if (std::strcmp(path, kControlFile) == 0 || self().model->writable(path)) return 0;
  return -EACCES;
}

}  // namespace

int main(int argc, char** argv) {
  std::chrono::milliseconds settle(100);
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--settle-ms" && i + 1 < argc) settle = std::chrono::milliseconds(std::stoi(argv[++i]));
    else positional.push_back(arg);
  }
  if (positional.size() != 3) {
    std::fprintf(stderr, "usage: amdgpu-emulator [--settle-ms N] CAPTURE WORKDIR MOUNTPOINT\n");
    return 2;
  }
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    std::fprintf(stderr, "amdgpu-emulator: /dev/fuse is not usable (%s): FUSE unavailable\n", std::strerror(errno));
    return 77;
  }
  const fs::path capture = positional[0];
  const fs::path work = positional[1];
  Emulator emulator;
  try {
    if (!fs::is_directory(capture / "sys")) throw std::runtime_error(capture.string() + " has no sys/ folder");
    emulator.backing = (work / "backing").string();
    fs::remove_all(emulator.backing);
    fs::create_directories(emulator.backing);
    fs::copy(capture / "sys", fs::path(emulator.backing) / "sys", fs::copy_options::recursive);
    if (fs::is_directory(capture / "proc")) fs::copy(capture / "proc", fs::path(emulator.backing) / "proc", fs::copy_options::recursive);
    emulator.model = std::make_unique<DriverModel>(emulator.backing, work / "pristine-nodes", settle);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "amdgpu-emulator: %s\n", e.what());
    return 1;
  }
  fuse_operations ops{};
  ops.init = on_init;
  ops.getattr = on_getattr;
  ops.readlink = on_readlink;
  ops.readdir = on_readdir;
  ops.open = on_open;
  ops.read = on_read;
  ops.write = on_write;
  ops.truncate = on_truncate;
  std::string mount = positional[2];
  std::vector<std::string> args = {"amdgpu-emulator", "-f", "-s", "-o", "allow_other,default_permissions,fsname=amdgpu-emulator", mount};
  std::vector<char*> raw;
  for (std::string& a : args) raw.push_back(a.data());
  std::fprintf(stderr, "amdgpu-emulator: %zu GPU(s) from %s, mounted on %s\n", emulator.model->gpu_count(),
               capture.c_str(), mount.c_str());
  const int rc = fuse_main(static_cast<int>(raw.size()), raw.data(), &ops, &emulator);
  emulator.model.reset();
  // fuse_main returns 4 when the mount itself failed (no FUSE in this kernel or container).
  if (rc == 4) {
    std::fprintf(stderr, "amdgpu-emulator: mounting %s failed: FUSE unavailable here\n", mount.c_str());
    return 77;
  }
  return rc;
}
