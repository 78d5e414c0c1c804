// The health engine and the RAS readers: real captures (healthy: PASS, or WARN with a true reason),
// the constructed fault node (each planted fault named), bad-page parsing and the policy file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/amdgpu/amdgpu.hpp"
#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;

const HealthFinding* finding(const HealthReport& report, std::string_view check) {
  for (const HealthFinding& f : report.findings) {
    if (f.check == check && f.verdict != Verdict::pass) return &f;
  }
  for (const HealthFinding& f : report.findings) {
    if (f.check == check) return &f;
  }
  return nullptr;
}

TEST(BadPages, KernelFormatAndMalformedLines) {
  std::string error;
  const auto table = detail::amdgpu::parse_bad_pages("0x00001234 : 0x00001000 : R\n0x00abcdef : 0x00001000 : P\n0x1 : 0x1000 : F\n", error);
  ASSERT_TRUE(table) << error;
  ASSERT_EQ(table->pages.size(), 3u);
  EXPECT_EQ(table->pages[0].frame, 0x1234u);
  EXPECT_EQ(table->pages[0].size, 0x1000u);
  EXPECT_EQ(table->pages[0].state, "reserved");
  EXPECT_EQ(table->pages[1].state, "pending");
  EXPECT_EQ(table->pages[2].state, "failed");
  EXPECT_TRUE(detail::amdgpu::parse_bad_pages("", error)->pages.empty());
  EXPECT_FALSE(detail::amdgpu::parse_bad_pages("0x1 : 0x1000 : X\n", error));
  EXPECT_NE(error.find("0x1 : 0x1000 : X"), std::string::npos);
  EXPECT_FALSE(detail::amdgpu::parse_bad_pages("garbage\n", error));
}

TEST(HealthPolicyFile, KeysValuesAndErrorsNamingTheLine) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto good = dir / "hipstack-health-good.conf";
  std::ofstream(good) << "# thresholds\nthermal_margin = 8\ncorrectable_ecc = 50  # per driver load\n\n";
  const HealthPolicy policy = HealthPolicy::from_file(good.string());
  EXPECT_DOUBLE_EQ(policy.thermal_margin, 8);
  EXPECT_EQ(policy.correctable_ecc, 50);
  EXPECT_DOUBLE_EQ(policy.power_cap_share, HealthPolicy{}.power_cap_share);
  const auto bad = dir / "hipstack-health-bad.conf";
  std::ofstream(bad) << "thermal_margin = 8\nno_such_key = 1\n";
  try {
    (void)HealthPolicy::from_file(bad.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(":2: unknown key \"no_such_key\""), std::string::npos) << e.what();
  }
  std::ofstream(bad) << "correctable_ecc = -3\n";
  EXPECT_THROW((void)HealthPolicy::from_file(bad.string()), Error);
  EXPECT_THROW((void)HealthPolicy::from_file("/nonexistent/health.conf"), Error);
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

TEST(Health, HealthyRealCapturesPassOrWarnWithATrueReason) {
  for (const char* capture : {"real/lact/rx6900xt", "real/lact/rx7900xtx", "real/lact/phoenix", "real/lact/vega56",
                              "real/lact/rx580", "real/procfs-vega10", "constructed/mi300x-8gpu-spx-nps1"}) {
    SCOPED_TRACE(capture);
    const System system = open_capture(capture);
    for (const auto& d : system.devices()) {
      const HealthReport report = system.health(d.index);
      EXPECT_EQ(report.overall, Verdict::pass);
    }
  }
  // The R7 240 was recorded with its link at 5 GT/s x4 of 8 GT/s x8: a true WARN.
  const System system = open_capture("real/lact/r7-240");
  const HealthReport report = system.health(0);
  EXPECT_EQ(report.overall, Verdict::warn);
  const HealthFinding* link = finding(report, "pcie.link_degraded");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, Verdict::warn);
  EXPECT_EQ(link->reading, "5 GT/s x4");
  EXPECT_EQ(link->threshold, "max 8 GT/s x8");
  EXPECT_FALSE(link->remediation.empty());
}

TEST(Health, ReadingsAlreadySampledGiveTheSameReport) {
  const System system = open_capture("constructed/mi300x-8gpu-faults");
  SampleOptions all;
  all.identity = all.static_info = all.live = true;
  for (const auto& d : system.devices()) {
    const HealthReport read_again = system.health(d.index);
    const HealthReport given = system.health(d.index, system.sample(d.index, all));
    EXPECT_EQ(given.overall, read_again.overall);
    ASSERT_EQ(given.findings.size(), read_again.findings.size());
    for (std::size_t i = 0; i < given.findings.size(); ++i) {
      EXPECT_EQ(given.findings[i].check, read_again.findings[i].check);
      EXPECT_EQ(given.findings[i].verdict, read_again.findings[i].verdict);
      EXPECT_EQ(given.findings[i].reading, read_again.findings[i].reading);
    }
  }
}

