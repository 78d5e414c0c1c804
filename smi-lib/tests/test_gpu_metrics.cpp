// Tests of the amdgpu gpu_metrics decoder (backends/amdgpu/gpu_metrics.*).
//
// Constructed blobs come from gpu_metrics_builder.hpp, which lays the kernel structs out from
// ordered field lists (natural alignment), independently of the decoder's offset tables. Real blobs
// are in data/gpu_metrics (see its README.md); their expected values were read from the bytes by hand.
#include "backends/amdgpu/gpu_metrics.hpp"
#include "gpu_metrics_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#ifndef HIPSTACK_TEST_DATA_DIR
// The build defines it; otherwise use the data folder beside this source file.
#define HIPSTACK_TEST_DATA_DIR (std::filesystem::path(__FILE__).parent_path() / "data").string()
#endif

namespace hipstack::smi::detail {
namespace {

using test::GpuMetricsBlob;
using M = GpuMetrics;
using Bytes = std::vector<std::uint8_t>;

GpuMetricsDecode decode(const Bytes& b, std::size_t n = SIZE_MAX) {
  return decode_gpu_metrics(std::span<const std::uint8_t>(b.data(), std::min(n, b.size())));
}

Bytes read_blob(const std::string& name) {
  const auto path = std::filesystem::path(HIPSTACK_TEST_DATA_DIR) / "gpu_metrics" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ---- Expectation tables: kernel field name -> decoded member, converted = stored * mul / div ----
struct Num { const char* field; std::optional<double> M::*member; double mul = 1, div = 1; };
struct Vec { const char* field; std::vector<double> M::*member; double mul = 1, div = 1; };
struct Bits { const char* field; std::optional<std::uint64_t> M::*member; };
struct Expect {
  std::vector<Num> nums;
  std::vector<Vec> vecs;
  std::vector<Bits> bits;
  std::vector<std::string> ignored;  // fields the decoder deliberately skips
};

constexpr double kE = 65536.0;  // energy counts per J

Expect v1_legacy_expect() {
  return {{{"temperature_edge", &M::temperature_edge}, {"temperature_hotspot", &M::temperature_hotspot},
           {"temperature_mem", &M::temperature_mem}, {"temperature_vrgfx", &M::temperature_vrgfx},
           {"temperature_vrsoc", &M::temperature_vrsoc}, {"temperature_vrmem", &M::temperature_vrmem},
           {"average_gfx_activity", &M::average_gfx_activity}, {"average_umc_activity", &M::average_umc_activity},
           {"average_mm_activity", &M::average_mm_activity}, {"average_socket_power", &M::average_socket_power},
           {"energy_accumulator", &M::energy_accumulator, 1, kE},
           {"system_clock_counter", &M::system_clock_counter, 1, 1e9},
           {"average_gfxclk_frequency", &M::average_gfxclk}, {"average_socclk_frequency", &M::average_socclk},
           {"average_uclk_frequency", &M::average_uclk}, {"average_vclk0_frequency", &M::average_vclk0},
           {"average_dclk0_frequency", &M::average_dclk0}, {"average_vclk1_frequency", &M::average_vclk1},
           {"average_dclk1_frequency", &M::average_dclk1}, {"current_gfxclk", &M::current_gfxclk},
           {"current_socclk", &M::current_socclk}, {"current_uclk", &M::current_uclk},
           {"current_vclk0", &M::current_vclk0}, {"current_dclk0", &M::current_dclk0},
           {"current_vclk1", &M::current_vclk1}, {"current_dclk1", &M::current_dclk1},
           {"current_fan_speed", &M::fan_speed_rpm}, {"pcie_link_width", &M::pcie_link_width},
           {"pcie_link_speed", &M::pcie_link_speed, 1, 10}, {"gfx_activity_acc", &M::gfx_activity_acc},
           {"mem_activity_acc", &M::mem_activity_acc}, {"firmware_timestamp", &M::firmware_timestamp, 1, 1e8},
           {"voltage_soc", &M::voltage_soc}, {"voltage_gfx", &M::voltage_gfx}, {"voltage_mem", &M::voltage_mem}},
          {{"temperature_hbm", &M::temperature_hbm}},
          {{"throttle_status", &M::throttle_status}, {"indep_throttle_status", &M::indep_throttle_status}},
          {"padding", "padding1"}};
}

Expect v1_mi_expect(bool early) {
  return {{{"temperature_hotspot", &M::temperature_hotspot}, {"temperature_mem", &M::temperature_mem},
           {"temperature_vrsoc", &M::temperature_vrsoc}, {"curr_socket_power", &M::current_socket_power},
           {"average_gfx_activity", &M::average_gfx_activity}, {"average_umc_activity", &M::average_umc_activity},
           {"mem_max_bandwidth", &M::mem_max_bandwidth, 1e9}, {"energy_accumulator", &M::energy_accumulator, 1, kE},
           {"system_clock_counter", &M::system_clock_counter, 1, 1e9}, {"pcie_link_width", &M::pcie_link_width},
           {"pcie_link_speed", &M::pcie_link_speed, 1, 10}, {"xgmi_link_width", &M::xgmi_link_width},
           {"xgmi_link_speed", &M::xgmi_link_speed}, {"gfx_activity_acc", &M::gfx_activity_acc},
           {"mem_activity_acc", &M::mem_activity_acc}, {"pcie_bandwidth_acc", &M::pcie_bandwidth_acc},
           {"pcie_bandwidth_inst", &M::pcie_bandwidth_inst, early ? 1e6 / 8 : 1e9},
           {"pcie_replay_count_acc", &M::pcie_replay_count},
           {"firmware_timestamp", &M::firmware_timestamp, 1, 1e8}, {"current_uclk", &M::current_uclk}},
          {{"vcn_activity", &M::vcn_activity}, {"jpeg_activity", &M::jpeg_activity},
           {"xgmi_read_data_acc", &M::xgmi_read_data, 1024}, {"xgmi_write_data_acc", &M::xgmi_write_data, 1024},
           {"xgmi_link_status", &M::xgmi_link_status}, {"current_gfxclk", &M::current_gfxclk_per_xcc},
           {"current_socclk", &M::current_socclks}, {"current_vclk0", &M::current_vclk0s},
           {"current_dclk0", &M::current_dclk0s}},
          {{"throttle_status", &M::throttle_status}, {"gfxclk_lock_status", &M::gfxclk_lock_status},
           {"accumulation_counter", &M::accumulation_counter}, {"prochot_residency_acc", &M::prochot_residency_acc},
           {"ppt_residency_acc", &M::ppt_residency_acc}, {"socket_thm_residency_acc", &M::socket_thm_residency_acc},
           {"vr_thm_residency_acc", &M::vr_thm_residency_acc}, {"hbm_thm_residency_acc", &M::hbm_thm_residency_acc},
           {"pcie_l0_to_recov_count_acc", &M::pcie_l0_to_recovery_count},
           {"pcie_replay_rover_count_acc", &M::pcie_replay_rollover_count},
           {"pcie_nak_sent_count_acc", &M::pcie_nak_sent_count}, {"pcie_nak_rcvd_count_acc", &M::pcie_nak_received_count},
           {"pcie_lc_perf_other_end_recovery", &M::pcie_other_end_recovery_count}},
          {"padding", "num_partition", "xcp_stats"}};  // the last two: GpuMetricsV1.PartitionsOf*
}

Expect v2_expect() {
  return {{{"temperature_gfx", &M::temperature_gfx, 1, 100}, {"temperature_soc", &M::temperature_soc, 1, 100},
           {"average_gfx_activity", &M::average_gfx_activity, 1, 100},
           {"average_mm_activity", &M::average_mm_activity, 1, 100},
           {"system_clock_counter", &M::system_clock_counter, 1, 1e9},
           {"average_socket_power", &M::average_socket_power, 1, 1000},
           {"average_cpu_power", &M::average_cpu_power, 1, 1000}, {"average_soc_power", &M::average_soc_power, 1, 1000},
           {"average_gfx_power", &M::average_gfx_power, 1, 1000}, {"average_gfxclk_frequency", &M::average_gfxclk},
           {"average_socclk_frequency", &M::average_socclk}, {"average_uclk_frequency", &M::average_uclk},
           {"average_fclk_frequency", &M::average_fclk}, {"average_vclk_frequency", &M::average_vclk0},
           {"average_dclk_frequency", &M::average_dclk0}, {"current_gfxclk", &M::current_gfxclk},
           {"current_socclk", &M::current_socclk}, {"current_uclk", &M::current_uclk},
           {"current_fclk", &M::current_fclk}, {"current_vclk", &M::current_vclk0}, {"current_dclk", &M::current_dclk0},
           {"average_temperature_gfx", &M::average_temperature_gfx, 1, 100},
           {"average_temperature_soc", &M::average_temperature_soc, 1, 100},
           {"average_cpu_voltage", &M::voltage_cpu}, {"average_soc_voltage", &M::voltage_soc},
           {"average_gfx_voltage", &M::voltage_gfx}, {"average_cpu_current", &M::average_cpu_current, 1, 1000},
           {"average_soc_current", &M::average_soc_current, 1, 1000},
           {"average_gfx_current", &M::average_gfx_current, 1, 1000}},
          {{"temperature_core", &M::temperature_core, 1, 100}, {"temperature_l3", &M::temperature_l3, 1, 100},
           {"average_core_power", &M::average_core_power, 1, 1000}, {"current_coreclk", &M::current_coreclk},
           {"current_l3clk", &M::current_l3clk}, {"average_temperature_core", &M::average_temperature_core, 1, 100},
           {"average_temperature_l3", &M::average_temperature_l3, 1, 100}},
          {{"throttle_status", &M::throttle_status}, {"indep_throttle_status", &M::indep_throttle_status}},
          {"fan_pwm", "padding"}};
}

Expect v3_expect() {
  return {{{"temperature_gfx", &M::temperature_gfx, 1, 100}, {"temperature_soc", &M::temperature_soc, 1, 100},
           {"temperature_skin", &M::temperature_skin, 1, 100}, {"average_gfx_activity", &M::average_gfx_activity},
           {"average_vcn_activity", &M::average_mm_activity}, {"average_dram_reads", &M::dram_read_bandwidth, 1e6},
           {"average_dram_writes", &M::dram_write_bandwidth, 1e6}, {"average_ipu_reads", &M::ipu_read_bandwidth, 1e6},
           {"average_ipu_writes", &M::ipu_write_bandwidth, 1e6},
           {"system_clock_counter", &M::system_clock_counter, 1, 1e9},
           {"average_socket_power", &M::average_socket_power, 1, 1000},
           {"average_ipu_power", &M::average_ipu_power, 1, 1000}, {"average_apu_power", &M::average_apu_power, 1, 1000},
           {"average_gfx_power", &M::average_gfx_power, 1, 1000}, {"average_dgpu_power", &M::average_dgpu_power, 1, 1000},
           {"average_all_core_power", &M::average_all_core_power, 1, 1000},
           {"average_sys_power", &M::average_sys_power, 1, 1000}, {"stapm_power_limit", &M::stapm_power_limit, 1, 1000},
           {"current_stapm_power_limit", &M::current_stapm_power_limit, 1, 1000},
           {"average_gfxclk_frequency", &M::average_gfxclk}, {"average_socclk_frequency", &M::average_socclk},
           {"average_vpeclk_frequency", &M::average_vpeclk}, {"average_ipuclk_frequency", &M::average_ipuclk},
           {"average_fclk_frequency", &M::average_fclk}, {"average_vclk_frequency", &M::average_vclk0},
           {"average_uclk_frequency", &M::average_uclk}, {"average_mpipu_frequency", &M::average_mpipuclk},
           {"current_core_maxfreq", &M::current_core_maxfreq}, {"current_gfx_maxfreq", &M::current_gfx_maxfreq}},
          {{"temperature_core", &M::temperature_core, 1, 100}, {"average_ipu_activity", &M::ipu_activity},
           {"average_core_c0_activity", &M::core_c0_activity}, {"average_core_power", &M::average_core_power, 1, 1000},
           {"current_coreclk", &M::current_coreclk}},
          {{"throttle_residency_prochot", &M::throttle_residency_prochot},
           {"throttle_residency_spl", &M::throttle_residency_spl},
           {"throttle_residency_fppt", &M::throttle_residency_fppt},
           {"throttle_residency_sppt", &M::throttle_residency_sppt},
           {"throttle_residency_thm_core", &M::throttle_residency_thm_core},
           {"throttle_residency_thm_gfx", &M::throttle_residency_thm_gfx},
           {"throttle_residency_thm_soc", &M::throttle_residency_thm_soc}},
          {"time_filter_alphavalue"}};
}

struct Version {
  int format, content;
  bool early;
  const char* layout;
};
const Version kFixed[] = {{1, 0, false, "v1.0"}, {1, 1, false, "v1.1"}, {1, 2, false, "v1.2"},
                          {1, 3, false, "v1.3"}, {1, 4, false, "v1.4"}, {1, 5, false, "v1.5"},
                          {1, 6, true, "v1.6-early"}, {1, 6, false, "v1.6"}, {1, 7, false, "v1.7"},
                          {1, 8, false, "v1.8"}, {2, 0, false, "v2.0"}, {2, 1, false, "v2.1"},
                          {2, 2, false, "v2.2"}, {2, 3, false, "v2.3"}, {2, 4, false, "v2.4"},
                          {3, 0, false, "v3.0"}};

Expect expect_for(const Version& v) {
  if (v.format == 1) return v.content <= 3 ? v1_legacy_expect() : v1_mi_expect(v.early);
  return v.format == 2 ? v2_expect() : v3_expect();
}
bool is_header(const std::string& f) {
  return f == "structure_size" || f == "format_revision" || f == "content_revision";
}
bool is_apu(const Version& v) { return v.format >= 2; }
bool has_per_instance_clocks(const Version& v) { return v.format == 1 && v.content >= 4; }

// Every optional<double> member any version decodes, to check the ones a version lacks stay unset.
std::vector<std::optional<double> M::*> all_numbers() {
  std::vector<std::optional<double> M::*> all;
  for (const Expect& e : {v1_legacy_expect(), v1_mi_expect(false), v2_expect(), v3_expect()}) {
    for (const Num& n : e.nums) all.push_back(n.member);
  }
  return all;
}

// A distinct, non-sentinel value for element k of a field `width` bytes wide.
std::uint64_t distinct(std::size_t width, std::uint64_t k) {
  switch (width) {
    case 1: return 1 + k % 200;
    case 2: return 100 + 7 * k;
    case 4: return 100000 + 13 * k;
    default: return (std::uint64_t{1} << 40) + 17 * k;
  }
}

class FixedLayout : public ::testing::TestWithParam<Version> {};

std::string version_name(const ::testing::TestParamInfo<Version>& info) {
  std::string s = info.param.layout;
  std::replace(s.begin(), s.end(), '.', '_');
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

TEST_P(FixedLayout, ExpectationTablesCoverEveryField) {
  const Version v = GetParam();
  const Expect e = expect_for(v);
  const test::StructLayout layout = test::gpu_metrics_layout(v.format, v.content, v.early);
  for (const auto& f : layout.fields()) {
    const auto named = [&](const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& x) { return f.name == x.field; });
    };
    const bool ignored = std::find(e.ignored.begin(), e.ignored.end(), f.name) != e.ignored.end();
    EXPECT_TRUE(is_header(f.name) || named(e.nums) || named(e.vecs) || named(e.bits) || ignored) << f.name;
  }
}

TEST_P(FixedLayout, DistinctValuesDecodeToConvertedUnits) {
  const Version v = GetParam();
  GpuMetricsBlob b(v.format, v.content, v.early);
  std::map<std::string, std::vector<std::uint64_t>> written;
  std::uint64_t k = 0;
  for (const auto& f : b.layout().fields()) {
    if (is_header(f.name) || f.name == "xcp_stats") continue;
    for (std::size_t i = 0; i < f.count; ++i) {
      const std::uint64_t value = distinct(f.width, k++);
      b.set(f.name, value, i);
      written[f.name].push_back(value);
    }
  }
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.layout, v.layout);
  EXPECT_EQ(m.structure_size, b.layout().size());
  const Expect e = expect_for(v);
  std::vector<std::optional<double> M::*> set_here;
  for (const Num& n : e.nums) {
    if (!b.layout().has(n.field)) continue;
    set_here.push_back(n.member);
    ASSERT_TRUE((m.*n.member).has_value()) << n.field;
    EXPECT_DOUBLE_EQ(*(m.*n.member), static_cast<double>(written[n.field][0]) * n.mul / n.div) << n.field;
  }
  for (const Vec& x : e.vecs) {
    if (!b.layout().has(x.field)) continue;
    const auto& got = m.*x.member;
    ASSERT_EQ(got.size(), written[x.field].size()) << x.field;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_DOUBLE_EQ(got[i], static_cast<double>(written[x.field][i]) * x.mul / x.div) << x.field << "[" << i << "]";
    }
  }
  for (const Bits& x : e.bits) {
    if (!b.layout().has(x.field)) continue;
    EXPECT_EQ(m.*x.member, std::optional<std::uint64_t>(written[x.field][0])) << x.field;
  }
  if (has_per_instance_clocks(v)) {  // scalars = instance 0
    EXPECT_EQ(m.current_gfxclk, m.current_gfxclk_per_xcc.front());
    EXPECT_EQ(m.current_socclk, m.current_socclks.front());
    EXPECT_EQ(m.current_vclk0, m.current_vclk0s.front());
    EXPECT_EQ(m.current_dclk0, m.current_dclk0s.front());
    set_here.insert(set_here.end(), {&M::current_gfxclk, &M::current_socclk, &M::current_vclk0, &M::current_dclk0});
  }
  if (is_apu(v)) {  // hwmon's view: edge = gfx, junction = SoC
    EXPECT_EQ(m.temperature_edge, m.temperature_gfx);
    EXPECT_EQ(m.temperature_hotspot, m.temperature_soc);
    set_here.insert(set_here.end(), {&M::temperature_edge, &M::temperature_hotspot});
  }
  for (auto member : all_numbers()) {  // nothing this version lacks is invented
    if (std::find(set_here.begin(), set_here.end(), member) == set_here.end()) {
      EXPECT_FALSE((m.*member).has_value()) << "a field " << v.layout << " does not have was set";
    }
  }
}

