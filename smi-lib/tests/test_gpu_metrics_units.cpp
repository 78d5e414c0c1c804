// gpu_metrics fields whose unit the format version alone does not decide (docs/gpu-metrics.md,
// "Units the version does not decide"): blobs from gpu_metrics_builder.hpp, values chosen by hand.
#include "backends/amdgpu/amdgpu.hpp"
#include "backends/amdgpu/gpu_metrics.hpp"
#include "capture_helpers.hpp"
#include "fs_view.hpp"
#include "gpu_metrics_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace hipstack::smi::detail {
namespace {

using test::GpuMetricsBlob;
using Bytes = std::vector<std::uint8_t>;

// ---- v1.x pcie_link_speed: 0.1 GT/s, or a PCIe generation from older RDNA3 kernels ----

TEST(PcieLinkSpeed, TenthsOfGtsAndGenerationNumbersBothDecodeToGts) {
  struct Case {
    std::uint64_t stored;
    std::optional<double> gts;
  };
  // smu_v13_0_0/_7 before pcie_gen_to_speed: PcieRate 1..5 (a generation); everyone else: 0.1 GT/s.
  const Case cases[] = {{25, 2.5}, {80, 8.0}, {160, 16.0}, {320, 32.0}, {1, 2.5}, {3, 8.0},
                        {4, 16.0}, {5, 32.0}, {0, std::nullopt}, {7, std::nullopt}};
  for (const Case& c : cases) {
    GpuMetricsBlob b(1, 3);
    b.set("pcie_link_speed", c.stored).set("pcie_link_width", 16);
    const Bytes bytes = b.bytes();
    const auto r = decode_gpu_metrics(bytes);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.metrics.pcie_link_speed, c.gts) << "stored " << c.stored;
  }
}

// ---- APU tables: units per ASIC ----

GpuMetricsDecode decode_as(const Bytes& bytes, std::uint32_t device, std::optional<std::uint32_t> smc_fw,
                           std::optional<IpVersion> mp1 = std::nullopt) {
  GpuMetricsSource source;
  source.mp1 = mp1;
  source.pci_device_id = device;
  source.smc_fw_version = smc_fw;
  return decode_gpu_metrics(bytes, source);
}

TEST(ApuUnits, SocketPowerIsMilliwattsOnPhoenixAndWattsOnRenoirWithNewFirmware) {
  // Phoenix (smu_v13_0_4): CurrentSocketPower in mW.
  GpuMetricsBlob phoenix(2, 1);
  phoenix.set("average_socket_power", 22000);
  const auto p = decode_as(phoenix.bytes(), 0x15bf, 0x004c6000);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.metrics.average_socket_power, 22.0);
  // Renoir (renoir_ppt.c, MP1 12.0.0): W from SMU firmware 0x373200 on, mW before.
  GpuMetricsBlob renoir(2, 2);
  renoir.set("average_socket_power", 22).set("average_gfx_activity", 7900);
  EXPECT_EQ(decode_as(renoir.bytes(), 0x1636, 0x373200).metrics.average_socket_power, 22.0);
  EXPECT_EQ(decode_as(renoir.bytes(), 0x1636, 0x3731ff).metrics.average_socket_power, 0.022);
  // Green Sardine (MP1 12.0.1, firmware 0x40xxxx): W from 0x40000f on.
  EXPECT_EQ(decode_as(renoir.bytes(), 0x1638, 0x40000f).metrics.average_socket_power, 22.0);
  EXPECT_EQ(decode_as(renoir.bytes(), 0x1638, 0x40000e).metrics.average_socket_power, 0.022);
  // Without the firmware version the unit cannot be told: not supported, never 0.022 W for 22 W.
  EXPECT_EQ(decode_as(renoir.bytes(), 0x1636, std::nullopt).metrics.average_socket_power, std::nullopt);
  // Activity is hundredths of % on both.
  EXPECT_EQ(decode_as(renoir.bytes(), 0x1636, 0x373200).metrics.average_gfx_activity, 79.0);
  // The version-only decoding (no ASIC known) keeps the version's units: mW.
  EXPECT_EQ(decode_gpu_metrics(renoir.bytes()).metrics.average_socket_power, 0.022);
}

