// Readings that cannot be true become errors naming both numbers (plausibility.hpp): the rules one by
// one on made-up readings, then through System::sample and health on a scratch copy of a real
// capture whose files were changed to say the impossible.
#include "plausibility.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;
using detail::kImplausibleErrorCode;
using detail::mark_implausible;

Reading number(MetricId id, double value, std::string instance = {}) {
  Reading r;
  r.id = id;
  r.instance = std::move(instance);
  r.status = Status::ok;
  r.value = value;
  r.detail = "test";
  return r;
}

Reading integer(MetricId id, std::int64_t value) {
  Reading r;
  r.id = id;
  r.status = Status::ok;
  r.value = value;
  r.detail = "test";
  return r;
}

const Reading& reading_of(const std::vector<Reading>& readings, MetricId id, const std::string& instance = {}) {
  for (const Reading& r : readings) {
    if (r.id == id && r.instance == instance) return r;
  }
  throw std::runtime_error("no such reading");
}

bool implausible(const Reading& r) {
  return r.status == Status::error && r.error_code == kImplausibleErrorCode &&
         std::holds_alternative<std::monostate>(r.value);
}

TEST(Plausibility, MemoryUsedAboveItsTotalIsAnErrorNamingBothNumbers) {
  std::vector<Reading> readings = {integer(MetricId::vram_total, 206141652992), integer(MetricId::vram_used, 210491047936),
                                   integer(MetricId::gtt_total, 1000), integer(MetricId::gtt_used, 1000)};
  mark_implausible(readings);
  const Reading& used = reading_of(readings, MetricId::vram_used);
  ASSERT_TRUE(implausible(used)) << used.detail;
  EXPECT_NE(used.detail.find("210491047936 B"), std::string::npos) << used.detail;
  EXPECT_NE(used.detail.find("vram_total 206141652992 B"), std::string::npos) << used.detail;
  EXPECT_NE(used.detail.find("read from test"), std::string::npos) << used.detail;
  EXPECT_TRUE(reading_of(readings, MetricId::vram_total).ok());  // the bound stays: the value is judged
  EXPECT_TRUE(reading_of(readings, MetricId::gtt_used).ok());     // all of it in use is possible
}

TEST(Plausibility, ALinkWiderOrFasterThanTheDeviceCanIsAnError) {
  std::vector<Reading> readings = {integer(MetricId::pcie_width_max, 16), integer(MetricId::pcie_width, 32),
                                   number(MetricId::pcie_speed_max, 16.0), number(MetricId::pcie_speed, 16.0)};
  mark_implausible(readings);
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::pcie_width)));
  EXPECT_TRUE(reading_of(readings, MetricId::pcie_speed).ok());
}

TEST(Plausibility, AClockAQuarterAboveItsMaximumIsAnErrorABoostIsNot) {
  std::vector<Reading> readings = {number(MetricId::clock_sclk_max, 2100), number(MetricId::clock_sclk, 2200),
                                   number(MetricId::clock_sclk_xcc, 2700, "3"), number(MetricId::clock_sclk_xcc, 2100, "4")};
  mark_implausible(readings);
  EXPECT_TRUE(reading_of(readings, MetricId::clock_sclk).ok());
  const Reading& xcc3 = reading_of(readings, MetricId::clock_sclk_xcc, "3");
  ASSERT_TRUE(implausible(xcc3));
  EXPECT_NE(xcc3.detail.find("clock_sclk_xcc[3] read 2700 MHz, more than 1.25 times clock_sclk_max 2100 MHz"),
            std::string::npos) << xcc3.detail;
  EXPECT_TRUE(reading_of(readings, MetricId::clock_sclk_xcc, "4").ok());
}

TEST(Plausibility, ABoundOfZeroOrMissingJudgesNothing) {
  std::vector<Reading> readings = {integer(MetricId::vram_total, 0), integer(MetricId::vram_used, 5),
                                   integer(MetricId::gtt_used, 5)};
  mark_implausible(readings);
  EXPECT_TRUE(reading_of(readings, MetricId::vram_used).ok());
  EXPECT_TRUE(reading_of(readings, MetricId::gtt_used).ok());
}