TEST_P(FixedLayout, AllOnesFieldsAreNotSupported) {
  const Version v = GetParam();
  GpuMetricsBlob b(v.format, v.content, v.early);  // the kernel's 0xFF fill, header only
  if (b.layout().has("num_partition")) b.set("num_partition", 8);  // partitions present, all fields 0xFF
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  const Expect e = expect_for(v);
  for (const Num& n : e.nums) EXPECT_FALSE((m.*n.member).has_value()) << n.field;
  for (const Vec& x : e.vecs) EXPECT_TRUE((m.*x.member).empty()) << x.field;
  for (const Bits& x : e.bits) EXPECT_FALSE((m.*x.member).has_value()) << x.field;
  for (auto member : all_numbers()) EXPECT_FALSE((m.*member).has_value());
  EXPECT_FALSE(m.temperature_edge.has_value());
  EXPECT_FALSE(m.current_gfxclk.has_value());
  for (const auto& p : m.xcp_stats) {
    EXPECT_TRUE(p.gfx_busy_inst.empty() && p.jpeg_busy.empty() && p.vcn_busy.empty() && p.gfx_busy_acc.empty());
  }
}

TEST_P(FixedLayout, EveryTruncationIsAnErrorNeverACrash) {
  const Version v = GetParam();
  const Bytes full = GpuMetricsBlob(v.format, v.content, v.early).bytes();
  for (std::size_t n = 0; n < full.size(); ++n) {
    const auto r = decode(full, n);
    EXPECT_FALSE(r.ok) << n;
    EXPECT_FALSE(r.error.empty()) << n;
    if (n >= 4) {
      EXPECT_EQ(r.metrics.structure_size, full.size());
    }
  }
  EXPECT_TRUE(decode(full).ok);
}

