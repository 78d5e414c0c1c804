// The constructed MI300X nodes (captures/constructed/, marked constructed): every value the
// generator wrote, as listed in its expected.json, comes back from the library in catalogue units.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "capture_helpers.hpp"

namespace hipstack::smi {
namespace {

using namespace hipstack::smi::testing;
using nlohmann::json;

json load_expected(const std::string& capture) {
  std::ifstream in(std::string(HIPSTACK_CAPTURES_DIR) + "/constructed/" + capture + "/expected.json");
  return json::parse(in);
}

std::string hex16(const std::string& prefixed) { return prefixed.substr(2); }

// The numbers the generator wrote for a card (e) and hipstack's readings of it (r) agree, name by name.
void expect_figures(const std::vector<Reading>& r, const json& e) {
  const std::pair<const char*, const char*> numbers[] = {
      {"compute_units", "compute_units"},
      {"xccs", "num_xcc"},
      {"wavefront_size", "wave_front_size"},
      {"numa_node", "numa_node"},
      {"temperature_junction", "temperature_junction"},
      {"temperature_memory", "temperature_mem"},
      {"temperature_vr_soc", "temperature_vrsoc"},
      {"temperature_junction_critical", "temperature_junction_crit"},
      {"temperature_junction_emergency", "temperature_junction_emergency"},
      {"temperature_memory_critical", "temperature_mem_crit"},
      {"power_current", "power_current"},
      {"power_cap", "power_cap"},
      {"power_cap_default", "power_cap_default"},
      {"power_cap_max", "power_cap_max"},
      {"power_cap_min", "power_cap_min"},
      {"gpu_busy", "gfx_activity"},
      {"memory_busy", "mem_activity"},
      {"vram_total", "vram_total"},
      {"vram_used", "vram_used"},
      {"vram_visible_total", "vis_vram_total"},
      {"vram_visible_used", "vis_vram_used"},
      {"gtt_total", "gtt_total"},
      {"gtt_used", "gtt_used"},
      {"pcie_speed", "pcie_link_speed"},
      {"pcie_width", "pcie_link_width"},
      {"pcie_speed_max", "pcie_max_link_speed"},
      {"pcie_width_max", "pcie_max_link_width"},
      {"pcie_replay_count", "pcie_replay_count"},
      {"xgmi_physical_id", "xgmi_physical_id"},
      {"clock_sclk", "clock_sclk"},
      {"clock_mclk", "clock_mclk"},
      {"clock_fclk", "clock_fclk"},
      {"clock_socclk", "clock_socclk"},
      {"clock_vclk", "clock_vclk"},
      {"clock_dclk", "clock_dclk"},
  };
  for (const auto& [ours, theirs] : numbers) {
    EXPECT_NEAR(number_of(r, ours), e[theirs].get<double>(), 1e-9) << ours;
  }
}

class ConstructedNode : public ::testing::TestWithParam<const char*> {};

TEST_P(ConstructedNode, EveryGpuMatchesTheGenerator) {
  const json expected = load_expected(GetParam());
  const System system = open_capture(std::string("constructed/") + GetParam());
  const auto devices = system.devices();
  ASSERT_EQ(devices.size(), expected["node"]["gpu_count"].get<std::size_t>());
  for (const auto& device : devices) {
    const json* card = nullptr;
    for (const auto& [key, value] : expected.items()) {
      if (key.rfind("card", 0) == 0 && value.contains("bdf") && value["bdf"] == device.bdf) card = &value;
    }
    ASSERT_NE(card, nullptr) << device.bdf;
    const json& e = *card;
    SCOPED_TRACE(device.bdf);
    const auto r = system.sample(device.index, everything());
    EXPECT_EQ(device.name, "AMD Instinct MI300X");
    EXPECT_EQ(device.partition_count, e["kfd_nodes"].size());
    EXPECT_EQ(text_of(r, "pci_device_id"), e["pci"]["device_id"]);
    EXPECT_EQ(text_of(r, "pci_subsystem_device_id"), e["pci"]["subsystem_device_id"]);
    EXPECT_EQ(text_of(r, "pci_revision_id"), e["pci"]["revision"]);
    EXPECT_EQ(text_of(r, "unique_id"), hex16(e["unique_id"]));
    for (const char* key : {"serial_number", "product_name", "product_number", "manufacturer", "vbios_version",
                            "gfx_target", "vram_vendor", "performance_level", "compute_partition", "memory_partition"}) {
      EXPECT_EQ(text_of(r, key), e[key].get<std::string>()) << key;
    }
    expect_figures(r, e);
    EXPECT_NEAR(number_of(r, "energy_consumed"), e["energy_accumulated"].get<double>(), 1e-3);
    // MI300X has no edge sensor, no average power, no fan and no gfx voltage.
    for (const char* absent : {"temperature_edge", "power_average", "fan_speed", "voltage_gfx"}) {
      EXPECT_EQ(status_of(r, absent), Status::not_supported) << absent;
    }
    EXPECT_EQ(text_of(r, "xgmi_hive_id"), fmt::format("0x{:x}", e["xgmi_hive_id"].get<std::uint64_t>()));
    for (const auto& [ip, version] : e["firmware"].items()) {
      EXPECT_EQ(text_of(r, "firmware_version", ip), version.get<std::string>()) << ip;
    }
    const auto per_xcc = e["gpu_metrics"]["current_gfxclk"];
    for (std::size_t i = 0; i < per_xcc.size(); ++i) {
      EXPECT_DOUBLE_EQ(number_of(r, "clock_sclk_xcc", std::to_string(i)), per_xcc[i].get<double>());
    }
    EXPECT_EQ(text_of(r, "gpu_metrics_version"), "1.6");
    const json& gm = e["gpu_metrics"];
    EXPECT_DOUBLE_EQ(number_of(r, "violation_accumulation_count"), gm["accumulation_counter"].get<double>());
    EXPECT_DOUBLE_EQ(number_of(r, "violation_residency", "ppt"), gm["ppt_residency_acc"].get<double>());
    EXPECT_DOUBLE_EQ(number_of(r, "pcie_recovery_count"), gm["pcie_l0_to_recov_count_acc"].get<double>());
    EXPECT_DOUBLE_EQ(number_of(r, "xgmi_read_data", "1"), gm["xgmi_read_data_acc"][1].get<double>() * 1024);
    EXPECT_DOUBLE_EQ(number_of(r, "xgmi_write_data", "0"), gm["xgmi_write_data_acc"][0].get<double>() * 1024);
    // The mclk table is discrete: every level is reported as printed.
    const auto levels = e["clock_mclk_levels"];
    ASSERT_EQ(readings_of(r, "mclk_level").size(), levels.size());
    for (const auto& level : levels) {
      EXPECT_DOUBLE_EQ(number_of(r, "mclk_level", level["level"].get<std::string>()), level["mhz"].get<double>());
    }
  }
}

TEST_P(ConstructedNode, ProcessesMatchKfdAndFdinfo) {
  const json expected = load_expected(GetParam());
  const System system = open_capture(std::string("constructed/") + GetParam());
  std::size_t checked = 0;
  for (const auto& device : system.devices()) {
    // running_processes: the recorded processes with KFD memory or a DRM client on this GPU.
    std::size_t on_gpu = 0;
    for (const auto& [pid, e] : expected["processes"].items()) {
      bool here = e.contains("per_bdf") && e["per_bdf"].contains(device.bdf);
      if (e.contains("kfd") && e["kfd"].contains("gpus")) {
        for (const auto& [gpu_id, g] : e["kfd"]["gpus"].items()) here = here || g["bdf"] == device.bdf;
      }
      if (here) ++on_gpu;
    }
    SampleOptions live;
    live.metrics = {MetricId::running_processes};
    EXPECT_DOUBLE_EQ(number_of(system.sample(device.index, live), "running_processes"), static_cast<double>(on_gpu))
        << device.bdf;
    for (const ProcessInfo& p : system.processes(device.index)) {
      ASSERT_TRUE(expected["processes"].contains(std::to_string(p.pid))) << p.pid;
      const json& e = expected["processes"][std::to_string(p.pid)];
      EXPECT_EQ(p.name, e["name"].get<std::string>());
      EXPECT_EQ(p.user, std::to_string(e["uid"].get<int>()));  // a capture's uids are not this machine's
      double kfd_vram = 0;
      double cu = 0;
      bool on_kfd = false;
      if (e.contains("kfd") && e["kfd"].contains("gpus")) {
        for (const auto& [gpu_id, g] : e["kfd"]["gpus"].items()) {
          if (g["bdf"] != device.bdf) continue;
          on_kfd = true;
          kfd_vram += g["vram"].get<double>();
          cu += g["cu_occupancy"].get<double>();
        }
      }
      const json drm = e.contains("per_bdf") && e["per_bdf"].contains(device.bdf) ? e["per_bdf"][device.bdf] : json();
      if (on_kfd) {
        EXPECT_DOUBLE_EQ(number_of(p.readings, "process_vram"), kfd_vram);
        EXPECT_DOUBLE_EQ(number_of(p.readings, "process_cu_occupancy"), cu);
      } else {
        ASSERT_FALSE(drm.is_null()) << p.pid << " on " << device.bdf;
        EXPECT_DOUBLE_EQ(number_of(p.readings, "process_vram"), drm["vram"].get<double>());
      }
      if (!drm.is_null()) {
        EXPECT_DOUBLE_EQ(number_of(p.readings, "process_gtt"), drm["gtt"].get<double>());
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 5u);
}

INSTANTIATE_TEST_SUITE_P(Mi300x, ConstructedNode, ::testing::Values("mi300x-8gpu-spx-nps1", "mi300x-8gpu-cpx-nps1"));

TEST(ConstructedCpx, EightPartitionsPerGpuWithPartitionResources) {
  const System system = open_capture("constructed/mi300x-8gpu-cpx-nps1");
  for (const auto& device : system.devices()) {
    const auto parts = system.partitions(device.index);
    ASSERT_EQ(parts.size(), 8u);
    for (const Partition& p : parts) {
      EXPECT_DOUBLE_EQ(number_of(p.readings, "partition_compute_units"), 38.0);
      EXPECT_DOUBLE_EQ(number_of(p.readings, "partition_xccs"), 1.0);
    }
  }
}

}  // namespace
}  // namespace hipstack::smi
