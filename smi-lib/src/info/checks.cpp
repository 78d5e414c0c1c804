// Install checks (docs/info.md): is a GPU driver loaded, can this user open its device nodes, does
// the vendor runtime load and see the GPUs the driver lists. Each check says what it found and, when
// something is wrong, what to do.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <vector>

#include "../parse.hpp"
#include "info_internal.hpp"

namespace hipstack::smi::detail::info {
namespace {

using Status = InstallCheck::Status;

constexpr const char* kNoGpuAdvice =
    "no amdgpu or nvidia kernel module is loaded: no GPU driver is installed or no GPU is present. "
    "`lspci -nn | grep -Ei 'vga|3d|display|accel'` lists the GPUs this machine has; install the driver for "
    "yours (AMD: amdgpu-install --usecase=rocm, or your distribution's kernel and linux-firmware; NVIDIA: the "
    "NVIDIA driver package) and reboot or load it (sudo modprobe amdgpu / sudo modprobe nvidia). In a "
    "container, the host's driver must be loaded and the devices passed in (--device /dev/kfd --device "
    "/dev/dri, or --gpus all)";

bool module_loaded(const FsView& fs, const std::string& name) {
  if (fs.exists("/sys/module/" + name)) return true;
  const FileText modules = fs.read_text("/proc/modules");
  if (!modules.ok()) return false;
  for (const std::string_view line : split_fields(modules.text, '\n')) {
    if (line.substr(0, line.find(' ')) == name) return true;
  }
  return false;
}

// PCI display / accelerator functions of one vendor ("0000:c1:00.0"), from /sys/bus/pci/devices.
std::vector<std::string> pci_gpus(const FsView& fs, std::uint64_t vendor) {
  std::vector<std::string> found;
  for (const std::string& entry : fs.list("/sys/bus/pci/devices")) {
    const std::string dir = "/sys/bus/pci/devices/" + entry;
    const FileText id = fs.read_text(dir + "/vendor");
    const FileText cls = fs.read_text(dir + "/class");
    if (!id.ok() || !cls.ok() || parse_hex(id.text).value_or(0) != vendor) continue;
    const std::uint64_t base = parse_hex(cls.text).value_or(0) >> 16;
    if (base == 0x03 || base == 0x12) found.push_back(entry);
  }
  return found;
}

// getgrgid_r and getpwuid_r with a buffer of their own: the plain calls return static storage that
// another thread of the process (the daemon links this library) may overwrite meanwhile.
template <typename Entry, typename Id>
bool lookup(int (*fn)(Id, Entry*, char*, std::size_t, Entry**), Id id, Entry& entry, std::vector<char>& buffer) {
  buffer.resize(1024);
  while (true) {
    Entry* found = nullptr;
    const int error = fn(id, &entry, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1u << 20)) {  // a group with many members
      buffer.resize(buffer.size() * 4);
      continue;
    }
    return error == 0 && found != nullptr;
  }
}

std::string group_name(gid_t gid) {
  group entry{};
  std::vector<char> buffer;
  if (lookup(::getgrgid_r, gid, entry, buffer)) return entry.gr_name;
  return fmt::format("gid {}", gid);
}

bool listed_in_group(gid_t gid, const std::string& user) {
  group entry{};
  std::vector<char> buffer;
  if (user.empty() || !lookup(::getgrgid_r, gid, entry, buffer)) return false;
  for (char** member = entry.gr_mem; member != nullptr && *member != nullptr; ++member) {
    if (user == *member) return true;
  }
  return false;
}

struct NodeState {
  bool exists = false;
  bool usable = false;   // readable and writable by `who`
  std::string problem;   // what is wrong, for the detail
  std::string advice;
};

// Can `who` open a device node read-write? access(2) for the real process; the mode bits as
// access(2) reads them for a test identity.
NodeState check_node(const FsView& fs, const std::string& path, const Identity& who) {
  NodeState state;
  const std::string host = fs.host_path(path);
  struct stat st {};
  if (::stat(host.c_str(), &st) != 0) {
    state.problem = fmt::format("{} is missing", path);
    return state;
  }
  state.exists = true;
  if (who.real) {
    state.usable = ::faccessat(AT_FDCWD, host.c_str(), R_OK | W_OK, AT_EACCESS) == 0;
  } else {
    const bool in_group = who.gid == st.st_gid ||
                          std::find(who.groups.begin(), who.groups.end(), st.st_gid) != who.groups.end();
    mode_t bits = st.st_mode & 0006;
    if (who.uid == 0) bits = 0006;
    else if (who.uid == st.st_uid) bits = (st.st_mode & 0600) >> 6;
    else if (in_group) bits = (st.st_mode & 0060) >> 3;
    state.usable = (bits & 06) == 06;
  }
  if (state.usable) return state;
  const std::string group = group_name(st.st_gid);
  state.problem = fmt::format("{} (mode {:04o}, group '{}') is not readable and writable by {}", path,
                              st.st_mode & 07777, group, who.user.empty() ? fmt::format("uid {}", who.uid) : who.user);
  const bool in_group = who.gid == st.st_gid ||
                        std::find(who.groups.begin(), who.groups.end(), st.st_gid) != who.groups.end();
  if ((st.st_mode & 0060) != 0060 || st.st_gid == 0) {
    state.advice = fmt::format(
        "{} is not open to a group: a udev rule should give it to group 'render' (or 'video') with mode 0660, e.g. "
        "KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\" in /etc/udev/rules.d/70-gpu.rules, then sudo udevadm "
        "control --reload && sudo udevadm trigger",
        path);
  } else if (!in_group && listed_in_group(st.st_gid, who.user)) {
    state.advice = fmt::format("you are in group '{}' in /etc/group, but this login session started before that: "
                               "log out and in again (or run `newgrp {}`)", group, group);
  } else {
    state.advice = fmt::format("add yourself to group '{}': sudo usermod -aG {} $USER, then log in again", group, group);
  }
  return state;
}

// Several nodes judged together: pass when all are usable, fail naming the first problems.
InstallCheck nodes_check(const FsView& fs, const std::string& name, const std::vector<std::string>& paths,
                         const Identity& who, const std::string& missing_advice) {
  InstallCheck check{name, Status::pass, "", ""};
  std::vector<std::string> problems;
  for (const std::string& path : paths) {
    NodeState state = check_node(fs, path, who);
    if (state.usable) continue;
    problems.push_back(state.problem);
    if (check.advice.empty()) check.advice = state.exists ? state.advice : missing_advice;
  }
  if (problems.empty()) {
    check.detail = paths.size() == 1 ? fmt::format("{} is readable and writable", paths.front())
                                     : fmt::format("{} nodes readable and writable ({} ... {})", paths.size(),
                                                   paths.front(), paths.back());
    return check;
  }
  check.status = Status::fail;
  const std::size_t shown = std::min<std::size_t>(problems.size(), 3);
  check.detail = fmt::format("{}", fmt::join(problems.begin(), problems.begin() + static_cast<std::ptrdiff_t>(shown), "; "));
  if (problems.size() > shown) check.detail += fmt::format("; and {} more", problems.size() - shown);
  return check;
}

std::string env_setting(std::initializer_list<const char*> names) {
  std::vector<std::string> set;
  for (const char* name : names) {
    if (const char* value = std::getenv(name)) set.push_back(fmt::format("{}={}", name, value));
  }
  return fmt::format("{}", fmt::join(set, ", "));
}

const RuntimeProbe* find_runtime(const std::vector<RuntimeProbe>& runtimes, std::string_view name) {
  for (const RuntimeProbe& r : runtimes) {
    if (r.runtime == name) return &r;
  }
  return nullptr;
}

InstallCheck runtime_check(const RuntimeProbe* probe, const std::string& name, const std::string& missing_advice,
                           const std::string& failing_advice) {
  InstallCheck check{name, Status::skip, "", ""};
  if (probe == nullptr) {
    check.detail = "not probed";
    return check;
  }
  if (!probe->skipped.empty()) {
    check.detail = probe->skipped;
    return check;
  }
  check.status = Status::fail;
  if (!probe->found) {
    check.detail = probe->error;
    check.advice = missing_advice;
    return check;
  }
  const std::string what = fmt::format("{} {}", probe->library_path, probe->version.empty() ? "" : "version " + probe->version);
  if (!probe->error.empty()) {
    check.detail = fmt::format("{} loads, but {}", what, probe->error);
    check.advice = failing_advice;
    return check;
  }
  if (probe->devices.empty()) {
    check.detail = fmt::format("{} loads, but sees no device", what);
    check.advice = failing_advice;
    return check;
  }
  check.status = Status::pass;
  check.detail = fmt::format("{}, {} device(s)", what, probe->devices.size());
  return check;
}

// The PCI slot of a BDF (domain:bus:device): partitions of one GPU differ only in the function.
std::string slot_of(const std::string& bdf) { return bdf.size() > 2 ? bdf.substr(0, bdf.size() - 2) : bdf; }

// Does the runtime see the GPUs the driver lists? Counts and PCI slots.
void agree(const RuntimeProbe& probe, const std::vector<const Agent*>& listed, const std::string& lister,
           const std::string& visibility_vars, std::vector<std::string>& agreements, InstallCheck& check) {
  std::multiset<std::string> driver_slots, runtime_slots;
  for (const Agent* agent : listed) driver_slots.insert(slot_of(agent->bdf));
  for (const auto& device : probe.devices) runtime_slots.insert(slot_of(device.bdf));
  if (driver_slots == runtime_slots) {
    agreements.push_back(fmt::format("{} sees {} device(s), {} lists {}, same PCI slots", probe.runtime,
                                     probe.devices.size(), lister, listed.size()));
    return;
  }
  std::vector<std::string> only_driver;
  for (const std::string& slot : driver_slots) {
    if (runtime_slots.count(slot) == 0) only_driver.push_back(slot);
  }
  const std::string text = fmt::format("{} sees {} device(s) but {} lists {}{}", probe.runtime, probe.devices.size(), lister,
                                       listed.size(),
                                       only_driver.empty() ? "" : fmt::format(" (not seen: {})", fmt::join(only_driver, ", ")));
  check.detail += (check.detail.empty() ? "" : "; ") + text;
  if (!visibility_vars.empty() && probe.devices.size() < listed.size()) {
    if (check.status != Status::fail) check.status = Status::warn;
    check.advice = fmt::format("{} is set and hides devices from the runtime; unset it to use them all", visibility_vars);
  } else {
    check.status = Status::fail;
    check.advice = "a GPU the driver lists is not usable through the runtime: look for errors about it in `sudo dmesg`, "
                   "check its device nodes (device.* checks) and that this runtime version supports its ISA";
  }
}

}  // namespace

