// Unit tests of the metric catalogue: ids, names, the C and C++ views, groups, limits, series and
// states columns.
#include <gtest/gtest.h>
#include <hipstack/smi.h>
#include <hipstack/smi.hpp>

#include <regex>
#include <set>

namespace hipstack::smi {
namespace {

TEST(Catalogue, IdsAndNamesAreUnique) {
  std::set<std::uint32_t> ids;
  std::set<std::string_view> names;
  for (const MetricInfo& m : catalogue()) {
    EXPECT_TRUE(ids.insert(static_cast<std::uint32_t>(m.id)).second) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_LT(static_cast<std::uint32_t>(m.id), 1024u) << "System indexes ids below 1024: " << m.name;
  }
  EXPECT_GT(catalogue().size(), 100u);
}

TEST(Catalogue, NamingGrammar) {
  const std::regex snake("^[a-z][a-z0-9]*(_[a-z0-9]+)*$");
  // Exporters append the unit, so names must not carry one.
  const std::regex unit_word("(^|_)(celsius|watts?|joules?|hertz|mhz|bytes?|percent|ratio|millivolts?|volts?|rpm|seconds?)($|_)");
  for (const MetricInfo& m : catalogue()) {
    const std::string name(m.name);
    EXPECT_TRUE(std::regex_match(name, snake)) << name;
    EXPECT_FALSE(std::regex_search(name, unit_word)) << name;
    EXPECT_FALSE(m.help.empty()) << name;
    EXPECT_EQ(m.help.back(), '.') << name;
    if (!m.instance_label.empty()) {
      EXPECT_TRUE(std::regex_match(std::string(m.instance_label), snake)) << name;
    }
    // Scope prefixes keep the flat name space readable.
    if (m.scope == Scope::process) {
      EXPECT_EQ(name.rfind("process_", 0), 0u) << name;
    }
    if (m.scope == Scope::link) {
      EXPECT_EQ(name.rfind("link_", 0), 0u) << name;
    }
    if (m.scope == Scope::partition) {
      EXPECT_EQ(name.rfind("partition_", 0), 0u) << name;
    }
  }
}

TEST(Catalogue, TextMetricsHaveNoUnit) {
  for (const MetricInfo& m : catalogue()) {
    if (m.type == ValueType::text) {
      EXPECT_EQ(m.unit, Unit::none) << m.name;
    }
  }
}

TEST(Catalogue, LookupsAgreeWithTheTable) {
  const MetricInfo* edge = find_metric("temperature_edge");
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->id, MetricId::temperature_edge);
  EXPECT_EQ(find_metric(MetricId::temperature_edge), edge);
  EXPECT_EQ(edge->unit, Unit::celsius);
  EXPECT_EQ(find_metric("no_such_metric"), nullptr);
}

TEST(Catalogue, CViewMatchesCxx) {
  ASSERT_EQ(hipstack_smi_catalogue_size(), catalogue().size());
  for (std::size_t i = 0; i < catalogue().size(); ++i) {
    hipstack_smi_metric_info c = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_metric_info);
    ASSERT_EQ(hipstack_smi_catalogue_get(i, &c), HIPSTACK_SMI_OK);
    EXPECT_EQ(c.id, static_cast<std::uint32_t>(catalogue()[i].id));
    EXPECT_EQ(std::string_view(c.name), catalogue()[i].name);
    EXPECT_EQ(std::string_view(c.unit_symbol), unit_symbol(catalogue()[i].unit));
    EXPECT_EQ(static_cast<int>(c.cost), static_cast<int>(catalogue()[i].cost));
    EXPECT_EQ(std::string_view(c.help), catalogue()[i].help);
  }
  hipstack_smi_metric_info c = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_metric_info);
  EXPECT_EQ(hipstack_smi_catalogue_get(catalogue().size(), &c), HIPSTACK_SMI_ERROR_NOT_FOUND);
  EXPECT_EQ(HIPSTACK_SMI_METRIC_temperature_edge, static_cast<int>(MetricId::temperature_edge));
  ASSERT_EQ(hipstack_smi_metric_by_id(HIPSTACK_SMI_METRIC_power_average, &c), HIPSTACK_SMI_OK);
  EXPECT_STREQ(c.name, "power_average");
  ASSERT_EQ(hipstack_smi_metric_by_name("power_average", &c), HIPSTACK_SMI_OK);
  EXPECT_EQ(c.id, static_cast<std::uint32_t>(HIPSTACK_SMI_METRIC_power_average));
  EXPECT_EQ(hipstack_smi_metric_by_name("no_such_metric", &c), HIPSTACK_SMI_ERROR_NOT_FOUND);
  EXPECT_EQ(hipstack_smi_metric_by_id(99999, &c), HIPSTACK_SMI_ERROR_NOT_FOUND);
}

