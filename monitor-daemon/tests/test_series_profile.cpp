// Unit tests of the series profiles (series_profile.cpp) as /metrics renders them: the info series,
// state sets, what `default` keeps and sums, and what only `full` has.
#include <gtest/gtest.h>

#include <string>

#include "exposition_fixtures.hpp"
#include "series_profile.hpp"

namespace {

using namespace exposition_test;
using hipstack::smid::SeriesProfile;

const ExpositionContext kDefault{"node-a", "9.8.7", SeriesProfile::standard};
const ExpositionContext kFull{"node-a", "9.8.7", SeriesProfile::full};

TEST(StateSet, OneSeriesPerStateWithTheCurrentOneSet) {
  SnapshotBuilder gpu(device(0));
  gpu.live(text("performance_level", "manual"));
  for (const ExpositionContext& context : {kDefault, kFull}) {
    const Page page = parse_page(render_metrics({gpu.view()}, context));
    const auto states = find(page, "hipstack_gpu_performance_level");
    ASSERT_EQ(states.size(), smi::metric_states(metric("performance_level").id).size());
    for (const Sample& s : states) {
      EXPECT_EQ(s.value, s.labels.at("performance_level") == "manual" ? "1" : "0") << s.line;
    }
    EXPECT_EQ(page.type.at("hipstack_gpu_performance_level"), "gauge");
    EXPECT_NE(page.help.at("hipstack_gpu_performance_level").find("State set"), std::string::npos);
    EXPECT_EQ(page.body.find("hipstack_gpu_performance_level_info"), std::string::npos);
  }
}

TEST(StateSet, AStateTheSourceDidNotDocumentIsShownNotDropped) {
  SnapshotBuilder gpu(device(0));
  gpu.live(text("performance_level", "turbo \"x\""));
  const Page page = parse_page(render_metrics({gpu.view()}, kFull));
  const auto states = find(page, "hipstack_gpu_performance_level");
  EXPECT_EQ(states.size(), smi::metric_states(metric("performance_level").id).size() + 1);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_performance_level", {{"performance_level", "turbo \"x\""}}), 1);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_performance_level", {{"performance_level", "auto"}}), 0);
}

TEST(StateSet, AnInstancedStateHasASetPerInstance) {
  SnapshotBuilder gpu(device(0, "NVIDIA H100 80GB HBM3"));
  gpu.live(text("nvlink_state", "active", "0")).live(text("nvlink_state", "inactive", "1"));
  const Page page = parse_page(render_metrics({gpu.view()}, kFull));
  EXPECT_EQ(find(page, "hipstack_gpu_nvlink_state").size(), 4u);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_nvlink_state", {{"link", "0"}, {"nvlink_state", "active"}}), 1);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_nvlink_state", {{"link", "1"}, {"nvlink_state", "active"}}), 0);
  EXPECT_DOUBLE_EQ(value_of(page, "hipstack_gpu_nvlink_state", {{"link", "1"}, {"nvlink_state", "inactive"}}), 1);
  // Per-link detail is not in the default profile.
  EXPECT_TRUE(find(parse_page(render_metrics({gpu.view()}, kDefault)), "hipstack_gpu_nvlink_state").empty());
}

SnapshotBuilder mi300x() {
  SnapshotBuilder gpu(device(0));
  gpu.fact(text("vbios_version", "113-X"))
      .fact(text("firmware_version", "0x00556a00", "smc"))
      .fact(real("sclk_level", 500, "0"))
      .fact(integer("vram_total", 1LL << 37))
      .live(real("gpu_busy", 50))
      .live(real("clock_fclk", 1800))
      .live(text("power_profile", "COMPUTE"))
      .live(integer("ras_correctable", 2, "umc"))
      .live(integer("ras_correctable", 3, "gfx"))
      .live(integer("ras_uncorrectable", 0, "umc"));
  return gpu;
}

TEST(DefaultProfile, KeepsWhatAlertsUseAndLeavesDetailToFull) {
  const SnapshotBuilder gpu = mi300x();
  const Page standard = parse_page(render_metrics({gpu.view()}, kDefault));
  const Page full = parse_page(render_metrics({gpu.view()}, kFull));
  for (const Page* page : {&standard, &full}) {
    EXPECT_EQ(find(*page, "hipstack_gpu_info").at(0).labels.at("vbios_version"), "113-X");
    EXPECT_DOUBLE_EQ(value_of(*page, "hipstack_gpu_gpu_busy_ratio", {}), 0.5);
    EXPECT_DOUBLE_EQ(value_of(*page, "hipstack_gpu_vram_total_bytes", {}), static_cast<double>(1LL << 37));
    EXPECT_DOUBLE_EQ(value_of(*page, "hipstack_gpu_power_profile", {{"power_profile", "COMPUTE"}}), 1);
    EXPECT_EQ(find(*page, "hipstack_gpu_up").size(), 1u);
  }
  for (const char* detail : {"hipstack_gpu_clock_fclk_hertz", "hipstack_gpu_sclk_level_hertz",
                             "hipstack_gpu_firmware_version_info", "hipstack_gpu_sample_age_seconds"}) {
    EXPECT_TRUE(find(standard, detail).empty()) << detail;
    EXPECT_EQ(find(full, detail).size(), 1u) << detail;
  }
}

