// The XID catalogue and the advice made from it (hipstack/gpu_errors.hpp, docs/errors.md).
#include <gtest/gtest.h>
#include <hipstack/cper.hpp>
#include <hipstack/events.hpp>
#include <hipstack/gpu_errors.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>

namespace smi = hipstack::smi;
using smi::ErrorAction;
using smi::Verdict;

namespace {

TEST(XidCatalogue, NamesWhatNvidiaPublishes) {
  const smi::XidInfo* off_bus = smi::find_xid(79);
  ASSERT_NE(off_bus, nullptr);
  EXPECT_EQ(off_bus->mnemonic, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
  EXPECT_EQ(off_bus->description, "GPU has fallen off the bus");
  EXPECT_EQ(off_bus->immediate, "RESTART_BM");
  EXPECT_EQ(off_bus->investigatory, "CONTACT_SUPPORT");
  EXPECT_EQ(off_bus->applies, smi::xid_a100 | smi::xid_h100 | smi::xid_b100 | smi::xid_gb200);
  EXPECT_EQ(smi::find_xid(9999), nullptr);
  EXPECT_EQ(smi::find_xid(0), nullptr);
  std::set<std::uint32_t> codes;
  for (const smi::XidInfo& x : smi::xid_catalogue()) {
    EXPECT_TRUE(codes.insert(x.code).second) << x.code;
    EXPECT_EQ(smi::find_xid(x.code), &x) << x.code;
    EXPECT_FALSE(x.mnemonic.empty()) << x.code;
    EXPECT_FALSE(x.description.empty()) << x.code;
    // A bucket the catalogue names maps to an action; only an empty one or a workflow that needs
    // the kernel log's subcodes is unknown.
    if (!x.immediate.empty() && x.immediate != "WORKFLOW_NVLINK5_ERR" && x.immediate != "CHECK_UVM") {
      EXPECT_NE(smi::bucket_action(x.immediate), ErrorAction::unknown) << x.code;
    }
  }
  // The codes operators meet most (and the issue names) are all there.
  for (const std::uint32_t code : {8U, 13U, 31U, 43U, 45U, 48U, 62U, 63U, 64U, 74U, 79U, 92U, 94U, 95U, 109U, 119U, 120U, 154U}) {
    EXPECT_TRUE(codes.contains(code)) << code;
  }
}

// One XID of each action class, as the issue and NVIDIA's catalogue name them.
TEST(XidAdvice, EachActionClass) {
  struct Case {
    std::uint32_t code;
    ErrorAction action;
    Verdict verdict;
  };
  const Case cases[] = {
      {13, ErrorAction::restart_app, Verdict::pass},   // the application's own fault
      {31, ErrorAction::restart_app, Verdict::pass},
      {43, ErrorAction::none, Verdict::pass},
      {63, ErrorAction::none, Verdict::pass},          // a row remapped: takes effect at the next reset
      {94, ErrorAction::restart_app, Verdict::warn},   // contained ECC: the hardware's, reset when convenient
      {45, ErrorAction::see_other, Verdict::pass},
      {48, ErrorAction::reset_gpu, Verdict::fail},
      {64, ErrorAction::reset_gpu, Verdict::fail},
      {95, ErrorAction::reset_gpu, Verdict::fail},
      {79, ErrorAction::reboot_node, Verdict::fail},
      {54, ErrorAction::check_hardware, Verdict::fail},
      {56, ErrorAction::contact_support, Verdict::fail},  // "Unused" on these GPUs: seen anyway, a case for support
      {144, ErrorAction::unknown, Verdict::warn},      // NVLink5: the subcode decides, NVML does not carry it
      {171, ErrorAction::unknown, Verdict::warn},      // no bucket in the catalogue
  };
  for (const Case& c : cases) {
    const smi::XidAdvice advice = smi::xid_advice(c.code);
    ASSERT_NE(advice.info, nullptr) << c.code;
    EXPECT_EQ(advice.action, c.action) << c.code << ": " << smi::error_action_name(advice.action);
    EXPECT_EQ(advice.verdict, c.verdict) << c.code;
    EXPECT_FALSE(advice.why.empty()) << c.code;
  }
}

TEST(XidAdvice, UnknownCodesAreUnknownNeverGuessed) {
  const smi::XidAdvice advice = smi::xid_advice(4242, 5, true);
  EXPECT_EQ(advice.info, nullptr);
  EXPECT_EQ(advice.action, ErrorAction::unknown);
  EXPECT_EQ(advice.verdict, Verdict::warn);
  EXPECT_EQ(advice.why, "not in NVIDIA's XID catalogue");
}

TEST(XidAdvice, RecurrenceAndRemappingEscalate) {
  // XID 48: a reset alone, drain and reset with a row remapping, field diagnostics when it recurs.
  EXPECT_EQ(smi::xid_advice(48, 1, true).action, ErrorAction::drain_and_reset);
  EXPECT_EQ(smi::xid_advice(48, 2).action, ErrorAction::contact_support);
  // A remapping failure or a GPU off the bus that recurs: NVIDIA's investigatory CONTACT_SUPPORT.
  EXPECT_EQ(smi::xid_advice(64, 2).action, ErrorAction::contact_support);
  EXPECT_EQ(smi::xid_advice(79, 3).action, ErrorAction::contact_support);
  // An investigatory action weaker than a reset never replaces the immediate one.
  EXPECT_EQ(smi::xid_advice(95, 4).action, ErrorAction::reset_gpu);
  EXPECT_EQ(smi::xid_advice(13, 9).action, ErrorAction::restart_app);
  // The application's own faults stay the application's however often (NVIDIA's investigatory
  // CONTACT_SUPPORT for 43 is for someone looking into it, not a node action).
  EXPECT_EQ(smi::xid_advice(43, 5).action, ErrorAction::none);
  EXPECT_EQ(smi::xid_advice(43, 5).verdict, Verdict::pass);
  // A hardware fault NVIDIA ignores once is a support case when it repeats (high SBE rate).
  EXPECT_EQ(smi::xid_advice(92, 1).action, ErrorAction::none);
  EXPECT_EQ(smi::xid_advice(92, 2).action, ErrorAction::contact_support);
  // 8 recurring: NVIDIA says contact support.
  EXPECT_EQ(smi::xid_advice(8, 2).action, ErrorAction::contact_support);
  EXPECT_EQ(smi::xid_advice(8, 1).action, ErrorAction::restart_app);
}

TEST(ErrorActions, NamesRoundTrip) {
  for (int a = 0; a <= static_cast<int>(ErrorAction::unknown); ++a) {
    const auto action = static_cast<ErrorAction>(a);
    const std::string_view name = smi::error_action_name(action);
    EXPECT_EQ(smi::find_error_action(name), action) << name;
    EXPECT_FALSE(smi::error_action_help(action).empty()) << name;
  }
  EXPECT_FALSE(smi::find_error_action("reboot").has_value());
  EXPECT_EQ(smi::bucket_action("NOT_A_BUCKET"), ErrorAction::unknown);
  EXPECT_EQ(smi::bucket_action(""), ErrorAction::unknown);
  EXPECT_EQ(smi::bucket_action("WORKFLOW_XID_48", true), ErrorAction::contact_support);
  EXPECT_EQ(smi::error_fault_name(smi::ErrorFault::hardware), "hardware");
}

}  // namespace

namespace {

using Clock = std::chrono::system_clock;
constexpr std::chrono::seconds kDay{86400};
const Clock::time_point kNow = Clock::time_point(std::chrono::seconds(1796652000));  // the test's own clock

smi::ErrorOccurrence xid(std::uint32_t code, std::chrono::seconds ago) {
  return {kNow - ago, smi::ErrorSource::xid, code, ErrorAction::unknown, ""};
}
smi::ErrorOccurrence cper(smi::CperSeverity severity, ErrorAction action, std::chrono::seconds ago) {
  return {kNow - ago, smi::ErrorSource::cper, static_cast<std::uint32_t>(severity), action, "CPER fatal: crashdump OAM0: fatal"};
}

TEST(RecentErrors, NoneIsAPass) {
  const smi::HealthFinding f = smi::recent_errors_finding({}, kNow, kDay);
  EXPECT_EQ(f.check, "errors.recent");
  EXPECT_EQ(f.verdict, Verdict::pass);
  EXPECT_EQ(f.reading, "none");
  EXPECT_EQ(f.threshold, "errors younger than 1 d");
}

// Each class reaches health with its action; the clock is the test's, so ageing is exact.
TEST(RecentErrors, EachClassAndItsAgeing) {
  const std::vector<smi::ErrorOccurrence> off_bus{xid(79, std::chrono::minutes(30))};
  smi::HealthFinding f = smi::recent_errors_finding(off_bus, kNow, kDay);
  EXPECT_EQ(f.verdict, Verdict::fail);
  EXPECT_EQ(f.reading, "XID 79 x1");
  EXPECT_NE(f.message.find("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("action: reboot_node"), std::string::npos) << f.message;
  EXPECT_EQ(f.remediation, "drain the node and reboot it");
  // A day later it no longer counts: the drained node may resume.
  EXPECT_EQ(smi::recent_errors_finding(off_bus, kNow + kDay, kDay).verdict, Verdict::pass);
  EXPECT_EQ(smi::recent_errors_finding(off_bus, kNow + kDay - std::chrono::minutes(31), kDay).verdict, Verdict::fail);
  // The application's own fault: no action on the node.
  EXPECT_EQ(smi::recent_errors_finding(std::vector{xid(13, std::chrono::seconds(5))}, kNow, kDay).verdict, Verdict::pass);
  // Contained ECC: restart the application, warn (the hardware's).
  EXPECT_EQ(smi::recent_errors_finding(std::vector{xid(94, std::chrono::seconds(5))}, kNow, kDay).verdict, Verdict::warn);
  // XID 48 with a row remapping in the window: drain and reset; 48 twice: a support case.
  f = smi::recent_errors_finding(std::vector{xid(48, std::chrono::hours(2)), xid(63, std::chrono::hours(2))}, kNow, kDay);
  EXPECT_EQ(f.verdict, Verdict::fail);
  EXPECT_NE(f.message.find("action: drain_and_reset"), std::string::npos) << f.message;
  f = smi::recent_errors_finding(std::vector{xid(48, std::chrono::hours(20)), xid(48, std::chrono::hours(1))}, kNow, kDay);
  EXPECT_EQ(f.reading, "XID 48 x2");
  EXPECT_NE(f.message.find("action: contact_support"), std::string::npos) << f.message;
  // ... unless the first has aged out.
  f = smi::recent_errors_finding(std::vector{xid(48, std::chrono::hours(30)), xid(48, std::chrono::hours(1))}, kNow, kDay);
  EXPECT_NE(f.message.find("action: reset_gpu"), std::string::npos) << f.message;
  // An unknown code: WARN, never guessed.
  f = smi::recent_errors_finding(std::vector{xid(4242, std::chrono::seconds(5))}, kNow, kDay);
  EXPECT_EQ(f.verdict, Verdict::warn);
  EXPECT_NE(f.message.find("not in NVIDIA's XID catalogue"), std::string::npos) << f.message;
  // A time ahead of the clock is not "recent".
  EXPECT_EQ(smi::recent_errors_finding(std::vector{xid(79, std::chrono::seconds(-60))}, kNow, kDay).verdict, Verdict::pass);
}

TEST(RecentErrors, CperSeverities) {
  using S = smi::CperSeverity;
  const auto one = [](smi::ErrorOccurrence e) { return smi::recent_errors_finding(std::vector{std::move(e)}, kNow, kDay); };
  EXPECT_EQ(one(cper(S::fatal, ErrorAction::reset_gpu, std::chrono::hours(1))).verdict, Verdict::fail);
  EXPECT_EQ(one(cper(S::fatal, ErrorAction::contact_support, std::chrono::hours(1))).verdict, Verdict::fail);
  EXPECT_EQ(one(cper(S::recoverable, ErrorAction::restart_app, std::chrono::hours(1))).verdict, Verdict::warn);
  EXPECT_EQ(one(cper(S::corrected, ErrorAction::none, std::chrono::hours(1))).verdict, Verdict::pass);
  EXPECT_EQ(one(cper(S::fatal, ErrorAction::reset_gpu, std::chrono::hours(25))).verdict, Verdict::pass) << "aged out";
  const smi::HealthFinding both = smi::recent_errors_finding(
      std::vector{cper(S::corrected, ErrorAction::none, std::chrono::hours(1)), cper(S::fatal, ErrorAction::reset_gpu, std::chrono::hours(2)),
                  xid(13, std::chrono::hours(1))},
      kNow, kDay);
  EXPECT_EQ(both.verdict, Verdict::fail);
  EXPECT_EQ(both.reading, "XID 13 x1, CPER fatal x1, CPER corrected x1");
  EXPECT_EQ(both.remediation, "drain the GPU's work and reset it");
}

// No error seen vouches for nothing unless the GPU's errors could be read.
TEST(RecentErrors, UnreadSourcesAreUnknownNeverAPass) {
  smi::ErrorSources none;
  none.cper_unreadable = "/sys/kernel/debug/dri/0/amdgpu_ring_cper: Permission denied";
  smi::HealthFinding f = smi::errors_finding({}, kNow, kDay, none);
  EXPECT_EQ(f.verdict, Verdict::unknown);
  EXPECT_EQ(f.message, "its errors cannot be read: CPER: /sys/kernel/debug/dri/0/amdgpu_ring_cper: Permission denied");
  EXPECT_FALSE(smi::finding_action(f)) << "an unknown finding names no action";
  smi::ErrorSources read;
  read.xids_read = true;
  EXPECT_EQ(smi::errors_finding({}, kNow, kDay, read).verdict, Verdict::pass);
  // What was seen is judged whatever else could not be read.
  f = smi::errors_finding(std::vector{xid(79, std::chrono::minutes(1))}, kNow, kDay, none);
  EXPECT_EQ(f.verdict, Verdict::fail);
  EXPECT_EQ(smi::finding_action(f), ErrorAction::reboot_node);
}

// errors.recent's pass is no sign of a healthy GPU; its fail or warn decides like any check's.
TEST(RecentErrors, OverallVerdict) {
  smi::HealthReport report;
  report.findings.push_back({"errors.recent", Verdict::pass, "none", "", "", ""});
  report.findings.push_back({"readings.plausible", Verdict::pass, "", "", "", ""});
  smi::settle_overall(report);
  EXPECT_EQ(report.overall, Verdict::unknown);
  report.findings.push_back({"thermal.temperature", Verdict::pass, "", "", "", ""});
  smi::settle_overall(report);
  EXPECT_EQ(report.overall, Verdict::pass);
  report.findings.front().verdict = Verdict::warn;
  smi::settle_overall(report);
  EXPECT_EQ(report.overall, Verdict::warn);
  report.findings.front().verdict = Verdict::fail;
  smi::settle_overall(report);
  EXPECT_EQ(report.overall, Verdict::fail);
}

// A CPER record as an event: its severity, its words and the action WatchEvents and D-Bus carry.
TEST(RecentErrors, CperEventsCarryTheirAction) {
  smi::DeviceSummary gpu;
  gpu.index = 3;
  gpu.uuid = "GPU-3";
  const smi::Event e = smi::cper_error_event(cper(smi::CperSeverity::fatal, ErrorAction::reset_gpu, std::chrono::seconds(1)), gpu);
  EXPECT_EQ(e.kind, "cper");
  EXPECT_EQ(e.metric, "cper_records[fatal]");
  EXPECT_EQ(e.after, "fatal");
  EXPECT_EQ(e.device.uuid, "GPU-3");
  EXPECT_EQ(e.message, "CPER fatal: crashdump OAM0: fatal; action: reset_gpu");
  EXPECT_EQ(smi::event_action(e), ErrorAction::reset_gpu);
  const auto kinds = smi::event_kinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "cper"), kinds.end());
}

}  // namespace