// Every health check has its name once, and the names are what the checks report.
TEST(Catalogue, HealthChecksHaveOneNameEach) {
  std::set<std::string_view> names;
  for (const HealthCheck check : health_checks()) {
    const std::string_view name = health_check_name(check);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(find_health_check(name), check);
    EXPECT_STREQ(hipstack_smi_health_check_name(static_cast<hipstack_smi_health_check>(check)), std::string(name).c_str());
  }
  EXPECT_EQ(find_health_check("no.such_check"), HealthCheck::other);
  EXPECT_STREQ(hipstack_smi_health_check_name(HIPSTACK_SMI_CHECK_OTHER), "");
}

// -m accepts a metric or a group name, so the two must never collide; a group lists device metrics
// once each, and the named groups of issue 15 exist.
TEST(Catalogue, GroupsAreDistinctFromMetricsAndWellFormed) {
  std::set<std::string_view> names;
  for (const MetricGroup& g : metric_groups()) {
    EXPECT_TRUE(names.insert(g.name).second) << g.name;
    EXPECT_EQ(find_metric(g.name), nullptr) << "a group shares its name with a metric: " << g.name;
    EXPECT_EQ(find_metric_group(g.name), &g);
    EXPECT_FALSE(g.help.empty()) << g.name;
    EXPECT_FALSE(g.members.empty()) << g.name;
    std::set<MetricId> seen;
    for (const MetricId id : g.members) {
      const MetricInfo* info = find_metric(id);
      ASSERT_NE(info, nullptr) << g.name;
      EXPECT_TRUE(seen.insert(id).second) << g.name << " lists " << info->name << " twice";
      EXPECT_EQ(info->scope, Scope::device) << g.name << ": " << info->name;
    }
  }
  for (const char* wanted : {"temperature", "power", "memory", "clocks", "activity", "pcie", "errors"}) {
    EXPECT_NE(find_metric_group(wanted), nullptr) << wanted;
  }
  EXPECT_EQ(find_metric_group("no_such_group"), nullptr);
}

// Groups list what changes before the facts it is read against, each in catalogue order, so
// `query -m power` prints the draw first and the caps after.
TEST(Catalogue, GroupsListChangingValuesBeforeFacts) {
  const auto changes = [](MetricId id) {
    const Kind kind = find_metric(id)->kind;
    return kind != Kind::identity && kind != Kind::static_info;
  };
  for (const MetricGroup& g : metric_groups()) {
    for (std::size_t i = 1; i < g.members.size(); ++i) {
      const MetricId before = g.members[i - 1], after = g.members[i];
      EXPECT_TRUE(changes(before) || !changes(after)) << g.name << ": " << find_metric(after)->name << " after a fact";
      if (changes(before) == changes(after)) {
        EXPECT_LT(find_metric(before) - catalogue().data(), find_metric(after) - catalogue().data()) << g.name;
      }
    }
  }
  const MetricGroup* power = find_metric_group("power");
  ASSERT_NE(power, nullptr);
  EXPECT_EQ(power->members.front(), MetricId::power_average);
  EXPECT_EQ(power->members.back(), MetricId::power_cap);
}

