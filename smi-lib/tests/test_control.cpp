// The guarded mutation path on a writable copy of the constructed MI300X capture (no FUSE): every
// refusal says why, names the device, and writes nothing; dry runs write nothing; the kernel's
// errno becomes the right reason; every write reaches the audit sink. The driver's side (partitions
// re-created, NPS pending until reload, EBUSY/EINVAL from the store) is tested on the emulator by
// tests/emulator/test_partitions.py.
#include <gtest/gtest.h>
#include <hipstack/smi.h>
#include <hipstack/smi.hpp>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "backends/backend.hpp"
#include "capture_helpers.hpp"
#include "control.hpp"
#include "fs_view.hpp"

namespace hipstack::smi {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCard2 = "/sys/class/drm/card16/device";  // GPU 2: 0000:47:00.0, no processes
constexpr const char* kCard4 = "/sys/class/drm/card32/device";  // GPU 4: 0000:85:00.0, pid 48213 on it

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A private copy of the SPX capture; the tests compare every file after each call.
class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // tmpfs when there is one: copying the capture to a disk costs a second per test here.
    const fs::path scratch = fs::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                               : fs::temp_directory_path();
    root_ = scratch / ("hipstack-control-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    const fs::path source = fs::path(HIPSTACK_CAPTURES_DIR) / "constructed/mi300x-8gpu-spx-nps1";
    fs::copy(source / "sys", root_ / "sys", fs::copy_options::recursive);
    fs::copy(source / "proc", root_ / "proc", fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(root_); }

  System open() {
    OpenOptions options;
    options.sysfs_root = (root_ / "sys").string();
    options.enable_nvml = false;
    options.audit = [this](const AuditRecord& r) { audit_.push_back(r); };
    return System::open(options);
  }
  std::string file(const std::string& system_path) const { return slurp(root_ / system_path.substr(1)); }
  // Every file of the copy, for "nothing was written" checks.
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> all;
    for (const auto& entry : fs::recursive_directory_iterator(root_ / "sys/class/drm")) {
      if (entry.is_regular_file()) all[entry.path().string()] = slurp(entry.path());
    }
    return all;
  }

  fs::path root_;
  std::vector<AuditRecord> audit_;
};

TEST_F(ControlTest, DryRunPlansTheWriteAndWritesNothing) {
  System system = open();
  const auto before = snapshot();
  ControlOptions dry;
  dry.dry_run = true;
  const ControlResult r = system.set_compute_partition(2, "cpx", dry);
  EXPECT_EQ(r.outcome, ControlOutcome::planned) << r.message;
  EXPECT_EQ(r.action, "compute partition SPX -> CPX");
  ASSERT_EQ(r.writes.size(), 1u);
  EXPECT_EQ(r.writes[0].path, std::string(kCard2) + "/current_compute_partition");
  EXPECT_EQ(r.writes[0].host_path, (root_ / "sys/class/drm/card16/device/current_compute_partition").string());
  EXPECT_EQ(r.writes[0].value, "CPX");
  EXPECT_FALSE(r.writes[0].done);
  const ControlResult cap = system.set_power_cap(2, 500, dry);
  EXPECT_EQ(cap.outcome, ControlOutcome::planned) << cap.message;
  ASSERT_EQ(cap.writes.size(), 1u);
  EXPECT_EQ(cap.writes[0].value, "500000000");  // microwatts
  EXPECT_EQ(snapshot(), before);
  EXPECT_TRUE(audit_.empty());
}

