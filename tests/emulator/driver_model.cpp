// The amdgpu emulator's driver model (driver_model.hpp).
#include "driver_model.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace hipstack::emulator {
namespace fs = std::filesystem;
namespace {

constexpr const char* kNodes = "sys/class/kfd/kfd/topology/nodes";
constexpr const char* kGeneration = "sys/class/kfd/kfd/topology/generation_id";
constexpr int kIoLinkPcie = 2;
constexpr int kIoLinkXgmi = 11;
constexpr const char* kSameGpuXgmiWeight = "13";  // kfd_crat.c: XGMI between partitions of one socket

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string trim(std::string_view text) {
  const auto nul = text.find('\0');
  if (nul != std::string_view::npos) text = text.substr(0, nul);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::uint64_t to_u64(std::string_view text) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

bool parse_i64(std::string_view text, std::int64_t& value) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  return ec == std::errc() && end == t.data() + t.size();
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) end = text.size();
    std::string field = trim(text.substr(pos, end - pos));
    if (!field.empty()) out.push_back(std::move(field));
    pos = end + 1;
  }
  return out;
}

std::vector<fs::path> sorted_children(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) out.push_back(entry.path());
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    const auto na = a.filename().string(), nb = b.filename().string();
    return na.size() != nb.size() ? na.size() < nb.size() : na < nb;
  });
  return out;
}

// A KFD gpu_id as the kernel makes one: a 16-bit hash of the node's identity, never 0.
std::uint64_t make_gpu_id(std::string_view unique_id, std::string_view mode, int partition) {
  std::uint64_t h = 1469598103934665603ULL;
  const std::string key = std::string(unique_id) + "/" + std::string(mode) + "/" + std::to_string(partition);
  for (const unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
  return 1 + (h % 65534);
}

}  // namespace

Props parse_props(std::string_view text) {
  Props props;
  for (const std::string& line : split(text, '\n')) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    props.emplace_back(line.substr(0, space), trim(line.substr(space + 1)));
  }
  return props;
}

std::string props_text(const Props& props) {
  std::string out;
  for (const auto& [key, value] : props) out += key + " " + value + "\n";
  return out;
}

std::string get_prop(const Props& props, std::string_view key) {
  for (const auto& [k, v] : props) {
    if (k == key) return v;
  }
  return {};
}

void set_prop(Props& props, std::string_view key, std::string value) {
  for (auto& [k, v] : props) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  props.emplace_back(std::string(key), std::move(value));
}

DriverModel::DriverModel(fs::path backing, fs::path pristine, std::chrono::milliseconds settle)
    : backing_(std::move(backing)), pristine_(std::move(pristine)), settle_(settle) {
  load();
  worker_ = std::thread([this] { worker(); });
}

