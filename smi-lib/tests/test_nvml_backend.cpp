// The NVML backend against the fake libnvidia-ml.so.1 (fake_nvml/): scripted values and errors,
// an older driver's symbol names, a missing required symbol, no driver, and both vendors at once.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backends/nvml/nvml_library.hpp"
#include "capture_helpers.hpp"

// Under AddressSanitizer (clang's feature test, gcc's macro): its allocator's byte count.
#if defined(__SANITIZE_ADDRESS__)
#define HIPSTACK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HIPSTACK_TEST_ASAN 1
#endif
#endif
#ifdef HIPSTACK_TEST_ASAN
#include <dlfcn.h>
#include <sanitizer/allocator_interface.h>
#endif

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;

std::string script(const char* name) { return std::string(FAKE_NVML_SCRIPTS_DIR) + "/" + name; }

System open_fake(const char* script_name, const char* library = FAKE_NVML_FULL, const char* capture = nullptr) {
  ::setenv("HIPSTACK_FAKE_NVML_SCRIPT", script(script_name).c_str(), 1);
  OpenOptions options;
  options.nvml_library = library;
  if (capture != nullptr) {
    options.sysfs_root = capture_sys(capture);
  } else {
    options.enable_amdgpu = false;
  }
  return System::open(options);
}

BackendStatus nvml_status(const std::vector<BackendStatus>& statuses) {
  for (const BackendStatus& s : statuses) {
    if (s.name == "nvml") return s;
  }
  ADD_FAILURE() << "no nvml status";
  return {};
}

TEST(NvmlBackend, H200IdentityStaticAndLiveInCatalogueUnits) {
  const System system = open_fake("h200.txt");
  ASSERT_EQ(system.devices().size(), 1u);
  const DeviceSummary d = system.devices()[0];
  EXPECT_EQ(d.vendor, "nvidia");
  EXPECT_EQ(d.backend, "nvml");
  EXPECT_EQ(d.bdf, "0000:00:06.0");
  EXPECT_EQ(d.uuid, "GPU-aca16b07-651f-93bd-1093-3f6f187afb47");
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.partition_count, 1u);
  const auto r = system.sample(0, everything());
  EXPECT_EQ(text_of(r, "pci_device_id"), "0x2335");
  EXPECT_EQ(text_of(r, "pci_vendor_id"), "0x10de");
  EXPECT_EQ(text_of(r, "pci_subsystem_device_id"), "0x18bf");
  EXPECT_EQ(text_of(r, "serial_number"), "1654124008493");
  EXPECT_EQ(text_of(r, "product_number"), "692-2G520-0282-001");
  EXPECT_EQ(text_of(r, "vbios_version"), "96.00.A5.00.1A");
  EXPECT_EQ(text_of(r, "driver_version"), "580.159.04");
  EXPECT_EQ(text_of(r, "cuda_driver_version"), "13.0");
  EXPECT_EQ(text_of(r, "compute_capability"), "9.0");
  EXPECT_EQ(text_of(r, "gfx_target"), "sm_90");
  EXPECT_EQ(text_of(r, "architecture"), "hopper");
  EXPECT_DOUBLE_EQ(number_of(r, "compute_units"), 132);
  EXPECT_DOUBLE_EQ(number_of(r, "vram_total"), 143771.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(r, "vram_reserved"), 616.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(r, "bar1_total"), 262144.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_min"), 200);   // mW -> W
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap_max"), 700);
  EXPECT_DOUBLE_EQ(number_of(r, "power_cap"), 700);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_video_max"), 1545);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_speed_max"), 32.0);  // generation 5
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction_critical"), 89);  // slowdown
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction_emergency"), 95); // shutdown
  EXPECT_EQ(text_of(r, "ecc_mode"), "enabled");
  EXPECT_EQ(text_of(r, "mig_mode"), "disabled");
  EXPECT_EQ(text_of(r, "compute_mode"), "default");
  EXPECT_EQ(text_of(r, "display_active"), "disabled");
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction"), 41);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_memory"), 42);   // field 82
  EXPECT_DOUBLE_EQ(number_of(r, "power_average"), 125.76);
  EXPECT_DOUBLE_EQ(number_of(r, "power_current"), 125.92);    // field 186
  EXPECT_DOUBLE_EQ(number_of(r, "energy_consumed"), 3621847.123);  // mJ -> J
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 1980);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_mclk"), 3201);
  EXPECT_DOUBLE_EQ(number_of(r, "clock_video"), 1545);
  EXPECT_EQ(text_of(r, "performance_state"), "P0");
  EXPECT_DOUBLE_EQ(number_of(r, "throttle_status"), 1);  // GPU_IDLE
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_speed"), 32.0);
  EXPECT_DOUBLE_EQ(number_of(r, "bar1_used"), 1024.0 * 1024);
  EXPECT_DOUBLE_EQ(number_of(r, "ecc_uncorrected_aggregate"), 0);
  // PCIe throughput is opt-in (NVML samples 20 ms per direction).
  EXPECT_EQ(status_of(r, "pcie_rx"), Status::not_supported);
  SampleOptions with_pcie;
  with_pcie.pcie_throughput = true;
  const auto live = system.sample(0, with_pcie);
  EXPECT_DOUBLE_EQ(number_of(live, "pcie_rx"), 430.0 * 1024);
  EXPECT_DOUBLE_EQ(number_of(live, "pcie_tx"), 837.0 * 1024);
  // NVML readings feed the same health checks.
  const HealthReport health = system.health(0);
  EXPECT_EQ(health.overall, Verdict::pass);
  for (const HealthFinding& f : health.findings) {
    if (f.check == "memory.bad_page_threshold") {
      EXPECT_EQ(f.verdict, Verdict::pass) << f.message;
    }
    if (f.check == "thermal.throttling") {
      EXPECT_EQ(f.verdict, Verdict::pass) << f.reading;  // GPU_IDLE only
    }
  }
  const auto parts = system.partitions(0);
  ASSERT_EQ(parts.size(), 1u);  // MIG off: the GPU is its one partition
  EXPECT_EQ(status_of(parts[0].readings, "partition_gpu_instance_id"), Status::not_supported);
  EXPECT_TRUE(system.processes(0).empty());
}

