// Real captures: expected values were read by hand from the capture files (cat / xxd), never by
// running this code. Units: °C, W, MHz, bytes, %, mV, GT/s.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;

TEST(CaptureRx6900xt, NulPaddedFilesAndGpuMetrics13) {
  const System system = open_capture("real/lact/rx6900xt");
  ASSERT_EQ(system.devices().size(), 1u);
  const auto r = system.sample(0, everything());
  EXPECT_EQ(text_of(r, "bdf"), "0000:0c:00.0");
  EXPECT_EQ(text_of(r, "pci_device_id"), "0x73bf");
  EXPECT_EQ(text_of(r, "pci_subsystem_vendor_id"), "0x1da2");
  EXPECT_EQ(text_of(r, "pci_subsystem_device_id"), "0x440e");
  EXPECT_EQ(text_of(r, "pci_revision_id"), "0xc0");
  EXPECT_EQ(text_of(r, "unique_id"), "946d7e1ef9b172dd");
  EXPECT_EQ(text_of(r, "uuid"), "GPU-100273bf-0000-0000-946d-7e1ef9b172dd");
  EXPECT_EQ(text_of(r, "vbios_version"), "113-D4121EXT-CO1");
  EXPECT_EQ(text_of(r, "gfx_target"), "gfx1030");
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_edge"), 56.0);      // temp1_input 56000
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction"), 59.0);  // temp2_input 59000
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_memory"), 54.0);    // temp3_input 54000
  EXPECT_DOUBLE_EQ(number_of(r, "power_average"), 36.0);         // power1_average 36000000 µW
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap"), 289.0);            // power1_cap 289000000 µW
  EXPECT_DOUBLE_EQ(number_of(r, "voltage_gfx"), 775.0);          // in0_input
  EXPECT_DOUBLE_EQ(number_of(r, "fan_speed"), 0.0);
  EXPECT_DOUBLE_EQ(number_of(r, "vram_total"), 17163091968.0);
  EXPECT_DOUBLE_EQ(number_of(r, "vram_used"), 668274688.0);
  EXPECT_DOUBLE_EQ(number_of(r, "gpu_busy"), 3.0);
  EXPECT_DOUBLE_EQ(number_of(r, "memory_busy"), 0.0);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 500.0);   // "0: 500Mhz *"
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 1000.0);  // "3: 1000Mhz *"
  EXPECT_DOUBLE_EQ(number_of(r, "clock_fclk"), 1302.0);  // "1: 1302Mhz *"
  EXPECT_DOUBLE_EQ(number_of(r, "sclk_level", "1"), 2660.0);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk_max"), 2660.0);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_speed"), 16.0);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_width"), 16.0);
  EXPECT_EQ(text_of(r, "performance_level"), "auto");
  EXPECT_EQ(text_of(r, "gpu_metrics_version"), "1.3");  // header 78 00 01 03 then NUL padding
  // An empty FRU file means the board has no FRU data.
  EXPECT_EQ(status_of(r, "serial_number"), Status::not_supported);
}

