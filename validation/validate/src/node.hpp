// node.hpp: level 1 of hipstack-validate, the software checks: the install checks of hipstack-info
// (driver, device nodes, runtime, device lists agreeing), each GPU's PCIe link and health; and the
// map from the runtime's device numbers to the System's GPUs that the modules run on.
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <vector>

#include "plan.hpp"
#include "result.hpp"
#include "thresholds.hpp"

namespace hipstack::validate {

struct Node {
  std::vector<Unit> units;          // what the modules run on, by runtime device number
  std::vector<TestResult> checks;   // level 1 results
};

Node inspect_node(const smi::System& system, const smi::OpenOptions& open, const Thresholds& thresholds,
                  const std::vector<std::uint32_t>& devices);

}  // namespace hipstack::validate
