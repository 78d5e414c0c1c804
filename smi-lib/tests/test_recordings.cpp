// The recordings added for issue 13 (captures/real/SOURCES.md, "Added 2026-11-26"): each expected
// value was read by hand from the file named beside it (cat, xxd), never from this program's output.
// The folders are parts of their sources' snapshots, so each test asks only what its files hold.
#include <gtest/gtest.h>
#include <hipstack/info.hpp>

#include <fstream>
#include <iterator>

#include "backends/amdgpu/gpu_metrics.hpp"
#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;

std::vector<Reading> sample_of(const std::string& capture) {
  const System system = open_capture(capture);
  EXPECT_EQ(system.devices().size(), 1u) << capture;
  return system.devices().empty() ? std::vector<Reading>{} : system.sample(0, everything());
}

TEST(Recordings, Bc250) {
  const auto r = sample_of("real/partial/amdgpu-sysfs-rs/bc250");
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 1500);  // pp_dpm_sclk "1: 1500Mhz *"
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 450);   // pp_dpm_mclk, one level "0: 450Mhz *"
  EXPECT_DOUBLE_EQ(number_of(r, "clock_socclk"), 1254);
  // hwmon1/power1_average 54231000 µW: exactly 54.231 W (the shortest form that reads back).
  EXPECT_EQ(number_of(r, "power_average"), 54.231);
  EXPECT_EQ(text_of(r, "vbios_version"), "113-AMDRBN-003");
  EXPECT_EQ(text_of(r, "bdf"), "0000:01:00.0");  // uevent PCI_SLOT_NAME
}

TEST(Recordings, SteamDeckVanGogh) {
  const auto r = sample_of("real/partial/lact/vangogh");
  EXPECT_EQ(number_of(r, "power_average"), 3.218);  // hwmon4/power1_average 3218000 µW (slowPPT)
  // pp_dpm_mclk stars two levels (2 and 3), both 687 MHz.
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 687);
  EXPECT_EQ(text_of(r, "bdf"), "0000:04:00.0");
}

TEST(Recordings, StrixPointApu) {
  const auto r = sample_of("real/partial/lact/strixpoint");
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 848);  // pp_dpm_sclk "1: 848Mhz *"
  // pp_dpm_mclk and pp_dpm_fclk star no level (the domain is power-gated): no current clock, not level 0.
  EXPECT_FALSE(reading_of(r, "clock_mclk").ok()) << reading_of(r, "clock_mclk").detail;
  EXPECT_FALSE(reading_of(r, "clock_fclk").ok()) << reading_of(r, "clock_fclk").detail;
  EXPECT_DOUBLE_EQ(number_of(r, "clock_vclk"), 800);  // levels 0 and 1 starred, both 800 MHz
  EXPECT_EQ(text_of(r, "vbios_version"), "113-STRIXEMU-001");
  EXPECT_DOUBLE_EQ(number_of(r, "vram_visible_total"), 536870912);
  EXPECT_DOUBLE_EQ(number_of(r, "gtt_total"), 16441004032);
  EXPECT_DOUBLE_EQ(number_of(r, "gtt_used"), 3946811392);
}

TEST(Recordings, Rx7800XtWithGfxOff) {
  const auto r = sample_of("real/partial/lact/rx7800xt-2");
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 772);  // hwmon2/freq2_input 772000000 Hz; pp_dpm_mclk "2: 772Mhz *"
  // pp_dpm_sclk "1: 0Mhz *" with no freq1_input and no gpu_metrics here: the firmware's 0 (GFXOFF).
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 0);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk_max"), 2124);
  EXPECT_DOUBLE_EQ(number_of(r, "power_average"), 31);   // hwmon2/power1_average 31000000 µW
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_max"), 280);  // power1_cap_max 280000000 µW
  EXPECT_EQ(text_of(r, "vbios_version"), "113-D7120201-S01");
  EXPECT_EQ(text_of(r, "power_profile"), "3D_FULL_SCREEN");  // pp_power_profile_mode "1 3D_FULL_SCREEN*"
}

TEST(Recordings, Rx9070) {
  const auto r = sample_of("real/partial/lact/rx9070");
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 1124);     // hwmon2/freq2_input 1124000000 Hz
  EXPECT_DOUBLE_EQ(number_of(r, "clock_socclk"), 1200);   // pp_dpm_socclk "1: 1200Mhz *"
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_max"), 245);   // power1_cap_max 245000000 µW
  EXPECT_EQ(text_of(r, "vram_vendor"), "hynix");
}

TEST(Recordings, Rx7800XtReferenceBoard) {
  const auto r = sample_of("real/partial/amdgpu-sysfs-rs/rx7800xt-ref");
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap"), 222);       // hwmon4/power1_cap 222000000 µW
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_max"), 243);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 96);       // pp_dpm_mclk "0: 96Mhz *"
  EXPECT_EQ(text_of(r, "vbios_version"), "113-D7120200-100");
  EXPECT_EQ(text_of(r, "power_profile"), "BOOTUP_DEFAULT");
}

