// Identity and static facts of one amdgpu device: PCI ids, names, FRU, VBIOS, firmware, memory
// sizes, compute resources (KFD), DPM tables, power-cap range, PCIe maximum, caches, NUMA, XGMI.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "../cpu_affinity.hpp"
#include "sysfs_values.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

std::string hex_id(std::uint32_t id, int digits) { return fmt::format("0x{:0{}x}", id, digits); }

std::uint64_t sum_over(const AmdGpu& gpu, std::string_view key) {
  std::uint64_t total = 0;
  for (const KfdNode& node : gpu.kfd) total += node.get(key);
  return total;
}

// An empty pp_dpm_* file is how the driver says it has no such table (APUs' pp_dpm_pcie, SI/CIK
// cards): not supported, not a parse error.
constexpr const char* kNoLevels = "empty: the driver lists no levels";

// Reports the levels of a pp_dpm_* table; returns the highest clock, if any.
std::optional<double> read_dpm_levels(SysfsValues& values, const AmdGpu& gpu, MetricId id, const char* file) {
  const std::string path = gpu.device_dir + "/" + file;
  const FileText text = values.fs().read_text(path);
  if (!text.ok()) {
    values.list().failed(id, text.error, values.fs().host_path(path) + ": " + std::strerror(text.error));
    return std::nullopt;
  }
  const DpmTable table = parse_dpm_levels(text.text);
  if (table.error.empty() && table.levels.empty()) {
    values.list().failed(id, ENOENT, values.fs().host_path(path) + ": " + kNoLevels);
    return std::nullopt;
  }
  if (!table.error.empty()) {
    values.list().malformed(id, values.fs().host_path(path) + ": " + table.error);
    return std::nullopt;
  }
  std::optional<double> highest;
  for (const DpmLevel& level : table.levels) {
    if (level.index == -2) continue;  // the current clock of a fine-grained table, not a level
    values.list().real(id, level.mhz, path, level.index < 0 ? "S" : std::to_string(level.index));
    if (level.index >= 0) highest = std::max(highest.value_or(0.0), level.mhz);
  }
  return highest;
}

void read_firmware_versions(SysfsValues& values, const AmdGpu& gpu) {
  const std::string dir = gpu.device_dir + "/fw_version";
  constexpr std::string_view kSuffix = "_fw_version";
  bool any = false;
  for (const std::string& entry : values.fs().list(dir)) {
    if (entry.size() <= kSuffix.size() || entry.compare(entry.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
      continue;
    }
    any = values.text(MetricId::firmware_version, dir + "/" + entry, entry.substr(0, entry.size() - kSuffix.size())) || any;
  }
  if (!any && !gpu.kfd.empty() && gpu.kfd.front().properties.has("fw_version")) {
    // KFD reports the MEC firmware version when the driver has no fw_version folder.
    values.list().text(MetricId::firmware_version, std::to_string(gpu.kfd.front().get("fw_version")),
                       "KFD properties fw_version", "mec");
    any = true;
  }
  if (!any) values.list().failed(MetricId::firmware_version, ENOENT, values.fs().host_path(dir) + ": absent");
}

void read_caches_by_level(SysfsValues& values, const AmdGpu& gpu) {
  std::set<int> seen;
  if (!gpu.kfd.empty()) {
    std::vector<std::string> problems;  // a malformed cache entry is left out
    for (const kfd::Properties& cache : kfd::read_children(values.fs(), gpu.kfd.front().id, "caches", problems)) {
      const std::uint64_t level = cache.get("level"), size_kib = cache.get("size");
      if (level < 1 || level > 9 || size_kib == 0 || size_kib > (1ULL << 40) || !seen.insert(static_cast<int>(level)).second) continue;
      values.list().integer(MetricId::cache_size, static_cast<std::int64_t>(size_kib * 1024), "KFD caches",
                            fmt::format("L{}", level));
    }
  }
  if (seen.empty()) values.list().failed(MetricId::cache_size, ENOENT, "KFD caches: absent");
}

void read_hwmon_limits(SysfsValues& values, const AmdGpu& gpu) {
  const struct {
    const char* label;
    MetricId critical;
    MetricId emergency;
  } sensors[] = {{"edge", MetricId::temperature_edge_critical, MetricId::temperature_edge_emergency},
                 {"junction", MetricId::temperature_junction_critical, MetricId::temperature_junction_emergency},
                 {"mem", MetricId::temperature_memory_critical, MetricId::temperature_memory_emergency}};
  for (const auto& sensor : sensors) {
    const auto channel = gpu.temp_channel.find(sensor.label);
    const std::string base =
        channel == gpu.temp_channel.end() ? std::string() : fmt::format("{}/temp{}", gpu.hwmon_dir, channel->second);
    values.number(sensor.critical, base.empty() ? base : base + "_crit", kMilliPerUnit, std::nullopt, "hwmon");
    values.number(sensor.emergency, base.empty() ? base : base + "_emergency", kMilliPerUnit, std::nullopt, "hwmon");
  }
  const std::string hw = gpu.hwmon_dir.empty() ? std::string() : gpu.hwmon_dir + "/";
  auto hwmon_file = [&hw](const char* name) { return hw.empty() ? std::string() : hw + name; };
  values.number(MetricId::power_cap_min, hwmon_file("power1_cap_min"), kMicroPerUnit, std::nullopt, "hwmon");
  values.number(MetricId::power_cap_max, hwmon_file("power1_cap_max"), kMicroPerUnit, std::nullopt, "hwmon");
  values.number(MetricId::power_cap_default, hwmon_file("power1_cap_default"), kMicroPerUnit, std::nullopt, "hwmon");
  values.number(MetricId::power_cap, hwmon_file("power1_cap"), kMicroPerUnit, std::nullopt, "hwmon");
  values.number(MetricId::fan_speed_max, hwmon_file("fan1_max"), 1.0, std::nullopt, "hwmon");
  values.number(MetricId::fan_pwm_level_max, hwmon_file("pwm1_max"), 1.0, std::nullopt, "hwmon");
}

}  // namespace