TEST(NvmlBackend, OnlyRequestedMetricsAreAskedFor) {
  const System system = open_fake("h200.txt");
  SampleOptions only;
  only.metrics = {MetricId::temperature_junction, MetricId::energy_consumed};
  const auto r = system.sample(0, only);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(number_of(r, "temperature_junction"), 41);
  EXPECT_TRUE(reading_of(r, "energy_consumed").ok());
}

// nvmlDeviceGetViolationStatus per policy, in seconds (NVML's nanoseconds), the reason as instance.
TEST(NvmlBackend, ViolationTimeIsEachPolicysNanosecondsInSeconds) {
  SampleOptions only;
  only.metrics = {MetricId::violation_time};
  const auto h200 = open_fake("h200.txt").sample(0, only);  // an idle H200's real answers
  ASSERT_EQ(h200.size(), 8u);
  const auto seconds = [](const std::vector<Reading>& r, const std::string& reason) -> std::optional<double> {
    for (const Reading& x : r) {
      if (x.instance == reason) return x.ok() ? x.number() : std::nullopt;
    }
    ADD_FAILURE() << "no reason " << reason;
    return std::nullopt;
  };
  EXPECT_EQ(seconds(h200, "power"), 0.0);
  EXPECT_DOUBLE_EQ(*seconds(h200, "low_utilization"), 19.326665184);
  EXPECT_DOUBLE_EQ(*seconds(h200, "total_base_clocks"), 9.946542176);
  for (const Reading& x : h200) EXPECT_NE(x.detail.find("nvmlDeviceGetViolationStatus"), std::string::npos) << x.detail;
  const auto h100 = open_fake("h100x2-mig.txt").sample(0, only);
  EXPECT_DOUBLE_EQ(*seconds(h100, "power"), 42.5);
  for (const Reading& x : h100) {
    if (x.instance == "reliability" || x.instance == "sync_boost") {
      EXPECT_EQ(x.status, Status::not_supported) << x.instance;
    }
  }
}