DriverModel::~DriverModel() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void DriverModel::load() {
  fs::remove_all(pristine_);
  fs::create_directories(pristine_);
  // A capture without a KFD topology (a display GPU) still has power, clock and fan attributes.
  if (fs::is_directory(backing_ / kNodes)) fs::copy(backing_ / kNodes, pristine_, fs::copy_options::recursive);
  generation_ = to_u64(trim(read_file(backing_ / kGeneration)));
  for (const fs::path& dir : sorted_children(pristine_)) {
    PristineNode node;
    node.id = static_cast<int>(to_u64(dir.filename().string()));
    node.props = parse_props(read_file(dir / "properties"));
    for (const fs::path& link : sorted_children(dir / "io_links")) node.io_links.push_back(parse_props(read_file(link / "properties")));
    pristine_nodes_.push_back(std::move(node));
  }
  std::sort(pristine_nodes_.begin(), pristine_nodes_.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const fs::path& card : sorted_children(backing_ / "sys/class/drm")) {
    const std::string name = card.filename().string();
    if (name.rfind("card", 0) != 0 || name.find('-') != std::string::npos) continue;
    const std::string uevent = read_file(card / "device/uevent");
    if (uevent.find("DRIVER=amdgpu") == std::string::npos || uevent.find("PCI_ID=1002:") == std::string::npos) continue;
    const auto slot = uevent.find("PCI_SLOT_NAME=");
    if (slot == std::string::npos) continue;
    Gpu gpu;
    gpu.card = name;
    gpu.device_dir = card / "device";
    unsigned fn = 0;
    if (std::sscanf(uevent.c_str() + slot + 14, "%x:%x:%x.%x", &gpu.domain, &gpu.bus, &gpu.dev, &fn) != 4) continue;
    for (const PristineNode& node : pristine_nodes_) {
      if (to_u64(get_prop(node.props, "simd_count")) == 0) continue;
      const std::uint64_t location = to_u64(get_prop(node.props, "location_id"));
      if (to_u64(get_prop(node.props, "domain")) == gpu.domain && (location >> 8) == gpu.bus && ((location >> 3) & 0x1f) == gpu.dev) {
        gpu.pristine_nodes.push_back(node.id);
        gpu.node_ids.push_back(node.id);
        gpu.total_xcc += std::max<std::uint64_t>(1, to_u64(get_prop(node.props, "num_xcc")));
        gpu.total_simd += to_u64(get_prop(node.props, "simd_count"));
        gpu.total_arrays += to_u64(get_prop(node.props, "array_count"));
        for (const fs::path& bank : sorted_children(pristine_ / std::to_string(node.id) / "mem_banks")) {
          gpu.total_mem += to_u64(get_prop(parse_props(read_file(bank / "properties")), "size_in_bytes"));
        }
        gpu.gpu_ids.push_back(to_u64(trim(read_file(pristine_ / std::to_string(node.id) / "gpu_id"))));
        for (const Props& link : node.io_links) {
          if (to_u64(get_prop(link, "type")) == kIoLinkPcie) gpu.cpu_node = static_cast<int>(to_u64(get_prop(link, "node_to")));
        }
      }
    }
    for (const PristineNode& node : pristine_nodes_) {
      if (node.id == gpu.pristine_nodes.front()) {
        const std::uint64_t location = to_u64(get_prop(node.props, "location_id"));
        gpu.base_minor = static_cast<int>(to_u64(get_prop(node.props, "drm_render_minor")) - (location & 7));
      }
    }
    gpu.mode = gpu.pristine_mode = upper(trim(read_file(gpu.device_dir / "current_compute_partition")));
    gpus_.push_back(std::move(gpu));
  }
}

DriverModel::Attr DriverModel::classify(const std::string& path) {
  Attr attr;
  for (Gpu& gpu : gpus_) {
    const std::string prefix = "/sys/class/drm/" + gpu.card + "/device/";
    if (path.rfind(prefix, 0) != 0) continue;
    attr.gpu = &gpu;
    const std::string rest = path.substr(prefix.size());
    attr.hwmon = rest.rfind("hwmon/", 0) == 0;
    attr.name = rest.substr(rest.rfind('/') == std::string::npos ? 0 : rest.rfind('/') + 1);
    if (!attr.hwmon && rest.find('/') != std::string::npos) attr.name.clear();  // deeper folders: not attributes
    return attr;
  }
  return attr;
}

int DriverModel::check_read(const std::string& path) {
  std::lock_guard lock(mutex_);
  const Attr attr = classify(path);
  if (attr.gpu != nullptr && attr.gpu->read_errors) return -EIO;
  if (attr.gpu == nullptr || !attr.gpu->in_reset) return 0;
  // amdgpu_pm.c and the partition attributes answer -EPERM while amdgpu_in_reset().
  const std::string& n = attr.name;
  const bool pm = attr.hwmon || n.rfind("pp_", 0) == 0 || n.rfind("power_dpm", 0) == 0 || n == "gpu_busy_percent" ||
                  n == "mem_busy_percent" || n == "gpu_metrics" || n.find("_partition") != std::string::npos;
  return pm ? -EPERM : 0;
}

bool DriverModel::writable(const std::string& path) {
  std::lock_guard lock(mutex_);
  const Attr attr = classify(path);
  if (attr.gpu == nullptr) return false;
  static const std::set<std::string> kDevice = {"current_compute_partition", "current_memory_partition",
                                                "power_dpm_force_performance_level", "pp_power_profile_mode",
                                                "pp_od_clk_voltage", "reset"};
  static const std::set<std::string> kHwmon = {"power1_cap", "pwm1_enable", "pwm1"};
  return attr.hwmon ? kHwmon.count(attr.name) > 0 : kDevice.count(attr.name) > 0;
}

