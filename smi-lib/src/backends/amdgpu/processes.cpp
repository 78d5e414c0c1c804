// Processes using one amdgpu device, from two sources that complement each other:
//  - KFD (/sys/class/kfd/kfd/proc/<pid>/): compute (ROCm/HIP) clients: VRAM, queues, CU occupancy, SDMA;
//  - DRM fdinfo (/proc/<pid>/fdinfo/<fd>): every DRM client: VRAM/GTT and per-engine busy time in ns.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "../../process_owner.hpp"
#include "../../readings.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

constexpr const char* kKfdProc = "/sys/class/kfd/kfd/proc";

struct ProcessUsage {
  std::int32_t pid = 0;
  bool from_kfd = false;
  std::optional<std::int64_t> kfd_vram;
  std::optional<std::int64_t> cu_occupancy;
  std::optional<std::int64_t> sdma;
  std::int64_t queues = 0;
  std::set<std::size_t> partitions;  // indices of the KFD nodes (partitions) it holds memory or queues on
  // fdinfo, summed over distinct DRM clients of this device
  std::optional<std::int64_t> drm_vram;
  std::optional<std::int64_t> drm_gtt;
  std::map<std::string, std::uint64_t> engine_ns;
};

std::int64_t kib_to_bytes(std::string_view text) {
  const auto fields = split_fields(text, ' ');
  if (fields.empty()) return 0;
  const auto value = parse_int(fields[0]).value_or(0);
  if (fields.size() > 1 && fields[1] == "MiB") return value * 1024 * 1024;
  if (fields.size() > 1 && fields[1] == "KiB") return value * 1024;
  return value;
}

void read_kfd_process(const FsView& fs, const AmdGpu& gpu, ProcessUsage& usage) {
  const std::string dir = fmt::format("{}/{}", kKfdProc, usage.pid);
  for (std::size_t i = 0; i < gpu.kfd.size(); ++i) {
    const KfdNode& node = gpu.kfd[i];
    if (node.gpu_id == 0) continue;
    if (const FileText vram = fs.read_text(fmt::format("{}/vram_{}", dir, node.gpu_id)); vram.ok()) {
      usage.from_kfd = true;
      const std::int64_t bytes = parse_int(vram.text).value_or(0);
      usage.kfd_vram = usage.kfd_vram.value_or(0) + bytes;
      if (bytes > 0) usage.partitions.insert(i);
    }
    if (const FileText sdma = fs.read_text(fmt::format("{}/sdma_{}", dir, node.gpu_id)); sdma.ok()) {
      usage.sdma = usage.sdma.value_or(0) + parse_int(sdma.text).value_or(0);
    }
    if (const FileText cu = fs.read_text(fmt::format("{}/stats_{}/cu_occupancy", dir, node.gpu_id)); cu.ok()) {
      usage.cu_occupancy = usage.cu_occupancy.value_or(0) + parse_int(cu.text).value_or(0);
    }
  }
  for (const std::string& queue : fs.list(dir + "/queues")) {
    const FileText gpuid = fs.read_text(dir + "/queues/" + queue + "/gpuid");
    if (!gpuid.ok()) continue;
    const auto id = parse_uint(gpuid.text).value_or(0);
    const auto node = std::find_if(gpu.kfd.begin(), gpu.kfd.end(), [id](const KfdNode& n) { return n.gpu_id == id; });
    if (node != gpu.kfd.end()) {
      ++usage.queues;
      usage.partitions.insert(static_cast<std::size_t>(node - gpu.kfd.begin()));
    }
  }
}

