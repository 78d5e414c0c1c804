// node.cpp: the software checks and the device map.
#include "node.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)
#include <hipstack/info.hpp>

#include <algorithm>
#include <set>

namespace hipstack::validate {
namespace {

using smi::MetricId;

Verdict from_install(smi::InstallCheck::Status s) {
  switch (s) {
    case smi::InstallCheck::Status::pass: return Verdict::pass;
    case smi::InstallCheck::Status::warn: return Verdict::warn;
    case smi::InstallCheck::Status::fail: return Verdict::fail;
    case smi::InstallCheck::Status::skip: return Verdict::skip;
  }
  return Verdict::fail;
}

Verdict from_health(smi::Verdict v) {
  switch (v) {
    case smi::Verdict::pass: return Verdict::pass;
    case smi::Verdict::warn: return Verdict::warn;
    case smi::Verdict::fail: return Verdict::fail;
    case smi::Verdict::unknown: return Verdict::skip;
  }
  return Verdict::fail;
}

std::optional<double> reading(const std::vector<smi::Reading>& readings, MetricId id) {
  for (const smi::Reading& r : readings)
    if (r.id == id && r.instance.empty() && r.ok()) return r.number();
  return std::nullopt;
}

// The link verdict is the health engine's pcie.link_degraded, so hipstack-validate and
// `hipstack-smi health` judge the same link alike (docs/health.md has the rule).
TestResult pcie_check(const smi::HealthReport& report, std::uint32_t device, const std::vector<smi::Reading>& readings) {
  TestResult r;
  r.test = "pcie.link";
  r.device = static_cast<int>(device);
  const auto finding = std::find_if(report.findings.begin(), report.findings.end(),
                                    [](const smi::HealthFinding& f) { return f.check == "pcie.link_degraded"; });
  if (finding == report.findings.end() || finding->verdict == smi::Verdict::unknown) {
    r.verdict = Verdict::skip;
    r.message = finding == report.findings.end() ? "the GPU cannot be read" : finding->message;
    return r;
  }
  if (const auto width = reading(readings, MetricId::pcie_width)) r.add(Figure{"width", *width, "lanes"});
  if (const auto speed = reading(readings, MetricId::pcie_speed)) r.add(Figure{"speed", *speed, "GT/s"});
  r.verdict = from_health(finding->verdict);
  r.message = fmt::format("{} ({}, {})", finding->message, finding->reading, finding->threshold);
  if (finding->verdict != smi::Verdict::pass) r.advice = finding->remediation;
  return r;
}

TestResult health_check(const smi::HealthReport& report, std::uint32_t device) {
  TestResult r;
  r.test = "health";
  r.device = static_cast<int>(device);
  r.verdict = from_health(report.overall);
  std::vector<std::string> problems;
  for (const smi::HealthFinding& f : report.findings) {
    if (f.verdict != smi::Verdict::warn && f.verdict != smi::Verdict::fail) continue;
    problems.push_back(fmt::format("{} {}: {}", f.check, smi::verdict_name(f.verdict), f.message));
    if (r.advice.empty()) r.advice = f.remediation;
  }
  // The library's summary line: "every check passed" only when every check was evaluated.
  r.message = smi::health_summary(report);
  if (!problems.empty()) r.message += fmt::format(" ({})", fmt::join(problems, "; "));
  return r;
}

// A GPU as a unit to test, before the runtime's numbering: its identity, class, PCIe link and
// critical temperatures (from `readings`, a sample of those).
Unit gpu_unit(const smi::DeviceSummary& d, std::uint32_t device, const Thresholds& thresholds,
              const std::vector<smi::Reading>& readings) {
  Unit base;
  base.smi_index = device;
  base.vendor = d.vendor;
  base.name = d.name;
  base.bdf = d.bdf;
  base.uuid = d.uuid;
  base.device_class = thresholds.classify(d.vendor, d.name);
  base.pcie_speed_max = reading(readings, MetricId::pcie_speed_max).value_or(0);
  base.pcie_width_max = static_cast<int>(reading(readings, MetricId::pcie_width_max).value_or(0));
  if (base.pcie_speed_max > 0 && base.pcie_width_max > 0) {
    base.pcie_link_gbps = pcie_rate_gbps(base.pcie_speed_max, base.pcie_width_max);
    base.pcie_link = fmt::format("{:g} GT/s x{}", base.pcie_speed_max, base.pcie_width_max);
  }
  const std::pair<MetricId, const char*> critical[] = {{MetricId::temperature_edge_critical, "temperature_edge"},
                                                       {MetricId::temperature_junction_critical, "temperature_junction"},
                                                       {MetricId::temperature_memory_critical, "temperature_memory"}};
  for (const auto& [id, sensor] : critical)
    if (const auto limit = reading(readings, id)) base.critical_c[sensor] = *limit;
  return base;
}

}  // namespace

Node inspect_node(const smi::System& system, const smi::OpenOptions& open, const Thresholds& thresholds,
                  const std::vector<std::uint32_t>& devices) {
  Node node;
  const std::vector<smi::Agent> agents = smi::read_agents(open);
  const std::vector<smi::RuntimeProbe> runtimes = smi::probe_runtimes(open);
  for (const smi::InstallCheck& c : smi::install_checks(open, agents, runtimes)) {
    TestResult r;
    r.test = "install." + c.name;
    r.verdict = from_install(c.status);
    r.message = c.detail;
    r.advice = c.advice;
    node.checks.push_back(std::move(r));
  }

  const std::vector<smi::DeviceSummary> summaries = system.devices();
  smi::SampleOptions options;
  options.static_info = true;
  options.metrics = {MetricId::pcie_speed_max, MetricId::pcie_width_max, MetricId::pcie_speed, MetricId::pcie_width,
                     MetricId::temperature_edge_critical, MetricId::temperature_junction_critical,
                     MetricId::temperature_memory_critical};
  for (std::uint32_t device : devices) {
    const smi::DeviceSummary& d = summaries.at(device);
    const std::vector<smi::Reading> readings = system.sample(device, options);
    Unit base = gpu_unit(d, device, thresholds, readings);
    const smi::HealthReport report = system.health(device);
    node.checks.push_back(pcie_check(report, device, readings));
    node.checks.push_back(health_check(report, device));

    // The runtime's devices of this GPU: itself, or its partitions (each a device of its own to HIP).
    std::set<std::string> bdfs{smi::normalise_bdf(d.bdf)};
    for (const smi::Partition& p : system.partitions(device))
      if (!p.bdf.empty()) bdfs.insert(smi::normalise_bdf(p.bdf));
    const std::string runtime = d.vendor == "nvidia" ? "cuda" : "hip";
    const auto probe = std::find_if(runtimes.begin(), runtimes.end(),
                                    [&](const smi::RuntimeProbe& p) { return p.runtime == runtime && p.found; });
    bool mapped = false;
    if (probe != runtimes.end()) {
      for (const smi::RuntimeProbe::Device& rd : probe->devices) {
        if (!bdfs.contains(smi::normalise_bdf(rd.bdf))) continue;
        Unit u = base;
        u.runtime_index = rd.index;
        u.compute_units = rd.compute_units;
        node.units.push_back(u);
        mapped = true;
      }
    }
    if (!mapped && (probe == runtimes.end() || probe->devices.empty())) {
      // No runtime to ask (a capture, or no runtime installed: the install checks say so): assume the
      // runtime numbers the GPUs as the System does.
      base.runtime_index = static_cast<int>(device);
      node.units.push_back(base);
    } else if (!mapped) {
      TestResult r;
      r.test = "runtime.sees_gpu";
      r.device = static_cast<int>(device);
      r.verdict = Verdict::fail;
      r.message = fmt::format("the {} runtime does not list GPU {} ({})", runtime, device, d.bdf);
      r.advice = "check CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES and the container's "
                 "device list";
      node.checks.push_back(std::move(r));
    }
  }
  std::sort(node.units.begin(), node.units.end(),
            [](const Unit& a, const Unit& b) { return a.runtime_index < b.runtime_index; });
  return node;
}

}  // namespace hipstack::validate
