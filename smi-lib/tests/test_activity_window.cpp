// The WINDOW-kind metrics of AMD GPUs: constructed gpu_metrics sequences (two or more looks)
// differenced into activity, busy, bandwidth and violation shares, with 32-bit wraps, restarts,
// tables that did not change, and versions without the accumulators; then the same through
// System::sample on a capture whose gpu_metrics file is rewritten between samples. Last, the
// per-process engine shares of fdinfo: measured on a running system, never over a recorded tree.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/amdgpu/amdgpu.hpp"
#include "backends/backend.hpp"
#include "capture_helpers.hpp"
#include "fs_view.hpp"
#include "gpu_metrics_builder.hpp"

namespace hipstack::smi {
namespace {

using detail::GpuMetrics;
using detail::ReadingList;
using test::GpuMetricsBlob;
using namespace hipstack::smi::testing;

// One v1.8 table (MI300-class, one partition of two XCCs) after `samples` firmware samples at the
// given average activities; every accumulator is what the firmware would hold.
struct Activity {
  std::uint64_t samples = 0;         // accumulation_counter
  double gfx = 0, mem = 0;           // % per sample
  double xcc0 = 0, xcc1 = 0;         // % per sample of each XCC
  double ppt = 0;                    // share of samples PPT-limited, 0..1
  double pcie_gbps = 0;              // GB/s per sample
  std::uint64_t xgmi_kb = 0;         // KB read over link 0 so far
  std::uint64_t clock_ns = 0;        // system_clock_counter
};

GpuMetricsBlob table(const Activity& a) {
  GpuMetricsBlob b(1, 8);
  b.set("accumulation_counter", a.samples);
  b.set("gfx_activity_acc", static_cast<std::uint64_t>(a.gfx * static_cast<double>(a.samples)));
  b.set("mem_activity_acc", static_cast<std::uint64_t>(a.mem * static_cast<double>(a.samples)));
  b.set("ppt_residency_acc", static_cast<std::uint64_t>(a.ppt * static_cast<double>(a.samples)));
  b.set("prochot_residency_acc", 0);
  b.set("pcie_bandwidth_acc", static_cast<std::uint64_t>(a.pcie_gbps * static_cast<double>(a.samples)));
  b.set("xgmi_read_data_acc", a.xgmi_kb, 0);
  b.set("xgmi_write_data_acc", 0, 0);
  b.set("system_clock_counter", a.clock_ns);
  b.set("num_partition", 1);
  b.set_xcp(0, "gfx_busy_acc", static_cast<std::uint64_t>(a.xcc0 * static_cast<double>(a.samples)), 0);
  b.set_xcp(0, "gfx_busy_acc", static_cast<std::uint64_t>(a.xcc1 * static_cast<double>(a.samples)), 1);
  return b;
}

GpuMetrics decoded(const GpuMetricsBlob& b) {
  auto d = detail::decode_gpu_metrics(b.bytes());
  EXPECT_TRUE(d.ok) << d.error;
  return d.metrics;
}

std::vector<Reading> window(const GpuMetricsBlob& before, const GpuMetricsBlob& after) {
  std::vector<Reading> out;
  ReadingList list(out);
  SampleOptions options;
  options.window = true;
  detail::amdgpu::window_readings(decoded(before), decoded(after), options, list);
  return out;
}

TEST(ActivityWindow, AccumulatorsDividedByTheFirmwareSamples) {
  Activity a{.samples = 1000, .gfx = 10, .mem = 5, .xcc0 = 10, .xcc1 = 30, .ppt = 0, .pcie_gbps = 2, .xgmi_kb = 0,
             .clock_ns = 5'000'000'000};
  // Over the next 1000 samples (1 s by the driver's clock): 40 % gfx, 20 % memory, XCCs at 70 and 90 %,
  // PPT-limited a quarter of the time, 16 GB/s of PCIe, 1 GiB read over XGMI link 0.
  Activity b{.samples = 2000, .gfx = 25, .mem = 12.5, .xcc0 = 40, .xcc1 = 60, .ppt = 0.125, .pcie_gbps = 9,
             .xgmi_kb = 1024 * 1024, .clock_ns = 6'000'000'000};
  const auto r = window(table(a), table(b));
  EXPECT_DOUBLE_EQ(number_of(r, "graphics_active"), 40.0);
  EXPECT_DOUBLE_EQ(number_of(r, "memory_active"), 20.0);
  EXPECT_DOUBLE_EQ(number_of(r, "xcp_busy", "0"), 80.0);
  EXPECT_DOUBLE_EQ(number_of(r, "violation_share", "ppt"), 25.0);
  EXPECT_DOUBLE_EQ(number_of(r, "violation_share", "prochot"), 0.0);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_bandwidth_average"), 16e9);
  EXPECT_DOUBLE_EQ(number_of(r, "xgmi_read_rate", "0"), 1024.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(r, "xgmi_write_rate", "0"), 0.0);
  EXPECT_NE(reading_of(r, "graphics_active").detail.find("over 1000 firmware samples"), std::string::npos);
  EXPECT_NE(reading_of(r, "xgmi_read_rate", "0").detail.find("system_clock_counter"), std::string::npos);
  // Throttler residencies the table does not carry are absent, not 0 %.
  EXPECT_EQ(reading_of(r, "violation_share", "hbm_thermal").detail, "absent from the sample");
}

TEST(ActivityWindow, ClockBelowHostLimitSharesAverageTheXccs) {
  // v1.8, two partitions of one XCC each: low utilisation held the clock in 500 and 300 of the
  // window's 1000 samples (40 % on average); the PPT limit never did.
  auto table = [](std::uint64_t samples, std::uint64_t low0, std::uint64_t low1) {
    GpuMetricsBlob b(1, 8);
    b.set("accumulation_counter", samples).set("num_partition", 2);
    b.set_xcp(0, "gfx_low_utilization_acc", low0, 0).set_xcp(1, "gfx_low_utilization_acc", low1, 0);
    b.set_xcp(0, "gfx_below_host_limit_ppt_acc", 7, 0).set_xcp(1, "gfx_below_host_limit_ppt_acc", 7, 0);
    return b;
  };
  const auto r = window(table(1000, 100, 300), table(2000, 600, 600));
  EXPECT_DOUBLE_EQ(number_of(r, "violation_share", "gfx_low_utilization"), 40.0);
  EXPECT_DOUBLE_EQ(number_of(r, "violation_share", "gfx_below_host_limit_ppt"), 0.0);
  // v1.8 has no single gfx_below_host_limit (v1.7's): absent, not 0.
  EXPECT_EQ(reading_of(r, "violation_share", "gfx_below_host_limit").detail, "absent from the sample");
}

TEST(ActivityWindow, ThirtyTwoBitAccumulatorsWrap) {
  GpuMetricsBlob before(1, 8);
  before.set("accumulation_counter", 0xffffff00u).set("gfx_activity_acc", 0xfffff000u);
  GpuMetricsBlob after(1, 8);
  // 512 samples later, at 50 %: both counters wrapped past 2^32.
  after.set("accumulation_counter", 0x100u).set("gfx_activity_acc", (0xfffff000u + 512u * 50u) & 0xffffffffu);
  const auto r = window(before, after);
  EXPECT_DOUBLE_EQ(number_of(r, "graphics_active"), 50.0);
}

TEST(ActivityWindow, RestartedCountersMakeTheWindowUnavailable) {
  GpuMetricsBlob before(1, 8);
  before.set("accumulation_counter", 5'000'000).set("gfx_activity_acc", 200'000'000);
  GpuMetricsBlob after(1, 8);  // the driver reloaded: the firmware counts from 0 again
  after.set("accumulation_counter", 10).set("gfx_activity_acc", 400);
  const Reading g = reading_of(window(before, after), "graphics_active");
  EXPECT_EQ(g.status, Status::unavailable);
  EXPECT_EQ(g.error_code, ENODATA);
  EXPECT_NE(g.detail.find("went back from 5000000 to 10"), std::string::npos) << g.detail;
}

TEST(ActivityWindow, ATableThatDidNotChangeSaysSoNeverZero) {
  Activity a{.samples = 1000, .gfx = 10, .xgmi_kb = 64, .clock_ns = 7};
  const auto r = window(table(a), table(a));  // a recorded table read twice
  for (const char* name : {"graphics_active", "memory_active", "pcie_bandwidth_average"}) {
    const Reading x = reading_of(r, name);
    EXPECT_EQ(x.status, Status::unavailable) << name << ": " << x.detail;
    EXPECT_NE(x.detail.find("did not advance"), std::string::npos) << x.detail;
  }
  const Reading xgmi = reading_of(r, "xgmi_read_rate", "0");
  EXPECT_EQ(xgmi.status, Status::unavailable) << xgmi.detail;
  EXPECT_NE(xgmi.detail.find("neither system_clock_counter nor firmware_timestamp advanced"), std::string::npos);
}

TEST(ActivityWindow, ImplausibleGrowthIsAnErrorNamingTheNumbers) {
  GpuMetricsBlob before(1, 8);
  before.set("accumulation_counter", 100).set("gfx_activity_acc", 0);
  GpuMetricsBlob after(1, 8);
  after.set("accumulation_counter", 200).set("gfx_activity_acc", 100 * 150);  // 150 % per sample
  const Reading g = reading_of(window(before, after), "graphics_active");
  EXPECT_EQ(g.status, Status::error);
  EXPECT_NE(g.detail.find("150.0 is above 100"), std::string::npos) << g.detail;
}

TEST(ActivityWindow, VersionsWithoutTheCounterAreNotSupported) {
  // v1.3 (MI200) keeps gfx_activity_acc but no accumulation_counter to divide it by.
  GpuMetricsBlob before(1, 3);
  before.set("gfx_activity_acc", 100);
  GpuMetricsBlob after(1, 3);
  after.set("gfx_activity_acc", 5000);
  const auto r = window(before, after);
  const Reading g = reading_of(r, "graphics_active");
  EXPECT_EQ(g.status, Status::not_supported);
  EXPECT_NE(g.detail.find("no accumulation_counter"), std::string::npos) << g.detail;
  EXPECT_EQ(reading_of(r, "xcp_busy").status, Status::not_supported);
  EXPECT_EQ(reading_of(r, "violation_share").status, Status::not_supported);
}

// Through the library: a copy of a constructed MI300X node whose card0 gpu_metrics is rewritten
// between looks, as the firmware updates it.
class WindowThroughSystem : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("hipstack-window-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    std::filesystem::copy(capture_sys("constructed/mi300x-8gpu-spx-nps1"), root_ / "sys",
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const GpuMetricsBlob& b) {
    const auto path = root_ / "sys/class/drm/card0/device/gpu_metrics";
    std::filesystem::remove(path);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.bytes().data()), static_cast<std::streamsize>(b.bytes().size()));
  }
  System open() {
    OpenOptions options;
    options.sysfs_root = (root_ / "sys").string();
    options.enable_nvml = false;
    return System::open(options);
  }
  std::filesystem::path root_;
};

TEST_F(WindowThroughSystem, FirstLookStartsTheWindowAndLaterLooksReportIt) {
  const System system = open();
  SampleOptions activity;
  activity.live = false;
  activity.window = true;
  write(table({.samples = 1000, .gfx = 10, .clock_ns = 1'000'000'000}));
  const auto first = system.sample(0, activity);
  const Reading g = reading_of(first, "graphics_active");
  EXPECT_EQ(g.status, Status::unavailable);
  EXPECT_NE(g.detail.find("needs two looks"), std::string::npos) << g.detail;
  // Only WINDOW-kind metrics were asked for: nothing live in the sample.
  EXPECT_EQ(reading_of(first, "gpu_busy").detail, "absent from the sample");
  // NVIDIA-only sources say so on an AMD GPU.
  EXPECT_EQ(reading_of(first, "sm_active").status, Status::not_supported);

  write(table({.samples = 3000, .gfx = 50, .clock_ns = 3'000'000'000}));  // 2000 samples at 70 %
  EXPECT_DOUBLE_EQ(number_of(system.sample(0, activity), "graphics_active"), 70.0);
  write(table({.samples = 4000, .gfx = 40, .clock_ns = 4'000'000'000}));  // 1000 samples at 10 %
  EXPECT_DOUBLE_EQ(number_of(system.sample(0, activity), "graphics_active"), 10.0);
  // The window kind is not sampled unless asked for.
  EXPECT_EQ(reading_of(system.sample(0, {}), "graphics_active").detail, "absent from the sample");
}

TEST_F(WindowThroughSystem, AnUnreadableTableNamesTheFile) {
  const System system = open();
  SampleOptions activity;
  activity.live = false;
  activity.window = true;
  activity.window_ms = 1;
  std::filesystem::remove(root_ / "sys/class/drm/card0/device/gpu_metrics");
  const Reading g = reading_of(system.sample(0, activity), "graphics_active");
  EXPECT_EQ(g.status, Status::not_supported);
  EXPECT_NE(g.detail.find("card0/device/gpu_metrics"), std::string::npos) << g.detail;
}

// A capture's sysfs with a /proc of the test's own, standing in for the running system: its
// fdinfo counters move when the test rewrites them.
class RunningFs final : public detail::FsView {
 public:
  RunningFs(const std::string& sys, const std::string& proc) : real_(sys, proc, "/nonexistent-dev") {}
  detail::FileText read_text(const std::string& path) const override { return real_.read_text(path); }
  detail::FileBytes read_bytes(const std::string& path, std::size_t max) const override { return real_.read_bytes(path, max); }
  std::vector<std::string> list(const std::string& path) const override { return real_.list(path); }
  bool exists(const std::string& path) const override { return real_.exists(path); }
  std::string link_target(const std::string& path) const override { return real_.link_target(path); }
  std::string host_path(const std::string& path) const override { return real_.host_path(path); }
  int write_text(const std::string&, std::string_view) const override { return EROFS; }
  bool recorded() const override { return false; }

 private:
  detail::RootedFs real_;
};

constexpr const char* kNode = "constructed/mi300x-8gpu-spx-nps1";
constexpr std::int32_t kPython = 51007;  // one fdinfo client, on 0000:e5:00.0, engines compute and dma

// The compute engine's share of kPython among `processes`; fails the test when it is not there.
Reading compute_share(const std::vector<ProcessInfo>& processes) {
  for (const ProcessInfo& p : processes) {
    if (p.pid != kPython) continue;
    for (const Reading& r : p.readings) {
      if (r.id == MetricId::process_engine_busy && r.instance == "compute") return r;
    }
  }
  ADD_FAILURE() << "no compute share of pid " << kPython;
  return {};
}

std::size_t device_of(const detail::Backend& backend, const std::string& bdf) {
  for (std::size_t d = 0; d < backend.device_count(); ++d) {
    if (backend.summary(d).bdf == bdf) return d;
  }
  ADD_FAILURE() << "no device " << bdf;
  return 0;
}

TEST(ProcessWindow, ARecordedTreeMeasuresNoShareWhateverTheWindow) {
  const System system = open_capture(kNode);
  std::uint32_t device = 0;
  bool found = false;
  for (const auto& d : system.devices()) {
    if (d.bdf == "0000:e5:00.0") device = d.index, found = true;
  }
  ASSERT_TRUE(found);
  // A window, a first look and a second look: none has counters that moved in real time.
  for (const unsigned interval_ms : {50u, 0u, 0u}) {
    const Reading r = compute_share(system.processes(device, interval_ms));
    EXPECT_EQ(r.status, Status::unavailable) << interval_ms << ": " << r.detail;
    EXPECT_EQ(r.error_code, ENODATA);
    EXPECT_NE(r.detail.find("recorded capture"), std::string::npos) << r.detail;
  }
}

TEST(ProcessWindow, ARunningSystemMeasuresTheCountersGrowth) {
  const ScratchDir scratch("hipstack-process-window");
  const std::filesystem::path proc = scratch.path() / "proc";
  std::filesystem::copy(std::string(HIPSTACK_CAPTURES_DIR) + "/" + kNode + "/proc", proc, std::filesystem::copy_options::recursive);
  const RunningFs fs(capture_sys(kNode), proc.string());
  detail::BackendProbe probe = detail::probe_amdgpu(fs);
  ASSERT_NE(probe.backend, nullptr) << probe.reason;
  const std::size_t device = device_of(*probe.backend, "0000:e5:00.0");
  const auto rewrite = [&proc](std::uint64_t compute_ns) {
    const auto path = proc / std::to_string(kPython) / "fdinfo" / "11";
    std::filesystem::remove(path);
    std::ofstream(path) << "pos:\t0\ndrm-driver:\tamdgpu\ndrm-pdev:\t0000:e5:00.0\ndrm-client-id:\t1402\n"
                           "drm-memory-vram:\t1024 KiB\ndrm-engine-compute:\t" << compute_ns << " ns\n";
  };
  rewrite(1'000'000);
  const Reading first = compute_share(probe.backend->processes(device, 0));
  EXPECT_EQ(first.status, Status::unavailable) << first.detail;
  EXPECT_NE(first.detail.find("needs two looks"), std::string::npos) << first.detail;
  // Counters that stand still on a running system: the process did not use the engine.
  const Reading idle = compute_share(probe.backend->processes(device, 0));
  ASSERT_TRUE(idle.ok()) << idle.detail;
  EXPECT_DOUBLE_EQ(*idle.number(), 0.0);
  // More engine time than wall time passed (several queues): the share is capped at 100 %.
  rewrite(1'000'000 + 3'600'000'000'000ULL);
  const Reading busy = compute_share(probe.backend->processes(device, 0));
  ASSERT_TRUE(busy.ok()) << busy.detail;
  EXPECT_DOUBLE_EQ(*busy.number(), 100.0);
}

}  // namespace
}  // namespace hipstack::smi
