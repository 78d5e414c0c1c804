// Unit tests of what a `static` or `metric` table samples (table_sample.hpp): the values asked for
// and their context in one sample, told apart again afterwards.
#include "table_sample.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace hipstack::cli {
namespace {

using smi::MetricId;

bool has(const std::vector<MetricId>& list, MetricId id) { return std::find(list.begin(), list.end(), id) != list.end(); }

TEST(TableSample, NamedValuesBringTheirLimitsIntoTheSameSample) {
  smi::SampleOptions what;
  what.live = true;
  what.metrics = {MetricId::temperature_edge, MetricId::power_average, MetricId::throttle_status};
  const SampleWithContext sample = with_table_context(what, true);
  for (const MetricId id : {MetricId::temperature_edge, MetricId::power_average, MetricId::throttle_status,
                            MetricId::temperature_edge_critical, MetricId::power_cap, MetricId::gfx_target}) {
    EXPECT_TRUE(has(sample.options.metrics, id)) << smi::find_metric(id)->name;
  }
  EXPECT_TRUE(sample.options.static_info);  // the limits are static facts
  EXPECT_TRUE(sample.options.identity);     // gfx_target names the throttle bits
  EXPECT_TRUE(sample.asked(MetricId::temperature_edge));
  EXPECT_FALSE(sample.asked(MetricId::temperature_edge_critical));
  EXPECT_FALSE(sample.asked(MetricId::gfx_target));
}

TEST(TableSample, EveryLiveMetricWithItsLimitsWhenNoneIsNamed) {
  smi::SampleOptions what;
  what.live = true;
  const SampleWithContext sample = with_table_context(what, true);
  EXPECT_FALSE(sample.options.window);
  EXPECT_FALSE(sample.options.pcie_throughput);
  std::size_t live = 0;
  for (const smi::MetricInfo& m : smi::catalogue()) {
    const bool sampled = m.scope == smi::Scope::device && (m.kind == smi::Kind::live || m.kind == smi::Kind::counter);
    EXPECT_EQ(sample.asked(m.id), sampled) << m.name;
    if (sampled) {
      ++live;
      EXPECT_TRUE(has(sample.options.metrics, m.id)) << m.name;
    }
  }
  EXPECT_GT(live, 50U);
  EXPECT_TRUE(has(sample.options.metrics, MetricId::clock_sclk_max));
  EXPECT_TRUE(has(sample.options.metrics, MetricId::violation_accumulation_count));  // live itself: asked already
  EXPECT_TRUE(sample.asked(MetricId::violation_accumulation_count));
}

TEST(TableSample, OtherFormatsAndContextFreeTablesSampleWhatWasAsked) {
  smi::SampleOptions what;
  what.live = true;
  what.metrics = {MetricId::temperature_edge};
  const SampleWithContext json = with_table_context(what, false);
  EXPECT_EQ(json.options.metrics, what.metrics);
  EXPECT_FALSE(json.options.static_info);
  smi::SampleOptions facts;
  facts.live = false;
  facts.identity = facts.static_info = true;
  const SampleWithContext table = with_table_context(facts, true);  // facts have no limits
  EXPECT_TRUE(table.options.metrics.empty());
  EXPECT_TRUE(table.asked(MetricId::vram_total));
  EXPECT_FALSE(table.asked(MetricId::vram_used));
}

TEST(TableSample, ContextIsWhatTheShownLack) {
  const std::vector<MetricId> shown = {MetricId::vram_used, MetricId::vram_total, MetricId::violation_residency};
  const auto context = context_metrics(shown);
  EXPECT_EQ(context, (std::vector<MetricId>{MetricId::violation_accumulation_count}));
}

}  // namespace
}  // namespace hipstack::cli