// Reads the DRM fdinfo of one process for this device; returns false when it has none.
bool read_fdinfo(const FsView& fs, const std::string& bdf, ProcessUsage& usage) {
  const std::string dir = fmt::format("/proc/{}/fdinfo", usage.pid);
  std::set<std::string> clients;
  bool found = false;
  for (const std::string& fd : fs.list(dir)) {
    // On a live system only DRM files are worth reading; captures have fdinfo without fd links.
    const std::string target = fs.link_target(fmt::format("/proc/{}/fd/{}", usage.pid, fd));
    if (!target.empty() && target.rfind("/dev/dri/", 0) != 0) continue;
    const FileText info = fs.read_text(dir + "/" + fd);
    if (!info.ok() || info.text.find("drm-driver") == std::string::npos) continue;
    const KeyValues kv = parse_key_values(info.text, ':');
    if (find_value(kv, "drm-driver") != "amdgpu" || find_value(kv, "drm-pdev") != bdf) continue;
    // One DRM client can be open through several fds: count it once.
    const std::string client(find_value(kv, "drm-client-id").value_or(fd));
    if (!clients.insert(client).second) continue;
    found = true;
    for (const auto& [key, value] : kv) {
      if (key == "drm-memory-vram") usage.drm_vram = usage.drm_vram.value_or(0) + kib_to_bytes(value);
      else if (key == "drm-memory-gtt") usage.drm_gtt = usage.drm_gtt.value_or(0) + kib_to_bytes(value);
      else if (key.rfind("drm-engine-", 0) == 0 && key.find("capacity") == std::string::npos) {
        const auto fields = split_fields(value, ' ');
        if (!fields.empty()) usage.engine_ns[key.substr(11)] += parse_uint(fields[0]).value_or(0);
      }
    }
  }
  return found;
}