Identity current_identity() {
  Identity who;
  who.real = true;
  who.uid = ::geteuid();
  who.gid = ::getegid();
  const int count = ::getgroups(0, nullptr);
  if (count > 0) {
    who.groups.resize(static_cast<std::size_t>(count));
    const int got = ::getgroups(count, who.groups.data());
    who.groups.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  }
  passwd entry{};
  std::vector<char> buffer;
  if (lookup(::getpwuid_r, who.uid, entry, buffer)) who.user = entry.pw_name;
  return who;
}

namespace {

// What the check families share: whether each vendor's driver is loaded, and the GPUs as the
// agents list them.
struct Node {
  bool amd = false, nvidia = false;
  bool modules_known = true;  // a capture that holds neither sys/module nor proc/modules says nothing of them
  bool judge_dev = true;      // a capture says nothing of /dev unless a devfs root was given
  std::vector<const Agent*> amd_gpus, nvidia_gpus, nvml_gpus;

  [[nodiscard]] bool uses_amd() const { return amd || !amd_gpus.empty(); }
  [[nodiscard]] bool uses_nvidia() const { return nvidia || !nvidia_gpus.empty(); }
};

Node node_of(const FsView& fs, const Roots& roots, const std::vector<Agent>& agents) {
  Node node;
  node.amd = module_loaded(fs, "amdgpu");
  node.nvidia = module_loaded(fs, "nvidia");
  node.modules_known = !roots.capture || fs.exists("/sys/module") || fs.exists("/proc/modules");
  node.judge_dev = !roots.capture || roots.dev_given;
  for (const Agent& agent : agents) {
    if (agent.kind != Agent::Kind::gpu) continue;
    if (agent.source == "kfd") node.amd_gpus.push_back(&agent);
    else node.nvidia_gpus.push_back(&agent);
    if (agent.source.find("nvml") != std::string::npos) node.nvml_gpus.push_back(&agent);
  }
  return node;
}

// driver.amdgpu_loaded and driver.nvidia_loaded.
void driver_checks(const FsView& fs, const Node& node, std::vector<InstallCheck>& checks) {
  auto driver_check = [&](const char* name, const std::string& module, bool loaded, bool other, std::uint64_t vendor,
                          const std::string& load_advice) {
    InstallCheck check{name, Status::pass, "", ""};
    if (loaded) {
      const FileText version = fs.read_text("/sys/module/" + module + "/version");
      check.detail = fmt::format("{} kernel module loaded{}", module, version.ok() ? " (version " + version.text + ")" : "");
    } else if (!node.modules_known) {
      check.status = Status::skip;
      check.detail = "capture: it does not record /sys/module or /proc/modules";
    } else if (other) {
      check.status = Status::skip;
      check.detail = fmt::format("{} is not loaded; not needed: the other vendor's driver is", module);
    } else {
      check.status = Status::fail;
      const auto present = pci_gpus(fs, vendor);
      check.detail = present.empty() ? fmt::format("{} kernel module is not loaded", module)
                                     : fmt::format("{} kernel module is not loaded, although the PCI bus has {}", module,
                                                   fmt::join(present, ", "));
      check.advice = load_advice;
    }
    checks.push_back(std::move(check));
  };
  driver_check("driver.amdgpu_loaded", "amdgpu", node.amd, node.nvidia, 0x1002,
               "for an AMD GPU: install the amdgpu driver (amdgpu-install --usecase=rocm, or your distribution's kernel "
               "and linux-firmware) and load it: sudo modprobe amdgpu; `sudo dmesg | grep -i amdgpu` says why it did not "
               "load (missing firmware, or blacklisted in /etc/modprobe.d)");
  driver_check("driver.nvidia_loaded", "nvidia", node.nvidia, node.amd, 0x10de,
               "for an NVIDIA GPU: install the NVIDIA driver and load it: sudo modprobe nvidia; `sudo dmesg | grep -i "
               "nvrm` says why it did not load (Secure Boot refusing an unsigned module, nouveau still bound)");

}

// topology.kfd: every node folder became an agent, with no malformed value.
InstallCheck kfd_topology_check(const FsView& fs, const Node& node, const std::vector<Agent>& agents) {
  InstallCheck check{"topology.kfd", Status::pass, "", ""};
  const std::string nodes_dir = "/sys/class/kfd/kfd/topology/nodes";
  std::set<int> read;
  std::vector<std::string> problems;
  for (const Agent& agent : agents) {
    if (agent.source != "kfd") continue;
    read.insert(agent.node);
    for (const std::string& p : agent.problems) problems.push_back(fmt::format("node {}: {}", agent.node, p));
  }
  std::size_t folders = 0;
  for (const std::string& entry : fs.list(nodes_dir)) {
    const auto n = parse_uint(entry);
    if (!n) continue;
    ++folders;
    if (read.count(static_cast<int>(*n)) == 0) {
      problems.push_back(fmt::format("node {}: {}/properties is missing, unreadable or not KFD properties", *n,
                                     fs.host_path(nodes_dir + "/" + entry)));
    }
  }
  if (folders == 0) {
    check.status = node.amd ? Status::fail : Status::skip;
    check.detail = fmt::format("no KFD topology at {}", fs.host_path(nodes_dir));
    if (node.amd) {
      check.advice = "amdgpu is loaded but its compute part (KFD) is not: `sudo dmesg | grep -i kfd` says why "
                     "(a GPU without compute support, or a kernel built without CONFIG_HSA_AMD)";
    }
  } else if (!problems.empty()) {
    check.status = Status::warn;
    const std::size_t shown = std::min<std::size_t>(problems.size(), 3);
    check.detail = fmt::format("{} of {} node(s) read; {}{}", read.size(), folders,
                               fmt::join(problems.begin(), problems.begin() + static_cast<std::ptrdiff_t>(shown), "; "),
                               problems.size() > shown ? fmt::format("; and {} more", problems.size() - shown) : "");
    check.advice = "the values named may be wrong; a capture may be truncated, on a live system report it with `dmesg`";
  } else {
    const auto gpus = static_cast<std::size_t>(std::count_if(agents.begin(), agents.end(), [](const Agent& a) {
      return a.source == "kfd" && a.kind == Agent::Kind::gpu;
    }));
    check.detail = fmt::format("{} node(s): {} CPU, {} GPU", read.size(), read.size() - gpus, gpus);
  }
  return check;
}

// agents.gpu: at least one GPU agent, from either vendor.
InstallCheck gpu_agents_check(const Node& node) {
  InstallCheck check{"agents.gpu", Status::pass, "", ""};
  if (!node.amd_gpus.empty() || !node.nvidia_gpus.empty()) {
    check.detail = fmt::format("{} GPU agent(s): {} AMD (KFD), {} NVIDIA", node.amd_gpus.size() + node.nvidia_gpus.size(),
                               node.amd_gpus.size(), node.nvidia_gpus.size());
  } else {
    check.status = Status::fail;
    check.detail = "no GPU agent";
    if (node.amd) {
      check.advice = "amdgpu is loaded but the KFD lists no GPU: the GPU may have no compute support, or failed "
                     "to initialise (`sudo dmesg | grep -i -e amdgpu -e kfd`)";
    } else if (node.nvidia) {
      check.advice = "the nvidia module is loaded but neither NVML nor CUDA lists a GPU: run nvidia-smi, and see "
                     "`sudo dmesg | grep -i nvrm`";
    } else {
      check.advice = kNoGpuAdvice;
    }
  }
  return check;
}

// device.kfd, device.render_nodes and device.nvidia_nodes: the device files exist and this user may open them.
void device_checks(const FsView& fs, const Node& node, const Identity& who, std::vector<InstallCheck>& checks) {
  const std::string capture_skip = "capture: no /dev to judge (give a devfs root to judge one)";
  if (!node.judge_dev || !node.uses_amd()) {
    checks.push_back({"device.kfd", Status::skip, node.judge_dev ? "no amdgpu driver" : capture_skip, ""});
    checks.push_back({"device.render_nodes", Status::skip, node.judge_dev ? "no amdgpu driver" : capture_skip, ""});
  } else {
    checks.push_back(nodes_check(fs, "device.kfd", {"/dev/kfd"}, who,
                                 "the KFD creates /dev/kfd when amdgpu starts its compute part: see `sudo dmesg | grep "
                                 "-i kfd`; in a container pass it in (--device /dev/kfd)"));
    std::set<int> minors;
    for (const Agent* agent : node.amd_gpus) {
      if (agent->drm_render_minor > 0) minors.insert(agent->drm_render_minor);
    }
    std::vector<std::string> paths;
    for (const int minor : minors) paths.push_back(fmt::format("/dev/dri/renderD{}", minor));
    if (paths.empty()) {
      checks.push_back({"device.render_nodes", Status::skip, "no GPU agent names a render node", ""});
    } else {
      checks.push_back(nodes_check(fs, "device.render_nodes", paths, who,
                                   "the render nodes come with amdgpu (udev creates them): check `ls -l /dev/dri`; in "
                                   "a container pass them in (--device /dev/dri)"));
    }
  }
  if (!node.judge_dev || !node.uses_nvidia()) {
    checks.push_back({"device.nvidia_nodes", Status::skip, node.judge_dev ? "no nvidia driver" : capture_skip, ""});
  } else {
    std::vector<std::string> paths = {"/dev/nvidiactl", "/dev/nvidia-uvm"};
    for (const std::string& entry : fs.list("/dev")) {
      if (entry.size() > 6 && entry.rfind("nvidia", 0) == 0 && parse_uint(entry.substr(6))) paths.push_back("/dev/" + entry);
    }
    if (paths.size() == 2) paths.push_back("/dev/nvidia0");  // reported as missing
    checks.push_back(nodes_check(fs, "device.nvidia_nodes", paths, who,
                                 "CUDA needs /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN: load nvidia-uvm "
                                 "(sudo modprobe nvidia-uvm) and create the nodes (sudo nvidia-modprobe -u -c 0, or run "
                                 "nvidia-smi once as root); in a container use --gpus all"));
  }

}

// devices.agree: the runtimes see the GPUs the drivers list.
InstallCheck devices_agree_check(const RuntimeProbe* hip, const RuntimeProbe* cuda, const Node& node) {
  InstallCheck check{"devices.agree", Status::pass, "", ""};
  std::vector<std::string> agreements;
  bool compared = false;
  if (hip != nullptr && hip->skipped.empty() && hip->found && hip->error.empty()) {
    compared = true;
    agree(*hip, node.amd_gpus, "the KFD", env_setting({"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}),
          agreements, check);
  }
  if (cuda != nullptr && cuda->skipped.empty() && cuda->found && cuda->error.empty()) {
    compared = true;
    agree(*cuda, node.nvml_gpus.empty() ? node.nvidia_gpus : node.nvml_gpus, node.nvml_gpus.empty() ? "CUDA (no NVML)" : "NVML",
          env_setting({"CUDA_VISIBLE_DEVICES"}), agreements, check);
  }
  if (!compared) {
    check.status = Status::skip;
    check.detail = "no runtime could be asked";
  } else if (check.status == Status::pass) {
    check.detail = fmt::format("{}", fmt::join(agreements, "; "));
  }
  return check;
}

}  // namespace

std::vector<InstallCheck> run_install_checks(const FsView& fs, const Roots& roots, const std::vector<Agent>& agents,
                                             const std::vector<RuntimeProbe>& runtimes, const Identity& who) {
  std::vector<InstallCheck> checks;
  const Node node = node_of(fs, roots, agents);
  driver_checks(fs, node, checks);
  checks.push_back(kfd_topology_check(fs, node, agents));
  checks.push_back(gpu_agents_check(node));
  device_checks(fs, node, who, checks);
  // runtime.*
  const RuntimeProbe* hip = find_runtime(runtimes, "hip");
  const RuntimeProbe* cuda = find_runtime(runtimes, "cuda");
  checks.push_back(runtime_check(
      hip, "runtime.hip",
      "install the HIP runtime (amdgpu-install --usecase=hip, or the rocm-hip-runtime package) and make its folder "
      "known to the loader: echo /opt/rocm/lib | sudo tee /etc/ld.so.conf.d/rocm.conf && sudo ldconfig",
      "the HIP runtime sees no usable GPU: check device.kfd and device.render_nodes, HIP_VISIBLE_DEVICES / "
      "ROCR_VISIBLE_DEVICES, and that this ROCm release supports the GPU's ISA"));
  checks.push_back(runtime_check(
      cuda, "runtime.cuda",
      "libcuda.so.1 comes with the NVIDIA driver, not with the CUDA toolkit: install the driver's user-space part "
      "matching the kernel module (e.g. libnvidia-compute-<version>); in a container use the NVIDIA Container Toolkit "
      "(--gpus all)",
      "CUDA cannot use the GPUs: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH means libcuda and the kernel module differ (reboot "
      "after a driver update); CUDA_ERROR_NO_DEVICE: check CUDA_VISIBLE_DEVICES and device.nvidia_nodes"));

  checks.push_back(devices_agree_check(hip, cuda, node));
  return checks;
}

}  // namespace hipstack::smi::detail::info