TEST(Health, TopologyOnlyCapturesCannotBeChecked) {
  const System system = open_capture("real/k8s-device-plugin/topo-mi300-cpx");
  EXPECT_EQ(system.health(0).overall, Verdict::unknown);
}

TEST(Health, ThresholdsComeFromThePolicy) {
  const System system = open_capture("real/lact/rx580");  // 3 PCIe replays, edge 44 C of 94 C
  HealthPolicy strict;
  strict.pcie_replays = 3;
  strict.thermal_margin = 60;
  const HealthReport report = system.health(0, strict);
  EXPECT_EQ(finding(report, "pcie.replays")->verdict, Verdict::warn);
  EXPECT_EQ(finding(report, "thermal.temperature")->verdict, Verdict::warn);
}

// A copy of a bundled capture in a fresh temporary folder (root/sys), for tests that change files.
std::filesystem::path writable_copy(const std::string& capture, const std::string& tag) {
  const auto root = std::filesystem::temp_directory_path() / ("hipstack-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  std::filesystem::copy(std::string(HIPSTACK_CAPTURES_DIR) + "/" + capture + "/sys", root / "sys",
                        std::filesystem::copy_options::recursive);
  return root;
}

TEST(Health, XgmiLinkErrorsFailOrWarn) {
  // A copy of the 8-GPU node, with XGMI errors planted on two GPUs.
  const auto root = writable_copy("constructed/mi300x-8gpu-faults", "xgmi");
  std::ofstream(root / "sys/class/drm/card16/device/ras/xgmi_wafl_err_count") << "ue: 2\nce: 5\nde: 0\n";
  std::ofstream(root / "sys/class/drm/card24/device/ras/xgmi_wafl_err_count") << "ue: 0\nce: 1500\nde: 0\n";
  OpenOptions options;
  options.sysfs_root = (root / "sys").string();
  options.enable_nvml = false;
  const System system = System::open(options);
  const HealthReport failing = system.health(2);
  ASSERT_NE(finding(failing, "xgmi.errors"), nullptr);
  EXPECT_EQ(finding(failing, "xgmi.errors")->verdict, Verdict::fail);
  EXPECT_EQ(finding(failing, "xgmi.errors")->reading, "2 uncorrectable");
  EXPECT_FALSE(finding(failing, "xgmi.errors")->remediation.empty());
  EXPECT_EQ(failing.overall, Verdict::fail);
  EXPECT_EQ(finding(system.health(3), "xgmi.errors")->verdict, Verdict::warn);
  EXPECT_EQ(finding(system.health(4), "xgmi.errors")->verdict, Verdict::pass);
  EXPECT_EQ(finding(system.health(0), "xgmi.errors"), nullptr);  // its RAS blocks cannot be read
  std::filesystem::remove_all(root);
}

TEST(Health, FirmwareDifferingFromTheNodesOtherGpusWarns) {
  const auto root = writable_copy("constructed/mi300x-8gpu-spx-nps1", "firmware");
  OpenOptions options;
  options.sysfs_root = (root / "sys").string();
  options.enable_nvml = false;
  {
    const System same = System::open(options);
    const HealthReport report = same.health(3);
    const HealthFinding* f = finding(report, "firmware.consistent");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->verdict, Verdict::pass);
    EXPECT_EQ(f->threshold, "same as 7 other GPU(s) of this model");
  }
  std::ofstream(root / "sys/class/drm/card24/device/vbios_version") << "113-M3000100-999\n";
  const System system = System::open(options);
  const HealthReport report = system.health(3);
  const HealthFinding* odd = finding(report, "firmware.consistent");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->verdict, Verdict::warn);
  EXPECT_EQ(odd->reading, "vbios 113-M3000100-999");
  EXPECT_NE(odd->threshold.find("GPU 0 (0000:05:00.0) has "), std::string::npos) << odd->threshold;
  EXPECT_FALSE(odd->remediation.empty());
  const HealthReport first = system.health(0);
  ASSERT_NE(finding(first, "firmware.consistent"), nullptr);
  EXPECT_EQ(finding(first, "firmware.consistent")->verdict, Verdict::warn);  // it differs from GPU 3
  // A single GPU has no peers: no finding.
  const HealthReport single = open_capture("real/lact/rx6900xt").health(0);
  EXPECT_EQ(finding(single, "firmware.consistent"), nullptr);
  std::filesystem::remove_all(root);
}