bool DriverModel::busy(const Gpu& gpu) const {
  // KFD holds the GPU while a process has it open (kfd_process: /sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>).
  for (const fs::path& process : sorted_children(backing_ / "sys/class/kfd/kfd/proc")) {
    for (const std::uint64_t id : gpu.gpu_ids) {
      if (fs::exists(process / ("vram_" + std::to_string(id)))) return true;
    }
  }
  return false;
}

int DriverModel::partitions_for(const Gpu& gpu, std::string_view mode) const {
  if (mode == "SPX") return 1;
  if (mode == "DPX") return 2;
  if (mode == "TPX") return 3;
  if (mode == "QPX") return 4;
  if (mode == "CPX") return static_cast<int>(gpu.total_xcc);
  return 0;
}

int DriverModel::store(const std::string& path, std::string_view value) {
  std::lock_guard lock(mutex_);
  const Attr attr = classify(path);
  if (attr.gpu == nullptr) return -EACCES;
  Gpu& gpu = *attr.gpu;
  if (gpu.in_reset) return -EPERM;
  if (fs::exists(gpu.device_dir / "physfn") && !attr.hwmon) return -EPERM;  // SR-IOV VF: host owns it
  const std::string& n = attr.name;
  if (n == "current_compute_partition") return store_compute(gpu, value);
  if (n == "current_memory_partition") return store_memory(gpu, value);
  if (n == "power1_cap") return store_power_cap(attr, value);
  if (n == "pp_power_profile_mode") return store_profile(attr, value);
  if (n == "pp_od_clk_voltage") return store_overdrive(attr, value);
  if (n == "pwm1_enable" || n == "pwm1") return store_pwm(attr, value);
  if (n == "power_dpm_force_performance_level") {
    static const std::set<std::string> kLevels = {"auto", "low", "high", "manual", "profile_standard", "profile_min_sclk",
                                                  "profile_min_mclk", "profile_peak", "perf_determinism", "profile_exit"};
    const std::string level = trim(value);
    if (kLevels.count(level) == 0) return -EINVAL;
    write_file(gpu.device_dir / n, (level == "profile_exit" ? std::string("auto") : level) + "\n");
    return 0;
  }
  if (n == "reset") return trim(value) == "1" ? 0 : -EINVAL;
  return -EACCES;
}

int DriverModel::store_compute(Gpu& gpu, std::string_view value) {
  // amdgpu_gfx.c: the mode is matched without regard to case; it must be one the XCC count allows.
  const std::string mode = upper(trim(value));
  bool offered = false;
  for (const std::string& m : split(read_file(gpu.device_dir / "available_compute_partition"), ',')) offered |= upper(m) == mode;
  if (!offered) return -EINVAL;
  if (gpu.switching || busy(gpu)) return -EBUSY;  // amdgpu_amdkfd_check_and_lock_kfd
  if (mode == gpu.mode) return 0;
  gpu.mode = mode;
  write_file(gpu.device_dir / "current_compute_partition", mode + "\n");
  // The KFD nodes go now; the new ones appear once the partitions are re-initialised.
  gpu.switching = true;
  gpu.ready_at = std::chrono::steady_clock::now() + settle_;
  gpu.gpu_ids.clear();
  for (int p = 0; p < partitions_for(gpu, mode); ++p) gpu.gpu_ids.push_back(make_gpu_id(gpu.card, mode, p));
  // Tear down: the GPU's nodes vanish (the others keep their numbers until the re-publication).
  for (const int id : gpu.node_ids) fs::remove_all(backing_ / kNodes / std::to_string(id));
  gpu.node_ids.clear();
  wake_.notify_all();
  return 0;
}

int DriverModel::store_memory(Gpu& gpu, std::string_view value) {
  // amdgpu_gmc.c current_memory_partition_store: records the request; PSP applies it on reload.
  const std::string mode = upper(trim(value));
  bool offered = false;
  for (const std::string& m : split(read_file(gpu.device_dir / "available_memory_partition"), ',')) offered |= upper(m) == mode;
  if (!offered) return -EINVAL;
  gpu.requested_nps = mode;
  return 0;
}

