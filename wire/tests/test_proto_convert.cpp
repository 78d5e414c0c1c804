// convert/proto_convert.hpp: every value the daemon sends reads back as the same value in
// hipstack-smi, and what a newer peer may send reads as the least-claiming value.
#include <gtest/gtest.h>

#include "proto_convert.hpp"

namespace hipstack::proto {
namespace {

smi::Reading reading(smi::MetricId id, std::string instance, smi::Status status, smi::Value value, int error_code = 0) {
  smi::Reading r;
  r.id = id;
  r.instance = std::move(instance);
  r.status = status;
  r.value = std::move(value);
  r.error_code = error_code;
  r.detail = "from /sys/x, \"quoted\"";
  return r;
}

void expect_same(const std::vector<smi::Reading>& want, const std::vector<smi::Reading>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].id, got[i].id) << i;
    EXPECT_EQ(want[i].instance, got[i].instance) << i;
    EXPECT_EQ(want[i].status, got[i].status) << i;
    EXPECT_EQ(want[i].error_code, got[i].error_code) << i;
    EXPECT_EQ(want[i].value, got[i].value) << i;
    EXPECT_EQ(want[i].detail, got[i].detail) << i;
  }
}

std::vector<smi::Reading> round_trip(const std::vector<smi::Reading>& readings, const std::vector<smi::MetricId>& wanted = {}) {
  pb::DeviceMetrics message;
  add_readings(readings, wanted, message.mutable_readings());
  pb::DeviceMetrics parsed;
  EXPECT_TRUE(parsed.ParseFromString(message.SerializeAsString()));
  return from_proto(parsed.readings());
}

TEST(ProtoConvert, EveryStatusAndVerdictRoundTrips) {
  for (const smi::Status s : {smi::Status::ok, smi::Status::not_supported, smi::Status::unavailable, smi::Status::error}) {
    EXPECT_NE(to_proto(s), pb::READING_STATUS_UNSPECIFIED) << smi::status_name(s);
    EXPECT_EQ(from_proto(to_proto(s)), s) << smi::status_name(s);
  }
  for (const smi::Verdict v : {smi::Verdict::pass, smi::Verdict::warn, smi::Verdict::fail, smi::Verdict::unknown}) {
    EXPECT_NE(to_proto(v), pb::VERDICT_UNSPECIFIED) << smi::verdict_name(v);
    EXPECT_EQ(from_proto(to_proto(v)), v) << smi::verdict_name(v);
  }
}

TEST(ProtoConvert, ValuesANewerPeerMaySendClaimNothing) {
  EXPECT_EQ(from_proto(pb::READING_STATUS_UNSPECIFIED), smi::Status::not_supported);
  EXPECT_EQ(from_proto(static_cast<pb::ReadingStatus>(99)), smi::Status::not_supported);
  EXPECT_EQ(from_proto(pb::VERDICT_UNSPECIFIED), smi::Verdict::unknown);
  EXPECT_EQ(from_proto(static_cast<pb::Verdict>(99)), smi::Verdict::unknown);
  pb::Reading unknown_metric;
  unknown_metric.set_metric("a_metric_of_a_later_release");
  unknown_metric.set_integer(1);
  EXPECT_FALSE(from_proto(unknown_metric).has_value());
}

TEST(ProtoConvert, ReadingsOfEveryValueTypeRoundTrip) {
  const std::vector<smi::Reading> readings{
      reading(smi::MetricId::vram_used, "", smi::Status::ok, std::int64_t{-5}),
      reading(smi::MetricId::temperature_edge, "", smi::Status::ok, 41.25),
      reading(smi::MetricId::dpm_level_current, "clock", smi::Status::ok, std::string("S")),
      reading(smi::MetricId::temperature_edge, "", smi::Status::error, std::monostate{}, 5),
      reading(smi::MetricId::vram_used, "", smi::Status::unavailable, std::monostate{}, 16),
  };
  expect_same(readings, round_trip(readings));
}

TEST(ProtoConvert, OnlyWantedReadingsAreSentWithTheCataloguesUnit) {
  const std::vector<smi::Reading> readings{reading(smi::MetricId::vram_used, "", smi::Status::ok, std::int64_t{7}),
                                           reading(smi::MetricId::temperature_edge, "", smi::Status::ok, 30.0)};
  pb::DeviceMetrics message;
  add_readings(readings, {smi::MetricId::temperature_edge}, message.mutable_readings());
  ASSERT_EQ(message.readings_size(), 1);
  EXPECT_EQ(message.readings(0).metric(), "temperature_edge");
  EXPECT_EQ(message.readings(0).metric_id(), static_cast<std::uint32_t>(smi::MetricId::temperature_edge));
  EXPECT_EQ(message.readings(0).unit(), smi::unit_symbol(smi::find_metric(smi::MetricId::temperature_edge)->unit));
}

