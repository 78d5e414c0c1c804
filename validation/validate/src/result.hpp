// result.hpp: what one test of hipstack-validate found: a verdict, figures compared with their
// thresholds, the telemetry sampled while it ran and the module's own output.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry.hpp"

namespace hipstack::validate {

enum class Verdict { pass, warn, fail, skip };
std::string_view verdict_name(Verdict v);  // "pass", "warn", "fail", "skip"
std::string verdict_label(Verdict v);      // "PASS", "WARN", "FAIL", "SKIP": tables and progress lines
Verdict worst(Verdict a, Verdict b);       // skip < pass < warn < fail

struct Figure {
  Figure(std::string name_, double value_, std::string unit_)
      : name(std::move(name_)), value(value_), unit(std::move(unit_)) {}
  std::string name;                  // "copy", "pinned h2d", "bf16 GEMM"
  double value = 0;
  std::string unit;                  // "GB/s", "TFLOPS", "errors"
  std::optional<double> minimum;     // threshold in the same unit; none: reported only
  std::optional<double> maximum;     // e.g. 0 errors
  std::optional<double> reference;   // the peak or link rate the value is a share of
  std::string basis;                 // where minimum/reference come from, in words
  // skip until a threshold judged it: a figure reported only is not a pass (docs/validate.md).
  Verdict verdict = Verdict::skip;
};

struct TestResult {
  std::string test;       // "stream", "install.runtime.cuda", "pcie.link"
  int device = -1;        // System index of the GPU, -1 for the whole node
  int runtime_index = -1; // the runtime's device number the module ran on
  int level = 1;
  Verdict verdict = Verdict::pass;
  std::string message;    // one line: what was found
  std::string advice;     // what to do when it is not a pass
  double seconds = 0;
  std::vector<Figure> figures;
  std::vector<std::string> notes;  // findings that warn without failing (throttling seen, ...)
  std::optional<TelemetrySummary> telemetry;
  nlohmann::json module;  // program, args, how it ended, its JSON output, its stderr tail

  // Adds a figure and folds its verdict into the test's.
  void add(Figure f);
  void warn(std::string note);
};

}  // namespace hipstack::validate