// self: this program's pid when its KFD event subscription made it a KFD process (it holds no GPU
// memory and runs nothing: not a GPU process), else 0.
std::map<std::int32_t, ProcessUsage> snapshot(const FsView& fs, const AmdGpu& gpu, std::int32_t self) {
  std::map<std::int32_t, ProcessUsage> usage;
  for (const std::string& entry : fs.list(kKfdProc)) {
    const auto pid = parse_int(entry);
    if (!pid || *pid <= 0 || *pid == self) continue;
    ProcessUsage p;
    p.pid = static_cast<std::int32_t>(*pid);
    read_kfd_process(fs, gpu, p);
    if (p.from_kfd) usage[p.pid] = std::move(p);
  }
  if (gpu.device_dir.empty()) return usage;
  const std::string bdf = gpu.address.text();
  for (const std::string& entry : fs.list("/proc")) {
    const auto pid = parse_int(entry);
    if (!pid || *pid <= 0) continue;
    ProcessUsage& p = usage[static_cast<std::int32_t>(*pid)];
    p.pid = static_cast<std::int32_t>(*pid);
    if (!read_fdinfo(fs, bdf, p) && !p.from_kfd) usage.erase(p.pid);
  }
  return usage;
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace

std::int32_t AmdgpuBackend::kfd_process_self() const {
  return kfd_events_->opened_live_kfd() ? static_cast<std::int32_t>(::getpid()) : 0;
}

// The processes the snapshot finds: KFD's list is world-readable; DRM clients only where this
// process may read /proc/<pid>/fdinfo (root, or the same user), which the detail says.
void AmdgpuBackend::read_running_processes(std::size_t device, std::vector<Reading>& out) const {
  ReadingList list(out);
  if (!fs_.exists(kKfdProc) && !fs_.exists("/proc")) {
    return list.failed(MetricId::running_processes, ENOENT, fmt::format("neither {} nor /proc to read", kKfdProc));
  }
  const auto found = snapshot(fs_, gpus_.at(device), kfd_process_self());
  list.integer(MetricId::running_processes, static_cast<std::int64_t>(found.size()),
               fmt::format("{} and /proc/*/fdinfo DRM clients", kKfdProc));
}

std::vector<ProcessInfo> AmdgpuBackend::processes(std::size_t device, unsigned interval_ms) const {
  const AmdGpu& gpu = gpus_.at(device);
  std::map<std::int32_t, ProcessUsage> now = snapshot(fs_, gpu, kfd_process_self());
  std::uint64_t wall = now_ns();
  const std::string bdf = gpu.address.text();

  // Busy percentages come from two looks: the previous call's, or one taken interval_ms ago. A
  // recorded tree's counters stand still, so a window over it would measure 0 % for any process.
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> previous;
  if (interval_ms > 0 && !fs_.recorded()) {
    for (const auto& [pid, usage] : now) {
      for (const auto& [engine, ns] : usage.engine_ns) previous[fmt::format("{}/{}/{}", bdf, pid, engine)] = {ns, wall};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    now = snapshot(fs_, gpu, kfd_process_self());
    wall = now_ns();
  } else {
    const std::lock_guard lock(engine_mutex_);
    previous = engine_last_;
  }

  std::vector<ProcessInfo> result;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> latest;
  for (const auto& [pid, usage] : now) {
    ProcessInfo info;
    info.pid = pid;
    describe_process(fs_, info);
    ReadingList list(info.readings);
    const std::string kfd_dir = fmt::format("{}/{}", kKfdProc, pid);
    if (usage.kfd_vram) list.integer(MetricId::process_vram, *usage.kfd_vram, kfd_dir + "/vram_<gpu_id>");
    else if (usage.drm_vram) list.integer(MetricId::process_vram, *usage.drm_vram, "fdinfo drm-memory-vram");
    else list.failed(MetricId::process_vram, ENOENT, "no KFD vram and no fdinfo drm-memory-vram");
    if (usage.drm_gtt) list.integer(MetricId::process_gtt, *usage.drm_gtt, "fdinfo drm-memory-gtt");
    else list.failed(MetricId::process_gtt, ENOENT, "no fdinfo drm-memory-gtt");
    if (usage.cu_occupancy) list.integer(MetricId::process_cu_occupancy, *usage.cu_occupancy, kfd_dir + "/stats_<gpu_id>");
    else list.failed(MetricId::process_cu_occupancy, ENOENT, "no KFD cu_occupancy");
    if (!usage.partitions.empty()) {
      std::string indices;
      for (const std::size_t i : usage.partitions) indices += fmt::format("{}{}", indices.empty() ? "" : ",", i);
      list.text(MetricId::process_partitions, indices, kfd_dir + "/vram_<gpu_id> and queues/*/gpuid");
    } else {
      list.failed(MetricId::process_partitions, ENOENT, "no KFD memory or queues on this GPU");
    }
    if (usage.from_kfd) list.integer(MetricId::process_queues, usage.queues, kfd_dir + "/queues");
    else list.failed(MetricId::process_queues, ENOENT, "not a KFD (compute) client");
    if (usage.sdma) list.integer(MetricId::process_sdma_usage, *usage.sdma, kfd_dir + "/sdma_<gpu_id>");
    else list.failed(MetricId::process_sdma_usage, ENOENT, "no KFD sdma counter");
    for (const auto& [engine, ns] : usage.engine_ns) {
      if (fs_.recorded()) {
        list.failed(MetricId::process_engine_busy, ENODATA,
                    "a recorded capture: its fdinfo counters do not move, so no share is measured", engine);
        continue;
      }
      const std::string key = fmt::format("{}/{}/{}", bdf, pid, engine);
      latest[key] = {ns, wall};
      const auto before = previous.find(key);
      if (before == previous.end() || wall <= before->second.second || ns < before->second.first) {
        list.failed(MetricId::process_engine_busy, ENODATA, "needs two looks: pass an interval", engine);
        continue;
      }
      const double share = static_cast<double>(ns - before->second.first) /
                           static_cast<double>(wall - before->second.second) * 100.0;
      list.real(MetricId::process_engine_busy, std::min(share, 100.0), "fdinfo drm-engine-" + engine, engine);
    }
    if (usage.engine_ns.empty()) list.failed(MetricId::process_engine_busy, ENOENT, "no fdinfo drm-engine-* keys");
    result.push_back(std::move(info));
  }
  const std::lock_guard lock(engine_mutex_);
  for (auto it = engine_last_.begin(); it != engine_last_.end();) {
    it = it->first.rfind(bdf + "/", 0) == 0 ? engine_last_.erase(it) : std::next(it);
  }
  engine_last_.merge(latest);
  return result;
}

}  // namespace hipstack::smi::detail::amdgpu