TEST_P(FixedLayout, StructureSizeBelowTheVersionsTableIsAnError) {
  const Version v = GetParam();
  GpuMetricsBlob b(v.format, v.content, v.early);
  const auto size = static_cast<std::uint16_t>(b.layout().size());
  b.set_structure_size(static_cast<std::uint16_t>(size - 2));
  const auto r = decode(b.bytes());  // all bytes are there, but the header claims too few
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(std::to_string(size)), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(std::to_string(size - 2)), std::string::npos) << r.error;
}

TEST_P(FixedLayout, PaddingAfterTheTableIsIgnored) {
  const Version v = GetParam();
  GpuMetricsBlob b(v.format, v.content, v.early);
  const auto& first = b.layout().fields()[3];  // first field after the header
  b.set(first.name, 42);
  Bytes padded = b.bytes();
  padded.resize(4096, 0);  // like the NUL-padded captures
  const auto r = decode(padded);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.metrics.structure_size, b.layout().size());
  EXPECT_EQ(r.metrics.layout, v.layout);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, FixedLayout, ::testing::ValuesIn(kFixed), version_name);

// ---- hand-written values per version ----

TEST(GpuMetricsV1, V1_0UnalignedLayoutAndUnits) {
  GpuMetricsBlob b(1, 0);
  b.set("temperature_edge", 45).set("system_clock_counter", 2'000'000'000).set("energy_accumulator", 131072);
  b.set("pcie_link_width", 16).set("pcie_link_speed", 80).set("current_fan_speed", 1500).set("throttle_status", 5);
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.metrics.temperature_edge, 45.0);
  EXPECT_EQ(r.metrics.system_clock_counter, 2.0);   // s
  EXPECT_EQ(r.metrics.energy_accumulator, 2.0);     // J: 131072 x 2^-16
  EXPECT_EQ(r.metrics.pcie_link_width, 16.0);
  EXPECT_EQ(r.metrics.pcie_link_speed, 8.0);        // GT/s
  EXPECT_EQ(r.metrics.fan_speed_rpm, 1500.0);
  EXPECT_EQ(r.metrics.throttle_status, 5u);
  EXPECT_TRUE(r.metrics.temperature_hbm.empty());   // v1.0 has no HBM field
}