TEST(DefaultProfile, LimitsHealthComparesAgainstAreInfoLabels) {
  SnapshotBuilder gpu = mi300x();
  gpu.fact(real("clock_sclk_max", 2100)).fact(integer("bad_page_threshold", 128));
  const Page standard = parse_page(render_metrics({gpu.view()}, kDefault));
  const auto info = find(standard, "hipstack_gpu_info").at(0);
  EXPECT_EQ(info.labels.at("clock_sclk_max"), "2100");
  EXPECT_EQ(info.labels.at("bad_page_threshold"), "128");
  EXPECT_TRUE(find(standard, "hipstack_gpu_clock_sclk_max_hertz").empty());
  const Page full = parse_page(render_metrics({gpu.view()}, kFull));
  EXPECT_DOUBLE_EQ(value_of(full, "hipstack_gpu_clock_sclk_max_hertz", {}), 2100e6);
  EXPECT_EQ(find(full, "hipstack_gpu_info").at(0).labels.at("bad_page_threshold"), "128");
}

TEST(DefaultProfile, MemoryErrorsAreTheGpusTotalsAndPerBlockInFull) {
  SnapshotBuilder gpu = mi300x();
  gpu.live(integer("ecc_corrected_volatile", 5)).live(integer("ecc_uncorrected_volatile", 0));
  const Page standard = parse_page(render_metrics({gpu.view()}, kDefault));
  // The library's totals (on AMD the sum of the RAS blocks, when every block was read): not summed again.
  EXPECT_DOUBLE_EQ(value_of(standard, "hipstack_gpu_ecc_corrected_volatile_total", {}), 5);
  EXPECT_DOUBLE_EQ(value_of(standard, "hipstack_gpu_ecc_uncorrected_volatile_total", {}), 0);
  EXPECT_TRUE(find(standard, "hipstack_gpu_ras_correctable_total").empty());
  EXPECT_TRUE(find(standard, "hipstack_gpu_ras_uncorrectable_total").empty());
  const Page full = parse_page(render_metrics({gpu.view()}, kFull));
  EXPECT_DOUBLE_EQ(value_of(full, "hipstack_gpu_ras_correctable_total", {{"block", "gfx"}}), 3);
  EXPECT_EQ(find(full, "hipstack_gpu_ras_correctable_total").size(), 2u);
}

TEST(InfoSeries, OnlyForAGpuIdentifiedNow) {
  SnapshotBuilder gpu(device(0));
  gpu.slow->facts.front().status = smi::Status::error;  // its uuid read failed: lost, off the bus
  gpu.live(real("gpu_busy", 50));
  const Page page = parse_page(render_metrics({gpu.view()}, kDefault));
  EXPECT_TRUE(find(page, "hipstack_gpu_info").empty());
  EXPECT_EQ(find(page, "hipstack_gpu_up").size(), 1u);
}

TEST(PartitionInfo, APartitionsFactsAreLabelsOfItsInfoSeries) {
  SnapshotBuilder gpu(device(0));
  for (std::uint32_t p = 0; p < 2; ++p) {
    gpu.slow->partitions.push_back({p, "GPU-00000000/" + std::to_string(p), "0000:00:00." + std::to_string(p),
                                    {integer("partition_compute_units", 38), integer("partition_memory", 1LL << 34),
                                     integer("partition_kfd_gpu_id", 1000 + p)}});
  }
  const Page standard = parse_page(render_metrics({gpu.view()}, kDefault));
  const auto info = find(standard, "hipstack_gpu_partition_info", {{"partition", "1"}});
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].labels.at("partition_compute_units"), "38");
  EXPECT_EQ(info[0].labels.at("partition_memory"), "17179869184");
  EXPECT_EQ(info[0].labels.at("partition_kfd_gpu_id"), "1001");
  EXPECT_EQ(find(standard, "hipstack_gpu_partition_info").size(), 2u);
  EXPECT_TRUE(find(standard, "hipstack_gpu_partition_compute_units").empty());
  EXPECT_EQ(find(parse_page(render_metrics({gpu.view()}, kFull)), "hipstack_gpu_partition_compute_units").size(), 2u);
}

TEST(Profiles, EveryMetricHasOneWayOntoThePage) {
  using hipstack::smid::Exposure;
  for (const smi::MetricInfo& info : smi::catalogue()) {
    const Exposure full = exposure(info, SeriesProfile::full);
    const Exposure standard = exposure(info, SeriesProfile::standard);
    // Default is a subset of full; a state metric is a state set wherever it is shown.
    EXPECT_TRUE(standard == Exposure::omitted || full != Exposure::omitted) << info.name;
    if (!smi::metric_states(info.id).empty()) {
      EXPECT_EQ(full, Exposure::state_set) << info.name;
    }
    // A text value is either a label of the info series or a family: never both, never neither in full.
    if (info.type == smi::ValueType::text) {
      EXPECT_NE(hipstack::smid::info_label(info), full != Exposure::omitted) << info.name;
    }
  }
  EXPECT_EQ(hipstack::smid::parse_series_profile("default"), SeriesProfile::standard);
  EXPECT_EQ(hipstack::smid::parse_series_profile("full"), SeriesProfile::full);
  EXPECT_FALSE(hipstack::smid::parse_series_profile("Default").has_value());
}

}  // namespace
