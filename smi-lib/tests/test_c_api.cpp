// The C API (hipstack/smi.h) against the C++ API it wraps, on recorded captures: every part of the
// model (devices, readings, partitions, processes, links, health, events), the size-prefixed struct
// rules, caller-sized buffers and the errors.
#include <gtest/gtest.h>
#include <hipstack/events.hpp>
#include <hipstack/smi.h>
#include <hipstack/smi.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace smi = hipstack::smi;

std::string capture(const char* name) { return std::string(HIPSTACK_CAPTURES_DIR) + "/" + name; }

hipstack_smi_system* open_root(const std::string& sys, const std::string& proc = "") {
  hipstack_smi_open_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  options.sysfs_root = sys.c_str();
  options.procfs_root = proc.empty() ? nullptr : proc.c_str();
  hipstack_smi_system* system = nullptr;
  EXPECT_EQ(hipstack_smi_open(&options, &system), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  return system;
}

smi::System cxx_open(const std::string& sys, const std::string& proc = "") {
  smi::OpenOptions options;
  options.sysfs_root = sys;
  options.procfs_root = proc;
  return smi::System::open(options);
}

// The readings of a nested or top-level list, as (metric, instance, status) for comparing with C++.
std::vector<std::string> reading_keys(const hipstack_smi_list* list) {
  std::vector<std::string> out;
  for (size_t i = 0; i < hipstack_smi_list_size(list); ++i) {
    hipstack_smi_reading r = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
    EXPECT_EQ(hipstack_smi_list_get_reading(list, i, &r), HIPSTACK_SMI_OK);
    out.push_back(std::to_string(r.metric_id) + "[" + r.instance + "]" + std::to_string(r.status));
  }
  return out;
}

std::vector<std::string> reading_keys(const std::vector<smi::Reading>& readings) {
  std::vector<std::string> out;
  for (const smi::Reading& r : readings) {
    out.push_back(std::to_string(static_cast<unsigned>(r.id)) + "[" + r.instance + "]" + std::to_string(static_cast<int>(r.status)));
  }
  return out;
}

TEST(CApi, DevicesAndReadings) {
  hipstack_smi_system* system = open_root(capture("real/lact/rx6900xt/sys"));
  ASSERT_NE(system, nullptr);
  hipstack_smi_list* devices = nullptr;
  ASSERT_EQ(hipstack_smi_get_devices(system, &devices), HIPSTACK_SMI_OK);
  EXPECT_EQ(hipstack_smi_list_get_kind(devices), HIPSTACK_SMI_LIST_DEVICES);
  ASSERT_EQ(hipstack_smi_list_size(devices), 1u);
  hipstack_smi_device_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_device_info);
  ASSERT_EQ(hipstack_smi_list_get_device(devices, 0, &info), HIPSTACK_SMI_OK);
  EXPECT_STREQ(info.bdf, "0000:0c:00.0");
  EXPECT_STREQ(info.vendor, "amd");
  EXPECT_STREQ(info.backend, "amdgpu");
  EXPECT_STREQ(info.fault, "");
  uint32_t index = 99;
  EXPECT_EQ(hipstack_smi_device_resolve(system, "0c:00.0", &index), HIPSTACK_SMI_OK);
  EXPECT_EQ(index, 0u);
  EXPECT_EQ(hipstack_smi_device_resolve(system, info.uuid, &index), HIPSTACK_SMI_OK);
  EXPECT_EQ(hipstack_smi_list_get_device(devices, 1, &info), HIPSTACK_SMI_ERROR_NOT_FOUND);
  hipstack_smi_reading wrong = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
  EXPECT_EQ(hipstack_smi_list_get_reading(devices, 0, &wrong), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("kind"), std::string::npos) << hipstack_smi_last_error();

  hipstack_smi_sample_options what = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_sample_options);
  what.what = HIPSTACK_SMI_SAMPLE_LIVE | HIPSTACK_SMI_SAMPLE_IDENTITY;
  hipstack_smi_list* sample = nullptr;
  ASSERT_EQ(hipstack_smi_sample_device(system, 0, &what, &sample), HIPSTACK_SMI_OK);
  hipstack_smi_reading edge = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
  ASSERT_EQ(hipstack_smi_list_find_reading(sample, HIPSTACK_SMI_METRIC_temperature_edge, nullptr, &edge), HIPSTACK_SMI_OK);
  EXPECT_EQ(edge.status, HIPSTACK_SMI_STATUS_OK);
  EXPECT_EQ(edge.type, HIPSTACK_SMI_TYPE_REAL);
  EXPECT_DOUBLE_EQ(edge.real, 56.0);
  EXPECT_NE(std::string(edge.detail), "");
  hipstack_smi_reading vbios = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
  ASSERT_EQ(hipstack_smi_list_find_reading(sample, HIPSTACK_SMI_METRIC_vbios_version, "", &vbios), HIPSTACK_SMI_OK);
  EXPECT_STREQ(vbios.text, "113-D4121EXT-CO1");
  EXPECT_EQ(hipstack_smi_list_find_reading(sample, HIPSTACK_SMI_METRIC_temperature_edge, "nope", &edge), HIPSTACK_SMI_ERROR_NOT_FOUND);
  // The same readings, in the same order, as the C++ API gives.
  const smi::System cxx = cxx_open(capture("real/lact/rx6900xt/sys"));
  smi::SampleOptions same;
  same.identity = true;
  EXPECT_EQ(reading_keys(sample), reading_keys(cxx.sample(0, same)));
  hipstack_smi_list_free(sample);

  // Only the metrics asked for.
  const uint32_t only[] = {HIPSTACK_SMI_METRIC_power_average};
  what.metrics = only;
  what.metric_count = 1;
  ASSERT_EQ(hipstack_smi_sample_device(system, 0, &what, &sample), HIPSTACK_SMI_OK);
  EXPECT_EQ(hipstack_smi_list_size(sample), 1u);
  hipstack_smi_list_free(sample);
  hipstack_smi_list_free(devices);
  hipstack_smi_close(system);
}