KfdMemory read_mem_banks(const FsView& fs, int node) {
  KfdMemory memory;
  std::vector<std::string> problems;  // a malformed bank is left out
  for (const kfd::Properties& bank : kfd::read_children(fs, node, "mem_banks", problems)) {
    memory.bytes += static_cast<std::int64_t>(std::min<std::uint64_t>(bank.get("size_in_bytes"), 1ULL << 56));
    memory.clock_max = std::max(memory.clock_max, static_cast<std::int64_t>(std::min<std::uint64_t>(bank.get("mem_clk_max"), 1u << 30)));
  }
  return memory;
}

void read_identity(const FsView& fs, const AmdGpu& gpu, std::vector<Reading>& out) {
  SysfsValues values(fs, out);
  ReadingList& list = values.list();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  const char* id_source = gpu.device_dir.empty() ? "KFD properties" : "PCI config";
  list.text(MetricId::vendor, "amd", "PCI vendor 0x1002");
  list.text(MetricId::bdf, gpu.address.text(), gpu.device_dir.empty() ? "KFD location_id" : "uevent PCI_SLOT_NAME");
  list.text(MetricId::pci_vendor_id, hex_id(gpu.vendor_id, 4), id_source);
  list.text(MetricId::pci_device_id, hex_id(gpu.device_id, 4), id_source);
  if (gpu.device_dir.empty()) {
    for (const MetricId id : {MetricId::pci_subsystem_vendor_id, MetricId::pci_subsystem_device_id,
                              MetricId::pci_revision_id, MetricId::serial_number, MetricId::product_name,
                              MetricId::product_number, MetricId::manufacturer, MetricId::vbios_version,
                              MetricId::driver_name, MetricId::drm_card}) {
      list.failed(id, ENOENT, "no DRM card for this KFD node");
    }
  } else {
    list.text(MetricId::pci_subsystem_vendor_id, hex_id(gpu.subsystem_vendor_id, 4), id_source);
    list.text(MetricId::pci_subsystem_device_id, hex_id(gpu.subsystem_device_id, 4), id_source);
    if (fs.exists(dev + "revision")) {
      list.text(MetricId::pci_revision_id, hex_id(gpu.revision, 2), dev + "revision");
    } else {
      list.failed(MetricId::pci_revision_id, ENOENT, fs.host_path(dev + "revision") + ": absent");
    }
    values.text(MetricId::serial_number, dev + "serial_number");
    values.text(MetricId::product_name, dev + "product_name");
    values.text(MetricId::product_number, dev + "product_number");
    values.text(MetricId::manufacturer, dev + "manufacturer");
    values.text(MetricId::vbios_version, dev + "vbios_version");
    list.text(MetricId::driver_name, gpu.driver, dev + "uevent");
    list.integer(MetricId::drm_card, gpu.card, "/sys/class/drm");
  }
  list.text(MetricId::marketing_name, gpu.model.name, gpu.model.known ? "device-id table" : "amdgpu.ids");
  if (!gpu.unique_id.empty()) {
    list.text(MetricId::unique_id, gpu.unique_id, gpu.device_dir.empty() ? "KFD unique_id" : dev + "unique_id");
  } else {
    list.failed(MetricId::unique_id, ENOENT, "no unique_id file and no KFD unique_id");
  }
  list.text(MetricId::uuid, gpu.uuid, gpu.unique_id.empty() ? "derived from the PCI address" : "derived from unique_id");
  if (!gpu.kfd.empty() && gpu.kfd.front().get("gfx_target_version") != 0) {
    list.text(MetricId::gfx_target, gfx_target_name(gpu.kfd.front().get("gfx_target_version")),
              "KFD gfx_target_version");
  } else if (!gpu.model.gfx_target.empty()) {
    list.text(MetricId::gfx_target, gpu.model.gfx_target, "device-id table");
  } else {
    list.failed(MetricId::gfx_target, ENOENT, "no KFD node and device id not in the table");
  }
  // DKMS builds publish a module version; in-tree drivers are versioned with the kernel.
  if (const FileText version = fs.read_text("/sys/module/amdgpu/version"); version.ok() && !version.text.empty()) {
    list.text(MetricId::driver_version, version.text, "/sys/module/amdgpu/version");
  } else if (const FileText release = fs.read_text("/proc/sys/kernel/osrelease"); release.ok() && !release.text.empty()) {
    list.text(MetricId::driver_version, release.text, "kernel release (in-tree driver)");
  } else {
    list.failed(MetricId::driver_version, ENOENT, "no /sys/module/amdgpu/version and no kernel release");
  }
  if (!gpu.device_dir.empty()) read_firmware_versions(values, gpu);
  else list.failed(MetricId::firmware_version, ENOENT, "no DRM card for this KFD node");
  if (!gpu.kfd.empty() && gpu.kfd.front().get("drm_render_minor") != 0) {
    list.integer(MetricId::drm_render_minor, static_cast<std::int64_t>(gpu.kfd.front().get("drm_render_minor")),
                 "KFD drm_render_minor");
  } else {
    list.failed(MetricId::drm_render_minor, ENOENT, "no KFD node");
  }
  if (!gpu.kfd.empty() && gpu.kfd.front().gpu_id != 0) {
    list.integer(MetricId::kfd_gpu_id, static_cast<std::int64_t>(gpu.kfd.front().gpu_id), "KFD gpu_id");
  } else {
    list.failed(MetricId::kfd_gpu_id, ENOENT, "no KFD gpu_id");
  }
  if (gpu.model.known) {
    list.text(MetricId::device_type, gpu.model.integrated ? "integrated" : "discrete", "device-id table");
  } else {
    list.failed(MetricId::device_type, ENOENT, "device id not in the table");
  }
}

