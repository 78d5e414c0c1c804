// report.hpp: hipstack-validate's result as a table (with a telemetry table and advice) or JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "plan.hpp"
#include "result.hpp"

namespace hipstack::validate {

struct Report {
  int level = 1;
  std::string thresholds;   // the file used
  std::string module_dir;
  double seconds = 0;
  std::vector<Unit> units;
  std::vector<TestResult> tests;
  std::string stopped_by;   // "SIGTERM" when a signal stopped the run early: later tests did not run
  [[nodiscard]] Verdict overall() const;  // fail if any test failed, warn if any warned, else pass
};

std::string render_table(const Report& report);
nlohmann::json render_json(const Report& report);

}  // namespace hipstack::validate
