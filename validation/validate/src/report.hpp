// report.hpp: hipstack-validate's result as a table (with a telemetry table and advice) or JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan.hpp"
#include "result.hpp"

namespace hipstack::validate {

enum class Outcome { pass, warn, fail, unknown };

struct Report {
  int level = 1;
  std::string thresholds;   // the file used
  std::string module_dir;
  double seconds = 0;
  std::vector<Unit> units;
  std::vector<TestResult> tests;
  std::string stopped_by;   // "SIGTERM" when a signal stopped the run early: later tests did not run
  // fail if any test failed; else unknown when a selected GPU had no test that could judge it
  // (every one skipped: a run that judged nothing of a GPU does not pass it); else warn if any
  // test warned; else pass.
  [[nodiscard]] Outcome overall() const;
  // System indexes of the selected GPUs none of whose tests ran to a verdict.
  [[nodiscard]] std::vector<std::uint32_t> unjudged_gpus() const;
};

std::string_view outcome_name(Outcome o);  // "pass", "warn", "fail", "unknown"
std::string outcome_label(Outcome o);      // "PASS", "WARN", "FAIL", "UNKNOWN"

std::string render_table(const Report& report);
nlohmann::json render_json(const Report& report);

}  // namespace hipstack::validate
