// Quantities as people read them, one spelling for every table of hipstack-smi and hipstack-info
// (docs/cli.md "Units"): binary prefixes for memory, decimal ones for bandwidth and energy, °C,
// sensible precision. JSON and CSV keep the exact value and the catalogue's unit symbol.
#pragma once

#include <hipstack/smi.hpp>

#include <string>
#include <string_view>

#include "text_layout.hpp"  // display_width

namespace hipstack::cli {

// "191.98 GiB", "50 GB/s", "45 °C", "748 W", "2100 MHz", "97.5 %", "1.24 MJ", "16 GT/s", "x16".
std::string human_quantity(double value, smi::Unit unit);
// Memory with binary prefixes: "512 B", "64 KiB", "145.5 GiB", "1.11 TiB".
std::string human_bytes(double bytes);
// "145.5 / 192 GiB (76 %)": used and total in the total's prefix, and the share used.
std::string used_of_total(double used, double total);
// The unit as tables print it ("°C" where the catalogue's symbol is "C").
std::string_view display_symbol(smi::Unit unit) noexcept;
// A column of one quantity (monitor): every value in the same unit, so the unit goes in the header
// once and the cells are bare numbers. Memory in GiB, bandwidth in GB/s, energy in kJ; others in the
// catalogue's unit, rounded to what a column needs.
struct ColumnUnit {
  std::string_view symbol;  // "GiB", "°C", "" for text and counts
  double divisor = 1;
  int decimals = 0;
};
ColumnUnit column_unit(smi::Unit unit) noexcept;
std::string column_number(double value, const ColumnUnit& unit);

}  // namespace hipstack::cli
