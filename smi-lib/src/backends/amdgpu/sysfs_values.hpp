// Reading one sysfs value and turning it into a reading, with a fallback source (gpu_metrics) when
// the file is absent. Shared by the identity, static and live readers of this backend.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include "../../readings.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {

class SysfsValues {
 public:
  SysfsValues(const FsView& fs, std::vector<Reading>& out) : fs_(fs), list_(out) {}

  ReadingList& list() { return list_; }
  const FsView& fs() const { return fs_; }

  // A number file scaled into catalogue units; when the file is absent and a fallback value exists,
  // the fallback is reported instead (its source named in detail). Returns true when a value was
  // reported.
  bool number(MetricId id, const std::string& path, double scale = 1.0,
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
};

}  // namespace hipstack::smi::detail::amdgpu
