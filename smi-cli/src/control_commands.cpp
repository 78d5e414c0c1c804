// hipstack-smi partition --compute-mode/--memory-mode, set and reset: the library's mutations, one
// result per GPU, rendered as text or JSON, with the exit codes of docs/cli.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

int exit_code(const smi::ControlResult& result) {
  switch (result.outcome) {
    case smi::ControlOutcome::applied:
    case smi::ControlOutcome::planned: return kExitOk;
    case smi::ControlOutcome::pending: return kExitPending;
    case smi::ControlOutcome::failed: return kExitFailed;
    case smi::ControlOutcome::refused: break;
  }
  switch (result.reason) {
    case smi::RefusalReason::needs_root: return kExitNeedsRoot;
    case smi::RefusalReason::invalid_value: return kExitBadArguments;
    default: return kExitRefused;
  }
}

Json result_json(const smi::ControlResult& r) {
  Json j = {{"action", r.action},
            {"outcome", std::string(smi::outcome_name(r.outcome))},
            {"reason", std::string(smi::reason_name(r.reason))},
            {"error_code", r.error_code},
            {"message", r.message},
            {"next_step", r.next_step}};
  j["writes"] = Json::array();
  for (const smi::ControlWrite& w : r.writes) {
    j["writes"].push_back({{"path", w.path}, {"host_path", w.host_path}, {"value", w.value}, {"done", w.done},
                           {"error_code", w.error_code}});
  }
  return j;
}

std::string result_text(const smi::ControlResult& r) {
  std::string text = r.message + "\n";
  if (r.outcome == smi::ControlOutcome::planned) {
    for (const smi::ControlWrite& w : r.writes) text += fmt::format("  would write \"{}\" to {}\n", w.value, w.host_path);
  } else if (r.outcome != smi::ControlOutcome::refused || !r.writes.empty()) {
    for (const smi::ControlWrite& w : r.writes) {
      if (w.done) text += fmt::format("  wrote \"{}\" to {}\n", w.value, w.host_path);
    }
  }
  if (!r.next_step.empty()) text += fmt::format("  next step: {}\n", r.next_step);
  return text;
}

}  // namespace

std::vector<std::uint32_t> target_devices(const smi::System& system, const CommonOptions& options) {
  if (options.gpus.empty()) {
    throw smi::Error(smi::Error::Code::invalid_argument,
                     "name the GPUs to change with -g (index, BDF, UUID, or \"all\"); nothing was written");
  }
  if (options.gpus.size() == 1 && options.gpus.front() == "all") {
    CommonOptions every = options;
    every.gpus.clear();
    return selected_devices(system, every);
  }
  return selected_devices(system, options);
}

int run_control(smi::System& system, const CommonOptions& options, const std::string& command, const ControlChange& change) {
  const auto targets = target_devices(system, options);
  smi::ControlOptions control;
  control.dry_run = change.dry_run;
  control.force = change.force;
  control.settle_timeout_ms = change.settle_timeout_ms;
  Json doc = document(command);
  doc["results"] = Json::array();
  std::string text;
  std::string csv = "device,action,outcome,reason,error_code,message,next_step,writes\n";
  int code = kExitOk;
  auto apply = [&](std::uint32_t device, const smi::ControlResult& result) {
    Json j = result_json(result);
    j["device"] = device;
    doc["results"].push_back(std::move(j));
    text += result_text(result);
    std::string writes;
    for (const smi::ControlWrite& w : result.writes) {
      writes += fmt::format("{}{}={}{}", writes.empty() ? "" : ";", w.host_path, w.value, w.done ? "" : " (not written)");
    }
    csv += csv_row({std::to_string(device), result.action, std::string(smi::outcome_name(result.outcome)),
                    std::string(smi::reason_name(result.reason)), std::to_string(result.error_code), result.message,
                    result.next_step, writes});
    if (code == kExitOk) code = exit_code(result);
  };
  for (const std::uint32_t device : targets) {
    if (!change.compute_mode.empty()) apply(device, system.set_compute_partition(device, change.compute_mode, control));
    if (!change.memory_mode.empty()) apply(device, system.set_memory_partition(device, change.memory_mode, control));
    if (change.power_cap_w) apply(device, system.set_power_cap(device, *change.power_cap_w, control));
    if (!change.perf_level.empty()) apply(device, system.set_performance_level(device, change.perf_level, control));
    if (!change.profile.empty()) apply(device, system.set_power_profile(device, change.profile, control));
    if (change.clock_range) {
      apply(device, system.set_clock_range(device, change.clock_range->domain, change.clock_range->min_mhz,
                                           change.clock_range->max_mhz, control));
    }
    if (change.fan) apply(device, system.set_fan(device, *change.fan, control));
    if (change.reset) apply(device, system.reset_device(device, control));
  }
  if (options.format == Format::json) {
    // A partition change also shows what the driver created, as `partition --json` lists it.
    if (command == "partition") doc["devices"] = partition_json(LocalSource(system), targets);
    print_json(doc);
  } else if (options.format == Format::csv) {
    print(csv);
  } else {
    print(text);
    const bool wrote = std::any_of(doc["results"].begin(), doc["results"].end(), [](const Json& r) {
      return std::any_of(r["writes"].begin(), r["writes"].end(), [](const Json& w) { return w["done"].get<bool>(); });
    });
    if (command == "partition" && wrote) {
      CommonOptions view = options;
      view.gpus.clear();
      for (const std::uint32_t d : targets) view.gpus.push_back(std::to_string(d));
      run_partition(LocalSource(system), view);
    }
  }
  return code;
}

std::optional<ClockRange> parse_clock_range(const std::string& text, std::string& error) {
  // DOMAIN:MIN-MAX, DOMAIN = sclk | mclk, MHz.
  const std::size_t colon = text.find(':');
  const std::size_t dash = text.find('-', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || dash == std::string::npos) {
    error = fmt::format("--clock-range \"{}\": expected DOMAIN:MIN-MAX in MHz, e.g. sclk:500-2100", text);
    return std::nullopt;
  }
  ClockRange range;
  const std::string domain = text.substr(0, colon);
  if (domain == "sclk" || domain == "gfx") range.domain = smi::ClockDomain::graphics;
  else if (domain == "mclk" || domain == "mem") range.domain = smi::ClockDomain::memory;
  else {
    error = fmt::format("--clock-range \"{}\": domain must be sclk or mclk", text);
    return std::nullopt;
  }
  try {
    std::size_t used = 0;
    const std::string lo = text.substr(colon + 1, dash - colon - 1);
    const std::string hi = text.substr(dash + 1);
    range.min_mhz = std::stod(lo, &used);
    if (used != lo.size()) throw std::invalid_argument(lo);
    range.max_mhz = std::stod(hi, &used);
    if (used != hi.size()) throw std::invalid_argument(hi);
  } catch (const std::exception&) {
    error = fmt::format("--clock-range \"{}\": MIN and MAX must be numbers of MHz", text);
    return std::nullopt;
  }
  return range;
}

std::optional<smi::FanSetting> parse_fan(const std::string& text, std::string& error) {
  smi::FanSetting fan;
  if (text == "auto") return fan;
  fan.automatic = false;
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  try {
    std::size_t used = 0;
    fan.percent = std::stod(number, &used);
    if (used != number.size() || !std::isfinite(fan.percent)) throw std::invalid_argument(number);
  } catch (const std::exception&) {
    error = fmt::format("--fan \"{}\": expected auto or a percentage 0..100", text);
    return std::nullopt;
  }
  return fan;
}

}  // namespace hipstack::cli