TEST(Plausibility, ValuesOutsideWhatTheirUnitAllowsAreErrors) {
  std::vector<Reading> readings = {
      number(MetricId::gpu_busy, 102), number(MetricId::memory_busy, 100.4), number(MetricId::media_busy, -1),
      number(MetricId::temperature_junction, 151), number(MetricId::temperature_edge, -40),
      number(MetricId::temperature_memory, NAN), number(MetricId::power_current, -0.5),
      number(MetricId::power_average, 1400), number(MetricId::fan_speed, -3)};
  mark_implausible(readings);
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::gpu_busy)));
  EXPECT_TRUE(reading_of(readings, MetricId::memory_busy).ok());  // rounding
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::media_busy)));
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::temperature_junction)));
  EXPECT_TRUE(reading_of(readings, MetricId::temperature_edge).ok());
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::temperature_memory)));
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::power_current)));
  EXPECT_TRUE(reading_of(readings, MetricId::power_average).ok());
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::fan_speed)));
  EXPECT_NE(reading_of(readings, MetricId::gpu_busy).detail.find("gpu_busy read 102 %, which cannot be"), std::string::npos);
}

TEST(Plausibility, ABoundOutOfItsOwnRangeJudgesNothing) {
  std::vector<Reading> readings = {number(MetricId::clock_sclk_max, -5), number(MetricId::clock_sclk, 900)};
  mark_implausible(readings);
  EXPECT_TRUE(implausible(reading_of(readings, MetricId::clock_sclk_max)));
  EXPECT_TRUE(reading_of(readings, MetricId::clock_sclk).ok());
}

// A copy of the RX 580 capture (VRAM 4 GiB, 512 MiB used, PCIe x16 of x16) to change.
class PlausibilityOnACapture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy(capture_sys("real/lact/rx580"), scratch_.path() / "sys", std::filesystem::copy_options::recursive);
  }
  void write(const std::string& file, const std::string& text) {
    std::ofstream(scratch_.path() / "sys/class/drm/card0/device" / file) << text;
  }
  [[nodiscard]] System open() const {
    OpenOptions options;
    options.sysfs_root = (scratch_.path() / "sys").string();
    options.enable_nvml = false;
    return System::open(options);
  }
  ScratchDir scratch_{"hipstack-plausibility"};
};

// Every bundled capture, real or constructed, says only what can be: no reading of any GPU is an
// impossible one (the constructed captures model real data; a planted fault is no impossible value).
// $HIPSTACK_EXTRA_CAPTURES (folders of captures, ':'-separated) adds more: the shared fixtures.
TEST(PlausibilityOfTheCaptures, NoBundledCaptureHasAnImpossibleReading) {
  std::vector<std::filesystem::path> tops = {HIPSTACK_CAPTURES_DIR};
  if (const char* extra = std::getenv("HIPSTACK_EXTRA_CAPTURES"); extra != nullptr) {
    for (std::string_view rest = extra; !rest.empty();) {
      const std::size_t colon = rest.find(':');
      tops.emplace_back(std::string(rest.substr(0, colon)));
      rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    }
  }
  std::size_t captures = 0, gpus = 0;
  for (const auto& top : tops) {
    for (auto it = std::filesystem::recursive_directory_iterator(top); it != std::filesystem::recursive_directory_iterator(); ++it) {
      if (!it->is_directory() || !std::filesystem::is_directory(it->path() / "sys")) continue;
      it.disable_recursion_pending();
      OpenOptions options;
      options.sysfs_root = (it->path() / "sys").string();
      options.enable_nvml = false;
      const System system = System::open(options);
      ++captures;
      for (const DeviceSummary& device : system.devices()) {
        ++gpus;
        for (const Reading& r : system.sample(device.index, everything())) {
          EXPECT_NE(r.error_code, kImplausibleErrorCode) << it->path() << " GPU " << device.index << ": " << r.detail;
        }
      }
    }
  }
  EXPECT_GE(captures, 10u);
  EXPECT_GE(gpus, 30u);
}

