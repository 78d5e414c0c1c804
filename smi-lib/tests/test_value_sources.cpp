// Every value from its best source (docs/amdgpu-backend.md, "Source precedence"): where several files
// hold a fact, the real captures show which one must win. Expected values were read by hand from the
// capture files (cat / xxd), never by running this code. Scratch tests copy a capture to tmpfs and
// change one file, the way a GPU would show it.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

namespace fs = std::filesystem;
using namespace hipstack::smi::testing;

// ---- PCIe link: the slot link (gpu_metrics, else the starred pp_dpm_pcie level), not the PCI core's
// view of the link to the card's internal switch ----

TEST(PcieLinkNow, Rx9070xtReportsTheStarredDpmLevelNotTheInternalSwitchLink) {
  // current_link_speed "32.0 GT/s PCIe" (GPU <-> switch on the card); pp_dpm_pcie never exceeds
  // 16 GT/s: "1: 16.0GT/s, x16 1143Mhz *". No gpu_metrics file in this capture.
  const auto r = open_capture("real/lact/rx9070xt").sample(0, everything());
  EXPECT_EQ(number_of(r, "pcie_speed"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width"), 16.0);
  // The top pp_dpm_pcie level is what the link may reach; max_link_* are absent in this capture.
  EXPECT_EQ(number_of(r, "pcie_speed_max"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width_max"), 16.0);
}

TEST(PcieLinkNow, Rx6600IsAnX8CardAlthoughThePciCoreSaysX16) {
  // current_link_speed/width "16.0 GT/s PCIe" / "16"; pp_dpm_pcie "1: 8.0GT/s, x8 619Mhz *".
  const auto r = open_capture("real/lact/rx6600").sample(0, everything());
  EXPECT_EQ(number_of(r, "pcie_speed"), 8.0);
  EXPECT_EQ(number_of(r, "pcie_width"), 8.0);
  EXPECT_EQ(number_of(r, "pcie_speed_max"), 8.0);
  EXPECT_EQ(number_of(r, "pcie_width_max"), 8.0);
}

TEST(PcieLinkNow, GpuMetricsComesFirstAndTheDpmTableGivesTheMaximum) {
  // rx7600s gpu_metrics v1.3: pcie_link_width (byte 74) 08 00, pcie_link_speed (byte 76) a0 00 =
  // 160 x 0.1 GT/s; pp_dpm_pcie "0: 2.5GT/s, x1 / 1: 16.0GT/s, x8 * / 2: 16.0GT/s, x8 *".
  const auto r = open_capture("real/lact/rx7600s").sample(0, everything());
  EXPECT_EQ(number_of(r, "pcie_speed"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width"), 8.0);
  EXPECT_EQ(number_of(r, "pcie_speed_max"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width_max"), 8.0);
}

// A scratch copy of rx7600s whose three sources of the link disagree (in the capture they agree, so
// only this pins their order): gpu_metrics 16 GT/s x8, the DPM table's starred level 32 GT/s x16,
// the PCI core's current_link_* 2.5 GT/s x1. Each source removed in turn hands over to the next.
TEST(PcieLinkNow, WhereTheSourcesDisagreeGpuMetricsThenTheStarredLevelThenThePciCore) {
  const ScratchDir scratch("hipstack-pcie-sources");
  std::filesystem::copy(capture_sys("real/lact/rx7600s"), scratch.path() / "sys",
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  const auto device = scratch.path() / "sys/class/drm/card1/device";
  const auto write = [&device](const char* name, const char* text) {
    std::filesystem::remove(device / name);
    std::ofstream(device / name) << text;
  };
  write("pp_dpm_pcie", "0: 2.5GT/s, x1 81Mhz\n1: 32.0GT/s, x16 306Mhz *\n");
  write("current_link_speed", "2.5 GT/s PCIe\n");
  write("current_link_width", "1\n");
  const auto sample = [&scratch] {
    OpenOptions options;
    options.sysfs_root = (scratch.path() / "sys").string();
    options.enable_nvml = false;
    return System::open(options).sample(0, everything());
  };
  auto r = sample();
  EXPECT_EQ(number_of(r, "pcie_speed"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width"), 8.0);
  EXPECT_EQ(number_of(r, "pcie_speed_max"), 32.0);  // the DPM table's top level
  EXPECT_EQ(number_of(r, "pcie_width_max"), 16.0);
  std::filesystem::remove(device / "gpu_metrics");
  r = sample();
  EXPECT_EQ(number_of(r, "pcie_speed"), 32.0);
  EXPECT_EQ(number_of(r, "pcie_width"), 16.0);
  write("pp_dpm_pcie", "");
  r = sample();
  EXPECT_EQ(number_of(r, "pcie_speed"), 2.5);
  EXPECT_EQ(number_of(r, "pcie_width"), 1.0);
}

TEST(PcieLinkNow, ApuWithoutDpmTableUsesThePciCore) {
  // phoenix: pp_dpm_pcie is an empty file (not supported, not an error); current/max_link_* 16 x16.
  const auto r = open_capture("real/lact/phoenix").sample(0, everything());
  EXPECT_EQ(status_of(r, "pcie_level"), Status::not_supported);
  EXPECT_EQ(number_of(r, "pcie_speed"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_speed_max"), 16.0);
  EXPECT_EQ(number_of(r, "pcie_width_max"), 16.0);
}

// ---- Current clocks: gpu_metrics current clock > hwmon freqN_input > starred pp_dpm level ----

TEST(CurrentClock, HwmonFrequencyWinsOverTheStarredLevel) {
  // rx7900xtx: pp_dpm_sclk "1: 31Mhz *", hwmon freq1_input 31000000 Hz: they agree.
  EXPECT_EQ(number_of(open_capture("real/lact/rx7900xtx").sample(0, everything()), "clock_sclk"), 31.0);
  // rx6600: pp_dpm_sclk "1: 2605Mhz *" but freq1_input 20000000 Hz (no gpu_metrics file).
  const auto rx6600 = open_capture("real/lact/rx6600").sample(0, everything());
  EXPECT_EQ(number_of(rx6600, "clock_sclk"), 20.0);
  EXPECT_EQ(number_of(rx6600, "clock_mclk"), 96.0);  // freq2_input 96000000, "0: 96Mhz *"
  // rx580: "2: 900Mhz *", freq1_input 798080000 Hz.
  EXPECT_EQ(number_of(open_capture("real/lact/rx580").sample(0, everything()), "clock_sclk"), 798.08);
  // vega56: "0: 852Mhz *", freq1_input 26000000 Hz; mclk "0: 167Mhz *", freq2_input 167000000.
  const auto vega56 = open_capture("real/lact/vega56").sample(0, everything());
  EXPECT_EQ(number_of(vega56, "clock_sclk"), 26.0);
  EXPECT_EQ(number_of(vega56, "clock_mclk"), 167.0);
}

TEST(CurrentClock, GpuMetricsCurrentGfxclkComesFirst) {
  // rx7800xt: "1: 77Mhz *" (the middle line of a min/current/max table); gpu_metrics v1.3
  // current_gfxclk (byte 54) db 07 = 2011 MHz; freq1_input 2011000000 Hz.
  EXPECT_EQ(number_of(open_capture("real/lact/rx7800xt").sample(0, everything()), "clock_sclk"), 2011.0);
  // rx7600s: "1: 0Mhz *", freq1_input 0, gpu_metrics current_gfxclk (byte 54) b0 04 = 1200 MHz,
  // current_uclk (byte 58) 60 00 = 96 MHz.
  const auto rx7600s = open_capture("real/lact/rx7600s").sample(0, everything());
  EXPECT_EQ(number_of(rx7600s, "clock_sclk"), 1200.0);
  EXPECT_EQ(number_of(rx7600s, "clock_mclk"), 96.0);
}

TEST(DpmLevels, FineGrainedTableKeepsTheSysfsIndexOfItsTopLevel) {
  // rx7900xtx pp_dpm_sclk "0: 500Mhz / 1: 31Mhz * / 2: 2219Mhz": 0 and 2 are levels (min and max),
  // line 1 is the current clock and no level.
  const auto r = open_capture("real/lact/rx7900xtx").sample(0, everything());
  EXPECT_EQ(number_of(r, "sclk_level", "0"), 500.0);
  EXPECT_EQ(number_of(r, "sclk_level", "2"), 2219.0);
  EXPECT_EQ(readings_of(r, "sclk_level").size(), 2u);
  EXPECT_EQ(reading_of(r, "sclk_level", "1").detail, "absent from the sample");
  EXPECT_EQ(number_of(r, "clock_sclk_max"), 2219.0);
  // The starred line's number, as sysfs printed it, is the current level.
  EXPECT_EQ(text_of(r, "dpm_level_current", "sclk"), "1");
  EXPECT_EQ(text_of(r, "dpm_level_current", "mclk"), "3");  // "3: 1249Mhz *"
  // rx9070xt: pp_dpm_sclk "S: 19Mhz *" (deep sleep), pp_dpm_mclk "5: 1258Mhz *".
  const auto rdna4 = open_capture("real/lact/rx9070xt").sample(0, everything());
  EXPECT_EQ(text_of(rdna4, "dpm_level_current", "sclk"), "S");
  EXPECT_EQ(text_of(rdna4, "dpm_level_current", "mclk"), "5");
  EXPECT_EQ(text_of(rdna4, "dpm_level_current", "pcie"), "1");  // "1: 16.0GT/s, x16 1143Mhz *"
}

// ---- Energy: an accumulator that does not run is no reading ----

TEST(Energy, ZeroAccumulatorWhileDrawingPowerIsNotSupported) {
  // rx7800xt gpu_metrics v1.3: energy_accumulator (bytes 24-31) all 00, average_socket_power
  // (byte 22) 20 00 = 32 W, hwmon power1_average 32000000 µW.
  const auto r = open_capture("real/lact/rx7800xt").sample(0, everything());
  EXPECT_EQ(status_of(r, "energy_consumed"), Status::not_supported);
  EXPECT_NE(reading_of(r, "energy_consumed").detail.find("energy_accumulator"), std::string::npos)
      << reading_of(r, "energy_consumed").detail;
  // rx6900xt: bytes 24-31 22 f4 0d 01 00 00 00 00 = 17691682 counts of 2^-16 J.
  EXPECT_EQ(number_of(open_capture("real/lact/rx6900xt").sample(0, everything()), "energy_consumed"),
            17691682.0 / 65536.0);
}

// ---- Conversions: the shortest decimal that reads back ----

TEST(Conversion, MicrowattsBecomeTheExactDecimalWatts) {
  // rx580 power1_average 41045000 µW; phoenix power1_average 3103000, power1_input 3142000.
  EXPECT_EQ(number_of(open_capture("real/lact/rx580").sample(0, everything()), "power_average"), 41.045);
  const auto phoenix = open_capture("real/lact/phoenix").sample(0, everything());
  EXPECT_EQ(number_of(phoenix, "power_average"), 3.103);
  EXPECT_EQ(number_of(phoenix, "power_current"), 3.142);
}

// A private copy of one real capture on tmpfs, with files to change.
class ScratchCapture : public ::testing::Test {
 protected:
  void copy(const std::string& capture) {
    const fs::path scratch = fs::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                               : fs::temp_directory_path();
    root_ = scratch / ("hipstack-sources-" + std::to_string(::getpid()) + "-" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    fs::copy(capture_sys(capture), root_ / "sys", fs::copy_options::recursive);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  void write(const std::string& relative, const std::string& text) {
    std::ofstream out(root_ / "sys" / relative, std::ios::trunc);
    out << text;
  }
  System open() const {
    OpenOptions options;
    options.sysfs_root = (root_ / "sys").string();
    options.enable_nvml = false;
    return System::open(options);
  }
  fs::path root_;
};

constexpr const char* kRx7800xtHwmon = "class/drm/card1/device/hwmon/hwmon4/";

TEST_F(ScratchCapture, PowerOf54231000MicrowattsIsExactly54_231Watts) {
  copy("real/lact/rx7800xt");
  write(std::string(kRx7800xtHwmon) + "power1_average", "54231000\n");
  write(std::string(kRx7800xtHwmon) + "power1_cap", "54231000\n");
  const auto r = open().sample(0, everything());
  EXPECT_EQ(number_of(r, "power_average"), 54.231);
  EXPECT_EQ(number_of(r, "power_cap"), 54.231);
}

TEST_F(ScratchCapture, EnergyFromATableThatDoesNotDecodeIsAnErrorNotUnsupported) {
  // A truncated gpu_metrics (a read cut short, a driver in trouble) is an error naming the file:
  // "not supported" would say the GPU has no energy counter at all.
  copy("real/lact/rx6900xt");
  write("class/drm/card0/device/gpu_metrics", "\x04");
  const Reading energy = reading_of(open().sample(0, everything()), "energy_consumed");
  EXPECT_EQ(energy.status, Status::error);
  EXPECT_EQ(energy.error_code, EINVAL);
  EXPECT_NE(energy.detail.find("card0/device/gpu_metrics"), std::string::npos) << energy.detail;
}

TEST_F(ScratchCapture, FanReadsAndWritesShareOneScale) {
  copy("real/lact/rx7800xt");
  const std::string hw = kRx7800xtHwmon;
  write(hw + "pwm1_min", "0\n");
  write(hw + "pwm1_max", "200\n");
  write(hw + "pwm1", "100\n");
  write(hw + "pwm1_enable", "1\n");
  System system = open();
  EXPECT_EQ(number_of(system.sample(0, everything()), "fan_pwm"), 50.0);
  ControlOptions dry;
  dry.dry_run = true;
  FanSetting half;
  half.automatic = false;
  half.percent = 50;
  ControlResult plan = system.set_fan(0, half, dry);
  ASSERT_TRUE(plan.ok()) << plan.message;
  ASSERT_EQ(plan.writes.size(), 1u);
  EXPECT_EQ(plan.writes[0].value, "100");  // 50 % of pwm1_max 200, as the read says
  // A floor: pwm1_min 50 is 0 %, pwm1_max 200 is 100 %.
  write(hw + "pwm1_min", "50\n");
  write(hw + "pwm1", "125\n");
  EXPECT_EQ(number_of(system.sample(0, everything()), "fan_pwm"), 50.0);
  plan = system.set_fan(0, half, dry);
  ASSERT_TRUE(plan.ok()) << plan.message;
  ASSERT_EQ(plan.writes.size(), 1u);
  EXPECT_EQ(plan.writes[0].value, "125");
  // Absent limits: 0..255.
  fs::remove(root_ / "sys" / (hw + "pwm1_min"));
  fs::remove(root_ / "sys" / (hw + "pwm1_max"));
  write(hw + "pwm1", "51\n");
  EXPECT_EQ(number_of(system.sample(0, everything()), "fan_pwm"), 20.0);
  FanSetting fifth;
  fifth.automatic = false;
  fifth.percent = 20;
  plan = system.set_fan(0, fifth, dry);
  ASSERT_TRUE(plan.ok()) << plan.message;
  ASSERT_EQ(plan.writes.size(), 1u);
  EXPECT_EQ(plan.writes[0].value, "51");
}

}  // namespace
}  // namespace hipstack::smi
