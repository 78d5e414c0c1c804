// Readings as people read them in the `static` and `metric` tables (JSON and CSV keep the raw
// values): firmware versions in the vendor's form, throttle bits named, violation residencies as a
// share of their window, live values beside their limits, absent firmware blocks left out.
#pragma once

#include <hipstack/smi.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hipstack::cli {

// What a table adds to the readings asked for.
struct TableContext {
  std::string vendor;                  // DeviceSummary::vendor
  std::vector<smi::Reading> readings;  // sampled with the values for the table only: limits, windows, gfx_target
};

// The VALUE cell of R among SHOWN; nothing when the row is left out (a firmware block the GPU does
// not have, version 0, unless show_unsupported).
std::optional<std::string> table_value(const smi::Reading& r, const std::vector<smi::Reading>& shown,
                                       const TableContext& context, bool show_unsupported);

}  // namespace hipstack::cli
