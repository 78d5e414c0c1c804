// Tests of the gpu_metrics v1.9 decoder (backends/amdgpu/gpu_metrics_v1_9.cpp): the self-describing
// attribute table. Tables come from gpu_metrics_builder.hpp's AttributeTableBuilder, which encodes
// each attribute from its id, unit, type and values, independently of the decoder's map.
#include "backends/amdgpu/gpu_metrics.hpp"
#include "gpu_metrics_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hipstack::smi::detail {
namespace {

using test::AttributeTableBuilder;
using M = GpuMetrics;
using Bytes = std::vector<std::uint8_t>;

// The first n bytes of the table (all of them by default), as a short read would give them.
GpuMetricsDecode decode(const Bytes& table, std::size_t n = SIZE_MAX) {
  return decode_gpu_metrics(std::span<const std::uint8_t>(table.data(), std::min(n, table.size())));
}

using A = AttributeTableBuilder;
constexpr std::uint64_t kOnes = ~std::uint64_t{0};

TEST(GpuMetricsV1_9, SeveralTypesUnitsAndInstanceCountsDecode) {
  A t;
  t.add(0, A::celsius, A::u16, {65}).add(2, A::celsius, A::u16, {kOnes}).add(3, A::watt, A::u16, {550});
  t.add(4, A::percent, A::u16, {42}).add(6, A::gbps_bw, A::u64, {5300}).add(7, A::none, A::u64, {65536 * 1000});
  t.add(8, A::ns, A::u64, {123456789012}).add(9, A::none, A::u32, {777}).add(11, A::none, A::u32, {55});
  t.add(16, A::none, A::u16, {16}).add(17, A::tenth_gts, A::u16, {320}).add(19, A::gts, A::u16, {32});
  t.add(23, A::gbps_bw, A::u64, {7, kOnes, 3}).add(25, A::none, A::u64, {12});
  t.add(29, A::kbytes, A::u64, {1, 2, kOnes, 4, 5, 6, 7, 8}).add(32, A::ten_ns, A::u64, {500});
  t.add(33, A::mhz, A::u16, {2100, 2101, 2102, 2103, kOnes, kOnes, kOnes, kOnes});
  t.add(37, A::mhz, A::u16, {1300}).add(38, A::none, A::u16, {4}).add(42, A::percent, A::u16, {10, 20, 30, 40});
  t.add(48, A::celsius, A::u16, {40, 41, kOnes, 43});
  t.add(200, A::none, A::s16, {static_cast<std::uint16_t>(-5)}).add(201, A::none, A::s8, {0xFF});
  t.add(202, A::percent, A::u8, {7}).add(203, A::none, A::s64, {static_cast<std::uint64_t>(-123456)});
  t.add(204, A::none, A::s32, {0xFFFFFFFE}).add(205, A::none, A::u32, {});
  const auto r = decode(t.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.layout, "v1.9");
  EXPECT_EQ(m.temperature_hotspot, 65.0);
  EXPECT_FALSE(m.temperature_vrsoc.has_value());   // all-ones
  EXPECT_EQ(m.current_socket_power, 550.0);
  EXPECT_EQ(m.average_gfx_activity, 42.0);
  EXPECT_EQ(m.mem_max_bandwidth, 5300e9);
  EXPECT_EQ(m.energy_accumulator, 1000.0);
  EXPECT_DOUBLE_EQ(*m.system_clock_counter, 123.456789012);
  EXPECT_EQ(m.accumulation_counter, 777u);
  EXPECT_EQ(m.ppt_residency_acc, 55u);
  EXPECT_EQ(m.pcie_link_width, 16.0);
  EXPECT_EQ(m.pcie_link_speed, 32.0);              // 320 x 0.1 GT/s
  EXPECT_EQ(m.xgmi_link_speed, 32.0);              // GT/s
  EXPECT_EQ(m.pcie_bandwidth_inst, 10e9);          // sum of the present instances
  EXPECT_EQ(m.pcie_replay_count, 12.0);
  EXPECT_EQ(m.xgmi_read_data, (std::vector<double>{1024, 2048, 4096, 5120, 6144, 7168, 8192}));
  EXPECT_DOUBLE_EQ(*m.firmware_timestamp, 5e-6);
  EXPECT_EQ(m.current_gfxclk_per_xcc, (std::vector<double>{2100, 2101, 2102, 2103}));
  EXPECT_EQ(m.current_gfxclk, 2100.0);
  EXPECT_EQ(m.current_uclk, 1300.0);
  EXPECT_EQ(m.num_partition, 4u);
  EXPECT_EQ(m.vcn_activity, (std::vector<double>{10, 20, 30, 40}));
  EXPECT_EQ(m.temperature_hbm, (std::vector<double>{40, 41, 43}));
  ASSERT_EQ(m.attributes.size(), 27u);
  const auto& s16 = m.attributes[21];
  EXPECT_EQ(s16.id, 200);
  EXPECT_EQ(s16.type, A::s16);
  EXPECT_EQ(s16.raw, std::vector<std::uint64_t>{static_cast<std::uint64_t>(-5)});
  EXPECT_EQ(s16.values[0], -5.0);
  EXPECT_FALSE(m.attributes[22].values[0].has_value());  // s8 all-ones
  EXPECT_EQ(m.attributes[23].values[0], 7.0);
  EXPECT_EQ(m.attributes[24].values[0], -123456.0);
  EXPECT_EQ(m.attributes[25].values[0], -2.0);
  EXPECT_TRUE(m.attributes[26].values.empty());  // zero instances
  EXPECT_EQ(m.attributes[0].value_offset, 16u);  // 4 header + 4 attr_count + 8 encoding
}

// The MI300X (smu_v13_0_6) field list: 47 attributes, 1150 bytes like the real MI300X captures.
TEST(GpuMetricsV1_9, Mi300xShapedTableIs1150Bytes) {
  A t;
  const struct { std::uint16_t id; std::uint8_t unit, type; std::size_t n; } mi300[] = {
      {0, A::celsius, A::u16, 1}, {1, A::celsius, A::u16, 1}, {2, A::celsius, A::u16, 1}, {3, A::watt, A::u16, 1},
      {4, A::percent, A::u16, 1}, {5, A::percent, A::u16, 1}, {6, A::gbps_bw, A::u64, 1}, {7, A::none, A::u64, 1},
      {8, A::ns, A::u64, 1}, {9, A::none, A::u32, 1}, {10, A::none, A::u32, 1}, {11, A::none, A::u32, 1},
      {12, A::none, A::u32, 1}, {13, A::none, A::u32, 1}, {14, A::none, A::u32, 1}, {15, A::none, A::u32, 1},
      {16, A::none, A::u16, 1}, {17, A::tenth_gts, A::u16, 1}, {18, A::none, A::u16, 1}, {19, A::gts, A::u16, 1},
      {20, A::percent, A::u32, 1}, {21, A::percent, A::u32, 1}, {22, A::percent, A::u64, 1},
      {23, A::gbps_bw, A::u64, 1}, {24, A::none, A::u64, 1}, {25, A::none, A::u64, 1}, {26, A::none, A::u64, 1},
      {27, A::none, A::u32, 1}, {28, A::none, A::u32, 1}, {29, A::kbytes, A::u64, 8}, {30, A::kbytes, A::u64, 8},
      {31, A::none, A::u16, 8}, {32, A::ten_ns, A::u64, 1}, {33, A::mhz, A::u16, 8}, {34, A::mhz, A::u16, 4},
      {35, A::mhz, A::u16, 4}, {36, A::mhz, A::u16, 4}, {37, A::mhz, A::u16, 1}, {39, A::none, A::u32, 1},
      {40, A::percent, A::u32, 8}, {41, A::percent, A::u16, 40}, {42, A::percent, A::u16, 4},
      {43, A::percent, A::u64, 8}, {44, A::none, A::u64, 8}, {45, A::none, A::u64, 8}, {46, A::none, A::u64, 8},
      {47, A::none, A::u64, 8}};
  for (const auto& a : mi300) t.add_unsupported(a.id, a.unit, a.type, a.n);
  const Bytes b = t.bytes();
  EXPECT_EQ(b.size(), 1150u);
  const auto r = decode(b);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.metrics.attributes.size(), 47u);
  EXPECT_FALSE(r.metrics.temperature_hotspot.has_value());
  EXPECT_TRUE(r.metrics.current_gfxclk_per_xcc.empty());
  EXPECT_FALSE(r.metrics.num_partition.has_value());
}

