// Readings that cannot be true (docs/api.md, "Impossible readings"): a value that contradicts a
// driver or physical invariant (memory used above the total the driver manages, a link wider than
// the device's widest, a temperature no running silicon has) is turned into an error reading whose
// detail names both numbers and the rule, so no output shows it as a value. System::sample applies
// this to every device sample, after reading the bounds the asked values are checked against.
#pragma once

#include <hipstack/smi.hpp>

#include <cerrno>
#include <cstddef>
#include <utility>
#include <vector>

namespace hipstack::smi::detail {

// The error code of a reading that contradicts an invariant: the value was read, and it is out of
// the range it can have. Health's plausible_readings check fails on it.
inline constexpr int kImplausibleErrorCode = ERANGE;

// The metrics a value of `id` is checked against (its bounds: vram_total for vram_used), appended
// to `out` when not there already. Static metrics: System::sample reads them with the value.
void add_plausibility_bounds(MetricId id, std::vector<MetricId>& out);
// Every metric that bounds another, appended to `out` when not there already.
void add_all_plausibility_bounds(std::vector<MetricId>& out);

// Turns every ok reading of `readings` (one device's sample) that contradicts an invariant into an
// error reading with kImplausibleErrorCode and a detail naming the value, the bound and the rule.
// Returns what it changed: each such reading's index and the reading as it was (none: all possible).
std::vector<std::pair<std::size_t, Reading>> mark_implausible(std::vector<Reading>& readings);

}  // namespace hipstack::smi::detail
