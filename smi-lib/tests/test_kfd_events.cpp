// KFD SMI events: the kernel's line formats, the stream splitter, and the kfd_events readings of a
// capture whose device root carries the streams (/dev/kfd-smi-events/GPU_ID, docs/amdgpu-backend.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <hipstack/events.hpp>

#include "backends/amdgpu/kfd_smi_events.hpp"
#include "capture_helpers.hpp"

namespace hipstack::smi::testing {
namespace {

namespace fs = std::filesystem;
using detail::amdgpu::parse_kfd_smi_line;

std::string parse_ok(std::string_view line, int expected_id) {
  std::string error;
  const auto event = parse_kfd_smi_line(line, error);
  EXPECT_TRUE(event.has_value()) << line << ": " << error;
  if (!event) return {};
  EXPECT_EQ(event->id, expected_id) << line;
  return event->description;
}

std::string parse_error(std::string_view line) {
  std::string error;
  const auto event = parse_kfd_smi_line(line, error);
  EXPECT_FALSE(event.has_value()) << line << " parsed as id " << event->id;
  EXPECT_FALSE(error.empty()) << line;
  return error;
}

// Lines as the kernel's KFD_EVENT_FMT_* formats print them, after "%x " and the event id.
TEST(KfdSmiLine, TheKernelsFormats) {
  EXPECT_EQ(parse_ok("1 1092:python3", 1), "VM fault in process 4242 (python3)");
  EXPECT_EQ(parse_ok("1 10:my:task name", 1), "VM fault in process 16 (my:task name)");  // a name may hold ':'
  EXPECT_EQ(parse_ok("2 4:1f", 2), "thermal throttling: reasons 0x4, throttle counter 31");
  EXPECT_EQ(parse_ok("3 2 mode1 reset", 3), "GPU reset 2 starting: mode1 reset");
  EXPECT_EQ(parse_ok("4 a", 4), "GPU reset 10 done");  // kernels before 6.3 print no cause
  // Profiling events hipstack does not subscribe to parse with an empty description.
  EXPECT_EQ(parse_ok("7 12345 -42 @7f00(1) W", 7), "");
  EXPECT_EQ(parse_ok("d 2a python3", 13), "");
}

TEST(KfdSmiLine, WhatTheKernelNeverWrites) {
  EXPECT_NE(parse_error("").find("no space"), std::string::npos);
  EXPECT_NE(parse_error("1").find("no space"), std::string::npos);
  EXPECT_NE(parse_error("0 1:x").find("not one the kernel defines"), std::string::npos);
  EXPECT_NE(parse_error("e 1:x").find("not one the kernel defines"), std::string::npos);
  EXPECT_NE(parse_error("zz 1:x").find("not one the kernel defines"), std::string::npos);
  EXPECT_NE(parse_error("1 python3").find("VM fault"), std::string::npos);
  EXPECT_NE(parse_error("1 xyz:python3").find("VM fault"), std::string::npos);
  EXPECT_NE(parse_error("2 4").find("thermal"), std::string::npos);
  EXPECT_NE(parse_error("2 4:").find("thermal"), std::string::npos);
  EXPECT_NE(parse_error("3 ").find("GPU reset"), std::string::npos);
  EXPECT_NE(parse_error("4 -1 cause").find("GPU reset"), std::string::npos);
}

TEST(KfdSmiLine, StreamsAreSplitIntoBoundedLines) {
  std::string carry;
  bool skipping = false;
  std::vector<std::string> lines;
  int overlong = 0;
  auto feed = [&](std::string_view bytes) {
    detail::amdgpu::split_kfd_smi_lines(
        carry, skipping, bytes, [&](std::string_view line) { lines.emplace_back(line); }, [&] { ++overlong; });
  };
  feed("1 10:a\n2 4:");  // a line cut between two reads
  feed("1\n");
  EXPECT_EQ(lines, (std::vector<std::string>{"1 10:a", "2 4:1"}));
  feed(std::string(detail::amdgpu::kKfdSmiLineMax + 10, 'x'));
  feed("still the same line\n3 1\n");
  EXPECT_EQ(overlong, 1);
  EXPECT_EQ(lines.back(), "3 1");
  EXPECT_EQ(lines.size(), 3U);
}

// A capture's GPUs with a device root whose stream files the test writes.
class KfdEventsOnCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_ = fs::temp_directory_path() / ("hipstack-kfd-events-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dev_);
    fs::create_directories(dev_ / "kfd-smi-events");
  }
  void TearDown() override { fs::remove_all(dev_); }