TEST_F(PlausibilityOnACapture, TheRealCaptureIsPlausible) {
  const System system = open();
  const auto readings = system.sample(0, everything());
  for (const Reading& r : readings) EXPECT_NE(r.error_code, kImplausibleErrorCode) << r.detail;
  const HealthReport report = system.health(0);
  const auto it = std::find_if(report.findings.begin(), report.findings.end(),
                               [](const HealthFinding& f) { return f.check == "readings.plausible"; });
  ASSERT_NE(it, report.findings.end());
  EXPECT_EQ(it->verdict, Verdict::pass) << it->message;
}

TEST_F(PlausibilityOnACapture, UsedAboveTotalIsAnErrorWhenOnlyTheValueIsAsked) {
  write("mem_info_vram_used", "4294967297\n");  // one byte more than mem_info_vram_total
  const System system = open();
  SampleOptions live;  // live values only, and only this one: the library reads the bound itself
  live.metrics = {MetricId::vram_used};
  const auto readings = system.sample(0, live);
  ASSERT_EQ(readings.size(), 1u);
  EXPECT_TRUE(implausible(readings[0])) << readings[0].detail;
  EXPECT_NE(readings[0].detail.find("vram_used read 4294967297 B, above vram_total 4294967296 B"), std::string::npos)
      << readings[0].detail;
  // Every live value, no static asked: the bound is read, judged by and not handed out.
  SampleOptions all_live;
  const auto every = system.sample(0, all_live);
  EXPECT_TRUE(implausible(reading_of(every, MetricId::vram_used)));
  EXPECT_TRUE(std::none_of(every.begin(), every.end(), [](const Reading& r) { return r.id == MetricId::vram_total; }));
}

TEST_F(PlausibilityOnACapture, AStaleCopyOfABoundMakesNoError) {
  const System system = open();
  SampleOptions used;
  used.metrics = {MetricId::vram_used};
  ASSERT_TRUE(system.sample(0, used).front().ok());  // vram_total (4 GiB) is kept from here on
  // The total grew (as after a memory partition change) and the use with it: the copy of the old
  // total would call the use impossible; read again, the bound agrees.
  write("mem_info_vram_total", "8589934592\n");
  write("mem_info_vram_used", "6442450944\n");
  const auto readings = system.sample(0, used);
  ASSERT_TRUE(readings.front().ok()) << readings.front().detail;
  EXPECT_EQ(readings.front().number(), 6442450944.0);
  // Above the new total as well: impossible, judged by the total read now.
  write("mem_info_vram_used", "8589934593\n");
  const auto above = system.sample(0, used);
  EXPECT_TRUE(implausible(above.front()));
  EXPECT_NE(above.front().detail.find("above vram_total 8589934592 B"), std::string::npos) << above.front().detail;
}

TEST_F(PlausibilityOnACapture, HealthFailsOnAnImpossibleReadingAndNoOtherCheckUsesIt) {
  write("mem_info_vram_used", "4294967297\n");
  write("gpu_busy_percent", "250\n");
  const System system = open();
  const HealthReport report = system.health(0);
  const auto it = std::find_if(report.findings.begin(), report.findings.end(),
                               [](const HealthFinding& f) { return f.check == "readings.plausible"; });
  ASSERT_NE(it, report.findings.end());
  EXPECT_EQ(it->verdict, Verdict::fail);
  EXPECT_EQ(it->reading, "gpu_busy, vram_used");  // catalogue order
  EXPECT_NE(it->message.find("gpu_busy read 250 %"), std::string::npos) << it->message;
  EXPECT_NE(it->message.find("(and 1 more)"), std::string::npos) << it->message;
  EXPECT_EQ(report.overall, Verdict::fail);
  // No other check judged the GPU by a busy share of 250 %.
  for (const HealthFinding& f : report.findings) {
    if (f.check != "readings.plausible") {
      EXPECT_EQ(f.reading.find("250"), std::string::npos) << f.check << ": " << f.reading;
    }
  }
}

}  // namespace
}  // namespace hipstack::smi