int DriverModel::store_power_cap(const Attr& attr, std::string_view value) {
  // amdgpu_hwmon_set_power_cap: microwatts, -EINVAL outside power1_cap_min..max.
  std::int64_t microwatts = 0;
  if (!parse_i64(value, microwatts)) return -EINVAL;
  for (const fs::path& hwmon : sorted_children(attr.gpu->device_dir / "hwmon")) {
    if (!fs::exists(hwmon / "power1_cap")) continue;
    std::int64_t lo = 0, hi = 0;
    if (parse_i64(read_file(hwmon / "power1_cap_min"), lo) && microwatts < lo) return -EINVAL;
    if (parse_i64(read_file(hwmon / "power1_cap_max"), hi) && microwatts > hi) return -EINVAL;
    write_file(hwmon / "power1_cap", std::to_string(microwatts) + "\n");
    return 0;
  }
  return -ENOENT;
}

int DriverModel::store_profile(const Attr& attr, std::string_view value) {
  // The profile number; the table marks the active row with '*' before its ':'.
  std::int64_t index = 0;
  const auto fields = split(value, ' ');
  if (fields.empty() || !parse_i64(fields.front(), index)) return -EINVAL;
  const fs::path file = attr.gpu->device_dir / "pp_power_profile_mode";
  std::vector<std::string> lines;
  std::istringstream in(read_file(file));
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    const auto colon = line.find(':');
    std::int64_t row = -1;
    if (first != std::string::npos && colon != std::string::npos && colon > 0 &&
        parse_i64(line.substr(first, line.find(' ', first) - first), row)) {
      line[colon - 1] = row == index ? '*' : ' ';
      found |= row == index;
    }
    lines.push_back(line);
  }
  if (!found) return -EINVAL;
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  write_file(file, text);
  return 0;
}

int DriverModel::store_overdrive(const Attr& attr, std::string_view value) {
  // "s|m LEVEL MHZ" stages an edit within OD_RANGE; "c" commits the staged edits; "r" drops them.
  const fs::path file = attr.gpu->device_dir / "pp_od_clk_voltage";
  const std::string text = read_file(file);
  const auto fields = split(value, ' ');
  if (fields.size() == 1 && fields[0] == "r") {
    od_staged_.clear();
    return 0;
  }
  if (fields.size() == 1 && fields[0] == "c") {
    std::string out = text;
    for (const std::string& edit : od_staged_) {
      const auto parts = split(edit, ' ');
      const std::string section = parts[0] == "s" ? "OD_SCLK:" : "OD_MCLK:";
      const auto at = out.find(section);
      const auto line = out.find("\n" + parts[1] + ":", at);
      if (at == std::string::npos || line == std::string::npos) return -EINVAL;
      const auto end = out.find('\n', line + 1);
      out.replace(line + 1, end - line - 1, parts[1] + ": " + parts[2] + "Mhz");
    }
    od_staged_.clear();
    write_file(file, out);
    return 0;
  }
  std::int64_t level = 0, mhz = 0;
  if (fields.size() != 3 || (fields[0] != "s" && fields[0] != "m") || !parse_i64(fields[1], level) ||
      !parse_i64(fields[2], mhz) || level < 0 || level > 1) {
    return -EINVAL;
  }
  const std::string label = fields[0] == "s" ? "SCLK:" : "MCLK:";
  const auto range = text.find("OD_RANGE:");
  const auto at = range == std::string::npos ? range : text.find(label, range);
  if (at == std::string::npos) return -EINVAL;
  std::istringstream line(text.substr(at + label.size(), text.find('\n', at) - at - label.size()));
  std::int64_t lo = 0, hi = 0;
  std::string unit;
  line >> lo >> unit >> hi;
  if (mhz < lo || mhz > hi) return -EINVAL;
  od_staged_.push_back(fields[0] + " " + fields[1] + " " + fields[2]);
  return 0;
}

int DriverModel::store_pwm(const Attr& attr, std::string_view value) {
  std::int64_t v = 0;
  if (!parse_i64(value, v)) return -EINVAL;
  for (const fs::path& hwmon : sorted_children(attr.gpu->device_dir / "hwmon")) {
    if (!fs::exists(hwmon / attr.name)) continue;
    if (attr.name == "pwm1_enable") {
      if (v < 0 || v > 2) return -EINVAL;
    } else {
      // amdgpu_hwmon_set_pwm1: "manual fan speed control should be enabled first".
      std::int64_t mode = 0;
      if (!parse_i64(read_file(hwmon / "pwm1_enable"), mode) || mode != 1) return -EINVAL;
      if (v < 0 || v > 255) return -EINVAL;
    }
    write_file(hwmon / attr.name, std::to_string(v) + "\n");
    return 0;
  }
  return -ENOENT;
}

