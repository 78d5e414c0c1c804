// The `errors.recent` health finding (hipstack/gpu_errors.hpp, docs/errors.md "Kept and aged"): the
// errors younger than the age limit, each judged by its action, the worst deciding.
#include <hipstack/cper.hpp>
#include <hipstack/events.hpp>
#include <hipstack/gpu_errors.hpp>

#include <fmt/ranges.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "action_text.hpp"

namespace hipstack::smi {
namespace {

int badness(Verdict v) { return v == Verdict::fail ? 3 : v == Verdict::warn ? 2 : v == Verdict::pass ? 1 : 0; }

std::string age_text(std::chrono::seconds age) {
  if (age.count() % 86400 == 0) return fmt::format("{} d", age.count() / 86400);
  if (age.count() % 3600 == 0) return fmt::format("{} h", age.count() / 3600);
  return fmt::format("{} s", age.count());
}

struct Judged {
  std::string what;  // "XID 79 x2" / "CPER fatal x1"
  ErrorAction action;
  Verdict verdict;
  std::string why;
};

}  // namespace

std::string_view error_source_name(ErrorSource source) noexcept { return source == ErrorSource::xid ? "xid" : "cper"; }

HealthFinding recent_errors_finding(std::span<const ErrorOccurrence> errors, std::chrono::system_clock::time_point now,
                                    std::chrono::seconds max_age) {
  HealthFinding f;
  f.check = std::string(health_check_name(HealthCheck::errors_recent));
  f.threshold = fmt::format("errors younger than {}", age_text(max_age));
  std::map<std::uint32_t, std::pair<std::size_t, const ErrorOccurrence*>> xids;  // code -> count, latest
  std::vector<const ErrorOccurrence*> cper;
  for (const ErrorOccurrence& e : errors) {
    if (e.at > now || now - e.at >= max_age) continue;  // aged out (or from a clock ahead of ours: not counted as recent)
    if (e.source == ErrorSource::xid) {
      auto& [count, latest] = xids[e.code];
      ++count;
      if (latest == nullptr || e.at > latest->at) latest = &e;
    } else {
      cper.push_back(&e);
    }
  }
  const bool remapping = xids.contains(63) || xids.contains(64);
  std::vector<Judged> judged;
  for (const auto& [code, seen] : xids) {
    const XidAdvice a = xid_advice(code, static_cast<std::uint32_t>(std::min<std::size_t>(seen.first, UINT32_MAX)), remapping);
    judged.push_back({fmt::format("XID {} x{}", code, seen.first), a.action, a.verdict,
                      a.info != nullptr ? fmt::format("XID {} ({}): {}", code, a.info->mnemonic, a.info->description)
                                        : fmt::format("XID {}: {}", code, a.why)});
  }
  std::map<std::uint32_t, std::size_t> cper_counts;  // by severity
  for (const ErrorOccurrence* e : cper) {
    judged.push_back({"", e->action, error_action_verdict(e->action, ErrorFault::hardware), e->summary});
    ++cper_counts[e->code];
  }
  if (judged.empty()) {
    f.verdict = Verdict::pass;
    f.reading = "none";
    f.message = fmt::format("no XID or CPER error in the last {}", age_text(max_age));
    return f;
  }
  const auto worst = std::max_element(judged.begin(), judged.end(), [](const Judged& a, const Judged& b) {
    return badness(a.verdict) != badness(b.verdict) ? badness(a.verdict) < badness(b.verdict) : a.action < b.action;
  });
  f.verdict = worst->verdict;
  std::vector<std::string> parts;
  for (const Judged& j : judged) {
    if (!j.what.empty()) parts.push_back(j.what);
  }
  for (const auto& [severity, count] : cper_counts) {
    const std::string_view name = severity <= 3 ? cper_severity_name(static_cast<CperSeverity>(severity)) : "of unknown severity";
    parts.push_back(fmt::format("CPER {} x{}", name, count));
  }
  f.reading = fmt::format("{}", fmt::join(parts, ", "));
  f.message = detail::with_action(worst->why, worst->action);
  f.remediation = f.verdict == Verdict::pass ? "" : std::string(error_action_help(worst->action));
  return f;
}

HealthFinding errors_finding(std::span<const ErrorOccurrence> errors, std::chrono::system_clock::time_point now,
                             std::chrono::seconds max_age, const ErrorSources& sources) {
  HealthFinding f = recent_errors_finding(errors, now, max_age);
  if (f.verdict != Verdict::pass || (sources.xids_read && sources.xids_unreadable.empty()) ||
      (sources.cper_read && sources.cper_unreadable.empty())) {
    return f;
  }
  // No error seen says something only where the GPU's errors could be read.
  std::vector<std::string> why;
  if (!sources.xids_unreadable.empty()) why.push_back("XIDs: " + sources.xids_unreadable);
  if (!sources.cper_unreadable.empty()) why.push_back("CPER: " + sources.cper_unreadable);
  f.verdict = Verdict::unknown;
  f.reading = "unknown";
  f.message = why.empty() ? std::string("this GPU reports neither XIDs nor CPER records")
                          : fmt::format("its errors cannot be read: {}", fmt::join(why, "; "));
  return f;
}

HealthFinding one_look_errors_finding(const System& system, std::uint32_t device, std::chrono::system_clock::time_point now,
                                      std::chrono::seconds max_age) {
  const DeviceSummary summary = system.devices().at(device);
  ErrorSources sources;
  std::vector<ErrorOccurrence> errors;
  if (summary.vendor == "nvidia") {
    sources.xids_unreadable = "one look cannot judge them (NVML counts XIDs only while a subscription lasts): ask hipstack-smid";
  }
  if (summary.vendor == "amd") {
    const CperRing ring = system.cper_ring(device);
    sources.cper_read = ring.unavailable.empty();
    sources.cper_unreadable = ring.unavailable;
    for (const CperRecord& record : ring.scan.records) errors.push_back(cper_occurrence(record, now));
  }
  return errors_finding(errors, now, max_age, sources);
}

Event cper_error_event(const ErrorOccurrence& record, const DeviceSummary& device) {
  Event e;
  e.kind = "cper";
  e.device = device;
  const std::string_view severity = record.code <= 3 ? cper_severity_name(static_cast<CperSeverity>(record.code)) : "unknown";
  e.metric = fmt::format("cper_records[{}]", severity);
  e.after = std::string(severity);
  e.message = detail::with_action(record.summary, record.action);
  return e;
}

std::optional<ErrorAction> finding_action(const HealthFinding& finding) {
  if (finding.check != health_check_name(HealthCheck::errors_recent) || finding.verdict == Verdict::unknown) return std::nullopt;
  if (finding.reading == "none") return std::nullopt;
  return detail::action_named_in(finding.message);
}

}  // namespace hipstack::smi
