// The foreign-name tables (hipstack/foreign_names.hpp) and their C API (hipstack/smi.h, "Foreign
// names"): every row through C as in C++, the look-ups, the size-prefixed struct rules and the errors.
#include <gtest/gtest.h>
#include <hipstack/foreign_names.hpp>
#include <hipstack/smi.h>

#include <set>
#include <string>
#include <vector>

namespace {

namespace smi = hipstack::smi;

constexpr hipstack_smi_foreign_tool kTools[] = {HIPSTACK_SMI_FOREIGN_NVIDIA_SMI, HIPSTACK_SMI_FOREIGN_PYNVML,
                                                HIPSTACK_SMI_FOREIGN_AMDSMI, HIPSTACK_SMI_FOREIGN_NFD,
                                                HIPSTACK_SMI_FOREIGN_ROCM_SMI};

std::string joined(std::initializer_list<smi::MetricId> ids) {
  std::string out;
  for (const smi::MetricId id : ids) out += (out.empty() ? "" : ",") + std::string(smi::find_metric(id)->name);
  return out;
}

TEST(ForeignNames, EveryRowThroughCAsInCxx) {
  for (const hipstack_smi_foreign_tool tool : kTools) {
    const auto names = smi::foreign_names(static_cast<smi::ForeignTool>(tool));
    ASSERT_EQ(hipstack_smi_foreign_names_size(tool), names.size());
    ASSERT_FALSE(names.empty());
    std::set<std::string> seen;
    for (std::size_t i = 0; i < names.size(); ++i) {
      hipstack_smi_foreign_name c = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_foreign_name);
      ASSERT_EQ(hipstack_smi_foreign_name_get(tool, i, &c), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
      EXPECT_EQ(c.struct_size, sizeof c);
      EXPECT_EQ(c.tool, tool);
      EXPECT_EQ(std::string(c.name), names[i].name);
      EXPECT_EQ(std::string(c.metrics), joined(names[i].from)) << c.name;
      ASSERT_EQ(c.metric_count, names[i].from.size());
      for (std::size_t m = 0; m < c.metric_count; ++m) {
        EXPECT_EQ(c.metric_ids[m], static_cast<std::uint32_t>(names[i].from.begin()[m]));
      }
      EXPECT_EQ(std::string(c.instance), names[i].instance);
      EXPECT_EQ(std::string(c.note), names[i].note);
      EXPECT_TRUE(seen.insert(c.name).second) << "twice in one table: " << c.name;
    }
  }
}

TEST(ForeignNames, TheToolsNameOnlyWhatTheyAnswer) {
  for (const smi::ForeignTool tool :
       {smi::ForeignTool::pynvml, smi::ForeignTool::amdsmi, smi::ForeignTool::nfd, smi::ForeignTool::rocm_smi, smi::ForeignTool::jobs}) {
    for (const smi::ForeignName& n : smi::foreign_names(tool)) {
      EXPECT_FALSE(n.from.size() == 0) << n.name << ": a name hipstack does not answer has no row";
      for (const smi::MetricId id : n.from) EXPECT_NE(smi::find_metric(id), nullptr) << n.name;
    }
  }
}

TEST(ForeignNames, FindByName) {
  hipstack_smi_foreign_name c = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_foreign_name);
  ASSERT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_PYNVML, "nvmlDeviceGetPowerUsage", &c), HIPSTACK_SMI_OK);
  EXPECT_STREQ(c.metrics, "power_average,power_current");
  EXPECT_EQ(c.metric_count, 2u);
  EXPECT_EQ(c.metric_ids[0], static_cast<std::uint32_t>(HIPSTACK_SMI_METRIC_power_average));
  EXPECT_STREQ(c.note, "W -> mW; AMD MI300: power_current (the driver gives no average)");
  ASSERT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_AMDSMI, "amdsmi_get_gpu_metrics_info.ppt_residency_acc", &c),
            HIPSTACK_SMI_OK);
  EXPECT_STREQ(c.metrics, "violation_residency");
  EXPECT_STREQ(c.instance, "ppt");
  ASSERT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_NVIDIA_SMI, "power.draw", &c), HIPSTACK_SMI_OK);
  EXPECT_STREQ(c.metrics, "power_average,power_current");
  // A field hipstack prints as not available: a row without metrics.
  ASSERT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_NVIDIA_SMI, "inforom.oem", &c), HIPSTACK_SMI_OK);
  EXPECT_STREQ(c.metrics, "");
  EXPECT_EQ(c.metric_count, 0u);
  EXPECT_EQ(c.metric_ids, nullptr);
  // A reason field's instance is NVML's reason, not the metric's: not shown as one.
  ASSERT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_NVIDIA_SMI, "clocks_event_reasons.sw_power_cap", &c),
            HIPSTACK_SMI_OK);
  EXPECT_STREQ(c.instance, "");
  EXPECT_EQ(smi::find_foreign_name(smi::ForeignTool::pynvml, "nvmlDeviceGetMemoryInfo.total")->from.begin()[0],
            smi::MetricId::vram_total);
}