TEST_F(ControlTest, InvalidAndUnavailableModesAreRefusedWithoutWriting) {
  System system = open();
  const auto before = snapshot();
  const ControlResult unknown = system.set_compute_partition(2, "XPX");
  EXPECT_EQ(unknown.outcome, ControlOutcome::refused);
  EXPECT_EQ(unknown.reason, RefusalReason::invalid_value);
  EXPECT_NE(unknown.message.find("\"XPX\" is not a compute partition mode"), std::string::npos) << unknown.message;
  EXPECT_NE(unknown.message.find("GPU 2 (0000:47:00.0)"), std::string::npos) << unknown.message;
  const ControlResult tpx = system.set_compute_partition(2, "TPX");
  EXPECT_EQ(tpx.reason, RefusalReason::invalid_value);
  EXPECT_NE(tpx.message.find("TPX is not available on this GPU (available: SPX, DPX, QPX, CPX"), std::string::npos) << tpx.message;
  const ControlResult nps = system.set_memory_partition(2, "nps2");
  EXPECT_EQ(nps.reason, RefusalReason::invalid_value);
  EXPECT_NE(nps.message.find("NPS2 is not available"), std::string::npos) << nps.message;
  const ControlResult cap = system.set_power_cap(2, 900);
  EXPECT_EQ(cap.reason, RefusalReason::invalid_value);
  EXPECT_NE(cap.message.find("900 W is outside the allowed range 0 W..750 W"), std::string::npos) << cap.message;
  // Inside 0..750 W but rounding to 0 µW: refused before any plan (it used to plan a write of "0").
  const ControlResult tiny = system.set_power_cap(2, 1e-300);
  EXPECT_EQ(tiny.reason, RefusalReason::invalid_value);
  EXPECT_NE(tiny.message.find("is not a power cap"), std::string::npos) << tiny.message;
  const ControlResult level = system.set_performance_level(2, "turbo");
  EXPECT_EQ(level.reason, RefusalReason::invalid_value);
  EXPECT_EQ(snapshot(), before);
  // Refusals are audited too (without a path: nothing was written).
  ASSERT_EQ(audit_.size(), 6u);
  EXPECT_TRUE(audit_[0].path.empty());
  EXPECT_EQ(audit_[0].result.rfind("refused: invalid_value", 0), 0u) << audit_[0].result;
}

TEST_F(ControlTest, BusyGpuIsRefusedNamingTheProcesses) {
  System system = open();
  const auto before = snapshot();
  const ControlResult r = system.set_compute_partition(4, "CPX");
  EXPECT_EQ(r.outcome, ControlOutcome::refused);
  EXPECT_EQ(r.reason, RefusalReason::device_busy);
  EXPECT_EQ(r.error_code, EBUSY);
  EXPECT_NE(r.message.find("48213 (python3)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("--force"), std::string::npos) << r.message;
  const ControlResult reset = system.reset_device(4);
  EXPECT_EQ(reset.reason, RefusalReason::not_supported);  // the capture has no PCI reset attribute
  EXPECT_EQ(snapshot(), before);
}

TEST_F(ControlTest, VirtualFunctionIsRefused) {
  std::ofstream(root_ / "sys/class/drm/card16/device/physfn") << "";
  System system = open();
  const auto before = snapshot();
  const ControlResult r = system.set_compute_partition(2, "CPX");
  EXPECT_EQ(r.reason, RefusalReason::virtual_function);
  EXPECT_NE(r.message.find("SR-IOV virtual function"), std::string::npos) << r.message;
  EXPECT_EQ(snapshot(), before);
}

TEST_F(ControlTest, NothingToDoWhenAlreadyInTheMode) {
  System system = open();
  const ControlResult r = system.set_compute_partition(2, "spx");
  EXPECT_EQ(r.outcome, ControlOutcome::applied);
  EXPECT_TRUE(r.writes.empty());
  EXPECT_NE(r.message.find("already in SPX"), std::string::npos) << r.message;
}

TEST_F(ControlTest, AppliedWritesAreAuditedAndWaitedFor) {
  System system = open();
  const ControlResult cap = system.set_power_cap(2, 500);
  EXPECT_EQ(cap.outcome, ControlOutcome::applied) << cap.message;
  EXPECT_EQ(file(std::string(kCard2) + "/hwmon/hwmon4/power1_cap"), "500000000");
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(audit_[0].path, (root_ / "sys/class/drm/card16/device/hwmon/hwmon4/power1_cap").string());
  EXPECT_EQ(audit_[0].value, "500000000");
  EXPECT_EQ(audit_[0].result, "ok");
  EXPECT_EQ(audit_[0].device, 2u);
  EXPECT_EQ(audit_[0].bdf, "0000:47:00.0");
  // A plain copy has no driver: the partition write lands but no new KFD nodes appear.
  ControlOptions quick;
  quick.settle_timeout_ms = 100;
  const ControlResult cpx = system.set_compute_partition(2, "CPX", quick);
  EXPECT_EQ(cpx.outcome, ControlOutcome::failed);
  EXPECT_EQ(cpx.reason, RefusalReason::timed_out);
  EXPECT_NE(cpx.message.find("did not show the new partitions within 100 ms"), std::string::npos) << cpx.message;
  EXPECT_FALSE(cpx.next_step.empty());
  EXPECT_EQ(system.partitions(2).size(), 1u);
}

TEST_F(ControlTest, ReadersOnOtherThreadsSurviveARediscovery) {
  System system = open();
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop) {
      for (const DeviceSummary& d : system.devices()) {
        EXPECT_EQ(system.partitions(d.index).size(), d.partition_count);
        (void)system.sample(d.index);
      }
      ++reads;
    }
  });
  ControlOptions quick;
  quick.settle_timeout_ms = 100;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(system.set_power_cap(2, 400 + i).outcome, ControlOutcome::applied);
    // Written, never settled (no driver), then rediscovered: the device list is rebuilt under the readers.
    (void)system.set_compute_partition(3, i % 2 == 0 ? "DPX" : "SPX", quick);
  }
  while (reads < 2) std::this_thread::yield();
  stop = true;
  reader.join();
  EXPECT_EQ(system.devices().size(), 8u);
}