TEST(CaptureRx7900xtx, Rdna3DpmAndHwmonLimits) {
  const System system = open_capture("real/lact/rx7900xtx");
  ASSERT_EQ(system.devices().size(), 1u);
  const auto r = system.sample(0, everything());
  EXPECT_EQ(text_of(r, "bdf"), "0000:03:00.0");
  EXPECT_EQ(text_of(r, "pci_device_id"), "0x744c");
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_edge"), 53.0);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction"), 61.0);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_memory"), 68.0);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_edge_critical"), 100.0);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction_emergency"), 115.0);
  EXPECT_DOUBLE_EQ(number_of(r, "power_average"), 68.0);
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_min"), 261.0);
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_max"), 333.0);
  EXPECT_DOUBLE_EQ(number_of(r, "fan_speed_max"), 3200.0);
  EXPECT_DOUBLE_EQ(number_of(r, "fan_pwm"), 0.0);
  EXPECT_DOUBLE_EQ(number_of(r, "voltage_gfx"), 686.0);
  EXPECT_DOUBLE_EQ(number_of(r, "gpu_busy"), 3.0);
  // pp_dpm_sclk "0: 500Mhz / 1: 31Mhz * / 2: 2219Mhz": min, current, max of a fine-grained table
  // (levels keep the sysfs numbers 0 and 2; hwmon freq1_input 31000000 Hz is the current clock).
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 31.0);
  EXPECT_EQ(text_of(r, "dpm_level_current", "sclk"), "1");
  EXPECT_DOUBLE_EQ(number_of(r, "sclk_level", "0"), 500.0);
  EXPECT_DOUBLE_EQ(number_of(r, "sclk_level", "2"), 2219.0);
  EXPECT_EQ(readings_of(r, "sclk_level").size(), 2u);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 1249.0);
  EXPECT_EQ(readings_of(r, "mclk_level").size(), 4u);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_socclk"), 1500.0);
  EXPECT_EQ(text_of(r, "performance_level"), "auto");  // NUL-padded to 4096 bytes in this capture
  EXPECT_EQ(text_of(r, "power_profile"), "BOOTUP_DEFAULT");
  EXPECT_EQ(text_of(r, "vbios_version"), "113-D70401XT-N11");
}

TEST(CapturePhoenix, ApuWithKfdTopology) {
  const System system = open_capture("real/lact/phoenix");
  ASSERT_EQ(system.devices().size(), 1u);
  const auto r = system.sample(0, everything());
  EXPECT_EQ(text_of(r, "bdf"), "0000:64:00.0");
  EXPECT_EQ(text_of(r, "gfx_target"), "gfx1103");           // KFD gfx_target_version 110003
  EXPECT_DOUBLE_EQ(number_of(r, "compute_units"), 12.0);    // simd_count 24 / simd_per_cu 2
  EXPECT_DOUBLE_EQ(number_of(r, "wavefront_size"), 32.0);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_edge"), 25.0);
  EXPECT_DOUBLE_EQ(number_of(r, "power_average"), 3.103);   // power1_average 3103000 µW
  EXPECT_DOUBLE_EQ(number_of(r, "power_current"), 3.142);   // power1_input 3142000 µW
  EXPECT_DOUBLE_EQ(number_of(r, "voltage_gfx"), 814.0);     // in0 "vddgfx"
  EXPECT_DOUBLE_EQ(number_of(r, "voltage_northbridge"), 615.0);  // in1 "vddnb"
  EXPECT_DOUBLE_EQ(number_of(r, "vram_total"), 4294967296.0);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 800.0);
  EXPECT_DOUBLE_EQ(number_of(r, "media_busy"), 0.0);        // vcn_busy_percent
  EXPECT_EQ(text_of(r, "device_type"), "integrated");
  EXPECT_EQ(text_of(r, "gpu_metrics_version"), "2.1");
  EXPECT_EQ(status_of(r, "unique_id"), Status::not_supported);  // empty unique_id, KFD unique_id 0
}

TEST(CapturePhoenix, TheSmuIpVersionFromDiscoveryDecidesTheApuUnits) {
  // A copy without gpu_busy_percent, so gpu_busy comes from gpu_metrics' average_gfx_activity (79).
  // MP1 13.0.4 (Phoenix code): hundredths of % = 0.79 %; the same bytes on MP1 11.5.2 (Van Gogh
  // code, whatever the device id): 79 %. So the backend hands the discovery table's version on.
  const ScratchDir scratch("hipstack-phoenix-mp1");
  const std::filesystem::path& copy = scratch.path();
  std::filesystem::create_directories(copy / "sys");
  std::filesystem::copy(capture_sys("real/lact/phoenix"), copy / "sys", std::filesystem::copy_options::recursive);
  const std::filesystem::path device = copy / "sys/class/drm/card1/device";
  std::filesystem::remove(device / "gpu_busy_percent");
  auto busy = [&copy] {
    OpenOptions options;
    options.sysfs_root = (copy / "sys").string();
    return number_of(System::open(options).sample(0, everything()), "gpu_busy");
  };
  EXPECT_DOUBLE_EQ(busy(), 0.79);
  std::ofstream(device / "ip_discovery/die/0/1/0/major") << "11\n";
  std::ofstream(device / "ip_discovery/die/0/1/0/minor") << "5\n";
  std::ofstream(device / "ip_discovery/die/0/1/0/revision") << "2\n";
  EXPECT_DOUBLE_EQ(busy(), 79.0);
  std::filesystem::remove_all(copy);
}