TEST(ForeignNames, NamesOfAMetric) {
  const auto pynvml = smi::foreign_names_of(smi::ForeignTool::pynvml, smi::MetricId::power_current);
  EXPECT_EQ(pynvml, (std::vector<std::string_view>{"nvmlDeviceGetPowerUsage"}));
  const auto nvidia = smi::foreign_names_of(smi::ForeignTool::nvidia_smi, smi::MetricId::power_current);
  EXPECT_EQ(nvidia, (std::vector<std::string_view>{"power.draw", "power.draw.instant"}));
  EXPECT_TRUE(smi::foreign_names_of(smi::ForeignTool::amdsmi, smi::MetricId::nvlink_state).empty());
  EXPECT_EQ(smi::foreign_tool_name(smi::ForeignTool::amdsmi), "amdsmi");
  // Node Feature Discovery's labels (static --nfd): one metric each.
  EXPECT_EQ(smi::foreign_names_of(smi::ForeignTool::nfd, smi::MetricId::vram_total),
            (std::vector<std::string_view>{"gpu.vram-gib"}));
  EXPECT_EQ(smi::foreign_tool_name(smi::ForeignTool::nfd), "nfd");
  // rocm-smi's keys (hipstack-smi --rocm-smi): an HBM stack's temperature is an instance.
  const smi::ForeignName* hbm = smi::find_foreign_name(smi::ForeignTool::rocm_smi, "Temperature (Sensor HBM 2) (C)");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(*hbm->from.begin(), smi::MetricId::temperature_hbm);
  EXPECT_EQ(hbm->instance, "2");
  EXPECT_EQ(smi::foreign_tool_name(smi::ForeignTool::rocm_smi), "rocm-smi");
  for (const smi::ForeignName& label : smi::foreign_names(smi::ForeignTool::nfd)) {
    EXPECT_EQ(label.from.size(), 1U) << label.name;
    EXPECT_TRUE(label.name.starts_with("gpu.")) << label.name;
  }
}

// The job summary's figures (hipstack-smid, docs/jobs.md): what the daemon's arithmetic relies on.
TEST(ForeignNames, JobFiguresAreWhatTheDaemonAddsUp) {
  std::map<std::string_view, const smi::JobFigureSource*> by_stem;
  std::set<std::string_view> names;
  for (const smi::JobFigureSource& f : smi::job_figure_sources()) {
    EXPECT_TRUE(names.insert(f.name).second) << "twice: " << f.name;
    ASSERT_NE(f.from.size(), 0U) << f.name;
    const smi::MetricInfo* first = smi::find_metric(*f.from.begin());
    switch (f.method) {
      case smi::JobFigureMethod::mean:
      case smi::JobFigureMethod::maximum: {
        // A mean and a maximum of one stem share the sums the job keeps: they must read the same metrics.
        const std::string_view stem = f.name.substr(0, f.name.rfind('_'));
        EXPECT_TRUE(f.name.ends_with(f.method == smi::JobFigureMethod::mean ? "_mean" : "_max") || f.name.ends_with("_peak"))
            << f.name;
        if (const auto [it, added] = by_stem.emplace(stem, &f); !added) {
          EXPECT_TRUE(std::equal(f.from.begin(), f.from.end(), it->second->from.begin(), it->second->from.end())) << f.name;
        }
        for (const smi::MetricId id : f.from) EXPECT_NE(smi::find_metric(id)->type, smi::ValueType::text) << f.name;
        break;
      }
      case smi::JobFigureMethod::growth:
      case smi::JobFigureMethod::growth_since_registration:
        EXPECT_EQ(f.from.size(), 1U) << f.name << ": a growth figure is one metric's";
        EXPECT_NE(first->type, smi::ValueType::text) << f.name;
        break;
      case smi::JobFigureMethod::derived: break;
    }
  }
  // The names the job store and the API already carry.
  for (const std::string_view kept : {"energy", "power_mean", "power_max", "busy_mean", "vram_peak", "xid_errors"}) {
    EXPECT_TRUE(names.contains(kept)) << kept;
  }
  EXPECT_EQ(smi::foreign_names_of(smi::ForeignTool::jobs, smi::MetricId::power_current),
            (std::vector<std::string_view>{"energy", "power_mean", "power_max"}));
  EXPECT_EQ(smi::foreign_names(smi::ForeignTool::jobs).size(), smi::job_figure_sources().size());
  EXPECT_EQ(smi::find_foreign_name(smi::ForeignTool::jobs, "xid_errors")->note,
            "growth since registration; counts run from the daemon's registration for XID events");
}

TEST(ForeignNames, Errors) {
  hipstack_smi_foreign_name c = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_foreign_name);
  const std::size_t size = hipstack_smi_foreign_names_size(HIPSTACK_SMI_FOREIGN_PYNVML);
  EXPECT_EQ(hipstack_smi_foreign_name_get(HIPSTACK_SMI_FOREIGN_PYNVML, size, &c), HIPSTACK_SMI_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("past the"), std::string::npos) << hipstack_smi_last_error();
  EXPECT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_AMDSMI, "amdsmi_get_gpu_vendor_name", &c),
            HIPSTACK_SMI_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(hipstack_smi_last_error()).find("amdsmi_get_gpu_vendor_name"), std::string::npos);
  // One past the last tool: a newer caller's (HIPSTACK_SMI_FOREIGN_TOOL_MAX_ENUM keeps it in range).
  const auto unknown = static_cast<hipstack_smi_foreign_tool>(HIPSTACK_SMI_FOREIGN_JOBS + 1);
  EXPECT_EQ(hipstack_smi_foreign_names_size(unknown), 0u);
  EXPECT_EQ(hipstack_smi_foreign_name_get(unknown, 0, &c), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_foreign_name_find(unknown, "x", &c), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_foreign_name_find(HIPSTACK_SMI_FOREIGN_PYNVML, nullptr, &c), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_foreign_name_get(HIPSTACK_SMI_FOREIGN_PYNVML, 0, nullptr), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  c.struct_size = 4;  // smaller than the struct's first version
  EXPECT_EQ(hipstack_smi_foreign_name_get(HIPSTACK_SMI_FOREIGN_PYNVML, 0, &c), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipstack_smi_api_version(), 3u);
}

}  // namespace
