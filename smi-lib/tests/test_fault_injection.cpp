// The amdgpu backend over a file system that fails or lies: every failure becomes a reading with a
// status and a detail naming the file, and nothing throws or crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "backends/backend.hpp"
#include "capture_helpers.hpp"
#include "fs_view.hpp"

namespace hipstack::smi::detail {
namespace {

using namespace hipstack::smi::testing;

// A capture, with chosen files replaced by an errno or by other contents.
class FaultyFs final : public FsView {
 public:
  explicit FaultyFs(const std::string& sys_root) : real_(sys_root, "/nonexistent-proc", "/nonexistent-dev") {}
  std::map<std::string, int> errors;          // path suffix -> errno
  std::map<std::string, std::string> texts;   // path suffix -> contents
  std::string gone;                           // a folder that has disappeared ("" = none)

  FileText read_text(const std::string& path) const override {
    if (const auto e = match(errors, path)) return {*e, {}};
    if (const auto t = match(texts, path)) return {0, std::string(trim_sysfs_text(*t))};
    return real_.read_text(path);
  }
  FileBytes read_bytes(const std::string& path, std::size_t max) const override {
    if (const auto e = match(errors, path)) return {*e, {}};
    if (const auto t = match(texts, path)) {
      FileBytes b;
      b.bytes.assign(t->begin(), t->begin() + static_cast<std::ptrdiff_t>(std::min(max, t->size())));
      return b;
    }
    return real_.read_bytes(path, max);
  }
  std::vector<std::string> list(const std::string& path) const override { return real_.list(path); }
  bool exists(const std::string& path) const override {
    if (!gone.empty() && path.starts_with(gone)) return false;
    return real_.exists(path);
  }
  std::string link_target(const std::string& path) const override { return real_.link_target(path); }
  int write_text(const std::string&, std::string_view) const override { return EROFS; }
  std::string host_path(const std::string& path) const override { return real_.host_path(path); }
  bool recorded() const override { return true; }

