// plan.hpp: the modules hipstack-validate runs, at which level, with which arguments, and how each
// one's JSON result becomes figures and a verdict. One table (modules()) drives the run, the
// --list output and docs/validate.md.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "result.hpp"
#include "thresholds.hpp"

namespace hipstack::validate {

// One GPU as the modules see it: the runtime's device number and the System device behind it.
struct Unit {
  std::uint32_t smi_index = 0;
  int runtime_index = 0;
  std::string vendor;  // "amd", "nvidia"
  std::string name, bdf, uuid;
  int compute_units = 0;                  // the runtime's count (a partition's share), 0 unknown
  const DeviceClass* device_class = nullptr;
  std::optional<double> pcie_link_gbps;  // the link's top rate per direction, in GB/s
  std::string pcie_link;                  // "32 GT/s x16"
  double pcie_speed_max = 0;              // GT/s, 0 unknown
  int pcie_width_max = 0;                 // lanes, 0 unknown
  std::map<std::string, double> critical_c;  // "temperature_junction" -> its critical limit, °C
};

struct EvalContext {
  const Unit* unit = nullptr;    // per-device modules
  std::span<const Unit> units;   // every unit under test (p2p)
};

struct Module {
  std::string_view test;     // the name in reports and --tests
  std::string_view program;  // the kernel program in the module folder
  int level;                 // the first level that runs it
  bool per_device;           // false: runs once over every device (p2p)
  std::string_view summary;  // for --list
  std::vector<std::string> (*args)(int level);
  int (*timeout_s)(int level);
  // Turns the module's JSON into figures and a verdict (the module's own "result" is already folded
  // in by the caller).
  void (*evaluate)(const nlohmann::json& output, const EvalContext& context, TestResult& result);
};

std::span<const Module> modules();
const Module* find_module(std::string_view test);

// 8b/10b below 8 GT/s, 128b/130b from there: the link's payload rate per direction in GB/s.
double pcie_rate_gbps(double gigatransfers, int lanes);

}  // namespace hipstack::validate
