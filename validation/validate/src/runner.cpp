// runner.cpp: one module run. The module is a separate program so that a crash, a hang or a GPU
// fault in it ends that test, not hipstack-validate.
#include "runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include "process.hpp"
#include "telemetry.hpp"

namespace hipstack::validate {
namespace {

constexpr double kThermalMargin = 5.0;  // °C below a critical limit that warns

// Heat and throttling seen while the test ran: warnings, not failures (the figures judge the speed).
void judge_telemetry(const Unit& unit, TestResult& r) {
  const TelemetrySummary& t = *r.telemetry;
  if (t.throttled_samples > 0)
    r.warn(fmt::format("slowed by {} in {} of {} samples", fmt::join(t.slowing_reasons, ", "), t.throttled_samples,
                       t.samples));
  for (const auto& [sensor, limit] : unit.critical_c) {
    const MetricSummary* s = t.find(sensor);
    if (s && s->count && s->max >= limit - kThermalMargin)
      r.warn(fmt::format("{} reached {:.0f} °C, within {:.0f} °C of its critical limit {:.0f} °C: check cooling", sensor,
                         s->max, kThermalMargin, limit));
  }
  // The link under load: GPUs lower the PCIe speed when idle, so only the transfer test judges it.
  if (r.test == "transfer" && unit.pcie_speed_max > 0 && unit.pcie_width_max > 0) {
    const MetricSummary* speed = t.find("pcie_speed");
    const MetricSummary* width = t.find("pcie_width");
    if (speed && width && (speed->max < unit.pcie_speed_max || width->max < unit.pcie_width_max))
      r.warn(fmt::format("the PCIe link ran at {:g} GT/s x{:g} under load, below the {:g} GT/s x{} the GPU and slot "
                         "support: reseat the card or check the slot and BIOS settings",
                         speed->max, width->max, unit.pcie_speed_max, unit.pcie_width_max));
  }
}

// One line for the table: the judged figures, or the first failing one.
std::string summarise(const TestResult& r) {
  std::vector<std::string> parts;
  for (const Figure& f : r.figures) {
    if (r.verdict == Verdict::fail && f.verdict != Verdict::fail) continue;
    if (!f.minimum && !f.maximum && r.verdict != Verdict::fail) continue;
    std::string part = fmt::format("{} {:g} {}", f.name, f.value, f.unit);
    if (f.reference && f.reference > 0) part += fmt::format(" ({:.1f}%)", 100 * f.value / *f.reference);
    if (f.verdict == Verdict::fail) part += f.minimum ? fmt::format(" < {:.1f}", *f.minimum) : std::string(" > 0");
    parts.push_back(part);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// A whole-node module (p2p) uses every GPU its runtime lists, so -d reaches it through the runtime's
// visibility variable: the GPUs under test, in the order of context.units, which the module then
// numbers 0, 1, ... (the evaluation maps its numbers back through that order). A variable the user
// set already is composed with: a runtime number counts within it, so it picks that entry.
std::vector<std::string> visibility(std::span<const Unit> units) {
  std::vector<std::string> environment;
  for (const auto& [vendor, variable] : {std::pair{"nvidia", "CUDA_VISIBLE_DEVICES"}, {"amd", "HIP_VISIBLE_DEVICES"}}) {
    std::vector<std::string> inherited;
    if (const char* value = std::getenv(variable); value && *value) {
      for (std::string_view rest = value; !rest.empty();) {
        const std::size_t comma = rest.find(',');
        inherited.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
    }
    std::vector<std::string> visible;
    for (const Unit& u : units) {
      if (u.vendor != vendor) continue;
      const auto index = static_cast<std::size_t>(u.runtime_index);
      visible.push_back(index < inherited.size() ? inherited[index] : std::to_string(u.runtime_index));
    }
    if (!visible.empty()) environment.push_back(fmt::format("{}={}", variable, fmt::join(visible, ",")));
  }
  return environment;
}

}  // namespace

namespace {

// The module's end and output judged into r: a verdict, message and advice.
void judge(const Module& module, const RunContext& context, const Unit* unit, const std::filesystem::path& program,
           const ProcessResult& p, const std::string& end, TestResult& r) {
  const auto failed = [&r](std::string message, std::string advice) {
    r.verdict = Verdict::fail;
    r.message = std::move(message);
    r.advice = std::move(advice);
  };
  if (!p.spawn_error.empty()) return failed(end, "check the module folder's permissions");
  if (!p.wait_error.empty())
    return failed(fmt::format("{}: the module {}", program.string(), end),
                  "its result cannot be trusted without its exit status: run the module by hand");
  if (p.stopped_by != 0) return failed(end, "the test did not finish: run hipstack-validate again to judge it");
  if (p.timed_out)
    return failed(end, "the GPU may have hung: check the kernel log (dmesg) and `hipstack-smi health`, then run "
                       "the module by hand");
  if (p.signal != 0) return failed("the module crashed: " + end, "run the module by hand to see the fault; check dmesg");
  if (p.exit_code == 77) {
    if (!module.per_device) {
      r.verdict = Verdict::skip;
      r.message = p.out.substr(0, p.out.find('\n'));
      return;
    }
    return failed("the GPU runtime found no GPU", "run hipstack-info for the install checks");
  }
  if (p.exit_code == 2) return failed("the module refused its arguments: " + p.err_tail, "a hipstack defect: report it");
  nlohmann::json output;
  try {
    output = nlohmann::json::parse(p.out);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    return failed(fmt::format("the module's output is not JSON ({}); {}", e.what(), end),
                  p.err_tail.empty() ? "" : "its stderr ends: " + p.err_tail.substr(p.err_tail.rfind('\n', p.err_tail.size() - 2) + 1));
  }
  r.module["output"] = output;
  try {
    module.evaluate(output, EvalContext{unit, context.units}, r);
  } catch (const std::exception& e) {
    return failed(std::string("the module's output is malformed: ") + e.what(), "a hipstack defect: report it");
  }
  const auto own = output.find("result");
  const bool own_pass = own != output.end() && *own == "pass";
  if (!own_pass || p.exit_code != 0) {
    r.verdict = Verdict::fail;
    r.message = fmt::format("the module's checks failed ({}); {}", end, summarise(r));
    r.advice = "the GPU computed wrong results or lost data: run `hipstack-smi ras` and `hipstack-smi health`; "
               "if it repeats, the GPU needs service";
  } else {
    r.message = summarise(r);
    if (r.verdict == Verdict::fail) r.advice = "below the expected speed: see the figures' basis and the telemetry";
  }
  if (unit && r.telemetry) judge_telemetry(*unit, r);
}

}  // namespace

TestResult run_module(const Module& module, const RunContext& context, const Unit* unit, Progress& progress) {
  TestResult r;
  r.test = std::string(module.test);
  r.level = module.level;
  if (unit) {
    r.device = static_cast<int>(unit->smi_index);
    r.runtime_index = unit->runtime_index;
  }
  progress.start(unit ? fmt::format("GPU {} {}", unit->runtime_index, module.test) : std::string(module.test));
  const std::filesystem::path program = context.module_dir / module.program;
  if (::access(program.c_str(), X_OK) != 0) {
    r.verdict = Verdict::fail;
    r.message = fmt::format("module program {} is missing", program.string());
    r.advice = "install the hipstack validation package, or give --module-dir the folder that holds the kernel programs";
    progress.finish(r);
    return r;
  }
  std::vector<std::string> args = module.args(context.level);
  if (unit) {
    args.push_back("--device");
    args.push_back(std::to_string(unit->runtime_index));
  }
  args.push_back("--json");
  const std::chrono::seconds timeout(context.timeout_s > 0 ? context.timeout_s : module.timeout_s(context.level));
  std::optional<TelemetrySampler> sampler;
  if (unit) sampler.emplace(context.system, unit->smi_index, unit->vendor);
  ProcessOptions options;
  options.timeout = timeout;
  if (!unit) options.environment = visibility(context.units);
  options.tick = [&] {
    if (sampler) sampler->tick();
    progress.tick();
  };
  options.stop = context.stop;
  const ProcessResult p = run_process(program, args, options);
  r.seconds = p.seconds;
  const std::string end = describe_end(p, timeout);
  r.module = {{"program", program.string()}, {"args", args}, {"environment", options.environment}, {"end", end},
              {"stderr_tail", p.err_tail}};
  if (sampler) r.telemetry = sampler->summary();

  judge(module, context, unit, program, p, end, r);
  progress.finish(r);
  return r;
}

}  // namespace hipstack::validate