// A view that lets a test play the kernel: fixed errnos for reads or writes, or writes that vanish.
class KernelFs final : public detail::FsView {
 public:
  explicit KernelFs(const std::string& sys) : real_(sys, "/nonexistent", "/nonexistent") {}
  std::map<std::string, int> read_errors;  // path suffix -> errno
  int write_error = 0;
  bool swallow_writes = false;
  std::vector<std::string> written;

  detail::FileText read_text(const std::string& path) const override {
    for (const auto& [suffix, e] : read_errors) {
      if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) return {e, {}};
    }
    return real_.read_text(path);
  }
  detail::FileBytes read_bytes(const std::string& path, std::size_t max) const override { return real_.read_bytes(path, max); }
  std::vector<std::string> list(const std::string& path) const override { return real_.list(path); }
  bool exists(const std::string& path) const override { return real_.exists(path); }
  std::string link_target(const std::string& path) const override { return real_.link_target(path); }
  std::string host_path(const std::string& path) const override { return real_.host_path(path); }
  bool recorded() const override { return false; }  // it plays the running kernel
  int write_text(const std::string& path, std::string_view text) const override {
    if (write_error != 0) return write_error;
    written_log().push_back(path + "=" + std::string(text));
    return swallow_writes ? 0 : real_.write_text(path, text);
  }
  std::vector<std::string>& written_log() const { return log_; }

 private:
  detail::RootedFs real_;
  mutable std::vector<std::string> log_;
};

class GuardedPathTest : public ControlTest {
 protected:
  ControlResult run(KernelFs& fs, std::size_t gpu, detail::ControlRequest request, detail::Actor actor = {0, 1}) {
    detail::BackendProbe probe = detail::probe_amdgpu(fs);
    EXPECT_NE(probe.backend, nullptr) << probe.reason;
    DeviceSummary summary = probe.backend->summary(gpu);
    summary.index = static_cast<std::uint32_t>(gpu);
    return detail::guarded_control(fs, *probe.backend, gpu, summary, request, ControlOptions{}, actor,
                                   [this](const AuditRecord& r) { audit_.push_back(r); });
  }
  static detail::ControlRequest compute(std::string mode) {
    detail::ControlRequest r;
    r.kind = detail::ControlRequest::Kind::compute_partition;
    r.text = std::move(mode);
    return r;
  }
};

