// What a `static` or `metric` table samples: the values asked for and their context in one sample
// (table_sample.hpp).
#include "table_sample.hpp"

#include <algorithm>

#include "device_source.hpp"

namespace hipstack::cli {

using smi::MetricId;

void ask_for(smi::SampleOptions& what, MetricId id) {
  what.metrics.push_back(id);
  switch (smi::find_metric(id)->kind) {
    case smi::Kind::identity: what.identity = true; break;
    case smi::Kind::static_info: what.static_info = true; break;
    case smi::Kind::live:
    case smi::Kind::counter: what.live = true; break;
    case smi::Kind::window: what.window = true; break;
  }
}

std::vector<MetricId> context_metrics(std::span<const MetricId> shown) {
  std::vector<MetricId> out;
  const auto add = [&](MetricId id) {
    if (std::find(shown.begin(), shown.end(), id) == shown.end() && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const MetricId id : shown) {
    if (const auto limit = smi::metric_limit(id)) add(limit->limit);
    if (id == MetricId::violation_residency) add(MetricId::violation_accumulation_count);
    if (id == MetricId::throttle_status) add(MetricId::gfx_target);
  }
  return out;
}

SampleWithContext with_table_context(const smi::SampleOptions& what, bool table) {
  SampleWithContext out{what, {}};
  std::vector<smi::MetricId> asked = what.metrics;
  if (asked.empty()) {  // every device metric of the kinds asked, as System::sample reads them
    for (const smi::MetricInfo& m : smi::catalogue()) {
      if (m.scope == smi::Scope::device && kind_asked(m.kind, what)) asked.push_back(m.id);
    }
  }
  for (const smi::MetricId id : asked) {
    const auto slot = static_cast<std::size_t>(id);
    if (slot >= out.asked_ids.size()) out.asked_ids.resize(slot + 1);
    out.asked_ids[slot] = true;
  }
  const auto context = table ? context_metrics(asked) : std::vector<smi::MetricId>{};
  if (context.empty()) return out;
  out.options.metrics = std::move(asked);
  for (const smi::MetricId id : context) ask_for(out.options, id);
  return out;
}

}  // namespace hipstack::cli
