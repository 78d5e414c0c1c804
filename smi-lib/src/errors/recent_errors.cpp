// The `errors.recent` health finding (hipstack/gpu_errors.hpp, docs/errors.md "Kept and aged"): the
// errors younger than the age limit, each judged by its action, the worst deciding.
#include <hipstack/cper.hpp>
#include <hipstack/gpu_errors.hpp>

#include <fmt/ranges.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

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
  f.message = fmt::format("{}; action: {}", worst->why, error_action_name(worst->action));
  f.remediation = f.verdict == Verdict::pass ? "" : std::string(error_action_help(worst->action));
  return f;
}

}  // namespace hipstack::smi
