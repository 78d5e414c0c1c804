// Verdict semantics (docs/health.md "Verdicts"): a GPU that cannot be read fails and is named; a
// check that could not be evaluated is UNKNOWN and named; "every check passed" only when every
// check was evaluated; each rule's boundary (critical limit reached, link width, throttle bits).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;

Reading ok(std::string_view name, Value value, std::string instance = {}) {
  Reading r;
  r.id = find_metric(name)->id;
  r.instance = std::move(instance);
  r.status = Status::ok;
  r.value = std::move(value);
  r.detail = "test";
  return r;
}

std::vector<const HealthFinding*> findings(const HealthReport& report, std::string_view check) {
  std::vector<const HealthFinding*> out;
  for (const HealthFinding& f : report.findings) {
    if (f.check == check) out.push_back(&f);
  }
  return out;
}

Verdict verdict_of(const HealthReport& report, std::string_view check) {
  const auto found = findings(report, check);
  EXPECT_EQ(found.size(), 1u) << check;
  return found.empty() ? Verdict::unknown : found.front()->verdict;
}

// An AMD GPU of a real capture, for rules checked on readings the test gives.
const System& amd() {
  static const System system = open_capture("real/lact/rx6900xt");
  return system;
}

TEST(Verdicts, ReachingTheCriticalTemperatureFails) {
  const std::vector<Reading> at = {ok("temperature_edge", 100.0), ok("temperature_edge_critical", 100.0)};
  EXPECT_EQ(verdict_of(amd().health(0, at), "thermal.temperature"), Verdict::fail);
  const std::vector<Reading> above = {ok("temperature_edge", 101.0), ok("temperature_edge_critical", 100.0)};
  EXPECT_EQ(verdict_of(amd().health(0, above), "thermal.temperature"), Verdict::fail);
  const std::vector<Reading> near = {ok("temperature_edge", 95.5), ok("temperature_edge_critical", 100.0)};
  EXPECT_EQ(verdict_of(amd().health(0, near), "thermal.temperature"), Verdict::warn);
  const std::vector<Reading> cool = {ok("temperature_edge", 94.5), ok("temperature_edge_critical", 100.0)};
  EXPECT_EQ(verdict_of(amd().health(0, cool), "thermal.temperature"), Verdict::pass);
  EXPECT_EQ(amd().health(0, at).overall, Verdict::fail);
}