int DriverModel::control(std::string_view command) {
  std::lock_guard lock(mutex_);
  const auto fields = split(command, ' ');
  if (fields.size() == 1 && fields[0] == "reload") {
    // modprobe -r amdgpu fails while KFD processes hold any GPU.
    for (const Gpu& gpu : gpus_) {
      if (busy(gpu)) return -EBUSY;
    }
    for (Gpu& gpu : gpus_) {
      if (gpu.requested_nps.empty()) continue;
      write_file(gpu.device_dir / "current_memory_partition", gpu.requested_nps + "\n");
      gpu.requested_nps.clear();
    }
    rebuild_topology();  // the reloaded driver publishes its topology again
    return 0;
  }
  if (fields.size() == 2 && (fields[0] == "reset-begin" || fields[0] == "reset-end" || fields[0] == "read-errors" ||
                             fields[0] == "read-errors-end")) {
    for (Gpu& gpu : gpus_) {
      if (gpu.card != fields[1]) continue;
      if (fields[0].starts_with("reset")) gpu.in_reset = fields[0] == "reset-begin";
      else gpu.read_errors = fields[0] == "read-errors";
      return 0;
    }
    return -ENOENT;
  }
  return -EINVAL;
}

void DriverModel::worker() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    auto next = std::chrono::steady_clock::time_point::max();
    bool due = false;
    for (Gpu& gpu : gpus_) {
      if (!gpu.switching) continue;
      if (gpu.ready_at <= std::chrono::steady_clock::now()) {
        gpu.switching = false;
        due = true;
      } else {
        next = std::min(next, gpu.ready_at);
      }
    }
    if (due) rebuild_topology();
    if (next == std::chrono::steady_clock::time_point::max()) wake_.wait(lock);
    else wake_.wait_until(lock, next);
  }
}