TEST(GpuMetricsV1, V1_4InstanceArraysAndBandwidth) {
  GpuMetricsBlob b(1, 4);
  b.set("curr_socket_power", 550).set("pcie_bandwidth_inst", 12).set("xgmi_link_speed", 32);
  b.set("xgmi_read_data_acc", 3, 0).set("firmware_timestamp", 100'000'000).set("pcie_replay_count_acc", 9);
  b.set("current_gfxclk", 2100, 0).set("current_gfxclk", 2050, 1);  // XCC 2-7 absent (0xFFFF)
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.current_socket_power, 550.0);
  EXPECT_FALSE(m.average_socket_power.has_value());
  EXPECT_EQ(m.pcie_bandwidth_inst, 12e9);           // GB/s -> bytes/s
  EXPECT_EQ(m.xgmi_link_speed, 32.0);
  EXPECT_EQ(m.xgmi_read_data, std::vector<double>{3072.0});  // KB -> bytes
  EXPECT_EQ(m.firmware_timestamp, 1.0);             // 10 ns units
  EXPECT_EQ(m.pcie_replay_count, 9.0);
  EXPECT_EQ(m.current_gfxclk_per_xcc, (std::vector<double>{2100, 2050}));
  EXPECT_EQ(m.current_gfxclk, 2100.0);
}

