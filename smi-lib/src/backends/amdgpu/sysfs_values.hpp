// Reading one sysfs value and turning it into a reading, with a fallback source (gpu_metrics) when
// the file is absent. Shared by the identity, static and live readers of this backend.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include "../../readings.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {

// File units per catalogue unit, the divisors of SysfsValues::number. Converting by division keeps an
// integer file exact: 54231000 µW / 1e6 is the double nearest 54.231, which prints as 54.231, while
// 54231000 * 1e-6 is 54.230999999999995 (1e-6 itself is inexact).
inline constexpr double kMilliPerUnit = 1e3;  // m°C -> °C
inline constexpr double kMicroPerUnit = 1e6;  // µW -> W

class SysfsValues {
 public:
  // wanted: the metrics to read (number, text and value_or_absent skip the others, reading no
  // file); null: all of them.
  SysfsValues(const FsView& fs, std::vector<Reading>& out, const AskedFor* wanted = nullptr)
      : fs_(fs), list_(out), wanted_(wanted) {}

  ReadingList& list() { return list_; }
  const FsView& fs() const { return fs_; }
  // Whether any of these metrics is to be read.
  bool wanted(std::initializer_list<MetricId> ids) const { return wanted_ == nullptr || (*wanted_)(ids); }

  // A number file converted into catalogue units (divided by `per_unit`, file units per catalogue
  // unit); when the file is absent and a fallback value exists, the fallback is reported instead (its
  // source named in detail). Returns true when a value was reported.
  bool number(MetricId id, const std::string& path, double per_unit = 1.0,
              std::optional<double> fallback = std::nullopt, const char* fallback_source = "gpu_metrics",
              const std::string& instance = {});
  // A text file; an empty file means the board does not provide it (consumer FRU fields).
  bool text(MetricId id, const std::string& path, const std::string& instance = {});
  // A value computed elsewhere, or not_supported naming where it was looked for.
  void value_or_absent(MetricId id, std::optional<double> value, const std::string& source,
                       const std::string& instance = {});

 private:
  void emit_number(MetricId id, double value, std::string detail, const std::string& instance);
  const FsView& fs_;
  ReadingList list_;
  const AskedFor* wanted_;
};

}  // namespace hipstack::smi::detail::amdgpu
