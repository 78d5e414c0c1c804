// Quantities as people read them, one spelling for every table of hipstack-smi and hipstack-info
// (units.hpp).
#include "units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace hipstack::cli {
namespace {

// Two decimals below 10, one from there: 1.11, 12.5, 145.5. A value the decimals hold exactly drops
// its trailing zeros (64, 2.5); a rounded one keeps them (192.0 for 191.98), so none looks exact that is not.
std::string number(double value) {
  const int decimals = std::fabs(value) < 10 ? 2 : 1;
  std::string text = fmt::format("{:.{}f}", value, decimals);
  const double scale = decimals == 2 ? 100.0 : 10.0;
  if (std::nearbyint(value * scale) == value * scale) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

// value scaled by `base` until below it: "1.24 MJ", "50 GB/s".
std::string scaled(double value, double base, std::span<const char* const> prefixes, std::string_view symbol) {
  std::size_t step = 0;
  while (std::fabs(value) >= base && step + 1 < prefixes.size()) {
    value /= base;
    ++step;
  }
  return fmt::format("{} {}{}", number(value), prefixes[step], symbol);
}

constexpr std::array<const char*, 6> kBinary = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
constexpr std::array<const char*, 6> kDecimal = {"", "k", "M", "G", "T", "P"};

}  // namespace

std::string_view display_symbol(smi::Unit unit) noexcept {
  return unit == smi::Unit::celsius ? std::string_view("°C") : smi::unit_symbol(unit);
}

std::string human_bytes(double bytes) { return scaled(bytes, 1024, kBinary, "B"); }

std::string used_of_total(double used, double total) {
  if (total <= 0) return human_bytes(used);
  std::size_t step = 0;
  double scale = 1;
  while (total / scale >= 1024 && step + 1 < kBinary.size()) {
    scale *= 1024;
    ++step;
  }
  return fmt::format("{} / {} {}B ({:.0f} %)", number(used / scale), number(total / scale), kBinary[step],
                     100.0 * used / total);
}

std::string human_quantity(double value, smi::Unit unit) {
  switch (unit) {
    case smi::Unit::byte: return human_bytes(value);
    case smi::Unit::byte_per_second: return scaled(value, 1000, kDecimal, "B/s");
    case smi::Unit::joule: return scaled(value, 1000, kDecimal, "J");
    case smi::Unit::lane: return fmt::format("x{}", number(value));
    case smi::Unit::megahertz:
    case smi::Unit::rpm:
    case smi::Unit::millivolt: return fmt::format("{:.0f} {}", value, display_symbol(unit));
    case smi::Unit::none:
    case smi::Unit::count: return number(value);
    case smi::Unit::celsius:
    case smi::Unit::watt:
    case smi::Unit::percent:
    case smi::Unit::gigatransfer_per_second:
    case smi::Unit::second: break;
  }
  return fmt::format("{} {}", number(value), display_symbol(unit));
}

ColumnUnit column_unit(smi::Unit unit) noexcept {
  switch (unit) {
    case smi::Unit::byte: return {"GiB", 1024.0 * 1024 * 1024, 1};
    case smi::Unit::byte_per_second: return {"GB/s", 1e9, 2};
    case smi::Unit::joule: return {"kJ", 1e3, 1};
    case smi::Unit::gigatransfer_per_second:
    case smi::Unit::second: return {display_symbol(unit), 1, 1};
    case smi::Unit::lane: return {"lanes", 1, 0};
    case smi::Unit::none:
    case smi::Unit::count: return {"", 1, 0};
    case smi::Unit::celsius:
    case smi::Unit::watt:
    case smi::Unit::percent:
    case smi::Unit::megahertz:
    case smi::Unit::rpm:
    case smi::Unit::millivolt: break;
  }
  return {display_symbol(unit), 1, 0};
}

std::string column_number(double value, const ColumnUnit& unit) {
  double scaled = value / unit.divisor;
  if (std::fabs(scaled) < 0.5 * std::pow(10.0, -unit.decimals)) scaled = 0;  // no "-0.0"
  return fmt::format("{:.{}f}", scaled, unit.decimals);
}


}  // namespace hipstack::cli