TEST(GpuMetricsV1, TheTwoV1_6LayoutsAreToldApartByStructureSize) {
  GpuMetricsBlob early(1, 6, true), late(1, 6, false);
  for (auto* b : {&early, &late}) {
    b->set("temperature_hotspot", 71).set("pcie_bandwidth_inst", 8000).set("firmware_timestamp", 300'000'000);
    b->set("ppt_residency_acc", 1234);
  }
  early.set("throttle_status", 0x80).set("jpeg_activity", 5, 31);
  late.set("num_partition", 1).set_xcp(0, "gfx_busy_inst", 77, 0);
  ASSERT_EQ(early.bytes().size(), 384u);
  ASSERT_EQ(late.bytes().size(), 1664u);
  const auto e = decode(early.bytes()), l = decode(late.bytes());
  ASSERT_TRUE(e.ok && l.ok) << e.error << l.error;
  EXPECT_EQ(e.metrics.layout, "v1.6-early");
  EXPECT_EQ(l.metrics.layout, "v1.6");
  for (const auto* m : {&e.metrics, &l.metrics}) {
    EXPECT_EQ(m->temperature_hotspot, 71.0);
    EXPECT_EQ(m->firmware_timestamp, 3.0);
    EXPECT_EQ(m->ppt_residency_acc, 1234u);
  }
  EXPECT_EQ(e.metrics.pcie_bandwidth_inst, 1e9);    // early layout: 8000 Mbps
  EXPECT_EQ(l.metrics.pcie_bandwidth_inst, 8000e9); // current layout: 8000 GB/s
  EXPECT_EQ(e.metrics.throttle_status, 0x80u);
  EXPECT_FALSE(l.metrics.throttle_status.has_value());
  EXPECT_EQ(e.metrics.jpeg_activity, std::vector<double>{5});
  EXPECT_TRUE(e.metrics.xcp_stats.empty());
  ASSERT_EQ(l.metrics.xcp_stats.size(), 1u);
  EXPECT_EQ(l.metrics.xcp_stats[0].gfx_busy_inst, std::vector<double>{77});

  Bytes odd = late.bytes();
  odd.resize(500);
  odd[0] = 500 & 0xFF, odd[1] = 500 >> 8;  // structure_size 500: neither layout
  const auto r = decode(odd);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("384"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("1664"), std::string::npos) << r.error;
  Bytes grown = late.bytes();
  grown.resize(1700, 0xFF);
  grown[0] = 1700 & 0xFF, grown[1] = 1700 >> 8;  // a grown current-layout table: still the current layout
  EXPECT_EQ(decode(grown).metrics.layout, "v1.6");
}