  System open(const std::string& capture) const {
    OpenOptions options;
    options.sysfs_root = capture_sys(capture);
    options.devfs_root = dev_.string();
    return System::open(options);
  }
  static std::vector<Reading> kfd_events(const System& system, std::uint32_t device) {
    SampleOptions what;
    what.metrics = {MetricId::kfd_events};
    return system.sample(device, what);
  }
  static std::uint64_t gpu_id(const System& system, std::uint32_t device) {
    SampleOptions what;
    what.identity = true;
    what.live = false;
    what.metrics = {MetricId::kfd_gpu_id};
    return static_cast<std::uint64_t>(number_of(system.sample(device, what), "kfd_gpu_id"));
  }
  void append(std::uint64_t id, std::string_view text) const {
    std::ofstream(dev_ / "kfd-smi-events" / std::to_string(id), std::ios::app) << text;
  }

  fs::path dev_;
};

TEST_F(KfdEventsOnCapture, CountsEachKindSinceTheSubscription) {
  const System system = open("constructed/mi300x-8gpu-spx-nps1");
  const std::uint64_t id = gpu_id(system, 0);
  append(gpu_id(system, 1), "");
  append(id, "1 1092:python3\n");
  auto readings = kfd_events(system, 0);  // the first read opens the stream and reads what it holds
  EXPECT_EQ(number_of(readings, "kfd_events", "vm_fault"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "thermal_throttle"), 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_pre_reset"), 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_post_reset"), 0);
  EXPECT_EQ(reading_of(readings, "kfd_events", "vm_fault").detail.rfind("VM fault in process 4242 (python3) (", 0), 0U)
      << reading_of(readings, "kfd_events", "vm_fault").detail;

  // Appended later: read from where the last read stopped; a line cut in two counts once, whole.
  append(id, "2 4:1f\n3 1 mode1 reset\n4 1 mode1");
  readings = kfd_events(system, 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "thermal_throttle"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_pre_reset"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_post_reset"), 0);
  append(id, " reset\n1 10:bad\x1b[2Jname\n");
  readings = kfd_events(system, 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_post_reset"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "vm_fault"), 2);
  EXPECT_EQ(reading_of(readings, "kfd_events", "gpu_post_reset").detail.rfind("GPU reset 1 done: mode1 reset (", 0), 0U);
  // Text from the stream is data: the terminal control leaves the library escaped.
  EXPECT_NE(reading_of(readings, "kfd_events", "vm_fault").detail.find("bad\\x1b[2Jname"), std::string::npos)
      << reading_of(readings, "kfd_events", "vm_fault").detail;

  // Another GPU's stream is its own.
  EXPECT_EQ(number_of(kfd_events(system, 1), "kfd_events", "vm_fault"), 0);
}

TEST_F(KfdEventsOnCapture, MalformedLinesAreSkippedAndSaid) {
  const System system = open("constructed/mi300x-8gpu-spx-nps1");
  append(gpu_id(system, 0), "1 1092:python3\nnonsense\n2 zz:1\n" + std::string(400, 'x') + "\n4 2\n");
  const auto readings = kfd_events(system, 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "vm_fault"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "thermal_throttle"), 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_post_reset"), 1);
  const std::string detail = reading_of(readings, "kfd_events", "thermal_throttle").detail;
  EXPECT_NE(detail.find("3 lines skipped"), std::string::npos) << detail;
  EXPECT_NE(detail.find("longer than 256 bytes"), std::string::npos) << detail;
}