TEST(NvmlBackend, ProcessUtilisationIsNvmlsSamplesSinceTheLastLook) {
  const System system = open_fake("h100x2-mig.txt");
  // A first look has no window to measure: it says so rather than 0.
  const auto first = system.processes(0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(status_of(first[0].readings, "process_engine_busy"), Status::unavailable);
  // The next look averages the samples taken since: 4242's; 4310 has none (it ran nothing).
  const auto second = system.processes(0);
  ASSERT_EQ(second.size(), 2u);
  ASSERT_EQ(second[0].pid, 4242);
  EXPECT_DOUBLE_EQ(number_of(second[0].readings, "process_engine_busy", "sm"), 87);
  EXPECT_DOUBLE_EQ(number_of(second[0].readings, "process_engine_busy", "memory"), 41);
  EXPECT_DOUBLE_EQ(number_of(second[0].readings, "process_engine_busy", "enc"), 3);
  EXPECT_DOUBLE_EQ(number_of(second[0].readings, "process_engine_busy", "dec"), 0);
  EXPECT_DOUBLE_EQ(number_of(second[1].readings, "process_engine_busy", "sm"), 0);
  EXPECT_NE(reading_of(second[1].readings, "process_engine_busy", "sm").detail.find("idle"), std::string::npos);
  // An interval measures at once, on a System that never looked.
  const System fresh = open_fake("h100x2-mig.txt");
  EXPECT_DOUBLE_EQ(number_of(fresh.processes(0, 20)[0].readings, "process_engine_busy", "sm"), 87);
  // MIG: NVML does not sample per process; the reason, not a number.
  ASSERT_FALSE(system.processes(1).empty());  // the first look
  const Reading busy = reading_of(system.processes(1)[0].readings, "process_engine_busy", "");
  EXPECT_FALSE(busy.ok());
  EXPECT_NE(busy.detail.find("nvmlDeviceGetProcessUtilization"), std::string::npos) << busy.detail;
}

TEST(NvmlBackend, MigInstancesArePartitionsAndProcessesCarryThem) {
  const System system = open_fake("h100x2-mig.txt");
  ASSERT_EQ(system.devices().size(), 2u);
  EXPECT_EQ(system.devices()[1].partition_count, 2u);
  const auto parts = system.partitions(1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].id, "MIG-3b5e2c1a-9d74-5f08-a1c6-7e2b4d9f0a13");
  EXPECT_DOUBLE_EQ(number_of(parts[0].readings, "partition_compute_units"), 60);
  EXPECT_DOUBLE_EQ(number_of(parts[0].readings, "partition_memory"), 40320.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(parts[1].readings, "partition_gpu_instance_id"), 2);
  EXPECT_DOUBLE_EQ(number_of(parts[1].readings, "partition_compute_instance_id"), 0);
  // running_processes: distinct PIDs of both lists, MIG instances' processes on the parent GPU.
  EXPECT_DOUBLE_EQ(number_of(system.sample(0, {}), "running_processes"), 2);
  EXPECT_DOUBLE_EQ(number_of(system.sample(1, {}), "running_processes"), 2);
  const auto procs = system.processes(1);
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].pid, 5001);
  EXPECT_DOUBLE_EQ(number_of(procs[0].readings, "process_vram"), 10240.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(procs[0].readings, "process_gpu_instance_id"), 1);
  EXPECT_EQ(text_of(procs[0].readings, "process_type"), "compute");
  const auto gpu0 = system.processes(0);
  ASSERT_EQ(gpu0.size(), 2u);
  EXPECT_EQ(status_of(gpu0[0].readings, "process_gpu_instance_id"), Status::not_supported);
  const auto links = system.links();
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(text_of(links[0].readings, "link_pcie_path"), "numa_node");
  // 12 links straight to the other GPU and 6 each to an NVSwitch: NV18, as nvidia-smi topo says.
  EXPECT_EQ(text_of(links[0].readings, "link_type"), "nvlink");
  EXPECT_DOUBLE_EQ(number_of(links[0].readings, "link_nvlink_count"), 18);
  EXPECT_DOUBLE_EQ(number_of(links[1].readings, "link_hops"), 1);
  const auto r = system.sample(0, {});
  EXPECT_EQ(readings_of(r, "nvlink_state").size(), 18u);
  // Field-backed metrics come from one batched nvmlDeviceGetFieldValues call when the driver answers
  // them, and from their own calls otherwise (GPU 1 scripts no such fields). Energy is never batched:
  // as a field value it costs more than its own call (docs/performance.md), so GPU 0's scripted field
  // is not asked for.
  const Reading energy = reading_of(r, "energy_consumed");
  EXPECT_NE(energy.detail.find("nvmlDeviceGetTotalEnergyConsumption"), std::string::npos) << energy.detail;
  EXPECT_DOUBLE_EQ(number_of(r, "ecc_corrected_aggregate"), 3);
  EXPECT_NE(reading_of(r, "ecc_corrected_aggregate").detail.find("FieldValues"), std::string::npos);
  EXPECT_NE(reading_of(r, "ecc_corrected_volatile").detail.find("nvmlDeviceGetTotalEccErrors"), std::string::npos);
  EXPECT_NE(reading_of(system.sample(1, {}), "energy_consumed").detail.find("nvmlDeviceGetTotalEnergyConsumption"),
            std::string::npos);
  EXPECT_EQ(text_of(r, "nvlink_state", "17"), "active");
}