// v1.6 (current), v1.7, v1.8: per-partition statistics, first num_partition entries.
void check_partitions(int content) {
  GpuMetricsBlob b(1, content);
  const auto& x = *b.xcp_layout();
  std::uint64_t k = 1;
  for (std::size_t p = 0; p < 8; ++p) {
    for (const auto& f : x.fields()) {
      for (std::size_t i = 0; i < f.count; ++i) b.set_xcp(p, f.name, k++, i);
    }
  }
  b.set_xcp(1, "gfx_busy_inst", 0xFFFFFFFF, 7).set("num_partition", 3);
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.metrics.num_partition, 3u);
  ASSERT_EQ(r.metrics.xcp_stats.size(), 3u);
  // The value written to element 0 of field f of partition p (k counted up from 1 in that order).
  std::size_t per_partition = 0;
  for (const auto& d : x.fields()) per_partition += d.count;
  const auto first_of = [&](std::size_t p, const std::string& f) {
    std::size_t before = 0;
    for (std::size_t i = 0; i < x.index(f); ++i) before += x.fields()[i].count;
    return static_cast<double>(1 + p * per_partition + before);
  };
  const auto& p0 = r.metrics.xcp_stats[0];
  EXPECT_EQ(p0.gfx_busy_inst.size(), 8u);
  EXPECT_EQ(p0.gfx_busy_inst[0], first_of(0, "gfx_busy_inst"));
  EXPECT_EQ(p0.jpeg_busy.size(), content == 8 ? 40u : 32u);
  EXPECT_EQ(p0.jpeg_busy[0], first_of(0, "jpeg_busy"));
  EXPECT_EQ(p0.vcn_busy[0], first_of(0, "vcn_busy"));
  EXPECT_EQ(p0.gfx_busy_acc[0], first_of(0, "gfx_busy_acc"));
  EXPECT_EQ(r.metrics.xcp_stats[1].gfx_busy_inst.size(), 7u);  // XCC 7 of partition 1 absent
  EXPECT_EQ(r.metrics.xcp_stats[2].gfx_busy_acc[0], first_of(2, "gfx_busy_acc"));
  if (content == 7) {
    EXPECT_EQ(p0.gfx_below_host_limit_acc[0], first_of(0, "gfx_below_host_limit_acc"));
  }
  if (content == 8) {
    EXPECT_EQ(p0.gfx_below_host_limit_ppt_acc[0], first_of(0, "gfx_below_host_limit_ppt_acc"));
    EXPECT_EQ(p0.gfx_below_host_limit_thm_acc[0], first_of(0, "gfx_below_host_limit_thm_acc"));
    EXPECT_EQ(p0.gfx_low_utilization_acc[0], first_of(0, "gfx_low_utilization_acc"));
    EXPECT_EQ(p0.gfx_below_host_limit_total_acc[7], first_of(0, "gfx_below_host_limit_total_acc") + 7);
  } else {
    EXPECT_TRUE(p0.gfx_below_host_limit_total_acc.empty());
  }
}
TEST(GpuMetricsV1, PartitionsOfV1_6) { check_partitions(6); }
TEST(GpuMetricsV1, PartitionsOfV1_7) { check_partitions(7); }
TEST(GpuMetricsV1, PartitionsOfV1_8) { check_partitions(8); }

TEST(GpuMetricsApu, V2_4CentiUnitsMilliwattsAndMilliamps) {
  GpuMetricsBlob b(2, 4);
  b.set("temperature_gfx", 4512).set("average_gfx_activity", 2550).set("average_socket_power", 15250);
  b.set("average_gfx_voltage", 900).set("average_gfx_current", 2500).set("temperature_core", 3000, 2);
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(*r.metrics.temperature_gfx, 45.12);
  EXPECT_DOUBLE_EQ(*r.metrics.temperature_edge, 45.12);
  EXPECT_DOUBLE_EQ(*r.metrics.average_gfx_activity, 25.5);
  EXPECT_DOUBLE_EQ(*r.metrics.average_socket_power, 15.25);
  EXPECT_EQ(r.metrics.voltage_gfx, 900.0);          // mV
  EXPECT_DOUBLE_EQ(*r.metrics.average_gfx_current, 2.5);  // A
  EXPECT_EQ(r.metrics.temperature_core, std::vector<double>{30.0});  // only core 2 reported
}

TEST(GpuMetricsApu, V3_0Units) {
  GpuMetricsBlob b(3, 0);
  b.set("temperature_gfx", 3812).set("average_socket_power", 9839).set("average_gfx_activity", 37);
  b.set("average_dram_reads", 1200).set("current_coreclk", 4900, 15);
  const auto r = decode(b.bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(*r.metrics.temperature_gfx, 38.12);
  EXPECT_DOUBLE_EQ(*r.metrics.average_socket_power, 9.839);
  EXPECT_EQ(r.metrics.average_gfx_activity, 37.0);
  EXPECT_EQ(r.metrics.dram_read_bandwidth, 1.2e9);  // MB/s -> bytes/s
  EXPECT_EQ(r.metrics.current_coreclk, std::vector<double>{4900});
}

// ---- header and version errors ----

TEST(GpuMetricsErrors, TooShortForAHeader) {
  const Bytes b = {0x78, 0x00, 0x01};
  for (std::size_t n = 0; n <= b.size(); ++n) {
    const auto r = decode(b, n);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("header needs 4"), std::string::npos) << r.error;
  }
}

TEST(GpuMetricsErrors, TruncatedReadNamesBothSizes) {
  const auto r = decode(GpuMetricsBlob(1, 6).bytes(), 512);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "gpu_metrics: header says 1664 bytes but only 512 were read");
  EXPECT_EQ(r.metrics.format_revision, 1);
  EXPECT_EQ(r.metrics.content_revision, 6);
}