namespace {

// VRAM, visible VRAM and GTT sizes (sysfs, else the KFD memory banks); the banks' top memory clock.
std::optional<double> read_memory_sizes(SysfsValues& values, const AmdGpu& gpu) {
  ReadingList& list = values.list();
  const FsView& fs = values.fs();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  auto dev_file = [&dev](const char* name) { return dev.empty() ? std::string() : dev + name; };
  std::optional<double> kfd_vram;
  std::optional<double> kfd_mem_clock;
  if (!gpu.kfd.empty()) {
    double bytes = 0;
    for (const KfdNode& node : gpu.kfd) {
      const KfdMemory memory = read_mem_banks(fs, node.id);
      bytes += static_cast<double>(memory.bytes);
      if (memory.clock_max > 0) kfd_mem_clock = static_cast<double>(memory.clock_max);
    }
    if (bytes > 0) kfd_vram = bytes;
  }
  values.number(MetricId::vram_total, dev_file("mem_info_vram_total"), 1.0, kfd_vram, "KFD mem_banks");
  values.number(MetricId::vram_visible_total, dev_file("mem_info_vis_vram_total"));
  values.number(MetricId::gtt_total, dev_file("mem_info_gtt_total"));
  if (dev.empty()) list.failed(MetricId::vram_vendor, ENOENT, "no DRM card");
  else values.text(MetricId::vram_vendor, dev + "mem_info_vram_vendor");
  return kfd_mem_clock;
}

// Compute units, SIMDs, waves, LDS, XCCs and SDMA engines: the KFD nodes' properties.
void read_compute_shape(SysfsValues& values, const AmdGpu& gpu) {
  ReadingList& list = values.list();
  if (!gpu.kfd.empty()) {
    const KfdNode& first = gpu.kfd.front();
    const std::uint64_t simd_per_cu = first.get("simd_per_cu");
    if (simd_per_cu > 0) {
      list.integer(MetricId::compute_units, static_cast<std::int64_t>(sum_over(gpu, "simd_count") / simd_per_cu),
                   "KFD simd_count / simd_per_cu");
    } else {
      list.failed(MetricId::compute_units, ENOENT, "KFD simd_per_cu absent");
    }
    const std::pair<MetricId, std::string_view> per_node[] = {{MetricId::simds_per_cu, "simd_per_cu"},
                                                              {MetricId::wavefront_size, "wave_front_size"},
                                                              {MetricId::max_waves_per_simd, "max_waves_per_simd"}};
    for (const auto& [id, key] : per_node) {
      if (first.properties.has(key)) list.integer(id, static_cast<std::int64_t>(first.get(key)), "KFD properties");
      else list.failed(id, ENOENT, fmt::format("KFD {} absent", key));
    }
    if (first.properties.has("lds_size_in_kb")) {
      list.integer(MetricId::lds_size, static_cast<std::int64_t>(first.get("lds_size_in_kb") * 1024), "KFD properties");
    } else {
      list.failed(MetricId::lds_size, ENOENT, "KFD lds_size_in_kb absent");
    }
    // Kernels before num_xcc existed have one XCC per node.
    list.integer(MetricId::xccs,
                 static_cast<std::int64_t>(first.properties.has("num_xcc") ? sum_over(gpu, "num_xcc") : gpu.kfd.size()),
                 "KFD num_xcc");
    list.integer(MetricId::sdma_engines,
                 static_cast<std::int64_t>(sum_over(gpu, "num_sdma_engines") + sum_over(gpu, "num_sdma_xgmi_engines")),
                 "KFD num_sdma_engines + num_sdma_xgmi_engines");
  } else {
    for (const MetricId id : {MetricId::compute_units, MetricId::simds_per_cu, MetricId::wavefront_size,
                              MetricId::max_waves_per_simd, MetricId::lds_size, MetricId::xccs,
                              MetricId::sdma_engines}) {
      list.failed(id, ENOENT, "no KFD node for this GPU");
    }
  }
}

// The DPM tables (pp_dpm_*) and the highest sclk and mclk they (or the KFD) allow.
void read_clock_tables(SysfsValues& values, const AmdGpu& gpu, std::optional<double> kfd_mem_clock) {
  ReadingList& list = values.list();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  struct Table {
    MetricId levels;
    const char* file;
  };
  const Table tables[] = {{MetricId::sclk_level, "pp_dpm_sclk"},     {MetricId::mclk_level, "pp_dpm_mclk"},
                          {MetricId::fclk_level, "pp_dpm_fclk"},     {MetricId::socclk_level, "pp_dpm_socclk"},
                          {MetricId::dcefclk_level, "pp_dpm_dcefclk"}, {MetricId::vclk_level, "pp_dpm_vclk"},
                          {MetricId::dclk_level, "pp_dpm_dclk"}};
  std::optional<double> sclk_max;
  std::optional<double> mclk_max;
  for (const Table& table : tables) {
    if (dev.empty()) {
      list.failed(table.levels, ENOENT, "no DRM card");
      continue;
    }
    const auto highest = read_dpm_levels(values, gpu, table.levels, table.file);
    if (table.levels == MetricId::sclk_level) sclk_max = highest;
    if (table.levels == MetricId::mclk_level) mclk_max = highest;
  }
  if (!sclk_max && !gpu.kfd.empty() && gpu.kfd.front().get("max_engine_clk_fcompute") != 0) {
    sclk_max = static_cast<double>(gpu.kfd.front().get("max_engine_clk_fcompute"));
  }
  values.value_or_absent(MetricId::clock_sclk_max, sclk_max, "pp_dpm_sclk / KFD max_engine_clk_fcompute");
  values.value_or_absent(MetricId::clock_mclk_max, mclk_max ? mclk_max : kfd_mem_clock,
                         "pp_dpm_mclk / KFD mem_clk_max");
}

// pp_dpm_pcie's levels, and the PCIe maximum: its top level, else the PCI core's max_link_*.
void read_pcie_limits(SysfsValues& values, const AmdGpu& gpu) {
  ReadingList& list = values.list();
  const FsView& fs = values.fs();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  // The top pp_dpm_pcie level is what the GPU's link may reach; it also gives the maximum below.
  std::optional<PcieLevel> pcie_top;
  if (dev.empty()) {
    list.failed(MetricId::pcie_level, ENOENT, "no DRM card");
  } else if (const FileText pcie = fs.read_text(dev + "pp_dpm_pcie"); !pcie.ok()) {
    list.failed(MetricId::pcie_level, pcie.error, fs.host_path(dev + "pp_dpm_pcie") + ": " + std::strerror(pcie.error));
  } else if (const PcieTable table = parse_pcie_levels(pcie.text); !table.error.empty()) {
    list.malformed(MetricId::pcie_level, fs.host_path(dev + "pp_dpm_pcie") + ": " + table.error);
  } else if (table.levels.empty()) {
    list.failed(MetricId::pcie_level, ENOENT, fs.host_path(dev + "pp_dpm_pcie") + ": " + kNoLevels);
  } else {
    for (const PcieLevel& level : table.levels) {
      list.text(MetricId::pcie_level, level.text, dev + "pp_dpm_pcie", std::to_string(level.index));
      if (!pcie_top || level.index > pcie_top->index) pcie_top = level;
    }
  }
  // PCIe maximum: the top pp_dpm_pcie level where the table exists (on RDNA dGPUs max_link_* describe
  // the link to the switch inside the card), else the PCI core's max_link_*.
  if (pcie_top) {
    list.real(MetricId::pcie_speed_max, pcie_top->gts, dev + "pp_dpm_pcie (top level)");
    list.integer(MetricId::pcie_width_max, pcie_top->width, dev + "pp_dpm_pcie (top level)");
  } else if (dev.empty()) {
    list.failed(MetricId::pcie_speed_max, ENOENT, "no DRM card");
    list.failed(MetricId::pcie_width_max, ENOENT, "no DRM card");
  } else {
    if (const FileText speed = fs.read_text(dev + "max_link_speed"); !speed.ok()) {
      list.failed(MetricId::pcie_speed_max, speed.error, fs.host_path(dev + "max_link_speed") + ": " + std::strerror(speed.error));
    } else if (const auto gts = parse_link_speed(speed.text)) {
      list.real(MetricId::pcie_speed_max, *gts, dev + "max_link_speed");
    } else {
      list.malformed(MetricId::pcie_speed_max, fs.host_path(dev + "max_link_speed") + ": \"" + speed.text + "\"");
    }
    values.number(MetricId::pcie_width_max, dev + "max_link_width");
  }
}

void read_xgmi_facts(SysfsValues& values, const AmdGpu& gpu) {
  ReadingList& list = values.list();
  const FsView& fs = values.fs();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  auto dev_file = [&dev](const char* name) { return dev.empty() ? std::string() : dev + name; };
  std::optional<std::uint64_t> hive;
  if (!gpu.kfd.empty() && gpu.kfd.front().properties.has("hive_id")) hive = gpu.kfd.front().get("hive_id");
  if (!hive && !dev.empty()) {
    if (const FileText text = fs.read_text(dev + "xgmi_hive_info/xgmi_hive_id"); text.ok()) hive = parse_uint(text.text);
  }
  if (hive) list.text(MetricId::xgmi_hive_id, fmt::format("0x{:x}", *hive), "KFD hive_id");
  else list.failed(MetricId::xgmi_hive_id, ENOENT, "no KFD hive_id and no xgmi_hive_info");
  values.number(MetricId::xgmi_physical_id, dev_file("xgmi_physical_id"));
}

void read_partition_modes(SysfsValues& values, const AmdGpu& gpu) {
  ReadingList& list = values.list();
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  if (dev.empty()) {
    for (const MetricId id : {MetricId::compute_partition, MetricId::memory_partition,
                              MetricId::compute_partition_available, MetricId::memory_partition_available}) {
      list.failed(id, ENOENT, "no DRM card");
    }
  } else {
    values.text(MetricId::compute_partition, dev + "current_compute_partition");
    values.text(MetricId::memory_partition, dev + "current_memory_partition");
    values.text(MetricId::compute_partition_available, dev + "available_compute_partition");
    values.text(MetricId::memory_partition_available, dev + "available_memory_partition");
  }
}

}  // namespace

void read_static(const FsView& fs, const AmdGpu& gpu, std::vector<Reading>& out) {
  SysfsValues values(fs, out);
  const std::string dev = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/";
  const std::optional<double> kfd_mem_clock = read_memory_sizes(values, gpu);
  read_compute_shape(values, gpu);
  read_clock_tables(values, gpu, kfd_mem_clock);
  read_pcie_limits(values, gpu);
  read_hwmon_limits(values, gpu);
  read_caches_by_level(values, gpu);
  values.number(MetricId::numa_node, dev.empty() ? std::string() : dev + "numa_node");
  read_cpu_affinity(fs, dev.empty() ? std::string() : dev + "local_cpulist", values.list());
  read_xgmi_facts(values, gpu);
  read_bad_page_threshold(fs, out);
  read_partition_modes(values, gpu);
}

}  // namespace hipstack::smi::detail::amdgpu
