// runner.hpp: running one module against one GPU (or the whole node, for p2p) and turning what it
// did into a TestResult: how the program ended, its JSON, the telemetry sampled meanwhile.
#pragma once

#include <hipstack/smi.hpp>

#include <filesystem>
#include <span>

#include "plan.hpp"
#include "progress.hpp"
#include "result.hpp"
#include "stop_signals.hpp"

namespace hipstack::validate {

struct RunContext {
  const smi::System& system;
  std::filesystem::path module_dir;
  std::span<const Unit> units;
  int level = 1;
  int timeout_s = 0;  // overrides every module's own limit when > 0
  StopSignals* stop = nullptr;  // a signal received there ends the running module early
};

TestResult run_module(const Module& module, const RunContext& context, const Unit* unit, Progress& progress);

}  // namespace hipstack::validate