TEST(CaptureProcfsVega10, PcieBandwidthIsOptIn) {
  const System system = open_capture("real/procfs-vega10");
  ASSERT_EQ(system.devices().size(), 1u);
  SampleOptions live;
  EXPECT_EQ(status_of(system.sample(0, live), "pcie_rx"), Status::not_supported);
  live.pcie_throughput = true;
  const auto r = system.sample(0, live);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_rx"), 6641.0 * 256);  // pcie_bw "6641 815 256"
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_tx"), 815.0 * 256);
  EXPECT_DOUBLE_EQ(number_of(r, "gpu_busy"), 4.0);
  EXPECT_DOUBLE_EQ(number_of(r, "vram_used"), 1490378752.0);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 852.0);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_speed"), 8.0);
  EXPECT_EQ(text_of(r, "performance_level"), "manual");
  const auto ids = system.sample(0, everything());
  EXPECT_EQ(text_of(ids, "unique_id"), "0123456789abcdef");
  EXPECT_EQ(text_of(ids, "vbios_version"), "115-D050PIL-100");
}

TEST(CaptureHd7870, RadeonDriverIsNotAnAmdgpuDevice) {
  const System system = open_capture("real/lact/hd7870");
  EXPECT_TRUE(system.devices().empty());
  const auto backends = system.backends();
  const auto amdgpu = std::find_if(backends.begin(), backends.end(), [](const BackendStatus& b) { return b.name == "amdgpu"; });
  ASSERT_NE(amdgpu, backends.end());
  EXPECT_FALSE(amdgpu->present);
  EXPECT_NE(amdgpu->reason.find("amdgpu"), std::string::npos);
}

TEST(CaptureMi300Cpx, KfdOnlyTopologyGroupsPartitionsByCard) {
  // 63 GPU partition nodes of 8 MI300X in CPX mode (the capture lacks one node): 8 GPUs, one with 7.
  const System system = open_capture("real/k8s-device-plugin/topo-mi300-cpx");
  const auto devices = system.devices();
  ASSERT_EQ(devices.size(), 8u);
  std::uint32_t partitions = 0;
  for (const auto& d : devices) {
    partitions += d.partition_count;
    EXPECT_TRUE(d.partition_count == 8 || d.partition_count == 7) << d.bdf;
    EXPECT_EQ(d.name, "AMD Instinct MI300X");  // KFD device_id 29857 = 0x74a1
  }
  EXPECT_EQ(partitions, 63u);
  EXPECT_EQ(devices[0].bdf, "0000:05:00.0");  // location_id 1280 = bus 5
  const auto r = system.sample(0, everything());
  EXPECT_EQ(text_of(r, "gfx_target"), "gfx942");
  EXPECT_DOUBLE_EQ(number_of(r, "compute_units"), 304.0);  // 8 x simd_count 152 / simd_per_cu 4
  EXPECT_DOUBLE_EQ(number_of(r, "xccs"), 8.0);
  EXPECT_EQ(text_of(r, "unique_id"), "e3aa140f9a5f9e31");  // 16404946649897475633
  const auto parts = system.partitions(0);
  ASSERT_EQ(parts.size(), 8u);
  EXPECT_EQ(parts[3].bdf, "0000:05:00.3");
  EXPECT_DOUBLE_EQ(number_of(parts[3].readings, "partition_compute_units"), 38.0);
  EXPECT_DOUBLE_EQ(number_of(parts[3].readings, "partition_render_minor"), 131.0);
  // XGMI between GPUs, as the io_links say (type 11).
  const auto links = system.links();
  ASSERT_FALSE(links.empty());
  EXPECT_EQ(text_of(links[0].readings, "link_type"), "xgmi");
}