TEST(GpuMetricsErrors, UnknownVersionsAreRejectedWithTheirName) {
  const std::pair<int, int> unknown[] = {{1, 10}, {2, 5}, {3, 1}, {0, 0}, {4, 0}, {255, 255}};
  for (auto [f, c] : unknown) {
    Bytes b(512, 0);
    b[1] = 0x02;  // structure_size 512
    b[2] = static_cast<std::uint8_t>(f), b[3] = static_cast<std::uint8_t>(c);
    const auto r = decode(b);
    EXPECT_FALSE(r.ok);
    const std::string name = "v" + std::to_string(f) + "." + std::to_string(c);
    EXPECT_NE(r.error.find("unsupported version " + name), std::string::npos) << r.error;
    EXPECT_EQ(r.metrics.structure_size, 512);
    EXPECT_EQ(r.metrics.format_revision, f);
    EXPECT_EQ(r.metrics.content_revision, c);
  }
}

// ---- real blobs (data/gpu_metrics, values read by hand with xxd) ----

TEST(GpuMetricsRealBlobs, Rx6900xtV1_3NulPaddedTo4096) {
  const Bytes b = read_blob("lact-rx6900xt.bin");
  ASSERT_EQ(b.size(), 4096u);  // 120-byte table + 3976 NUL bytes of capture padding
  const auto r = decode(b);
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.structure_size, 120);                  // 00: 7800
  EXPECT_EQ(m.layout, "v1.3");                       // 02: 01 03
  EXPECT_EQ(m.temperature_edge, 56.0);               // 04: 3800
  EXPECT_EQ(m.temperature_hotspot, 59.0);            // 06: 3b00
  EXPECT_EQ(m.temperature_mem, 54.0);                // 08: 3600
  EXPECT_EQ(m.temperature_vrgfx, 49.0);              // 0a: 3100
  EXPECT_EQ(m.temperature_vrsoc, 49.0);              // 0c: 3100
  EXPECT_EQ(m.temperature_vrmem, 51.0);              // 0e: 3300
  EXPECT_EQ(m.average_gfx_activity, 3.0);            // 10: 0300
  EXPECT_EQ(m.average_umc_activity, 0.0);            // 12: 0000
  EXPECT_EQ(m.average_socket_power, 36.0);           // 16: 2400
  EXPECT_DOUBLE_EQ(*m.energy_accumulator, 17691682.0 / 65536);  // 18: 22f4 0d01 0000 0000 = 269.95 J
  EXPECT_DOUBLE_EQ(*m.system_clock_counter, 533.474291244);     // 20: 2cae 8b35 7c00 0000 ns
  EXPECT_EQ(m.average_gfxclk, 41.0);                 // 28: 2900
  EXPECT_FALSE(m.average_socclk.has_value());        // 2a: ffff
  EXPECT_EQ(m.average_uclk, 993.0);                  // 2c: e103
  EXPECT_EQ(m.average_vclk0, 33.0);                  // 2e: 2100
  EXPECT_EQ(m.current_gfxclk, 500.0);                // 36: f401
  EXPECT_EQ(m.current_socclk, 800.0);                // 38: 2003
  EXPECT_EQ(m.current_uclk, 1000.0);                 // 3a: e803
  EXPECT_EQ(m.current_vclk0, 0.0);                   // 3c: 0000
  EXPECT_EQ(m.throttle_status, 0u);                  // 44: 0000 0000
  EXPECT_EQ(m.fan_speed_rpm, 0.0);                   // 48: 0000
  EXPECT_EQ(m.pcie_link_width, 16.0);                // 4a: 1000
  EXPECT_EQ(m.pcie_link_speed, 16.0);                // 4c: a000 = 160 x 0.1 GT/s
  EXPECT_FALSE(m.gfx_activity_acc.has_value());      // 50: ffff ffff
  EXPECT_TRUE(m.temperature_hbm.empty());            // 58: ffff x4
  EXPECT_FALSE(m.firmware_timestamp.has_value());    // 60: ffff x4
  EXPECT_EQ(m.voltage_soc, 818.0);                   // 68: 3203
  EXPECT_EQ(m.voltage_gfx, 775.0);                   // 6a: 0703
  EXPECT_EQ(m.voltage_mem, 1356.0);                  // 6c: 4c05
  EXPECT_EQ(m.indep_throttle_status, 0u);            // 70: 0000 0000 0000 0000
}

TEST(GpuMetricsRealBlobs, Rx7600sV1_3) {
  const auto r = decode(read_blob("lact-rx7600s.bin"));
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.temperature_edge, 53.0);               // 04: 3500
  EXPECT_EQ(m.temperature_hotspot, 54.0);            // 06: 3600
  EXPECT_EQ(m.temperature_mem, 60.0);                // 08: 3c00
  EXPECT_EQ(m.temperature_vrgfx, 0.0);               // 0a: 0000
  EXPECT_EQ(m.average_socket_power, 1.0);            // 16: 0100
  EXPECT_EQ(m.energy_accumulator, 0.0);              // 18: 0000 0000 0000 0000
  EXPECT_DOUBLE_EQ(*m.system_clock_counter, 550.594368957);  // 20: bd55 fb31 8000 0000
  EXPECT_EQ(m.average_uclk, 53.0);                   // 2c: 3500
  EXPECT_EQ(m.average_vclk0, 25.0);                  // 2e: 1900
  EXPECT_EQ(m.current_gfxclk, 1200.0);               // 36: b004
  EXPECT_EQ(m.current_socclk, 711.0);                // 38: c702
  EXPECT_EQ(m.current_uclk, 96.0);                   // 3a: 6000
  EXPECT_EQ(m.throttle_status, 2u);                  // 44: 0200 0000
  EXPECT_EQ(m.pcie_link_width, 8.0);                 // 4a: 0800
  EXPECT_EQ(m.pcie_link_speed, 16.0);                // 4c: a000
  EXPECT_EQ(m.voltage_soc, 727.0);                   // 68: d702
  EXPECT_EQ(m.voltage_gfx, 0.0);                     // 6a: 0000
  EXPECT_EQ(m.voltage_mem, 687.0);                   // 6c: af02
  EXPECT_EQ(m.indep_throttle_status, 0x1000000000u); // 70: 0000 0000 1000 0000 (bit 36)
}

