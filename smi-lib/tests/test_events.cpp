// The event rules (hipstack/events.hpp) on constructed looks: what each change means, what a first
// look reports, and GPUs coming and going. hipstack-smi event and hipstack-smid's WatchEvents print
// these (tests/cli/test_event.py, monitor-daemon/tests/test_events.py run them on captures).
#include <hipstack/events.hpp>

#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace hipstack::smi {
namespace {

Reading number(MetricId id, double value, std::string instance = {}) {
  Reading r;
  r.id = id;
  r.status = Status::ok;
  r.value = value;
  r.instance = std::move(instance);
  return r;
}

Reading text(MetricId id, std::string value) {
  Reading r;
  r.id = id;
  r.status = Status::ok;
  r.value = std::move(value);
  return r;
}

Reading failed(MetricId id) {
  Reading r;
  r.id = id;
  r.status = Status::error;
  r.error_code = 5;
  r.detail = "Input/output error";
  return r;
}

EventLook gpu(std::string uuid, std::vector<Reading> readings) {
  EventLook look;
  look.device.uuid = std::move(uuid);
  look.device.bdf = "0000:05:00.0";
  look.readings = std::move(readings);
  return look;
}

// The kinds found, in the rules' order: XIDs, readable, partition count, then by metric.
std::vector<std::string> kinds(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.kind);
  return out;
}

const Event& find(const std::vector<Event>& events, std::string_view kind) {
  const auto it = std::find_if(events.begin(), events.end(), [kind](const Event& e) { return e.kind == kind; });
  if (it == events.end()) throw std::runtime_error("no " + std::string(kind) + " event");
  return *it;
}

TEST(Events, EveryKindIsListed) {
  const auto listed = event_kinds();
  for (const char* kind : {"xid", "memory-errors", "unreadable", "readable", "device-added", "device-removed",
                           "throttling-started", "counters-restarted", "partition-mode-changed"}) {
    EXPECT_NE(std::find(listed.begin(), listed.end(), kind), listed.end()) << kind;
  }
}

TEST(Events, AFirstLookReportsItsXidsOnly) {
  const EventLook first = gpu("a", {number(MetricId::xid_errors, 2, "79"), number(MetricId::ras_correctable, 5, "umc")});
  const auto events = device_events(nullptr, first);
  ASSERT_EQ(kinds(events), std::vector<std::string>{"xid"});
  EXPECT_EQ(events[0].metric, "xid_errors[79]");
  EXPECT_EQ(events[0].before, "0");
  EXPECT_EQ(events[0].after, "2");
}

TEST(Events, OneBlockErrorIsOneEventWithTheTotalNamedInIt) {
  // amdgpu's ecc_corrected_volatile sums the blocks' correctable counts: one UMC error raises both.
  const EventLook before = gpu("a", {number(MetricId::ras_correctable, 5, "umc"), number(MetricId::ras_correctable, 0, "gfx"),
                                     number(MetricId::ecc_corrected_volatile, 5), number(MetricId::ecc_uncorrected_volatile, 1)});
  const EventLook after = gpu("a", {number(MetricId::ras_correctable, 6, "umc"), number(MetricId::ras_correctable, 0, "gfx"),
                                    number(MetricId::ecc_corrected_volatile, 6), number(MetricId::ecc_uncorrected_volatile, 2)});
  const auto events = device_events(&before, after);
  ASSERT_EQ(events.size(), 2u);  // the correctable error; the uncorrectable total has no block here
  std::map<std::string, std::string> messages;
  for (const Event& e : events) messages[e.metric] = e.message;
  EXPECT_EQ(messages, (std::map<std::string, std::string>{
                          {"ras_correctable[umc]", "1 more (the device's ecc_corrected_volatile went from 5 to 6)"},
                          {"ecc_uncorrected_volatile", "1 more"}}));
}

TEST(Events, CountersRisingFallingAndRestarting) {
  const EventLook before = gpu("a", {number(MetricId::ras_correctable, 5, "umc"), number(MetricId::ras_uncorrectable, 1, "umc"),
                                     number(MetricId::energy_consumed, 1000), number(MetricId::xid_errors, 1, "48")});
  const EventLook after = gpu("a", {number(MetricId::ras_correctable, 7, "umc"), number(MetricId::ras_uncorrectable, 1, "umc"),
                                    number(MetricId::energy_consumed, 10), number(MetricId::xid_errors, 3, "48")});
  const auto events = device_events(&before, after);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"xid", "counters-restarted", "memory-errors"}));
  EXPECT_EQ(find(events, "xid").before + "->" + find(events, "xid").after, "1->3");
  EXPECT_EQ(find(events, "memory-errors").metric, "ras_correctable[umc]");
  EXPECT_EQ(find(events, "memory-errors").message, "2 more");  // the change itself is in metric, before, after
  EXPECT_EQ(find(events, "counters-restarted").metric, "energy_consumed");
  // Energy rising and temperature moving are no events.
  const EventLook warmer = gpu("a", {number(MetricId::energy_consumed, 20), number(MetricId::temperature_junction, 80)});
  const EventLook cooler = gpu("a", {number(MetricId::energy_consumed, 30), number(MetricId::temperature_junction, 60)});
  EXPECT_TRUE(device_events(&warmer, cooler).empty());
}

TEST(Events, ThrottlingAndPartitions) {
  EventLook before = gpu("a", {number(MetricId::throttle_status, 0), text(MetricId::compute_partition, "SPX")});
  EventLook after = gpu("a", {number(MetricId::throttle_status, 4), text(MetricId::compute_partition, "CPX")});
  after.device.partition_count = 8;
  before.device.partition_count = 1;
  const auto events = device_events(&before, after);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"partitions-changed", "partition-mode-changed", "throttling-started"}));
  EXPECT_EQ(find(events, "throttling-started").after, "0x4");
  EXPECT_EQ(find(events, "partition-mode-changed").before + "->" + find(events, "partition-mode-changed").after, "SPX->CPX");
  EXPECT_EQ(kinds(device_events(&after, before)), (std::vector<std::string>{"partitions-changed", "partition-mode-changed",
                                                                             "throttling-stopped"}));
}

TEST(Events, UnreadableAndReadableAgain) {
  const EventLook answering = gpu("a", {number(MetricId::ras_correctable, 5, "umc")});
  const EventLook failing = gpu("a", {failed(MetricId::ras_correctable), failed(MetricId::throttle_status)});
  EXPECT_EQ(kinds(device_events(&answering, failing)), std::vector<std::string>{"unreadable"});
  EXPECT_EQ(kinds(device_events(&failing, answering)), std::vector<std::string>{"readable"});
  EventLook faulted = answering;
  faulted.device.fault = "its device folder is gone";
  EXPECT_EQ(kinds(device_events(&answering, faulted)), std::vector<std::string>{"unreadable"});
  // A value that could not be read at one look is no change.
  EXPECT_TRUE(device_events(&failing, failing).empty());
}

TEST(Events, GpusComingAndGoing) {
  const EventLook a = gpu("a", {});
  const EventLook b = gpu("b", {number(MetricId::xid_errors, 1, "79")});
  const auto events = events_between({a}, {b});
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"device-removed", "device-added", "xid"}));
  EXPECT_EQ(events[0].device.uuid, "a");
  EXPECT_EQ(events[1].device.uuid, "b");
  EXPECT_TRUE(events_between({a, b}, {a, b}).empty());
}

}  // namespace
}  // namespace hipstack::smi