TEST(ApuUnits, ActivityIsPercentOnVanGoghAndHundredthsOfPercentOnPhoenix) {
  GpuMetricsBlob vangogh(2, 3);
  vangogh.set("average_gfx_activity", 79).set("average_mm_activity", 12).set("average_socket_power", 9500);
  const auto v = decode_as(vangogh.bytes(), 0x163f, std::nullopt);
  ASSERT_TRUE(v.ok) << v.error;
  EXPECT_EQ(v.metrics.average_gfx_activity, 79.0);
  EXPECT_EQ(v.metrics.average_mm_activity, 12.0);
  EXPECT_EQ(v.metrics.average_socket_power, 9.5);  // mW there too
  GpuMetricsBlob phoenix(2, 1);
  phoenix.set("average_gfx_activity", 7900);
  EXPECT_EQ(decode_as(phoenix.bytes(), 0x15bf, std::nullopt).metrics.average_gfx_activity, 79.0);
}

TEST(ApuUnits, TheSmuIpVersionNamesTheFamilyAsTheKernelDoes) {
  // A Van Gogh device id no table lists (0x1435, MP1 11.5.2: smu_set_funcs -> vangogh_ppt.c):
  // activity in %, where the device id alone falls back on the version's hundredths of %.
  GpuMetricsBlob vangogh(2, 4);
  vangogh.set("average_gfx_activity", 79);
  EXPECT_EQ(decode_as(vangogh.bytes(), 0x1435, std::nullopt, IpVersion{11, 5, 2}).metrics.average_gfx_activity, 79.0);
  EXPECT_EQ(decode_as(vangogh.bytes(), 0x1435, std::nullopt).metrics.average_gfx_activity, 0.79);
  // renoir_get_smu_metrics_data: W from firmware 0x373200 on 12.0.0 and 0x40000f on 12.0.1, by IP
  // version; a 12.0.1 part on 0x373200 firmware reports mW (the device-id rule cannot tell).
  GpuMetricsBlob renoir(2, 2);
  renoir.set("average_socket_power", 22);
  EXPECT_EQ(decode_as(renoir.bytes(), 0, 0x373200, IpVersion{12, 0, 0}).metrics.average_socket_power, 22.0);
  EXPECT_EQ(decode_as(renoir.bytes(), 0, 0x3731ff, IpVersion{12, 0, 0}).metrics.average_socket_power, 0.022);
  EXPECT_EQ(decode_as(renoir.bytes(), 0, 0x373200, IpVersion{12, 0, 1}).metrics.average_socket_power, 0.022);
  EXPECT_EQ(decode_as(renoir.bytes(), 0, 0x40000f, IpVersion{12, 0, 1}).metrics.average_socket_power, 22.0);
  EXPECT_EQ(decode_as(renoir.bytes(), 0, std::nullopt, IpVersion{12, 0, 0}).metrics.average_socket_power, std::nullopt);
  // The IP version wins over the device id: MP1 13.0.4 (Phoenix code) with Van Gogh's id.
  GpuMetricsBlob phoenix(2, 1);
  phoenix.set("average_gfx_activity", 7900);
  EXPECT_EQ(decode_as(phoenix.bytes(), 0x163f, std::nullopt, IpVersion{13, 0, 4}).metrics.average_gfx_activity, 79.0);
}