void DriverModel::rebuild_topology() {
  if (pristine_nodes_.empty()) return;
  // The whole nodes/ folder is rebuilt beside the old one and swapped in, as the KFD re-publishes
  // its topology after a partition change (kfd_topology_update_sysfs): CPU nodes first, then each
  // GPU's partitions in card order, numbered from 0.
  const fs::path nodes = backing_ / kNodes;
  const fs::path fresh = nodes.parent_path() / ".nodes.new";
  const fs::path old = nodes.parent_path() / ".nodes.old";
  fs::remove_all(fresh);
  fs::remove_all(old);
  fs::create_directories(fresh);
  struct Out {
    int id = 0;
    const PristineNode* source = nullptr;
    Props props;
    const Gpu* gpu = nullptr;
    std::uint64_t gpu_id = 0;
    std::uint64_t mem = 0;     // 0: copy the source's mem_banks as they are
  };
  std::vector<Out> out;
  std::map<int, int> cpu_map;  // original CPU node -> new number
  std::map<int, const PristineNode*> by_id;
  for (const PristineNode& node : pristine_nodes_) by_id[node.id] = &node;
  for (const PristineNode& node : pristine_nodes_) {
    if (to_u64(get_prop(node.props, "simd_count")) != 0) continue;
    cpu_map[node.id] = static_cast<int>(out.size());
    out.push_back({static_cast<int>(out.size()), &node, node.props, nullptr, 0, 0});
  }
  for (Gpu& gpu : gpus_) {
    gpu.node_ids.clear();
    if (gpu.switching) continue;
    const int count = partitions_for(gpu, gpu.mode);
    const bool as_captured = gpu.mode == gpu.pristine_mode && static_cast<std::size_t>(count) == gpu.pristine_nodes.size();
    for (int p = 0; p < count; ++p) {
      const PristineNode* source = by_id.at(as_captured ? gpu.pristine_nodes[static_cast<std::size_t>(p)] : gpu.pristine_nodes.front());
      Out node{static_cast<int>(out.size()), source, source->props, &gpu, gpu.gpu_ids.at(static_cast<std::size_t>(p)), 0};
      gpu.node_ids.push_back(node.id);
      if (!as_captured) {
        const auto n = static_cast<std::uint64_t>(count);
        set_prop(node.props, "simd_count", std::to_string(gpu.total_simd / n));
        set_prop(node.props, "array_count", std::to_string(gpu.total_arrays / n));
        set_prop(node.props, "num_xcc", std::to_string(gpu.total_xcc / n));
        set_prop(node.props, "location_id", std::to_string(gpu.bus << 8 | gpu.dev << 3 | static_cast<unsigned>(p)));
        set_prop(node.props, "drm_render_minor", std::to_string(gpu.base_minor + p));
        node.mem = gpu.total_mem / n;
      }
      out.push_back(std::move(node));
    }
  }
  // Link templates: the source node's own links, retargeted.
  auto first_link = [](const PristineNode& node, int type) -> const Props* {
    for (const Props& link : node.io_links) {
      if (static_cast<int>(to_u64(get_prop(link, "type"))) == type) return &link;
    }
    return nullptr;
  };
  for (Out& node : out) {
    std::vector<Props> links;
    auto add = [&links, &node](Props link, int to) {
      set_prop(link, "node_from", std::to_string(node.id));
      set_prop(link, "node_to", std::to_string(to));
      links.push_back(std::move(link));
    };
    if (node.gpu == nullptr) {
      for (const Props& link : node.source->io_links) {
        const int to = static_cast<int>(to_u64(get_prop(link, "node_to")));
        if (static_cast<int>(to_u64(get_prop(link, "type"))) != kIoLinkPcie && cpu_map.count(to)) add(link, cpu_map[to]);
      }
      if (const Props* pcie = first_link(*node.source, kIoLinkPcie)) {
        for (const Out& gpu : out) {
          if (gpu.gpu != nullptr && cpu_map.count(gpu.gpu->cpu_node) && cpu_map[gpu.gpu->cpu_node] == node.id) add(*pcie, gpu.id);
        }
      }
    } else {
      if (const Props* pcie = first_link(*node.source, kIoLinkPcie); pcie && cpu_map.count(node.gpu->cpu_node)) {
        add(*pcie, cpu_map[node.gpu->cpu_node]);
      }
      const Props* xgmi = first_link(*node.source, kIoLinkXgmi);
      std::string other_weight = xgmi ? get_prop(*xgmi, "weight") : std::string();
      for (const Props& link : node.source->io_links) {
        const auto target = by_id.find(static_cast<int>(to_u64(get_prop(link, "node_to"))));
        if (to_u64(get_prop(link, "type")) == kIoLinkXgmi && target != by_id.end() &&
            (to_u64(get_prop(target->second->props, "location_id")) >> 8) != node.gpu->bus) {
          other_weight = get_prop(link, "weight");
          break;
        }
      }
      for (const Out& peer : out) {
        if (xgmi == nullptr || peer.gpu == nullptr || peer.id == node.id) continue;
        Props link = *xgmi;
        set_prop(link, "weight", peer.gpu == node.gpu ? kSameGpuXgmiWeight : other_weight);
        add(std::move(link), peer.id);
      }
    }
    set_prop(node.props, "io_links_count", std::to_string(links.size()));
    const fs::path dir = fresh / std::to_string(node.id);
    const fs::path from = pristine_ / std::to_string(node.source->id);
    fs::create_directories(dir / "io_links");
    for (const fs::path& child : sorted_children(from)) {
      const std::string name = child.filename().string();
      if (name == "io_links" || name == "properties" || name == "gpu_id" || (name == "mem_banks" && node.mem != 0)) continue;
      fs::copy(child, dir / name, fs::copy_options::recursive);
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
      fs::create_directories(dir / "io_links" / std::to_string(i));
      write_file(dir / "io_links" / std::to_string(i) / "properties", props_text(links[i]));
    }
    if (node.mem != 0) {
      const auto banks = sorted_children(from / "mem_banks");
      Props bank = banks.empty() ? Props{} : parse_props(read_file(banks.front() / "properties"));
      set_prop(bank, "size_in_bytes", std::to_string(node.mem));
      fs::create_directories(dir / "mem_banks" / "0");
      write_file(dir / "mem_banks" / "0" / "properties", props_text(bank));
    }
    write_file(dir / "gpu_id", std::to_string(node.gpu_id) + "\n");
    write_file(dir / "properties", props_text(node.props));
  }
  fs::rename(nodes, old);
  fs::rename(fresh, nodes);
  fs::remove_all(old);
  write_file(backing_ / kGeneration, std::to_string(++generation_) + "\n");
}

}  // namespace hipstack::emulator