TEST(GpuMetricsV1_9, UnitMismatchDuplicatesAndAmbiguousIdsStayRaw) {
  A t;
  t.add(0, A::watt, A::u16, {99});           // a temperature id with a power unit: not mapped
  t.add(1, A::celsius, A::u16, {50}).add(1, A::celsius, A::u16, {60});  // duplicate: first wins
  t.add(49, A::celsius, A::u16, {70, 71});   // AID or MID depending on the kernel: raw only
  const auto r = decode(t.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.metrics.temperature_hotspot.has_value());
  EXPECT_EQ(r.metrics.temperature_mem, 50.0);
  ASSERT_EQ(r.metrics.attributes.size(), 4u);
  EXPECT_EQ(r.metrics.attributes[3].values, (std::vector<std::optional<double>>{70.0, 71.0}));
}

// A link's index is its link: an unfilled state between two filled ones stays in its place (NaN),
// unfilled ones after the last filled one are dropped; the same in the fixed v1.7 layout.
TEST(GpuMetricsV1_9, LinkStatesKeepTheirLinks) {
  A t;
  t.add(31, A::none, A::u16, {1, kOnes, 0, kOnes, kOnes});
  const auto r = decode(t.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.metrics.xgmi_link_status.size(), 3u);
  EXPECT_EQ(r.metrics.xgmi_link_status[0], 1.0);
  EXPECT_TRUE(std::isnan(r.metrics.xgmi_link_status[1]));
  EXPECT_EQ(r.metrics.xgmi_link_status[2], 0.0);
}