TEST(ApuUnits, TheSmuIpVersionIsReadFromTheDiscoveryTable) {
  // captures/real/lact/phoenix: ip_discovery/die/0/1/0 (MP1) holds 13, 0, 4.
  const std::string root = std::string(HIPSTACK_CAPTURES_DIR) + "/real/lact/phoenix/sys";
  const RootedFs fs(root, "", "");
  EXPECT_EQ(amdgpu::read_mp1_version(fs, "/sys/class/drm/card1/device"), (IpVersion{13, 0, 4}));
  EXPECT_EQ(amdgpu::read_mp1_version(fs, "/sys/class/drm/card0/device"), std::nullopt);  // no such card
  // A part that is not a number: none, not a guess.
  const testing::ScratchDir scratch("hipstack-mp1");
  const auto dir = scratch.path() / "sys/class/drm/card0/device/ip_discovery/die/0/1/0";
  std::filesystem::create_directories(dir);
  for (const char* name : {"major", "minor", "revision"}) std::ofstream(dir / name) << (std::string(name) == "minor" ? "x\n" : "11\n");
  const RootedFs bad((scratch.path() / "sys").string(), "", "");
  EXPECT_EQ(amdgpu::read_mp1_version(bad, "/sys/class/drm/card0/device"), std::nullopt);
  std::ofstream(dir / "minor") << "5\n";
  EXPECT_EQ(amdgpu::read_mp1_version(bad, "/sys/class/drm/card0/device"), (IpVersion{11, 5, 11}));
}

TEST(ApuUnits, V3GfxActivityFollowsTheFirmwareVersion) {
  // smu_v14_0_0: GfxActivity is % after SMU firmware 0x5d4600, hundredths of % up to it.
  GpuMetricsBlob old_fw(3, 0);
  old_fw.set("average_gfx_activity", 4200);
  EXPECT_EQ(decode_as(old_fw.bytes(), 0x150e, 0x5d4600).metrics.average_gfx_activity, 42.0);
  GpuMetricsBlob new_fw(3, 0);
  new_fw.set("average_gfx_activity", 42);
  EXPECT_EQ(decode_as(new_fw.bytes(), 0x150e, 0x5d4601).metrics.average_gfx_activity, 42.0);
  EXPECT_EQ(decode_as(new_fw.bytes(), 0x150e, std::nullopt).metrics.average_gfx_activity, 42.0);  // the struct's %
}

TEST(ApuUnits, OnlyApuTablesUseTheFirmwareVersion) {
  // The sampler reads device/fw_version/smc_fw_version only when the table needs it (live_metrics.cpp).
  for (const auto& [format, content] : {std::pair{1, 3}, {1, 6}, {1, 8}}) {
    EXPECT_FALSE(gpu_metrics_uses_firmware_version(GpuMetricsBlob(format, content).bytes())) << format << "." << content;
  }
  for (const auto& [format, content] : {std::pair{2, 1}, {2, 4}, {3, 0}}) {
    EXPECT_TRUE(gpu_metrics_uses_firmware_version(GpuMetricsBlob(format, content).bytes())) << format << "." << content;
  }
  EXPECT_FALSE(gpu_metrics_uses_firmware_version(Bytes{0x10, 0x00, 0x02})) << "no whole header: nothing to decode";
}

TEST(ApuUnits, RealPhoenixBlob) {
  // captures/real/lact/phoenix: device 0x15bf, smc_fw_version 0x004c6000. Bytes (xxd): 28: 4f 00 =
  // average_gfx_activity 79 (0.79 %), 40: 49 0d = average_socket_power 3401 mW, 44: e7 02 = soc power
  // 743 mW, 4: c4 09 = temperature_gfx 2500 (25 °C).
  const auto path = std::filesystem::path(HIPSTACK_CAPTURES_DIR) / "real/lact/phoenix/sys/class/drm/card1/device/gpu_metrics";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path;
  const Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto r = decode_as(bytes, 0x15bf, 0x004c6000);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.metrics.average_socket_power, 3.401);
  EXPECT_EQ(r.metrics.average_soc_power, 0.743);
  EXPECT_EQ(r.metrics.average_gfx_activity, 0.79);
  EXPECT_EQ(r.metrics.temperature_gfx, 25.0);
}

}  // namespace
}  // namespace hipstack::smi::detail