TEST(GpuMetricsRealBlobs, Rx7800xtV1_3) {
  const auto r = decode(read_blob("lact-rx7800xt.bin"));
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.temperature_edge, 24.0);               // 04: 1800
  EXPECT_EQ(m.temperature_hotspot, 31.0);            // 06: 1f00
  EXPECT_EQ(m.temperature_mem, 48.0);                // 08: 3000
  EXPECT_EQ(m.temperature_vrgfx, 34.0);              // 0a: 2200
  EXPECT_EQ(m.temperature_vrsoc, 32.0);              // 0c: 2000
  EXPECT_EQ(m.average_gfx_activity, 24.0);           // 10: 1800
  EXPECT_EQ(m.average_socket_power, 32.0);           // 16: 2000
  EXPECT_DOUBLE_EQ(*m.system_clock_counter, 2905.31102162);  // 20: 340a 0872 a402 0000
  EXPECT_EQ(m.average_gfxclk, 2011.0);               // 28: db07
  EXPECT_EQ(m.average_uclk, 909.0);                  // 2c: 8d03
  EXPECT_EQ(m.current_gfxclk, 2011.0);               // 36: db07
  EXPECT_EQ(m.current_socclk, 750.0);                // 38: ee02
  EXPECT_EQ(m.current_uclk, 456.0);                  // 3a: c801
  EXPECT_EQ(m.current_dclk1, 25.0);                  // 42: 1900
  EXPECT_EQ(m.fan_speed_rpm, 868.0);                 // 48: 6403
  EXPECT_EQ(m.pcie_link_width, 16.0);                // 4a: 1000
  EXPECT_EQ(m.voltage_soc, 768.0);                   // 68: 0003
  EXPECT_EQ(m.voltage_gfx, 985.0);                   // 6a: d903
  EXPECT_EQ(m.voltage_mem, 704.0);                   // 6c: c002
}

TEST(GpuMetricsRealBlobs, PhoenixV2_1ApuCentiDegreesAndMilliwatts) {
  const auto r = decode(read_blob("lact-phoenix.bin"));
  ASSERT_TRUE(r.ok) << r.error;
  const M& m = r.metrics;
  EXPECT_EQ(m.layout, "v2.1");                       // 00: 7800 0201
  EXPECT_EQ(m.temperature_gfx, 25.0);                // 04: c409 = 2500 centi-°C (hwmon temp1 25000)
  EXPECT_EQ(m.temperature_edge, 25.0);
  EXPECT_DOUBLE_EQ(*m.temperature_soc, 27.37);       // 06: b10a = 2737
  EXPECT_EQ(m.temperature_core, (std::vector<double>{25.37, 23.5, 25, 23.37, 25.12, 23.75, 25.87, 23.75}));
  //                                                  08..17: e909 2e09 c409 2109 d009 4709 1b0a 4709
  EXPECT_EQ(m.temperature_l3, std::vector<double>{25.25});  // 18: dd09 ffff
  EXPECT_DOUBLE_EQ(*m.average_gfx_activity, 0.79);   // 1c: 4f00 = 79 centi-% (gpu_busy_percent 0)
  EXPECT_EQ(m.average_mm_activity, 0.0);             // 1e: 0000
  EXPECT_DOUBLE_EQ(*m.system_clock_counter, 406209.2641976);  // 20: e09f e5f6 7171 0100 ns
  EXPECT_DOUBLE_EQ(*m.average_socket_power, 3.401);  // 28: 490d = 3401 mW
  EXPECT_FALSE(m.average_cpu_power.has_value());     // 2a: ffff
  EXPECT_DOUBLE_EQ(*m.average_soc_power, 0.743);     // 2c: e702
  EXPECT_DOUBLE_EQ(*m.average_gfx_power, 0.585);     // 2e: 4902
  EXPECT_EQ(m.average_gfxclk, 800.0);                // 40: 2003
  EXPECT_EQ(m.average_socclk, 400.0);                // 42: 9001
  EXPECT_EQ(m.average_fclk, 400.0);                  // 46: 9001
  EXPECT_EQ(m.average_vclk0, 800.0);                 // 48: 2003
  EXPECT_FALSE(m.current_gfxclk.has_value());        // 4c: ffff
  EXPECT_EQ(m.current_coreclk, std::vector<double>(8, 1400.0));  // 58..67: 7805 x8
  EXPECT_EQ(m.current_l3clk, std::vector<double>{1400.0});       // 68: 7805 ffff
  EXPECT_EQ(m.throttle_status, 0u);                  // 6c: 0000 0000
  EXPECT_FALSE(m.indep_throttle_status.has_value()); // not in v2.1
}

}  // namespace
}  // namespace hipstack::smi::detail