TEST_F(KfdEventsOnCapture, AFifoIsReadWithoutWaiting) {
  const System system = open("constructed/mi300x-8gpu-spx-nps1");
  const fs::path fifo = dev_ / "kfd-smi-events" / std::to_string(gpu_id(system, 0));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(number_of(kfd_events(system, 0), "kfd_events", "vm_fault"), 0);  // no writer yet: no wait
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  const std::string line = "1 2a:hip_test\n";
  ASSERT_EQ(::write(writer, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  const auto readings = kfd_events(system, 0);
  ::close(writer);
  EXPECT_EQ(number_of(readings, "kfd_events", "vm_fault"), 1);
  EXPECT_EQ(reading_of(readings, "kfd_events", "vm_fault").detail.rfind("VM fault in process 42 (hip_test)", 0), 0U);
}

TEST_F(KfdEventsOnCapture, NoStreamIsNotSupportedAndALinkIsRefused) {
  const System system = open("constructed/mi300x-8gpu-spx-nps1");
  Reading r = reading_of(kfd_events(system, 2), "kfd_events", "vm_fault");
  EXPECT_EQ(r.status, Status::not_supported) << status_name(r.status) << " " << r.detail;
  EXPECT_NE(r.detail.find("no KFD SMI event stream"), std::string::npos) << r.detail;

  const fs::path target = dev_ / "elsewhere";
  std::ofstream(target) << "1 1:x\n";
  fs::create_symlink(target, dev_ / "kfd-smi-events" / std::to_string(gpu_id(system, 3)));
  r = reading_of(kfd_events(system, 3), "kfd_events", "vm_fault");
  EXPECT_FALSE(r.ok()) << r.detail;
  EXPECT_NE(r.status, Status::not_supported) << r.detail;
  // A refusal is final: the link replaced by a real stream later is not opened by this System
  // (absence is tried again: CountsEachKindSinceTheSubscription, RisingCountsAreEvents).
  const fs::path link = dev_ / "kfd-smi-events" / std::to_string(gpu_id(system, 3));
  fs::remove(link);
  std::ofstream(link) << "1 1:x\n";
  r = reading_of(kfd_events(system, 3), "kfd_events", "vm_fault");
  EXPECT_FALSE(r.ok()) << r.detail;
  EXPECT_NE(r.detail.find("symbolic links"), std::string::npos) << r.detail;  // the first answer (ELOOP) stands
}

// A CPX GPU has a KFD node per partition; throttling and resets are reported on each of them, VM
// faults on the partition where they happened.
TEST_F(KfdEventsOnCapture, APartitionedGpuCountsDeviceEventsOnce) {
  const System system = open("constructed/mi300x-8gpu-cpx-nps1");
  const auto partitions = system.partitions(0);
  ASSERT_GT(partitions.size(), 1U);
  for (const Partition& p : partitions) {
    const auto id = static_cast<std::uint64_t>(number_of(p.readings, "partition_kfd_gpu_id"));
    append(id, "2 4:1\n3 1\n4 1\n");
    if (p.index < 2) append(id, "1 10:a\n");
  }
  const auto readings = kfd_events(system, 0);
  EXPECT_EQ(number_of(readings, "kfd_events", "thermal_throttle"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_pre_reset"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "gpu_post_reset"), 1);
  EXPECT_EQ(number_of(readings, "kfd_events", "vm_fault"), 2);
}

// The event rules (events.hpp) on a capture's streams: each count that rose is one event.
TEST_F(KfdEventsOnCapture, RisingCountsAreEvents) {
  const System system = open("constructed/mi300x-8gpu-spx-nps1");
  const std::uint64_t id = gpu_id(system, 0);
  const DeviceSummary device = system.devices().at(0);
  const EventLook first{device, kfd_events(system, 0)};  // no stream yet: not supported
  EXPECT_EQ(reading_of(first.readings, "kfd_events", "vm_fault").status, Status::not_supported);
  EXPECT_TRUE(device_events(nullptr, first).empty());
  append(id, "1 1092:python3\n3 5 mode1 reset\n");
  const EventLook second{device, kfd_events(system, 0)};
  const auto events = device_events(&first, second);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].kind, "gpu-pre-reset");
  EXPECT_EQ(events[0].metric, "kfd_events[gpu_pre_reset]");
  EXPECT_EQ(events[0].message.rfind("GPU reset 5 starting: mode1 reset", 0), 0U) << events[0].message;
  EXPECT_EQ(events[1].kind, "vm-fault");
  EXPECT_EQ(events[1].before, "0");
  EXPECT_EQ(events[1].after, "1");
  EXPECT_EQ(events[1].message.rfind("VM fault in process 4242 (python3)", 0), 0U) << events[1].message;
  // Every kind's event is one the rules list (docs/events.md).
  append(id, "2 4:1\n4 5\n");
  const EventLook third{device, kfd_events(system, 0)};
  const auto more = device_events(&second, third);
  ASSERT_EQ(more.size(), 2U);
  EXPECT_EQ(more[0].kind, "gpu-post-reset");
  EXPECT_EQ(more[1].kind, "thermal-throttle");
  const auto kinds = event_kinds();
  for (const Event& e : {events[0], events[1], more[0], more[1]}) {
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), e.kind), kinds.end()) << e.kind;
  }
}

}  // namespace
}  // namespace hipstack::smi::testing