TEST(GpuMetricsV1_9, EmptyTable) {
  const auto r = decode(A().bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.metrics.structure_size, 8);
  EXPECT_TRUE(r.metrics.attributes.empty());
}

TEST(GpuMetricsV1_9, MalformedTablesAreErrorsWithOffsets) {
  A t;
  t.add(0, A::celsius, A::u16, {65}).add(33, A::mhz, A::u16, {1, 2, 3, 4, 5, 6, 7, 8});
  const Bytes good = t.bytes();  // 8 + (8 + 2) + (8 + 16) = 42 bytes
  ASSERT_EQ(good.size(), 42u);
  const auto negative = decode(t.bytes(-1));
  EXPECT_FALSE(negative.ok);
  EXPECT_NE(negative.error.find("attr_count -1 at byte 4"), std::string::npos) << negative.error;
  const auto too_many = decode(t.bytes(3));
  EXPECT_FALSE(too_many.ok);
  EXPECT_NE(too_many.error.find("attribute 2 of 3"), std::string::npos) << too_many.error;
  EXPECT_NE(too_many.error.find("bytes 42-49"), std::string::npos) << too_many.error;
  EXPECT_TRUE(too_many.metrics.attributes.empty());  // header only on error
  EXPECT_FALSE(too_many.metrics.temperature_hotspot.has_value());
  A bad_type;
  bad_type.add_raw_encoding(A::encode(A::celsius, 9, 0, 1), 2);
  const auto bt = decode(bad_type.bytes());
  EXPECT_FALSE(bt.ok);
  EXPECT_NE(bt.error.find("unknown value type 9"), std::string::npos) << bt.error;
  EXPECT_NE(bt.error.find("at byte 8"), std::string::npos) << bt.error;
  // The table cut at every length, with structure_size saying so: never a crash, always an error.
  for (std::size_t n = 0; n < good.size(); ++n) {
    Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    if (n >= 2) cut[0] = static_cast<std::uint8_t>(n), cut[1] = 0;
    EXPECT_FALSE(decode(cut).ok) << n;
    EXPECT_FALSE(decode(good, n).ok) << n;  // and with the original header
  }
  const auto values = decode(good, 41);
  EXPECT_EQ(values.error, "gpu_metrics: header says 42 bytes but only 41 were read");
  Bytes short_size = good;
  short_size[0] = 41;
  const auto cut_values = decode(short_size);
  EXPECT_NE(cut_values.error.find("8 values of 2 bytes end at byte 42, past structure_size 41"), std::string::npos)
      << cut_values.error;
}

}  // namespace
}  // namespace hipstack::smi::detail
