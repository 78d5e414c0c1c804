// `hipstack-smi capture OUT`: records what libhipstack-smi reads into a flat folder that
// `--sysfs-root OUT/sys` reads back: every amdgpu card's device folder (one level, plus hwmon,
// fw_version, xgmi_hive_info, ras), the KFD topology, /sys/module/amdgpu, and optionally the KFD
// and DRM fdinfo view of processes. Symbolic links become folders; files that cannot be read
// (write-only controls) are skipped and counted.
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

namespace fs = std::filesystem;

// Never read: reads that block or act (pcie_bw sleeps a second; PCI config, BARs and ROM are not
// telemetry) or that are large binary dumps.
const std::set<std::string, std::less<>> kSkipped = {"config", "rom", "remove", "rescan", "reset", "resource",
                                                     "resource0", "resource1", "resource2", "resource3",
                                                     "resource4", "resource5", "resource0_wc", "resource2_wc",
                                                     "pcie_bw", "amdgpu_reset_level", "driver_override", "new_id",
                                                     "remove_id", "bind", "unbind"};

struct Recorder {
  fs::path source_root;  // stands for /sys or /proc
  fs::path target_root;  // OUT/sys or OUT/proc
  bool pcie_bw = false;
  std::size_t copied = 0;
  std::size_t skipped = 0;

  // Copies one regular file (following links), at most 1 MiB.
  void copy_file(const fs::path& relative) {
    const fs::path from = source_root / relative;
    std::FILE* in = std::fopen(from.c_str(), "rb");
    if (in == nullptr) {
      ++skipped;
      return;
    }
    std::string data;
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), in)) > 0 && data.size() < (1u << 20)) data.append(buffer.data(), n);
    const bool failed = std::ferror(in) != 0;
    std::fclose(in);
    if (failed) {
      ++skipped;
      return;
    }
    const fs::path to = target_root / relative;
    fs::create_directories(to.parent_path());
    std::ofstream(to, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
    ++copied;
  }

  // Copies the regular files of a folder; recurses into the named sub-folders (and all of them
  // when `deep`).
  void copy_folder(const fs::path& relative, const std::set<std::string, std::less<>>& subfolders, bool deep) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(source_root / relative, ec)) {
      const std::string name = entry.path().filename();
      const fs::path child = relative / name;
      std::error_code type_ec;
      if (entry.is_directory(type_ec)) {
        if (deep || subfolders.count(name) != 0) copy_folder(child, {}, true);
        continue;
      }
      if (kSkipped.count(name) != 0 && !(pcie_bw && name == "pcie_bw")) continue;
      if (entry.is_regular_file(type_ec)) copy_file(child);
    }
  }
};

bool is_card(const std::string& name) {
  return name.rfind("card", 0) == 0 && name.size() > 4 && name.find('-') == std::string::npos;
}

}  // namespace

int run_capture(const std::string& sysfs_root, const std::string& procfs_root, const std::string& out_dir,
                bool with_processes, bool pcie_bw) {
  const fs::path sys = sysfs_root.empty() ? fs::path("/sys") : fs::path(sysfs_root);
  Recorder rec{sys, fs::path(out_dir) / "sys", pcie_bw};
  std::error_code ec;
  if (fs::exists(rec.target_root, ec) && !fs::is_empty(rec.target_root, ec)) {
    std::fprintf(stderr, "hipstack-smi: %s already holds a capture; choose an empty folder\n", rec.target_root.c_str());
    return kExitBadArguments;
  }
  fs::create_directories(rec.target_root, ec);
  if (ec) {
    std::fprintf(stderr, "hipstack-smi: cannot create %s: %s\n", rec.target_root.c_str(), ec.message().c_str());
    return kExitBadArguments;
  }
  std::size_t cards = 0;
  for (const auto& entry : fs::directory_iterator(sys / "class/drm", ec)) {
    const std::string name = entry.path().filename();
    if (!is_card(name)) continue;
    const fs::path device = fs::path("class/drm") / name / "device";
    std::ifstream uevent(sys / device / "uevent");
    const std::string text((std::istreambuf_iterator<char>(uevent)), std::istreambuf_iterator<char>());
    if (text.find("DRIVER=amdgpu") == std::string::npos) continue;
    rec.copy_folder(device, {"hwmon", "fw_version", "xgmi_hive_info", "ras", "gpu_od"}, false);
    rec.copy_file(fs::path("class/drm") / name / "dev");
    ++cards;
  }
  rec.copy_folder("class/kfd/kfd/topology", {}, true);
  rec.copy_folder("module/amdgpu", {}, false);
  if (with_processes) {
    rec.copy_folder("class/kfd/kfd/proc", {}, true);
    Recorder proc{procfs_root.empty() ? fs::path("/proc") : fs::path(procfs_root), fs::path(out_dir) / "proc"};
    std::set<std::string> kfd_pids;
    for (const auto& entry : fs::directory_iterator(sys / "class/kfd/kfd/proc", ec)) kfd_pids.insert(entry.path().filename());
    for (const auto& entry : fs::directory_iterator(proc.source_root, ec)) {
      const std::string pid = entry.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      bool gpu_user = kfd_pids.count(pid) != 0;
      std::error_code fd_ec;
      for (const auto& info : fs::directory_iterator(entry.path() / "fdinfo", fd_ec)) {
        // Live: only fds on /dev/dri. A capture has fdinfo without fd links: keep the DRM ones.
        std::error_code link_ec;
        const fs::path target = fs::read_symlink(entry.path() / "fd" / info.path().filename(), link_ec);
        if (!link_ec && target.string().rfind("/dev/dri/", 0) != 0) continue;
        std::ifstream in(info.path());
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find("drm-driver:") == std::string::npos) continue;
        gpu_user = true;
        proc.copy_file(fs::path(pid) / "fdinfo" / info.path().filename());
      }
      if (gpu_user) {
        for (const char* file : {"comm", "status", "cmdline"}) proc.copy_file(fs::path(pid) / file);
      }
    }
    rec.copied += proc.copied;
    rec.skipped += proc.skipped;
  }
  std::printf("Captured %zu amdgpu card(s): %zu files copied, %zu unreadable skipped, into %s\n", cards, rec.copied,
              rec.skipped, out_dir.c_str());
  return kExitOk;
}

}  // namespace hipstack::cli