TEST(Health, AGpuWithoutItsKfdNodeFailsComputeInit) {
  const auto root = writable_copy("constructed/mi300x-8gpu-spx-nps1", "kfd");
  OpenOptions options;
  options.sysfs_root = (root / "sys").string();
  options.enable_nvml = false;
  // The KFD node of GPU 3 (0000:65:00.0) goes, as when KFD fails to bring one GPU up.
  const auto nodes = root / "sys/class/kfd/kfd/topology/nodes";
  bool removed = false;
  for (const auto& node : std::filesystem::directory_iterator(nodes)) {
    std::ifstream in(node.path() / "properties");
    std::string key;
    std::uint64_t value = 0;
    while (in >> key >> value) {
      if (key == "location_id" && value == ((0x65u << 8) | 0u)) removed = true;
    }
    if (removed) {
      std::filesystem::remove_all(node.path());
      break;
    }
  }
  ASSERT_TRUE(removed);
  const System system = System::open(options);
  const auto devices = system.devices();
  std::uint32_t index = 0;
  for (const auto& d : devices) {
    if (d.bdf == "0000:65:00.0") index = d.index;
  }
  const HealthReport broken = system.health(index);
  const HealthFinding* f = finding(broken, "driver.compute_init");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->verdict, Verdict::fail);
  EXPECT_FALSE(f->remediation.empty());
  EXPECT_EQ(broken.overall, Verdict::fail);
  const HealthReport fine = system.health(index == 0 ? 1 : 0);
  ASSERT_NE(finding(fine, "driver.compute_init"), nullptr);
  EXPECT_EQ(finding(fine, "driver.compute_init")->verdict, Verdict::pass);
  // A capture without any KFD recording cannot tell: no finding.
  const HealthReport no_kfd = open_capture("real/lact/rx6900xt").health(0);
  EXPECT_EQ(finding(no_kfd, "driver.compute_init"), nullptr);
  std::filesystem::remove_all(root);
}

class FaultNode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = std::string(HIPSTACK_CAPTURES_DIR) + "/constructed/mi300x-8gpu-faults";
    if (!std::filesystem::exists(dir + "/expected.json")) return;
    std::ifstream in(dir + "/expected.json");
    expected_ = nlohmann::json::parse(in);
  }
  static nlohmann::json expected_;
};
nlohmann::json FaultNode::expected_;

TEST_F(FaultNode, EachPlantedFaultIsNamed) {
  ASSERT_FALSE(expected_.is_null()) << "the bundled capture constructed/mi300x-8gpu-faults/expected.json is missing";
  const System system = open_capture("constructed/mi300x-8gpu-faults");
  std::size_t checked = 0;
  for (const auto& d : system.devices()) {
    for (const auto& [key, card] : expected_.items()) {
      if (!card.is_object() || !card.contains("bdf") || card["bdf"] != d.bdf || !card.contains("expected_health")) continue;
      SCOPED_TRACE(d.bdf + " " + card.value("fault", ""));
      const HealthReport report = system.health(d.index);
      const auto& want = card["expected_health"];
      EXPECT_EQ(std::string(verdict_name(report.overall)), want["overall"].get<std::string>());
      for (const char* list : {"failing_checks", "warning_checks", "unknown_checks"}) {
        if (!want.contains(list)) continue;
        const Verdict verdict = std::string(list) == "failing_checks" ? Verdict::fail
                                : std::string(list) == "warning_checks" ? Verdict::warn
                                                                        : Verdict::unknown;
        for (const auto& check : want[list]) {
          const HealthFinding* f = finding(report, check.get<std::string>());
          ASSERT_NE(f, nullptr) << check;
          EXPECT_EQ(f->verdict, verdict) << check << ": " << f->message;
          if (verdict != Verdict::unknown) {
            EXPECT_FALSE(f->remediation.empty()) << check;
          }
        }
      }
      // Nothing else may fail.
      for (const HealthFinding& f : report.findings) {
        if (f.verdict != Verdict::fail) continue;
        bool planted = false;
        for (const auto& check : want.value("failing_checks", nlohmann::json::array())) planted = planted || check == f.check;
        EXPECT_TRUE(planted) << "unexpected FAIL " << f.check << ": " << f.message;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8u);
}

TEST_F(FaultNode, RasCountsAndBadPagesMatchTheFiles) {
  ASSERT_FALSE(expected_.is_null()) << "the bundled capture constructed/mi300x-8gpu-faults/expected.json is missing";
  const System system = open_capture("constructed/mi300x-8gpu-faults");
  for (const auto& d : system.devices()) {
    for (const auto& [key, card] : expected_.items()) {
      if (!card.is_object() || !card.contains("bdf") || card["bdf"] != d.bdf || !card.contains("ras")) continue;
      SCOPED_TRACE(d.bdf);
      const auto r = system.sample(d.index, everything());
      for (const auto& [block, counts] : card["ras"].items()) {
        if (!counts.is_object()) continue;
        EXPECT_DOUBLE_EQ(number_of(r, "ras_uncorrectable", block), counts["ue"].get<double>()) << block;
        EXPECT_DOUBLE_EQ(number_of(r, "ras_correctable", block), counts["ce"].get<double>()) << block;
      }
      const auto pages = system.bad_pages(d.index);
      ASSERT_EQ(pages.size(), card["bad_pages"].size());
      for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(pages[i].state, card["bad_pages"][i]["state"]);
      EXPECT_DOUBLE_EQ(number_of(r, "bad_page_threshold"), card["bad_page_threshold"].get<double>());
    }
  }
}

}  // namespace
}  // namespace hipstack::smi