TEST_F(GuardedPathTest, NonRootIsRefusedBeforeAnyWrite) {
  KernelFs fs((root_ / "sys").string());
  const ControlResult r = run(fs, 2, compute("CPX"), {65534, 1});
  EXPECT_EQ(r.outcome, ControlOutcome::refused);
  EXPECT_EQ(r.reason, RefusalReason::needs_root);
  EXPECT_EQ(r.message.find("GPU 2 (0000:47:00.0): needs root"), 0u) << r.message;
  EXPECT_TRUE(fs.written_log().empty());
  ASSERT_EQ(audit_.size(), 1u);
  EXPECT_EQ(audit_[0].uid, 65534u);
}

TEST_F(GuardedPathTest, KernelPermissionErrorsMeanNeedsRoot) {
  KernelFs fs((root_ / "sys").string());
  fs.write_error = EACCES;
  const ControlResult r = run(fs, 2, compute("CPX"));
  EXPECT_EQ(r.outcome, ControlOutcome::refused);
  EXPECT_EQ(r.reason, RefusalReason::needs_root);
  EXPECT_EQ(r.error_code, EACCES);
  EXPECT_NE(r.message.find("needs root: the kernel refused the write"), std::string::npos) << r.message;
  EXPECT_EQ(file(std::string(kCard2) + "/current_compute_partition"), "SPX\n");
  // EPERM for root, with the power-management files readable: a missing capability, not a reset.
  fs.write_error = EPERM;
  const ControlResult eperm = run(fs, 2, compute("CPX"));
  EXPECT_EQ(eperm.reason, RefusalReason::needs_root);
  EXPECT_NE(eperm.message.find("CAP_SYS_ADMIN"), std::string::npos) << eperm.message;
}

TEST_F(GuardedPathTest, DriverErrnosBecomeReasons) {
  KernelFs fs((root_ / "sys").string());
  fs.write_error = EBUSY;
  EXPECT_EQ(run(fs, 2, compute("CPX")).reason, RefusalReason::device_busy);
  fs.write_error = EINVAL;
  EXPECT_EQ(run(fs, 2, compute("CPX")).reason, RefusalReason::invalid_value);
  fs.write_error = EIO;
  EXPECT_EQ(run(fs, 2, compute("CPX")).reason, RefusalReason::driver_rejected);
}

TEST_F(GuardedPathTest, ResetInProgressIsRefused) {
  KernelFs fs((root_ / "sys").string());
  fs.read_errors["/power_dpm_force_performance_level"] = EPERM;
  const ControlResult r = run(fs, 2, compute("CPX"));
  EXPECT_EQ(r.reason, RefusalReason::reset_in_progress);
  EXPECT_NE(r.message.find("a GPU reset is in progress"), std::string::npos) << r.message;
  EXPECT_TRUE(fs.written_log().empty());
}

TEST_F(GuardedPathTest, MemoryModeStaysPendingUntilTheDriverShowsIt) {
  KernelFs fs((root_ / "sys").string());
  fs.swallow_writes = true;  // the driver records the request; current_memory_partition stays NPS1
  detail::ControlRequest nps;
  nps.kind = detail::ControlRequest::Kind::memory_partition;
  nps.text = "nps4";
  const ControlResult r = run(fs, 2, nps);
  EXPECT_EQ(r.outcome, ControlOutcome::pending) << r.message;
  EXPECT_NE(r.message.find("the driver still reports NPS1"), std::string::npos) << r.message;
  EXPECT_NE(r.next_step.find("modprobe -r amdgpu && modprobe amdgpu"), std::string::npos) << r.next_step;
  ASSERT_EQ(fs.written_log().size(), 1u);
  EXPECT_EQ(fs.written_log()[0], std::string(kCard2) + "/current_memory_partition=NPS4");
}

// A backend without controls (NVML) refuses everything: read-only by design.
class ReadOnlyBackend final : public detail::Backend {
 public:
  std::string_view name() const noexcept override { return "nvml"; }
  std::size_t device_count() const noexcept override { return 1; }
  DeviceSummary summary(std::size_t) const override { return {}; }
  std::string fault(std::size_t, const SampleOptions*) const override { return {}; }
  void sample(std::size_t, const SampleOptions&, std::vector<Reading>&) const override {}
  std::vector<Partition> partitions(std::size_t) const override { return {}; }
  std::vector<Partition> partition_names(std::size_t) const override { return {}; }
  std::vector<ProcessInfo> processes(std::size_t, unsigned) const override { return {}; }
  std::vector<Link> links() const override { return {}; }
  std::vector<BadPage> bad_pages(std::size_t) const override { return {}; }
};