// The limit column: what a value is printed beside and judged against; one of the value's unit.
TEST(Catalogue, LimitsPairValuesWithTheirLimits) {
  const auto limit = [](MetricId id) { return metric_limit(id); };
  ASSERT_TRUE(limit(MetricId::temperature_junction));
  EXPECT_EQ(limit(MetricId::temperature_junction)->limit, MetricId::temperature_junction_critical);
  EXPECT_EQ(limit(MetricId::temperature_junction)->role, LimitRole::critical);
  EXPECT_EQ(limit(MetricId::power_current)->limit, MetricId::power_cap);
  EXPECT_EQ(limit(MetricId::power_current)->role, LimitRole::cap);
  EXPECT_EQ(limit(MetricId::clock_sm)->limit, MetricId::clock_sm_max);
  EXPECT_EQ(limit(MetricId::clock_sm)->role, LimitRole::maximum);
  EXPECT_EQ(limit(MetricId::gtt_used)->limit, MetricId::gtt_total);
  EXPECT_EQ(limit(MetricId::gtt_used)->role, LimitRole::share_of);
  EXPECT_FALSE(limit(MetricId::gpu_busy));
  EXPECT_FALSE(limit(static_cast<MetricId>(9999)));
  std::size_t limited = 0;
  for (const MetricInfo& m : catalogue()) {
    const auto l = limit(m.id);
    if (!l) continue;
    ++limited;
    const MetricInfo* of = find_metric(l->limit);
    ASSERT_NE(of, nullptr) << m.name;
    EXPECT_EQ(of->unit, m.unit) << m.name;
    EXPECT_FALSE(metric_limit(of->id)) << "a limit has no limit of its own: " << of->name;
  }
  EXPECT_EQ(limited, 14U);
  EXPECT_EQ(limit_role_name(LimitRole::share_of), "share_of");
}

// The series column and the states column, as the daemon and the exporters read them.
TEST(Catalogue, SeriesAndStatesColumns) {
  EXPECT_EQ(metric_default_series(MetricId::gpu_busy), DefaultSeries::series);
  EXPECT_EQ(metric_default_series(MetricId::performance_level), DefaultSeries::series);
  EXPECT_EQ(metric_default_series(MetricId::clock_sclk_max), DefaultSeries::info_label);
  EXPECT_EQ(metric_default_series(MetricId::clock_fclk), DefaultSeries::full_only);
  EXPECT_EQ(metric_default_series(static_cast<MetricId>(9999)), DefaultSeries::full_only);
  EXPECT_EQ(default_series_name(DefaultSeries::info_label), "info_label");
  std::size_t with_states = 0;
  for (const MetricInfo& m : catalogue()) {
    if (metric_states(m.id).empty()) continue;
    ++with_states;
    EXPECT_EQ(m.type, ValueType::text) << m.name;
  }
  EXPECT_EQ(with_states, 4U);
  ASSERT_EQ(metric_states(MetricId::nvlink_state).size(), 2U);
  EXPECT_EQ(metric_states(MetricId::nvlink_state)[0], "active");
  EXPECT_EQ(metric_states(MetricId::performance_state).back(), "P15");
  EXPECT_TRUE(metric_states(static_cast<MetricId>(9999)).empty());
}

// Throttle bits are named only where the vendor documents them (NVML; MI300's SMU 13.0.6 firmware).
TEST(ThrottleReasons, NamedWhereDocumented) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(throttle_reasons("nvidia", "", 0x44), (Names{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(throttle_reasons("nvidia", "", 0x1), (Names{"gpu_idle"}));
  EXPECT_EQ(throttle_reasons("nvidia", "", 0x200), (Names{"bit9"}));  // no name in NVML's list
  EXPECT_EQ(throttle_reasons("nvidia", "", 0), Names{});
  EXPECT_EQ(throttle_reasons("amd", "gfx942", 0x4), (Names{"socket_thermal"}));
  EXPECT_EQ(throttle_reasons("amd", "gfx942", 0x13), (Names{"prochot", "ppt", "hbm_thermal"}));
  EXPECT_EQ(throttle_reasons("amd", "gfx942", 1ull << 40), (Names{"bit40"}));
  EXPECT_EQ(throttle_reasons("amd", "gfx1030", 0x4), std::nullopt);  // ASIC-specific, undocumented
  EXPECT_EQ(throttle_reasons("amd", "", 0x4), std::nullopt);
}

}  // namespace
}  // namespace hipstack::smi