TEST(NvmlBackend, ErrorCodesBecomeStatusesNamingTheCall) {
  const System system = open_fake("faults.txt");
  const BackendStatus status = nvml_status(system.backends());
  EXPECT_TRUE(status.present);
  // GPU 2's handle cannot be had (NO_PERMISSION): it is skipped and named, the others work.
  EXPECT_NE(status.reason.find("GPU 2"), std::string::npos) << status.reason;
  ASSERT_GE(system.devices().size(), 1u);
  const auto r = system.sample(0, everything());
  const Reading lost = reading_of(r, "power_average");
  EXPECT_EQ(lost.status, Status::error);  // GPU_IS_LOST
  EXPECT_NE(lost.detail.find("nvmlDeviceGetPowerUsage"), std::string::npos) << lost.detail;
  EXPECT_EQ(reading_of(r, "serial_number").status, Status::unavailable);  // NO_PERMISSION
  EXPECT_EQ(reading_of(r, "power_cap_min").status, Status::unavailable);
  EXPECT_EQ(reading_of(r, "clock_sm").status, Status::unavailable);       // TIMEOUT
  EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk"), 135);                      // the others still answer
  EXPECT_EQ(reading_of(r, "fan_pwm").status, Status::not_supported);
  EXPECT_EQ(reading_of(r, "temperature_memory").status, Status::not_supported);  // field's own nvmlReturn
  EXPECT_EQ(reading_of(r, "temperature_junction").status, Status::error);
  EXPECT_EQ(reading_of(r, "cuda_driver_version").status, Status::error);  // LIBRARY_NOT_FOUND
  EXPECT_EQ(reading_of(r, "throttle_status").status, Status::error);      // UNKNOWN
  EXPECT_EQ(reading_of(r, "gpu_busy").status, Status::unavailable);
  // Neither process list answers (NO_PERMISSION): how many is unknown, never 0.
  const Reading processes = reading_of(r, "running_processes");
  EXPECT_EQ(processes.status, Status::unavailable);
  EXPECT_NE(processes.detail.find("RunningProcesses"), std::string::npos) << processes.detail;
  // memory_v2 unsupported: used/free come from the v1 query, reserved is not supported.
  EXPECT_DOUBLE_EQ(number_of(r, "vram_used"), 1024.0 * 1024 * 1024);
  EXPECT_EQ(reading_of(r, "vram_reserved").status, Status::not_supported);
  EXPECT_DOUBLE_EQ(number_of(r, "retired_pages", "single_bit_ecc"), 2);
  EXPECT_DOUBLE_EQ(number_of(r, "retired_pages", "double_bit_ecc"), 1);
  EXPECT_DOUBLE_EQ(number_of(r, "ecc_corrected_aggregate"), 40);
  EXPECT_EQ(reading_of(r, "ecc_uncorrected_aggregate").status, Status::error);
  EXPECT_EQ(text_of(r, "nvlink_state", "0"), "active");
  EXPECT_EQ(text_of(r, "nvlink_state", "5"), "inactive");
  EXPECT_EQ(reading_of(r, "nvlink_state", "3").status, Status::error);
  EXPECT_EQ(text_of(r, "compute_mode"), "exclusive_process");
  EXPECT_EQ(text_of(r, "display_active"), "enabled");
  // The V100's uncorrectable ECC count (aggregate 1, volatile 0) and its retired pages reach the health engine.
  const HealthReport health = system.health(0);
  bool saw_pages = false;
  for (const HealthFinding& f : health.findings) saw_pages = saw_pages || f.check == "memory.bad_page_threshold";
  EXPECT_TRUE(saw_pages);
  // The process lists are refused (NO_PERMISSION): no processes, no crash.
  EXPECT_TRUE(system.processes(0).empty());
  // A lost GPU answers nothing but errors, and never stops the others.
  for (const auto& d : system.devices()) (void)system.sample(d.index, everything());
}