TEST(CaptureMi210, XgmiAndPcieLinks) {
  const System system = open_capture("real/k8s-device-plugin/topo-mi210-xgmi-pcie");
  ASSERT_EQ(system.devices().size(), 8u);
  int xgmi = 0;
  int pcie = 0;
  for (const Link& link : system.links()) {
    const std::string type = text_of(link.readings, "link_type");
    if (type == "xgmi") {
      ++xgmi;
      EXPECT_DOUBLE_EQ(number_of(link.readings, "link_hops"), 1.0);
      EXPECT_DOUBLE_EQ(number_of(link.readings, "link_weight"), 15.0);
    } else {
      EXPECT_EQ(type, "pcie");
      ++pcie;
    }
  }
  EXPECT_GT(xgmi, 0);
  EXPECT_GT(pcie, 0);
}

// Every bundled capture (captures/: the real ones copied from the shared fixtures into captures/real,
// with provenance, and the constructed ones): loads, samples every kind, reports only
// plausible numbers, and every non-ok reading says why.
void check_capture_is_sane(const std::filesystem::path& sys) {
  SCOPED_TRACE(sys.string());
  OpenOptions options;
  options.sysfs_root = sys.string();
  const System system = System::open(options);
  SampleOptions all = everything();
  all.pcie_throughput = true;
  for (const auto& device : system.devices()) {
    for (const Reading& r : system.sample(device.index, all)) {
      const MetricInfo* info = find_metric(r.id);
      ASSERT_NE(info, nullptr);
      if (!r.ok()) {
        EXPECT_FALSE(r.detail.empty()) << info->name;
        continue;
      }
      const auto value = r.number();
      if (!value) continue;
      EXPECT_TRUE(std::isfinite(*value)) << info->name;
      switch (info->unit) {
        case Unit::celsius: EXPECT_TRUE(*value > -60 && *value < 250) << info->name << " " << *value; break;
        case Unit::watt: EXPECT_TRUE(*value >= 0 && *value < 5000) << info->name << " " << *value; break;
        case Unit::megahertz: EXPECT_TRUE(*value >= 0 && *value < 20000) << info->name << " " << *value; break;
        case Unit::percent: EXPECT_TRUE(*value >= 0 && *value <= 100) << info->name << " " << *value; break;
        case Unit::millivolt: EXPECT_TRUE(*value >= 0 && *value < 5000) << info->name << " " << *value; break;
        default: EXPECT_GE(*value, info->name == "numa_node" ? -1 : 0) << info->name; break;
      }
    }
    (void)system.partitions(device.index);
    (void)system.processes(device.index, 0);
  }
  (void)system.links();
}

std::vector<std::filesystem::path> capture_roots(const std::filesystem::path& base) {
  std::vector<std::filesystem::path> roots;
  if (!std::filesystem::exists(base)) return roots;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(base)) {
    if (entry.is_directory() && entry.path().filename() == "sys") roots.push_back(entry.path());
  }
  std::sort(roots.begin(), roots.end());
  return roots;
}

TEST(AllCaptures, BundledOnesLoadWithPlausibleValues) {
  const auto roots = capture_roots(HIPSTACK_CAPTURES_DIR);
  EXPECT_GE(roots.size(), 30u);
  // All 29 real captures of the shared fixtures are in captures/real (captures/real/SOURCES.md), and
  // the 12 partial recordings of captures/real/partial: the test reads nothing outside the
  // repository, and a lost one fails here.
  const auto real = capture_roots(std::filesystem::path(HIPSTACK_CAPTURES_DIR) / "real");
  const auto partial = capture_roots(std::filesystem::path(HIPSTACK_CAPTURES_DIR) / "real" / "partial");
  EXPECT_EQ(real.size() - partial.size(), 29u);
  EXPECT_EQ(partial.size(), 12u);
  for (const auto& root : roots) check_capture_is_sane(root);
}

}  // namespace
}  // namespace hipstack::smi
