// report.cpp: the table and the JSON document. Numbers go through fmt (locale-independent).
#include "report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)

#include <algorithm>

namespace hipstack::validate {
namespace {

std::string gpu_column(const TestResult& t) {
  if (t.runtime_index >= 0) return std::to_string(t.runtime_index);
  return t.device >= 0 ? fmt::format("smi {}", t.device) : "-";
}

// "71 °C, 612/690 W, 1980 MHz": the hottest sensor's peak, mean/max power, mean clock.
std::string telemetry_line(const TelemetrySummary& t) {
  std::vector<std::string> parts;
  double hottest = -1;
  for (const char* sensor : {"temperature_junction", "temperature_edge", "temperature_memory"})
    if (const MetricSummary* s = t.find(sensor); s && s->count) hottest = std::max(hottest, s->max);
  if (hottest >= 0) parts.push_back(fmt::format("max {:.0f} °C", hottest));
  for (const char* power : {"power_current", "power_average"}) {
    if (const MetricSummary* s = t.find(power); s && s->count) {
      parts.push_back(fmt::format("{:.0f}/{:.0f} W", s->mean(), s->max));
      break;
    }
  }
  for (const char* clock : {"clock_sm", "clock_sclk"}) {
    if (const MetricSummary* s = t.find(clock); s && s->count) {
      parts.push_back(fmt::format("{:.0f} MHz ({:.0f}-{:.0f})", s->mean(), s->min, s->max));
      break;
    }
  }
  if (const MetricSummary* s = t.find("clock_mclk"); s && s->count) parts.push_back(fmt::format("mem {:.0f} MHz", s->mean()));
  if (!t.throttle_reasons.empty()) parts.push_back(fmt::format("throttle: {}", fmt::join(t.throttle_reasons, "+")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

nlohmann::json figure_json(const Figure& f) {
  nlohmann::json j{{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"verdict", verdict_name(f.verdict)}, {"basis", f.basis}};
  j["minimum"] = f.minimum ? nlohmann::json(*f.minimum) : nlohmann::json();
  j["maximum"] = f.maximum ? nlohmann::json(*f.maximum) : nlohmann::json();
  j["reference"] = f.reference ? nlohmann::json(*f.reference) : nlohmann::json();
  j["share_of_reference"] = f.reference && *f.reference > 0 ? nlohmann::json(f.value / *f.reference) : nlohmann::json();
  return j;
}

}  // namespace

std::vector<std::uint32_t> Report::unjudged_gpus() const {
  std::vector<std::uint32_t> out;
  for (const Unit& u : units) {
    const bool judged = std::any_of(tests.begin(), tests.end(), [&](const TestResult& t) {
      return t.device == static_cast<int>(u.smi_index) && t.verdict != Verdict::skip;
    });
    if (!judged && std::find(out.begin(), out.end(), u.smi_index) == out.end()) out.push_back(u.smi_index);
  }
  return out;
}

Outcome Report::overall() const {
  Verdict v = Verdict::pass;
  for (const TestResult& t : tests) v = worst(v, t.verdict == Verdict::skip ? Verdict::pass : t.verdict);
  if (v == Verdict::fail) return Outcome::fail;
  if (!unjudged_gpus().empty()) return Outcome::unknown;
  return v == Verdict::warn ? Outcome::warn : Outcome::pass;
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::warn: return "warn";
    case Outcome::fail: return "fail";
    case Outcome::unknown: break;
  }
  return "unknown";
}

std::string outcome_label(Outcome o) {
  std::string label(outcome_name(o));
  for (char& c : label) c = static_cast<char>(c - 'a' + 'A');
  return label;
}

std::string render_table(const Report& report) {
  std::string out = fmt::format("hipstack-validate -r {}: {} GPU(s), {} tests in {:.1f} s\nthresholds: {}\nmodules: {}\n\n",
                                report.level, report.units.size(), report.tests.size(), report.seconds,
                                report.thresholds, report.module_dir);
  if (!report.units.empty()) {
    out += fmt::format("{:<4} {:<14} {:<36} {}\n", "GPU", "BDF", "name", "class (thresholds)");
    for (const Unit& u : report.units)
      out += fmt::format("{:<4} {:<14} {:<36} {}\n", u.runtime_index, u.bdf, u.name,
                         u.device_class ? u.device_class->name : "none");
    out += "\n";
  }
  std::size_t width = 4;
  for (const TestResult& t : report.tests) width = std::max(width, t.test.size());
  out += fmt::format("{:<{}} {:<6} {:<7} {:>8}  {}\n", "test", width, "GPU", "verdict", "time", "result");
  for (const TestResult& t : report.tests)
    out += fmt::format("{:<{}} {:<6} {:<7} {:>7.1f}s  {}\n", t.test, width, gpu_column(t), verdict_label(t.verdict),
                       t.seconds, t.message);
  bool telemetry_header = false;
  for (const TestResult& t : report.tests) {
    if (!t.telemetry || t.telemetry->samples == 0) continue;
    if (!telemetry_header) out += fmt::format("\ntelemetry while each test ran\n{:<{}} {:<6} {}\n", "test", width, "GPU", "samples: values");
    telemetry_header = true;
    out += fmt::format("{:<{}} {:<6} {}: {}\n", t.test, width, gpu_column(t), t.telemetry->samples, telemetry_line(*t.telemetry));
  }
  bool advice_header = false;
  for (const TestResult& t : report.tests) {
    if (t.verdict != Verdict::fail && t.verdict != Verdict::warn) continue;
    if (!advice_header) out += "\nfindings\n";
    advice_header = true;
    out += fmt::format("- {} (GPU {}): {} {}\n", t.test, gpu_column(t), verdict_label(t.verdict), t.message);
    for (const std::string& note : t.notes) out += fmt::format("    note: {}\n", note);
    for (const Figure& f : t.figures)
      if (f.verdict == Verdict::fail) out += fmt::format("    {}: {:g} {} against {}\n", f.name, f.value, f.unit, f.basis);
    if (!t.advice.empty()) out += fmt::format("    advice: {}\n", t.advice);
  }
  int counts[4] = {0, 0, 0, 0};
  for (const TestResult& t : report.tests) ++counts[static_cast<int>(t.verdict)];
  if (!report.stopped_by.empty())
    out += fmt::format("\nstopped by {}: the test it interrupted failed and the tests after it did not run\n",
                       report.stopped_by);
  out += fmt::format("\nResult: {} ({} pass, {} warn, {} fail, {} skip)\n", outcome_label(report.overall()),
                     counts[0], counts[1], counts[2], counts[3]);
  if (const auto unjudged = report.unjudged_gpus(); !unjudged.empty())
    out += fmt::format("No test could judge GPU {} (smi index): every test of it was skipped, so nothing is known of it.\n",
                       fmt::join(unjudged, ", "));
  return out;
}

nlohmann::json render_json(const Report& report) {
  nlohmann::json j{{"tool", "hipstack-validate"}, {"level", report.level}, {"thresholds", report.thresholds},
                   {"module_dir", report.module_dir}, {"seconds", report.seconds},
                   {"result", outcome_name(report.overall())}, {"unjudged_gpus", report.unjudged_gpus()},
                   {"stopped_by", report.stopped_by.empty() ? nlohmann::json() : nlohmann::json(report.stopped_by)}};
  j["devices"] = nlohmann::json::array();
  for (const Unit& u : report.units) {
    j["devices"].push_back({{"runtime_index", u.runtime_index}, {"smi_index", u.smi_index}, {"vendor", u.vendor},
                            {"name", u.name}, {"bdf", u.bdf}, {"uuid", u.uuid}, {"compute_units", u.compute_units},
                            {"class", u.device_class ? nlohmann::json(u.device_class->name) : nlohmann::json()},
                            {"pcie_link", u.pcie_link},
                            {"pcie_link_gbps", u.pcie_link_gbps ? nlohmann::json(*u.pcie_link_gbps) : nlohmann::json()}});
  }
  j["tests"] = nlohmann::json::array();
  for (const TestResult& t : report.tests) {
    nlohmann::json test{{"test", t.test}, {"level", t.level}, {"verdict", verdict_name(t.verdict)}, {"message", t.message},
                        {"advice", t.advice}, {"seconds", t.seconds}, {"notes", t.notes}};
    test["device"] = t.device >= 0 ? nlohmann::json(t.device) : nlohmann::json();
    test["runtime_index"] = t.runtime_index >= 0 ? nlohmann::json(t.runtime_index) : nlohmann::json();
    test["figures"] = nlohmann::json::array();
    for (const Figure& f : t.figures) test["figures"].push_back(figure_json(f));
    test["telemetry"] = t.telemetry ? t.telemetry->to_json() : nlohmann::json();
    test["module"] = t.module.is_null() ? nlohmann::json() : t.module;
    j["tests"].push_back(std::move(test));
  }
  return j;
}

}  // namespace hipstack::validate