// faults.txt's GPU 1 fell off the bus after open (every query GPU_IS_LOST). A sample of named live
// metrics is not probed first (each read is a query that says so itself); one naming facts read at
// open is: whatever the sample's shape, no figure of a lost GPU passes for a reading.
TEST(NvmlBackend, ALostGpuGivesNoFigureWhateverIsAsked) {
  const System system = open_fake("faults.txt");
  ASSERT_GE(system.devices().size(), 2u);
  ASSERT_NE(system.devices()[1].fault.find("lost"), std::string::npos) << system.devices()[1].fault;
  SampleOptions live;
  live.metrics = {MetricId::power_average, MetricId::temperature_junction};
  for (const Reading& r : system.sample(1, live)) {
    EXPECT_EQ(r.status, Status::error) << r.detail;
    EXPECT_EQ(r.error_code, ENXIO) << r.detail;
  }
  EXPECT_EQ(system.sample(1, live).size(), 2u);
  SampleOptions identity;
  identity.identity = true;
  identity.live = false;
  identity.metrics = {MetricId::marketing_name};
  const auto named = system.sample(1, identity);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].status, Status::error);
  EXPECT_NE(named[0].detail.find("lost"), std::string::npos) << named[0].detail;
  SampleOptions xids;
  xids.metrics = {MetricId::xid_errors};
  for (const Reading& r : system.sample(1, xids)) EXPECT_EQ(r.status, Status::error) << r.detail;
}

TEST(NvmlBackend, OlderDriverNamesAndMissingFunctions) {
  const System system = open_fake("h200.txt", FAKE_NVML_OLD);
  ASSERT_EQ(system.devices().size(), 1u);
  const auto r = system.sample(0, everything());
  EXPECT_DOUBLE_EQ(number_of(r, "throttle_status"), 1);   // through ...ClocksThrottleReasons
  EXPECT_EQ(text_of(r, "bdf"), "0000:00:06.0");           // through nvmlDeviceGetPciInfo_v2
  const Reading energy = reading_of(r, "energy_consumed");
  EXPECT_EQ(energy.status, Status::not_supported);
  EXPECT_NE(energy.detail.find("not in"), std::string::npos) << energy.detail;
  EXPECT_EQ(reading_of(r, "vram_reserved").status, Status::not_supported);
  // v1's used includes the reservation (v2's is 0 here): total - free, as an H200's NVML answered.
  EXPECT_DOUBLE_EQ(number_of(r, "vram_used"), (143771.0 - 143156.0) * 1024 * 1024);
}