 private:
  template <typename T>
  static std::optional<T> match(const std::map<std::string, T>& table, const std::string& path) {
    for (const auto& [suffix, value] : table) {
      if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return value;
      }
    }
    return std::nullopt;
  }
  RootedFs real_;
};

std::vector<Reading> sample_all(const FsView& fs) {
  BackendProbe probe = probe_amdgpu(fs);
  EXPECT_NE(probe.backend, nullptr) << probe.reason;
  std::vector<Reading> out;
  if (probe.backend) probe.backend->sample(0, everything(), out);
  return out;
}

TEST(FaultInjection, ErrnoBecomesStatusWithThePath) {
  FaultyFs fs(capture_sys("real/lact/rx6900xt"));
  fs.errors["hwmon5/temp1_input"] = EIO;
  fs.errors["hwmon5/temp2_input"] = EBUSY;
  fs.errors["device/mem_info_vram_used"] = EACCES;
  const auto r = sample_all(fs);
  const Reading edge = reading_of(r, "temperature_edge");
  EXPECT_EQ(edge.status, Status::error);
  EXPECT_EQ(edge.error_code, EIO);
  EXPECT_NE(edge.detail.find("temp1_input"), std::string::npos) << edge.detail;
  EXPECT_EQ(reading_of(r, "temperature_junction").status, Status::unavailable);
  EXPECT_EQ(reading_of(r, "vram_used").status, Status::unavailable);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_memory"), 54.0);  // the others are unaffected
}

TEST(FaultInjection, AClockTableThatCannotBeReadKeepsItsErrno) {
  FaultyFs fs(capture_sys("real/lact/rx6900xt"));
  fs.errors["device/gpu_metrics"] = EIO;  // no fallback either
  fs.errors["hwmon5/freq1_input"] = ENOENT;  // nor hwmon clocks (they come before the table)
  fs.errors["hwmon5/freq2_input"] = ENOENT;
  fs.errors["device/pp_dpm_sclk"] = EIO;
  fs.texts["device/pp_dpm_mclk"] = "0: garbage\n";
  const auto r = sample_all(fs);
  const Reading sclk = reading_of(r, "clock_sclk");
  EXPECT_EQ(sclk.status, Status::error);
  EXPECT_EQ(sclk.error_code, EIO);  // not EINVAL: the file was not malformed, it could not be read
  EXPECT_NE(sclk.detail.find("pp_dpm_sclk: Input/output error"), std::string::npos) << sclk.detail;
  const Reading mclk = reading_of(r, "clock_mclk");
  EXPECT_EQ(mclk.status, Status::error);
  EXPECT_EQ(mclk.error_code, EINVAL);  // malformed
}

// The backend names the fault; System turns it into an error on every reading (test_verdicts.cpp,
// AGpuWhoseDeviceFolderVanishesIsFaultedEverywhere) and into DeviceSummary::fault.
TEST(FaultInjection, AVanishedDeviceIsTheBackendsFault) {
  FaultyFs fs(capture_sys("real/lact/rx6900xt"));
  BackendProbe probe = probe_amdgpu(fs);
  ASSERT_NE(probe.backend, nullptr) << probe.reason;
  EXPECT_EQ(probe.backend->fault(0, nullptr), "");
  fs.gone = "/sys/class/drm/card0/device";
  const std::string fault = probe.backend->fault(0, nullptr);
  EXPECT_NE(fault.find("card0/device: the device is gone"), std::string::npos) << fault;
  EXPECT_EQ(probe.backend->summary(0).fault, "");  // summaries are discovery's; System adds the fault
  fs.gone.clear();  // back again: readings as before
  EXPECT_EQ(probe.backend->fault(0, nullptr), "");
  std::vector<Reading> out;
  probe.backend->sample(0, everything(), out);
  EXPECT_GT(std::count_if(out.begin(), out.end(), [](const Reading& r) { return r.ok(); }), 10);
}

TEST(FaultInjection, GarbageTextIsAnErrorNotANumber) {
  FaultyFs fs(capture_sys("real/lact/rx6900xt"));
  fs.texts["hwmon5/temp1_input"] = "hot";
  fs.texts["device/pp_dpm_sclk"] = "0: fastMhz *\n";
  fs.texts["device/current_link_speed"] = "Unknown";
  fs.texts["device/pcie_bw"] = "1 2";
  const auto r = sample_all(fs);
  EXPECT_EQ(reading_of(r, "temperature_edge").status, Status::error);
  EXPECT_NE(reading_of(r, "temperature_edge").detail.find("hot"), std::string::npos);
  // The dpm table is unreadable; the current clock comes from gpu_metrics first anyway.
  EXPECT_EQ(reading_of(r, "clock_sclk").detail, "gpu_metrics current clock");
  EXPECT_EQ(reading_of(r, "sclk_level").status, Status::error);
  // current_link_speed is the last source of the PCIe link: without gpu_metrics and pp_dpm_pcie its
  // garbage is what the reading says.
  fs.errors["device/gpu_metrics"] = ENOENT;
  fs.errors["device/pp_dpm_pcie"] = ENOENT;
  EXPECT_EQ(reading_of(sample_all(fs), "pcie_speed").status, Status::error);
}

TEST(FaultInjection, TruncatedGpuMetricsFallsBackToFilesAndSaysSo) {
  FaultyFs fs(capture_sys("real/lact/rx6900xt"));
  fs.texts["device/gpu_metrics"] = std::string("\x78\x00\x01\x03\x01\x02", 6);
  const auto r = sample_all(fs);
  const Reading version = reading_of(r, "gpu_metrics_version");
  EXPECT_EQ(version.status, Status::error);
  EXPECT_NE(version.detail.find("gpu_metrics"), std::string::npos);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_edge"), 56.0);
  EXPECT_EQ(reading_of(r, "temperature_hbm").status, Status::not_supported);
}

TEST(FaultInjection, EveryFileFailingStillYieldsOneReadingPerMetric) {
  for (const int error : {EIO, EACCES, ETIMEDOUT, ENODEV}) {
    FaultyFs fs(capture_sys("real/lact/rx6900xt"));
    for (const char* file : {"temp1_input", "temp2_input", "temp3_input", "power1_average", "power1_cap",
                             "fan1_input", "pwm1", "in0_input", "gpu_metrics", "pp_dpm_sclk", "pp_dpm_mclk",
                             "freq1_input", "freq2_input",
                             "mem_info_vram_total", "mem_info_vram_used", "vbios_version", "unique_id",
                             "power_dpm_force_performance_level", "pp_power_profile_mode"}) {
      fs.errors[file] = error;
    }
    const auto r = sample_all(fs);
    for (const char* name : {"temperature_edge", "power_average", "clock_sclk", "vram_used", "vbios_version",
                             "performance_level", "power_profile", "fan_pwm"}) {
      const Reading reading = reading_of(r, name);
      EXPECT_FALSE(reading.ok()) << name;
      EXPECT_FALSE(reading.detail.empty()) << name;
    }
  }
}

}  // namespace
}  // namespace hipstack::smi::detail