// hipstack_smi_read_values gives what a sample of the same metrics gives (value, status, type), and
// refuses what it cannot give as a number at once, naming the metric and where to read it instead.
TEST(CApi, ReadValuesAsTheSampleGivesThem) {
  hipstack_smi_system* system = open_root(capture("real/lact/rx6900xt/sys"));
  ASSERT_NE(system, nullptr);
  const uint32_t ids[] = {HIPSTACK_SMI_METRIC_temperature_edge, HIPSTACK_SMI_METRIC_vram_used, HIPSTACK_SMI_METRIC_power_average,
                          HIPSTACK_SMI_METRIC_vram_total, HIPSTACK_SMI_METRIC_ecc_corrected_volatile, HIPSTACK_SMI_METRIC_temperature_edge};
  constexpr size_t n = sizeof ids / sizeof ids[0];
  hipstack_smi_value values[n];
  std::memset(values, 0xff, sizeof values);
  ASSERT_EQ(hipstack_smi_read_values(system, 0, ids, n, values), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  hipstack_smi_sample_options what = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_sample_options);
  what.what = HIPSTACK_SMI_SAMPLE_LIVE | HIPSTACK_SMI_SAMPLE_STATIC;
  hipstack_smi_list* sample = nullptr;
  ASSERT_EQ(hipstack_smi_sample_device(system, 0, &what, &sample), HIPSTACK_SMI_OK);
  int ok = 0;
  for (size_t i = 0; i < n; ++i) {
    hipstack_smi_reading r = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
    ASSERT_EQ(hipstack_smi_list_find_reading(sample, ids[i], "", &r), HIPSTACK_SMI_OK) << ids[i];
    EXPECT_EQ(values[i].status, r.status) << ids[i];
    EXPECT_EQ(values[i].type, r.type) << ids[i];
    if (r.status != HIPSTACK_SMI_STATUS_OK) continue;
    ++ok;
    EXPECT_EQ(values[i].real, r.real) << ids[i];
    if (r.type == HIPSTACK_SMI_TYPE_INTEGER) {
      EXPECT_EQ(values[i].integer, r.integer) << ids[i];
    }
  }
  EXPECT_GE(ok, 4);  // temperature (twice), VRAM used and total, power
  EXPECT_EQ(values[0].real, 56.0);
  EXPECT_NE(values[4].status, HIPSTACK_SMI_STATUS_OK);  // no RAS on this board: as the sample says
  hipstack_smi_list_free(sample);

  // Refused: text, instanced, window and blocking metrics, unknown ids, bad counts and pointers, no GPU.
  const struct {
    uint32_t id;
    const char* said;
  } refused[] = {{HIPSTACK_SMI_METRIC_vbios_version, "vbios_version"},       {HIPSTACK_SMI_METRIC_firmware_version, "firmware_version"},
                 {HIPSTACK_SMI_METRIC_graphics_active, "graphics_active"},   {HIPSTACK_SMI_METRIC_pcie_rx, "pcie_rx"},
                 {9999, "9999 is no metric's id"}};
  for (const auto& r : refused) {
    const uint32_t two[] = {HIPSTACK_SMI_METRIC_temperature_edge, r.id};
    EXPECT_EQ(hipstack_smi_read_values(system, 0, two, 2, values), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT) << r.said;
    const std::string error = hipstack_smi_last_error();
    EXPECT_NE(error.find("metrics[1]"), std::string::npos) << error;
    EXPECT_NE(error.find(r.said), std::string::npos) << error;
  }
  EXPECT_EQ(hipstack_smi_read_values(system, 0, ids, 0, values), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_read_values(system, 0, ids, 100000, values), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_read_values(system, 0, nullptr, 1, values), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_read_values(system, 0, ids, 1, nullptr), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_read_values(nullptr, 0, ids, 1, values), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_read_values(system, 7, ids, 1, values), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  hipstack_smi_close(system);
}

// A struct from a newer header (a field this library does not know) is filled as far as this library
// knows it; the rest and struct_size stay the caller's.
TEST(CApi, StructsFromANewerHeaderKeepTheirTail) {
  hipstack_smi_system* system = open_root(capture("real/lact/rx6900xt/sys"));
  ASSERT_NE(system, nullptr);
  hipstack_smi_list* devices = nullptr;
  ASSERT_EQ(hipstack_smi_get_devices(system, &devices), HIPSTACK_SMI_OK);
  struct Newer {
    hipstack_smi_device_info info;
    std::uint64_t field_of_a_later_version;
  } newer{};
  newer.info.struct_size = sizeof newer;
  newer.field_of_a_later_version = 0x1234;
  ASSERT_EQ(hipstack_smi_list_get_device(devices, 0, &newer.info), HIPSTACK_SMI_OK);
  EXPECT_EQ(newer.info.struct_size, sizeof newer);
  EXPECT_EQ(newer.field_of_a_later_version, 0x1234u);
  EXPECT_STREQ(newer.info.vendor, "amd");
  // An input struct from a newer header: the library reads only what it knows.
  struct NewerOptions {
    hipstack_smi_sample_options options;
    std::uint64_t later;
  } newer_options{};
  newer_options.options.struct_size = sizeof newer_options;
  newer_options.options.what = HIPSTACK_SMI_SAMPLE_STATIC;
  newer_options.later = ~0ull;
  hipstack_smi_list* sample = nullptr;
  ASSERT_EQ(hipstack_smi_sample_device(system, 0, &newer_options.options, &sample), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  EXPECT_GT(hipstack_smi_list_size(sample), 0u);
  hipstack_smi_list_free(sample);
  // Too small (an unset struct_size) is refused, naming the rule.
  hipstack_smi_device_info unset{};
  EXPECT_EQ(hipstack_smi_list_get_device(devices, 0, &unset), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("struct_size 0"), std::string::npos) << hipstack_smi_last_error();
  hipstack_smi_list_free(devices);
  hipstack_smi_close(system);
}

TEST(CApi, ErrorsAreCodesWithMessages) {
  hipstack_smi_system* system = nullptr;
  hipstack_smi_open_options bad = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  bad.sysfs_root = "/nonexistent/sys";
  EXPECT_EQ(hipstack_smi_open(&bad, &system), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(system, nullptr);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("/nonexistent/sys"), std::string::npos);
  EXPECT_EQ(hipstack_smi_open(nullptr, nullptr), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  hipstack_smi_open_options unsized{};
  EXPECT_EQ(hipstack_smi_open(&unsized, &system), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);

  system = open_root(capture("real/lact/rx6900xt/sys"));
  ASSERT_NE(system, nullptr);
  hipstack_smi_list* sample = reinterpret_cast<hipstack_smi_list*>(0x1);
  EXPECT_EQ(hipstack_smi_sample_device(system, 7, nullptr, &sample), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_EQ(sample, nullptr);
  hipstack_smi_sample_options what = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_sample_options);
  const uint32_t no_such[] = {65000};
  what.metrics = no_such;
  what.metric_count = 1;
  EXPECT_EQ(hipstack_smi_sample_device(system, 0, &what, &sample), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("65000"), std::string::npos) << hipstack_smi_last_error();
  uint32_t index = 0;
  EXPECT_EQ(hipstack_smi_device_resolve(system, "ff:00.0", &index), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_EQ(hipstack_smi_device_resolve(system, "", &index), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_device_resolve(system, nullptr, &index), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(hipstack_smi_result_string(HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE), "no such device");
  hipstack_smi_list* none = nullptr;
  EXPECT_EQ(hipstack_smi_get_partitions(system, 5, &none), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  EXPECT_EQ(hipstack_smi_get_partitions(nullptr, 0, &none), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_list_size(nullptr), 0u);
  hipstack_smi_close(system);
  hipstack_smi_close(nullptr);
  hipstack_smi_list_free(nullptr);
  hipstack_smi_event_watch_close(nullptr);
}

// A caller-sized buffer: the needed size is answered, a short buffer is left untouched.
TEST(CApi, FaultTextIntoACallerSizedBuffer) {
  hipstack_smi_system* system = open_root(capture("real/lact/rx6900xt/sys"));
  ASSERT_NE(system, nullptr);
  size_t size = 0;
  EXPECT_EQ(hipstack_smi_device_get_fault(system, 0, nullptr, &size), HIPSTACK_SMI_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(size, 1u);  // "" and its NUL: the GPU can be read
  char buffer[8] = "xxxxxxx";
  size = sizeof buffer;
  ASSERT_EQ(hipstack_smi_device_get_fault(system, 0, buffer, &size), HIPSTACK_SMI_OK);
  EXPECT_STREQ(buffer, "");
  EXPECT_EQ(hipstack_smi_device_get_fault(system, 3, buffer, &size), HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE);
  hipstack_smi_close(system);

  // A GPU whose device folder went away: its fault names it.
  const fs::path copy = fs::temp_directory_path() / ("hipstack-c-fault-" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(capture("real/lact/rx6900xt/sys"), copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  system = open_root(copy.string());
  ASSERT_NE(system, nullptr);
  const smi::System cxx = cxx_open(copy.string());
  for (const auto& entry : fs::directory_iterator(copy / "class/drm")) {
    if (fs::exists(entry.path() / "device/vendor")) fs::remove_all(fs::canonical(entry.path() / "device"));
  }
  const std::string expected = cxx.fault(0);
  ASSERT_FALSE(expected.empty());
  size = 4;
  std::memcpy(buffer, "abc", 4);
  EXPECT_EQ(hipstack_smi_device_get_fault(system, 0, buffer, &size), HIPSTACK_SMI_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(size, expected.size() + 1);
  EXPECT_STREQ(buffer, "abc");
  std::vector<char> enough(size);
  ASSERT_EQ(hipstack_smi_device_get_fault(system, 0, enough.data(), &size), HIPSTACK_SMI_OK);
  EXPECT_EQ(std::string(enough.data()), expected);
  hipstack_smi_close(system);
  fs::remove_all(copy);
}

// Each GPU's partitions, processes, health and bad pages, as the C++ API gives them.
TEST(CApi, EachGpuAsTheCxxApiGivesIt) {
  const std::string sys = capture("constructed/mi300x-8gpu-spx-nps1/sys");
  const std::string proc = capture("constructed/mi300x-8gpu-spx-nps1/proc");
  hipstack_smi_system* system = open_root(sys, proc);
  ASSERT_NE(system, nullptr);
  const smi::System cxx = cxx_open(sys, proc);
  uint32_t count = 0;
  ASSERT_EQ(hipstack_smi_device_count(system, &count), HIPSTACK_SMI_OK);
  ASSERT_EQ(count, 8u);
  size_t processes_seen = 0;
  for (uint32_t d = 0; d < count; ++d) {
    hipstack_smi_list* partitions = nullptr;
    ASSERT_EQ(hipstack_smi_get_partitions(system, d, &partitions), HIPSTACK_SMI_OK);
    const auto want_partitions = cxx.partitions(d);
    ASSERT_EQ(hipstack_smi_list_size(partitions), want_partitions.size());
    for (size_t i = 0; i < want_partitions.size(); ++i) {
      hipstack_smi_partition p = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_partition);
      ASSERT_EQ(hipstack_smi_list_get_partition(partitions, i, &p), HIPSTACK_SMI_OK);
      EXPECT_EQ(p.index, want_partitions[i].index);
      EXPECT_EQ(std::string(p.id), want_partitions[i].id);
      EXPECT_EQ(reading_keys(p.readings), reading_keys(want_partitions[i].readings));
      hipstack_smi_list_free(const_cast<hipstack_smi_list*>(p.readings));  // nested: does nothing
    }
    hipstack_smi_list_free(partitions);

    hipstack_smi_list* processes = nullptr;
    ASSERT_EQ(hipstack_smi_get_processes(system, d, 0, &processes), HIPSTACK_SMI_OK);
    const auto want_processes = cxx.processes(d);
    ASSERT_EQ(hipstack_smi_list_size(processes), want_processes.size());
    for (size_t i = 0; i < want_processes.size(); ++i) {
      hipstack_smi_process p = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_process);
      ASSERT_EQ(hipstack_smi_list_get_process(processes, i, &p), HIPSTACK_SMI_OK);
      EXPECT_EQ(p.pid, want_processes[i].pid);
      EXPECT_EQ(std::string(p.name), want_processes[i].name);
      EXPECT_EQ(std::string(p.command_line), want_processes[i].command_line);
      EXPECT_EQ(reading_keys(p.readings), reading_keys(want_processes[i].readings));
      ++processes_seen;
    }
    hipstack_smi_list_free(processes);

    hipstack_smi_verdict overall = HIPSTACK_SMI_VERDICT_FAIL;
    hipstack_smi_list* findings = nullptr;
    ASSERT_EQ(hipstack_smi_check_health(system, d, nullptr, &overall, &findings), HIPSTACK_SMI_OK);
    const smi::HealthReport want = cxx.health(d);
    EXPECT_EQ(static_cast<int>(overall), static_cast<int>(want.overall));
    ASSERT_EQ(hipstack_smi_list_size(findings), want.findings.size());
    for (size_t i = 0; i < want.findings.size(); ++i) {
      hipstack_smi_health_finding f = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_health_finding);
      ASSERT_EQ(hipstack_smi_list_get_finding(findings, i, &f), HIPSTACK_SMI_OK);
      EXPECT_EQ(std::string(f.check_name), want.findings[i].check);
      EXPECT_NE(f.check, HIPSTACK_SMI_CHECK_OTHER) << f.check_name;
      EXPECT_STREQ(hipstack_smi_health_check_name(f.check), f.check_name);
      EXPECT_EQ(static_cast<int>(f.verdict), static_cast<int>(want.findings[i].verdict));
      EXPECT_EQ(std::string(f.message), want.findings[i].message);
    }
    hipstack_smi_list_free(findings);

    hipstack_smi_list* pages = nullptr;
    ASSERT_EQ(hipstack_smi_get_bad_pages(system, d, &pages), HIPSTACK_SMI_OK);
    EXPECT_EQ(hipstack_smi_list_size(pages), cxx.bad_pages(d).size());
    hipstack_smi_list_free(pages);
  }
  EXPECT_EQ(processes_seen, 7u);  // the capture's /proc: GPUs 0, 1, 4, 5, 6 and two on 7
  hipstack_smi_close(system);
}

// Links and backends, each as the C++ API gives them.
TEST(CApi, TheNodeAsTheCxxApiGivesIt) {
  const std::string sys = capture("constructed/mi300x-8gpu-spx-nps1/sys");
  const std::string proc = capture("constructed/mi300x-8gpu-spx-nps1/proc");
  hipstack_smi_system* system = open_root(sys, proc);
  ASSERT_NE(system, nullptr);
  const smi::System cxx = cxx_open(sys, proc);
  hipstack_smi_list* links = nullptr;
  ASSERT_EQ(hipstack_smi_get_links(system, &links), HIPSTACK_SMI_OK);
  const auto want_links = cxx.links();
  ASSERT_EQ(hipstack_smi_list_size(links), want_links.size());
  ASSERT_GT(want_links.size(), 0u);
  for (size_t i = 0; i < want_links.size(); ++i) {
    hipstack_smi_link l = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_link);
    ASSERT_EQ(hipstack_smi_list_get_link(links, i, &l), HIPSTACK_SMI_OK);
    EXPECT_EQ(l.from, want_links[i].from);
    EXPECT_EQ(l.to, want_links[i].to);
    EXPECT_EQ(reading_keys(l.readings), reading_keys(want_links[i].readings));
  }
  hipstack_smi_list_free(links);

  hipstack_smi_list* backends = nullptr;
  ASSERT_EQ(hipstack_smi_get_backends(system, &backends), HIPSTACK_SMI_OK);
  bool amdgpu_present = false;
  for (size_t i = 0; i < hipstack_smi_list_size(backends); ++i) {
    hipstack_smi_backend_info b = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_backend_info);
    ASSERT_EQ(hipstack_smi_list_get_backend(backends, i, &b), HIPSTACK_SMI_OK);
    amdgpu_present = amdgpu_present || (std::string(b.name) == "amdgpu" && b.present == 1);
  }
  EXPECT_TRUE(amdgpu_present);
  hipstack_smi_list_free(backends);
  hipstack_smi_close(system);
}

TEST(CApi, HealthPolicyDefaultsAndFile) {
  hipstack_smi_health_policy policy = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_health_policy);
  ASSERT_EQ(hipstack_smi_health_policy_init(&policy), HIPSTACK_SMI_OK);
  EXPECT_DOUBLE_EQ(policy.thermal_margin, smi::HealthPolicy{}.thermal_margin);
  EXPECT_EQ(policy.correctable_ecc, smi::HealthPolicy{}.correctable_ecc);
  const fs::path file = fs::temp_directory_path() / ("hipstack-c-policy-" + std::to_string(::getpid()));
  std::ofstream(file) << "thermal_margin = 12\nno_such_key = 1\n";
  EXPECT_EQ(hipstack_smi_health_policy_load(file.c_str(), &policy), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find(":2"), std::string::npos) << hipstack_smi_last_error();
  std::ofstream(file) << "thermal_margin = 12\n";
  ASSERT_EQ(hipstack_smi_health_policy_load(file.c_str(), &policy), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  EXPECT_DOUBLE_EQ(policy.thermal_margin, 12.0);
  EXPECT_DOUBLE_EQ(policy.power_cap_share, smi::HealthPolicy{}.power_cap_share);
  fs::remove(file);
}

// An event watch on a copy of a capture: a RAS count that rises between two polls is an event.
TEST(CApi, EventWatchSeesACountRise) {
  const fs::path copy = fs::temp_directory_path() / ("hipstack-c-events-" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(capture("constructed/mi300x-8gpu-faults/sys"), copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  hipstack_smi_open_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  const std::string root = copy.string();
  options.sysfs_root = root.c_str();
  const char* selectors[] = {"0000:05:00.0"};
  hipstack_smi_event_watch* watch = nullptr;
  ASSERT_EQ(hipstack_smi_event_watch_open(&options, selectors, 1, &watch), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  hipstack_smi_list* events = nullptr;
  ASSERT_EQ(hipstack_smi_event_watch_poll(watch, &events), HIPSTACK_SMI_OK);  // the first look's news: none here
  EXPECT_EQ(hipstack_smi_list_size(events), 0u);
  hipstack_smi_list_free(events);
  std::ofstream(copy / "class/drm/card0/device/ras/umc_err_count") << "ue: 2\nce: 0\nde: 0\n";
  ASSERT_EQ(hipstack_smi_event_watch_poll(watch, &events), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
  ASSERT_EQ(hipstack_smi_list_get_kind(events), HIPSTACK_SMI_LIST_EVENTS);
  bool seen = false;
  for (size_t i = 0; i < hipstack_smi_list_size(events); ++i) {
    hipstack_smi_event e = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_event);
    ASSERT_EQ(hipstack_smi_list_get_event(events, i, &e), HIPSTACK_SMI_OK);
    EXPECT_STREQ(e.bdf, "0000:05:00.0");
    if (std::string(e.kind) == "memory-errors" && std::string(e.metric) == "ras_uncorrectable[umc]") {
      seen = true;
      EXPECT_STREQ(e.before, "0");
      EXPECT_STREQ(e.after, "2");
    }
  }
  EXPECT_TRUE(seen);
  hipstack_smi_list_free(events);
  hipstack_smi_event_watch_close(watch);
  fs::remove_all(copy);
}

TEST(CApi, OneSystemFromManyThreads) {
  hipstack_smi_system* system = open_root(capture("real/lact/phoenix/sys"));
  ASSERT_NE(system, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([system, t, &failures] {
      for (int i = 0; i < 50; ++i) {
        hipstack_smi_list* sample = nullptr;
        if (hipstack_smi_sample_device(system, 0, nullptr, &sample) != HIPSTACK_SMI_OK || hipstack_smi_list_size(sample) == 0) {
          ++failures[static_cast<size_t>(t)];
        }
        hipstack_smi_list_free(sample);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const int f : failures) EXPECT_EQ(f, 0);
  hipstack_smi_close(system);
}

}  // namespace