TEST(NvmlBackend, AbsentWithAReasonAndNothingFails) {
  {
    const System system = open_fake("h200.txt", FAKE_NVML_BROKEN);
    EXPECT_TRUE(system.devices().empty());
    EXPECT_NE(nvml_status(system.backends()).reason.find("nvmlDeviceGetHandleByIndex"), std::string::npos);
  }
  {
    const System system = open_fake("init-fails.txt");
    EXPECT_TRUE(system.devices().empty());
    EXPECT_NE(nvml_status(system.backends()).reason.find("nvmlInit failed"), std::string::npos);
  }
  {
    const System system = open_fake("h200.txt", "/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(nvml_status(system.backends()).present);
    EXPECT_NE(nvml_status(system.backends()).reason.find("cannot load"), std::string::npos);
  }
}

#ifdef HIPSTACK_TEST_ASAN
// glibc keeps a failed dlopen's message in a buffer until dlerror is called again after returning
// it; the library frees it (dl_symbols.hpp, take_dl_error): left there, LeakSanitizer reported it at
// exit now and then (issue 38). Counted with the sanitizer's allocator, so only in that build.
TEST(NvmlBackend, AFailedLoadLeavesNothingAllocatedBehind) {
  const auto load_missing = [] {
    const detail::nvml::Library missing("/nonexistent/libnvidia-ml.so.1", false);
    EXPECT_NE(missing.reason().find("cannot load"), std::string::npos);
  };
  load_missing();  // the loader's one-time allocations (its search paths)
  ::dlerror();
  ::dlerror();  // anything still pending: freed
  const std::size_t before = __sanitizer_get_current_allocated_bytes();
  load_missing();
  EXPECT_EQ(__sanitizer_get_current_allocated_bytes(), before);
}
#endif

TEST(NvmlBackend, BothVendorsInOneSystem) {
  const System system = open_fake("h200.txt", FAKE_NVML_FULL, "real/lact/rx6900xt");
  const auto devices = system.devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].vendor, "amd");
  EXPECT_EQ(devices[1].vendor, "nvidia");
  EXPECT_EQ(system.resolve("0000:00:06.0"), 1u);
  EXPECT_EQ(system.resolve("GPU-aca16b07-651f-93bd-1093-3f6f187afb47"), 1u);
  EXPECT_EQ(system.resolve("0c:00.0"), 0u);
  EXPECT_DOUBLE_EQ(number_of(system.sample(0, {}), "temperature_edge"), 56);
  EXPECT_DOUBLE_EQ(number_of(system.sample(1, {}), "temperature_junction"), 41);
  EXPECT_EQ(text_of(system.sample(1, everything()), "vendor"), "nvidia");
}

SampleOptions window_only(unsigned window_ms = 0) {
  SampleOptions options;
  options.live = false;
  options.window = true;
  options.window_ms = window_ms;
  return options;
}