TEST(ProtoConvert, DevicesHealthPartitionsAndEventsRoundTrip) {
  smi::DeviceSummary device{3, "amd", "amdgpu", "0000:c1:00.0", "uuid-1", "AMD Instinct MI300X", 8, "gone"};
  pb::Device device_message;
  to_proto(device, &device_message);
  const smi::DeviceSummary device_back = from_proto(device_message);
  EXPECT_EQ(device_back.index, 3U);
  EXPECT_EQ(device_back.vendor, "amd");
  EXPECT_EQ(device_back.backend, "amdgpu");
  EXPECT_EQ(device_back.bdf, "0000:c1:00.0");
  EXPECT_EQ(device_back.uuid, "uuid-1");
  EXPECT_EQ(device_back.name, "AMD Instinct MI300X");
  EXPECT_EQ(device_back.partition_count, 8U);
  EXPECT_EQ(device_back.fault, "gone");

  smi::HealthReport report{3, smi::Verdict::warn,
                           {{"thermal.edge", smi::Verdict::warn, "91 C", "90 C", "hot", "check the fans"},
                            {"memory.uncorrectable_ecc", smi::Verdict::unknown, "", "", "not read", ""}}};
  pb::DeviceHealth health_message;
  to_proto(report, &health_message);
  const smi::HealthReport report_back = from_proto(health_message, 3);
  EXPECT_EQ(report_back.device, 3U);
  EXPECT_EQ(report_back.overall, smi::Verdict::warn);
  ASSERT_EQ(report_back.findings.size(), 2U);
  EXPECT_EQ(report_back.findings[0].check, "thermal.edge");
  EXPECT_EQ(report_back.findings[0].verdict, smi::Verdict::warn);
  EXPECT_EQ(report_back.findings[0].reading, "91 C");
  EXPECT_EQ(report_back.findings[0].threshold, "90 C");
  EXPECT_EQ(report_back.findings[0].message, "hot");
  EXPECT_EQ(report_back.findings[0].remediation, "check the fans");
  EXPECT_EQ(report_back.findings[1].verdict, smi::Verdict::unknown);

  smi::Partition partition{2, "uuid-1/2", "0000:c1:00.2", {reading(smi::MetricId::vram_used, "", smi::Status::ok, std::int64_t{9})}};
  pb::Partition partition_message;
  to_proto(partition, &partition_message);
  const smi::Partition partition_back = from_proto(partition_message);
  EXPECT_EQ(partition_back.index, 2U);
  EXPECT_EQ(partition_back.id, "uuid-1/2");
  EXPECT_EQ(partition_back.bdf, "0000:c1:00.2");
  expect_same(partition.readings, partition_back.readings);

  smi::Event event{"xid", device, "xid_errors", "0", "1", "an XID"};
  const auto found = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764441600123));
  pb::Event event_message;
  to_proto(event, found, 42, &event_message);
  EXPECT_EQ(event_message.sequence(), 42U);
  const smi::Event event_back = from_proto(event_message);
  EXPECT_EQ(found_at(event_message), found);
  EXPECT_EQ(event_back.kind, "xid");
  EXPECT_EQ(event_back.device.index, 3U);
  EXPECT_EQ(event_back.device.bdf, "0000:c1:00.0");
  EXPECT_EQ(event_back.device.uuid, "uuid-1");
  EXPECT_EQ(event_back.metric, "xid_errors");
  EXPECT_EQ(event_back.before, "0");
  EXPECT_EQ(event_back.after, "1");
  EXPECT_EQ(event_back.message, "an XID");
  EXPECT_EQ(event_message.action(), "unknown") << "an XID event whose metric names no code";

  // An XID event carries its code's action (NVIDIA's catalogue); other events none.
  to_proto(smi::Event{"xid", device, "xid_errors[79]", "0", "1", "XID 79"}, found, 43, &event_message);
  EXPECT_EQ(event_message.action(), "reboot_node");
  to_proto(smi::Event{"xid", device, "xid_errors[31]", "0", "2", "XID 31"}, found, 44, &event_message);
  EXPECT_EQ(event_message.action(), "restart_app");
  pb::Event other;
  to_proto(smi::Event{"memory-errors", device, "ras_correctable[umc]", "0", "1", ""}, found, 45, &other);
  EXPECT_EQ(other.action(), "");
}

}  // namespace
}  // namespace hipstack::proto