TEST_F(GuardedPathTest, BackendsWithoutControlsAreReadOnly) {
  KernelFs fs((root_ / "sys").string());
  ReadOnlyBackend nvml;
  const ControlResult r = detail::guarded_control(fs, nvml, 0, DeviceSummary{}, compute("CPX"), ControlOptions{}, {0, 1}, {});
  EXPECT_EQ(r.reason, RefusalReason::not_supported);
  EXPECT_NE(r.message.find("the nvml backend is read-only"), std::string::npos) << r.message;
  EXPECT_TRUE(fs.written_log().empty());
}

TEST_F(ControlTest, CApiReportsTheOutcome) {
  hipstack_smi_open_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  const std::string sys = (root_ / "sys").string();
  options.sysfs_root = sys.c_str();
  std::vector<std::string> audited;
  options.audit = [](const hipstack_smi_audit_record* record, void* user) {
    static_cast<std::vector<std::string>*>(user)->push_back(std::string(record->action) + ": " + record->result);
  };
  options.audit_user_data = &audited;
  hipstack_smi_system* system = nullptr;
  ASSERT_EQ(hipstack_smi_open(&options, &system), HIPSTACK_SMI_OK);
  hipstack_smi_control_request request = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_control_request);
  request.kind = HIPSTACK_SMI_CONTROL_COMPUTE_PARTITION;
  request.text = "cpx";
  request.flags = HIPSTACK_SMI_CONTROL_DRY_RUN;
  hipstack_smi_control_result result = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_control_result);
  hipstack_smi_list* writes = nullptr;
  ASSERT_EQ(hipstack_smi_control(system, 2, &request, &result, &writes), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  EXPECT_EQ(result.outcome, HIPSTACK_SMI_CONTROL_PLANNED);
  EXPECT_STREQ(hipstack_smi_outcome_name(result.outcome), "planned");
  EXPECT_STREQ(result.action, "compute partition SPX -> CPX");
  ASSERT_EQ(hipstack_smi_list_size(writes), 1u);
  hipstack_smi_control_write write = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_control_write);
  ASSERT_EQ(hipstack_smi_list_get_control_write(writes, 0, &write), HIPSTACK_SMI_OK);
  EXPECT_EQ(std::string(write.path), std::string(kCard2) + "/current_compute_partition");
  EXPECT_STREQ(write.value, "CPX");
  EXPECT_EQ(write.done, 0u);
  hipstack_smi_list_free(writes);

  request.flags = 0;
  request.text = "CPX";
  ASSERT_EQ(hipstack_smi_control(system, 4, &request, &result, &writes), HIPSTACK_SMI_OK);
  EXPECT_EQ(result.outcome, HIPSTACK_SMI_CONTROL_REFUSED);
  EXPECT_EQ(result.reason, HIPSTACK_SMI_REASON_DEVICE_BUSY);
  EXPECT_STREQ(hipstack_smi_reason_name(result.reason), "device_busy");
  EXPECT_EQ(hipstack_smi_list_size(writes), 0u);
  hipstack_smi_list_free(writes);
  ASSERT_EQ(audited.size(), 1u);  // the refusal (a dry run writes nothing and audits nothing)
  EXPECT_NE(audited[0].find("refused: device_busy"), std::string::npos) << audited[0];
  request.kind = HIPSTACK_SMI_CONTROL_RESET;
  EXPECT_EQ(hipstack_smi_control(system, 99, &request, &result, &writes), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_EQ(writes, nullptr);
  request.kind = static_cast<hipstack_smi_control_kind>(15);
  EXPECT_EQ(hipstack_smi_control(system, 2, &request, &result, &writes), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("15"), std::string::npos);
  hipstack_smi_close(system);
  EXPECT_EQ(file(std::string(kCard4) + "/current_compute_partition"), "SPX\n");
}

}  // namespace
}  // namespace hipstack::smi