TEST(NvmlGpm, FirstLookStartsTheWindowTheNextReportsIt) {
  const System system = open_fake("h100x2-mig.txt");
  const Reading first = reading_of(system.sample(0, window_only()), "sm_active");
  EXPECT_EQ(first.status, Status::unavailable);
  EXPECT_EQ(first.error_code, ENODATA);
  EXPECT_NE(first.detail.find("needs two looks"), std::string::npos) << first.detail;
  const auto r = system.sample(0, window_only());
  // The bf16 GEMM the script describes: busy SMs and tensor pipes, modest DRAM.
  EXPECT_DOUBLE_EQ(number_of(r, "sm_active"), 96.7);
  EXPECT_DOUBLE_EQ(number_of(r, "tensor_active"), 93.8);
  EXPECT_DOUBLE_EQ(number_of(r, "dram_active"), 24.0);
  EXPECT_DOUBLE_EQ(number_of(r, "graphics_active"), 99.1);
  EXPECT_DOUBLE_EQ(number_of(r, "sm_occupancy"), 12.4);
  EXPECT_DOUBLE_EQ(number_of(r, "fp64_active"), 0.0);
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_rx_rate"), 1024.0 * 1024 * 1024);  // 1024 MiB/s
  EXPECT_DOUBLE_EQ(number_of(r, "nvlink_rx_rate", "0"), 2048.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(number_of(r, "nvlink_tx_rate", "0"), 1536.0 * 1024 * 1024);
  EXPECT_NE(reading_of(r, "sm_active").detail.find("GPM SM_UTIL over"), std::string::npos);
  // One link's metric refused: that reading says which GPM metric, the others stand.
  const Reading l1 = reading_of(r, "nvlink_rx_rate", "1");
  EXPECT_EQ(l1.status, Status::not_supported);
  EXPECT_NE(l1.detail.find("NVLINK_L1_RX_PER_SEC"), std::string::npos) << l1.detail;
  // Links without a scripted value exist (18 on an H100) and are not supported, never 0.
  EXPECT_EQ(reading_of(r, "nvlink_tx_rate", "17").status, Status::not_supported);
  // AMD-only sources are not supported on an NVIDIA GPU.
  EXPECT_EQ(reading_of(r, "xcp_busy").status, Status::not_supported);
  // Live metrics were not asked for.
  EXPECT_EQ(reading_of(r, "gpu_busy").detail, "absent from the sample");
}

TEST(NvmlGpm, WindowMsTakesBothLooksInOneCall) {
  const System system = open_fake("h200.txt");
  const auto r = system.sample(0, window_only(20));
  EXPECT_DOUBLE_EQ(number_of(r, "sm_active"), 0.0);  // idle, and measured
  EXPECT_DOUBLE_EQ(number_of(r, "pcie_tx_rate"), 0.5 * 1024 * 1024);
  EXPECT_EQ(reading_of(r, "nvlink_rx_rate").status, Status::not_supported);  // no NVLink in the script
  EXPECT_NE(reading_of(r, "nvlink_rx_rate").detail.find("no NVLink"), std::string::npos);
}

TEST(NvmlGpm, GpusWithoutGpmAndOlderDriversSayWhy) {
  {
    const System system = open_fake("h100x2-mig.txt");  // GPU 1 answers nvmlGpmQueryDeviceSupport with NOT_SUPPORTED
    const Reading r = reading_of(system.sample(1, window_only(1)), "tensor_active");
    EXPECT_EQ(r.status, Status::not_supported);
    EXPECT_NE(r.detail.find("nvmlGpmQueryDeviceSupport"), std::string::npos) << r.detail;
  }
  {
    const System system = open_fake("h200.txt", FAKE_NVML_OLD);
    const Reading r = reading_of(system.sample(0, window_only(1)), "sm_active");
    EXPECT_EQ(r.status, Status::not_supported);
    EXPECT_NE(r.detail.find("GPM: not in"), std::string::npos) << r.detail;
  }
}

std::string h200_script() {
  std::ifstream in(script("h200.txt"));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Opens the fake NVML on `text`, written to a script file of its own.
System open_script_text(const std::string& text, const std::string& tag) {
  static const ScratchDir scripts("hipstack-nvml-scripts");  // for the program's life: the library reads it later
  const std::string path = (scripts.path() / ("nvml-" + tag + ".txt")).string();
  std::ofstream(path) << text;
  ::setenv("HIPSTACK_FAKE_NVML_SCRIPT", path.c_str(), 1);
  OpenOptions options;
  options.nvml_library = FAKE_NVML_FULL;
  options.enable_amdgpu = false;
  return System::open(options);
}

// h200.txt plus `extra` lines.
System open_h200_with(const std::string& extra, const std::string& tag) {
  return open_script_text(h200_script() + "\n" + extra + "\n", tag);
}

TEST(NvmlGpm, FailuresBecomeStatusesNamingTheCall) {
  {
    const System system = open_h200_with("0.gpm_sample_get.error = TIMEOUT", "sample");
    const Reading r = reading_of(system.sample(0, window_only(1)), "dram_active");
    EXPECT_EQ(r.status, Status::unavailable);
    EXPECT_NE(r.detail.find("nvmlGpmSampleGet"), std::string::npos) << r.detail;
  }
  {
    const System system = open_h200_with("0.gpm_metrics_get.error = GPU_IS_LOST", "metrics");
    const Reading r = reading_of(system.sample(0, window_only(1)), "sm_active");
    EXPECT_EQ(r.status, Status::error);
    EXPECT_NE(r.detail.find("nvmlGpmMetricsGet"), std::string::npos) << r.detail;
  }
  {
    const System system = open_h200_with("0.gpm.metric.2.error = NO_PERMISSION", "permission");
    const auto r = system.sample(0, window_only(1));
    EXPECT_EQ(reading_of(r, "sm_active").status, Status::unavailable);
    EXPECT_DOUBLE_EQ(number_of(r, "tensor_active"), 0.0);
  }
  {
    const System system = open_h200_with("gpm_sample_alloc.error = MEMORY", "alloc");
    const Reading r = reading_of(system.sample(0, window_only(1)), "sm_active");
    EXPECT_EQ(r.status, Status::error);
    EXPECT_NE(r.detail.find("nvmlGpmSampleAlloc"), std::string::npos) << r.detail;
  }
}

TEST(NvmlGpm, AValueThatIsNoShareIsAnError) {
  std::string text = h200_script();
  const std::string sm = "0.gpm.metric.2   = 0.0";
  ASSERT_NE(text.find(sm), std::string::npos);
  text.replace(text.find(sm), sm.size(), "0.gpm.metric.2   = -3");
  const System system = open_script_text(text, "negative");
  const Reading r = reading_of(system.sample(0, window_only(1)), "sm_active");
  EXPECT_EQ(r.status, Status::error);
  EXPECT_NE(r.detail.find("-3 is not a share or a rate"), std::string::npos) << r.detail;
}

SampleOptions xids_only() {
  SampleOptions options;
  options.metrics = {MetricId::xid_errors, MetricId::xid_last, MetricId::xid_last_time};
  return options;
}

TEST(NvmlXid, CountedPerCodeAsTheDriverQueuesThem) {
  const System system = open_fake("h100x2-mig.txt");
  const double opened = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto r = system.sample(0, xids_only());
  EXPECT_DOUBLE_EQ(number_of(r, "xid_errors", "13"), 2);
  EXPECT_DOUBLE_EQ(number_of(r, "xid_errors", "31"), 1);
  EXPECT_DOUBLE_EQ(number_of(r, "xid_last"), 31);
  EXPECT_NE(reading_of(r, "xid_last").detail.find("XID 31 (ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT): GPU memory page fault; action: restart_app"), std::string::npos);
  EXPECT_NEAR(number_of(r, "xid_last_time"), opened, 60);
  r = system.sample(0, xids_only());  // the next batch: one double-bit ECC error
  EXPECT_DOUBLE_EQ(number_of(r, "xid_errors", "13"), 2);
  EXPECT_DOUBLE_EQ(number_of(r, "xid_errors", "48"), 1);
  EXPECT_DOUBLE_EQ(number_of(r, "xid_last"), 48);
  EXPECT_NE(reading_of(r, "xid_errors", "48").detail.find("XID 48 (ROBUST_CHANNEL_GPU_ECC_DBE): Double Bit ECC Error; action: reset_gpu"), std::string::npos);
  r = system.sample(0, xids_only());  // nothing new: the counts stay
  EXPECT_DOUBLE_EQ(number_of(r, "xid_errors", "31"), 1);
  EXPECT_DOUBLE_EQ(number_of(r, "xid_last"), 48);
  // Counted for the GPU the event names, not for the others.
  const Reading other = reading_of(system.sample(1, xids_only()), "xid_errors");
  EXPECT_EQ(other.status, Status::not_supported);
  EXPECT_NE(other.detail.find("nvmlDeviceGetSupportedEventTypes"), std::string::npos) << other.detail;
}

TEST(NvmlXid, NoneYetIsUnavailableNeverZero) {
  const System system = open_fake("h200.txt");
  const auto r = system.sample(0, xids_only());
  for (const char* name : {"xid_errors", "xid_last", "xid_last_time"}) {
    const Reading x = reading_of(r, name);
    EXPECT_EQ(x.status, Status::unavailable) << name;
    EXPECT_NE(x.detail.find("no XID error since"), std::string::npos) << x.detail;
  }
  // Asked for with the other live metrics: the same.
  EXPECT_EQ(reading_of(system.sample(0, {}), "xid_last").status, Status::unavailable);
}

TEST(NvmlXid, EventApiFailuresNameTheCall) {
  {
    const System system = open_h200_with("event_set_wait.error = UNKNOWN", "wait");
    const Reading r = reading_of(system.sample(0, xids_only()), "xid_errors");
    EXPECT_EQ(r.status, Status::error);
    EXPECT_NE(r.detail.find("nvmlEventSetWait"), std::string::npos) << r.detail;
  }
  {
    const System system = open_h200_with("0.register_events.error = NO_PERMISSION", "register");
    const Reading r = reading_of(system.sample(0, xids_only()), "xid_last");
    EXPECT_EQ(r.status, Status::unavailable);
    EXPECT_NE(r.detail.find("nvmlDeviceRegisterEvents"), std::string::npos) << r.detail;
  }
  {
    const System system = open_h200_with("event_set_create.error = MEMORY", "create");
    const Reading r = reading_of(system.sample(0, xids_only()), "xid_last");
    EXPECT_EQ(r.status, Status::error);
    EXPECT_NE(r.detail.find("nvmlEventSetCreate"), std::string::npos) << r.detail;
  }
}

}  // namespace
}  // namespace hipstack::smi