TEST(Verdicts, NothingEvaluatedIsUnknownAndNamesEveryCheck) {
  const HealthReport report = amd().health(0, std::vector<Reading>{});
  EXPECT_EQ(report.overall, Verdict::unknown);
  const HealthTally t = tally(report);
  EXPECT_EQ(t.evaluated(), 0u);
  EXPECT_GE(t.unknown, 8u);
  EXPECT_EQ(t.not_checked.size(), t.unknown);
  const std::string summary = health_summary(report);
  EXPECT_EQ(summary.find("passed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("no check could be evaluated"), std::string::npos) << summary;
  EXPECT_NE(summary.find("thermal.temperature"), std::string::npos) << summary;
}

TEST(Verdicts, EveryCheckPassedOnlyWhenEveryCheckRan) {
  const HealthReport partial = amd().health(0, {ok("temperature_edge", 40.0), ok("temperature_edge_critical", 100.0)});
  EXPECT_EQ(partial.overall, Verdict::pass);
  const std::string summary = health_summary(partial);
  EXPECT_EQ(summary.find("every check passed"), std::string::npos) << summary;
  EXPECT_NE(summary.find(" passed, "), std::string::npos) << summary;
  EXPECT_NE(summary.find("not checked: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("power.at_cap"), std::string::npos) << summary;

  HealthReport all_ran;
  all_ran.findings = {{"a.one", Verdict::pass, "", "", "", ""}, {"a.two", Verdict::pass, "", "", "", ""},
                      {"a.two", Verdict::pass, "", "", "", ""}};
  EXPECT_EQ(health_summary(all_ran), "every check passed (2 checks)");
  // A check with one finding per sensor counts once, with its worst evaluated verdict.
  HealthReport mixed;
  mixed.findings = {{"t", Verdict::pass, "", "", "", ""}, {"t", Verdict::warn, "", "", "", ""},
                    {"u", Verdict::unknown, "", "", "", ""}, {"f", Verdict::fail, "", "", "", ""}};
  const HealthTally t = tally(mixed);
  EXPECT_EQ(t.pass, 0u);
  EXPECT_EQ(t.warn, 1u);
  EXPECT_EQ(t.fail, 1u);
  EXPECT_EQ(t.unknown, 1u);
  EXPECT_EQ(health_summary(mixed), "1 failed, 1 warned, 1 not checked: u");
}

TEST(Verdicts, AmdThrottleBitsAtZeroPassAndUndecodedBitsStayUnknown) {
  const HealthReport idle = amd().health(0, {ok("throttle_status", std::int64_t{0})});
  EXPECT_EQ(verdict_of(idle, "thermal.throttling"), Verdict::pass);
  EXPECT_EQ(verdict_of(idle, "power.throttling"), Verdict::pass);
  const HealthReport set = amd().health(0, {ok("throttle_status", std::int64_t{0x4})});
  EXPECT_EQ(verdict_of(set, "thermal.throttling"), Verdict::unknown);
  EXPECT_NE(findings(set, "thermal.throttling").front()->reading.find("0x4"), std::string::npos);
}

TEST(Verdicts, PcieWidthBelowItsMaximumWarnsSpeedOnlyWhenBusy) {
  const auto link = [](double speed, double width, double busy) {
    return std::vector<Reading>{ok("pcie_speed", speed),   ok("pcie_width", width), ok("pcie_speed_max", 16.0),
                                ok("pcie_width_max", 16.0), ok("gpu_busy", busy)};
  };
  EXPECT_EQ(verdict_of(amd().health(0, link(16, 8, 0)), "pcie.link_degraded"), Verdict::warn);
  EXPECT_EQ(verdict_of(amd().health(0, link(2.5, 16, 0)), "pcie.link_degraded"), Verdict::pass);
  EXPECT_EQ(verdict_of(amd().health(0, link(2.5, 16, 95)), "pcie.link_degraded"), Verdict::warn);
  EXPECT_EQ(verdict_of(amd().health(0, link(16, 16, 95)), "pcie.link_degraded"), Verdict::pass);
}

TEST(Verdicts, AGpuWhoseEveryReadFailsFails) {
  Reading failed;
  failed.id = MetricId::temperature_edge;
  failed.status = Status::error;
  failed.error_code = 5;
  failed.detail = "/sys/class/drm/card0/device/hwmon/hwmon0/temp1_input: Input/output error";
  const HealthReport report = amd().health(0, {failed});
  EXPECT_EQ(report.overall, Verdict::fail);
  ASSERT_EQ(findings(report, "device.readable").size(), 1u);
  EXPECT_NE(findings(report, "device.readable").front()->message.find("Input/output error"), std::string::npos);
  EXPECT_FALSE(device_answered({failed}));
  EXPECT_TRUE(device_answered({}));  // nothing failed: every metric unsupported is not a fault
}

TEST(Verdicts, ItsProcessListDoesNotMakeAFailingGpuAnswer) {
  // amdgpu's process list comes from /proc (fdinfo), not from the GPU: it reads fine while every
  // read of the GPU fails, and must not make that GPU look alive (hipstack_gpu_up flapped with it).
  Reading failed;
  failed.id = MetricId::temperature_edge;
  failed.status = Status::error;
  failed.error_code = 5;
  failed.detail = "/sys/class/drm/card8/device/hwmon/hwmon3/temp1_input: Input/output error";
  Reading processes;
  processes.id = MetricId::running_processes;
  processes.status = Status::ok;
  processes.value = 0.0;
  EXPECT_FALSE(device_answered({failed, processes}));
  EXPECT_EQ(amd().health(0, {failed, processes}).overall, Verdict::fail);
  Reading temperature = failed;
  temperature.status = Status::ok;
  temperature.value = 40.0;
  EXPECT_TRUE(device_answered({temperature, processes}));
  EXPECT_TRUE(device_answered({processes}));  // nothing failed
}

TEST(Verdicts, AGpuWhoseDeviceFolderVanishesIsFaultedEverywhere) {
  const auto root = std::filesystem::temp_directory_path() / ("hipstack-vanish-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  std::filesystem::copy(capture_sys("real/lact/rx6900xt"), root / "sys", std::filesystem::copy_options::recursive);
  OpenOptions options;
  options.sysfs_root = (root / "sys").string();
  const System system = System::open(options);
  ASSERT_EQ(system.devices().size(), 1u);
  EXPECT_EQ(system.devices()[0].fault, "");
  EXPECT_EQ(system.health(0).findings.size() > 1, true);
  std::filesystem::remove_all(root / "sys/class/drm/card0/device");
  const auto devices = system.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_NE(devices[0].fault.find("the device is gone"), std::string::npos) << devices[0].fault;
  EXPECT_EQ(system.fault(0), devices[0].fault);
  for (const Reading& r : system.sample(0, everything())) {
    EXPECT_EQ(r.status, Status::error) << find_metric(r.id)->name;
    EXPECT_EQ(r.detail, devices[0].fault);
  }
  const HealthReport report = system.health(0);
  EXPECT_EQ(report.overall, Verdict::fail);
  EXPECT_EQ(verdict_of(report, "device.readable"), Verdict::fail);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace hipstack::smi