std::vector<std::uint8_t> blob(const std::string& capture) {
  std::ifstream in(capture_sys(capture) + "/class/drm/card1/device/gpu_metrics", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// ROCm/amdsmi#38: two hexdumps of an MI100's gpu_metrics (v1.3, 120 bytes) 10 s apart. Offsets of
// gpu_metrics_v1_3 read with xxd: temperatures at 0x04.., power at 0x16, energy at 0x18, clocks
// at 0x28.., throttle at 0x44, PCIe at 0x4a/0x4c, indep_throttle_status at 0x70.
TEST(Recordings, Mi100GpuMetricsV13) {
  const auto first = blob("real/partial/amdsmi-issue38/mi100-sample1");
  ASSERT_EQ(first.size(), 120u);
  const detail::GpuMetricsDecode d = detail::decode_gpu_metrics(first);
  ASSERT_TRUE(d.ok) << d.error;
  const detail::GpuMetrics& m = d.metrics;
  EXPECT_EQ(m.layout, "v1.3");
  EXPECT_EQ(m.temperature_edge, 45);
  EXPECT_EQ(m.temperature_hotspot, 49);
  EXPECT_EQ(m.temperature_mem, 45);
  EXPECT_EQ(m.temperature_vrgfx, 46);
  EXPECT_EQ(m.temperature_vrsoc, 45);
  EXPECT_EQ(m.temperature_vrmem, 42);
  EXPECT_EQ(m.average_socket_power, 36);
  EXPECT_EQ(m.average_gfxclk, 300);
  EXPECT_EQ(m.average_socclk, 1000);
  EXPECT_EQ(m.average_uclk, 1200);
  EXPECT_EQ(m.average_vclk0, 187);
  EXPECT_FALSE(m.average_vclk1.has_value());  // 0xFFFF: not available
  EXPECT_FALSE(m.current_dclk1.has_value());
  EXPECT_EQ(m.current_gfxclk, 300);
  EXPECT_EQ(m.throttle_status, 0u);
  EXPECT_EQ(m.pcie_link_width, 16);
  EXPECT_EQ(m.pcie_link_speed, 16.0);       // 160 in units of 0.1 GT/s
  EXPECT_FALSE(m.gfx_activity_acc.has_value());  // 0xFFFFFFFF
  EXPECT_TRUE(m.temperature_hbm.empty());        // every stack 0xFFFF
  EXPECT_FALSE(m.voltage_gfx.has_value());
  EXPECT_FALSE(m.firmware_timestamp.has_value());
  ASSERT_TRUE(m.energy_accumulator.has_value());
  const auto second = detail::decode_gpu_metrics(blob("real/partial/amdsmi-issue38/mi100-sample2"));
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_EQ(second.metrics.temperature_vrmem, 43);
  EXPECT_EQ(second.metrics.average_socket_power, 35);
  // The accumulator rose from 59231 to 59601 counts (rocm-smi printed 59230 and 59601 beside them).
  ASSERT_TRUE(second.metrics.energy_accumulator.has_value());
  EXPECT_NEAR(*second.metrics.energy_accumulator / *m.energy_accumulator, 59601.0 / 59231.0, 1e-12);
  // system_clock_counter 1655390401568 then 1665675829673 ns: 10.285 s apart.
  EXPECT_NEAR(*second.metrics.system_clock_counter - *m.system_clock_counter, 10.285428105, 1e-9);
}

// rocprofiler-sdk's topology test data: KFD nodes of several machines (not one node: every GPU's
// drm_render_minor is 0), each properties file real kernel output.
TEST(Recordings, MixedKfdTopology) {
  OpenOptions options;
  options.sysfs_root = capture_sys("real/partial/rocprofiler-sdk-topology/mixed-7node");
  const std::vector<Agent> agents = read_agents(options);
  const auto node = [&](int id) -> const Agent* {
    for (const Agent& a : agents)
      if (a.node == id) return &a;
    return nullptr;
  };
  ASSERT_NE(node(0), nullptr);
  EXPECT_EQ(node(0)->kind, Agent::Kind::cpu);
  EXPECT_EQ(node(0)->cpu_cores, 24);
  ASSERT_NE(node(4), nullptr);
  EXPECT_EQ(node(4)->isa, "gfx942");          // gfx_target_version 90402
  EXPECT_EQ(node(4)->compute_units, 304);     // simd_count 1216 / simd_per_cu 4
  EXPECT_EQ(node(4)->max_clock_mhz, 2100);    // max_engine_clk_fcompute
  ASSERT_NE(node(5), nullptr);
  EXPECT_EQ(node(5)->isa, "gfx950");          // MI350X, gfx_target_version 90500
  EXPECT_EQ(node(5)->compute_units, 256);
  ASSERT_NE(node(6), nullptr);
  EXPECT_EQ(node(6)->isa, "gfx1201");         // 120001
  EXPECT_EQ(node(6)->compute_units, 64);      // simd_count 128 / simd_per_cu 2
  EXPECT_EQ(node(6)->wavefront_size, 32);
  ASSERT_NE(node(1), nullptr);
  EXPECT_EQ(node(1)->isa, "gfx906");          // 90006
  EXPECT_EQ(node(1)->compute_units, 60);
  ASSERT_NE(node(3), nullptr);
  EXPECT_EQ(node(3)->isa, "gfx1032");         // 100302
  EXPECT_EQ(node(3)->compute_units, 32);
}

}  // namespace
}  // namespace hipstack::smi
