// Library results in the CLI's three output forms: tables, JSON and CSV (render.hpp).
#include "render.hpp"

#include "text_layout.hpp"
#include "units.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>

namespace hipstack::cli {

std::string printable(std::string_view text) { return smi::holds_raw_bytes(text) ? smi::printable_text(text) : std::string(text); }

void Table::add(std::vector<std::string> row) {
  for (std::string& cell : row) {
    if (smi::holds_raw_bytes(cell)) cell = smi::printable_text(cell);
  }
  rows_.push_back(std::move(row));
}

namespace {

using Fit = Table::Fit;
using Cells = std::vector<std::string>;

// How a table is laid out in `width` columns (Table::Fit says how each column gives way): the
// columns' widths after identifiers are cut, which columns go under their row, and the room of the
// last column's lines.
class TableLayout {
 public:
  TableLayout(const Cells& header, const std::vector<Fit>& fits, const std::vector<Cells>& rows, std::size_t width)
      : fits_(fits), width_(width), n_(header.size()), widths_(n_, 0) {
    measure(header, rows);
    const std::size_t excess = cut_identifiers(header);
    place_last(excess);
  }

  [[nodiscard]] std::string lines(const Cells& row) const {
    std::string out = line_of(row, 0, split_, "");
    if (side_by_side_) {
      const std::string under = line_of(row, split_, n_, std::string(kBelowIndent, ' '));
      if (under.find_first_not_of(" \n") != std::string::npos) out += under;
      return out;
    }
    for (std::size_t i = split_; i < n_; ++i) {
      const std::string cell = i < row.size() ? row[i] : std::string();
      if (cell.empty()) continue;
      for (const std::string& piece : i + 1 == n_ ? last_lines(cell) : wrap_words(cell, below_room_)) {
        out += std::string(kBelowIndent, ' ') + piece + '\n';
      }
    }
    return out;
  }

 private:
  static constexpr std::size_t kGap = 2;
  static constexpr std::size_t kMiddleFloor = 13;  // a cut identifier keeps 6 characters at each end
  static constexpr std::size_t kLastFloor = 16;    // narrower than this, the last column goes under its row
  static constexpr std::size_t kBelowIndent = 4;

  void measure(const Cells& header, const std::vector<Cells>& rows) {
    const auto widen = [this](const Cells& row) {
      for (std::size_t i = 0; i < row.size() && i < n_; ++i) widths_[i] = std::max(widths_[i], display_width(row[i]));
    };
    widen(header);
    for (const Cells& row : rows) widen(row);
  }

  // Columns [first, last) side by side, gaps included.
  [[nodiscard]] std::size_t span(std::size_t first, std::size_t last) const {
    std::size_t total = 0;
    for (std::size_t i = first; i < last; ++i) total += widths_[i] + (i > first ? kGap : 0);
    return total;
  }

  // Identifier columns (cut_middle) give way first, down to their floor; what is still too wide.
  std::size_t cut_identifiers(const Cells& header) {
    std::size_t excess = width_ > 0 && span(0, n_) > width_ ? span(0, n_) - width_ : 0;
    for (std::size_t i = 0; i < n_ && excess > 0; ++i) {
      if (fits_[i] != Fit::cut_middle) continue;
      const std::size_t floor = std::max(kMiddleFloor, display_width(header[i]));
      const std::size_t give = widths_[i] > floor ? std::min(excess, widths_[i] - floor) : 0;
      widths_[i] -= give;
      excess -= give;
    }
    return excess;
  }

  // Columns from split_ on go under their row: the last, then the `below` ones before it, until the
  // rest fits. Under the row the last column takes what the others leave of the width, side by
  // side with the moved cells where that leaves it at least half the line.
  void place_last(std::size_t excess) {
    last_fit_ = fits_[n_ - 1];
    flexible_last_ = last_fit_ == Fit::wrap || last_fit_ == Fit::cut_end;
    if (excess > 0 && flexible_last_) {
      if (widths_[n_ - 1] > excess && widths_[n_ - 1] - excess >= kLastFloor) {
        widths_[n_ - 1] -= excess;
      } else {
        split_ = n_ - 1;
        while (split_ > 1 && span(0, split_) > width_ && fits_[split_ - 1] == Fit::below) --split_;
      }
    }
    const bool below = split_ < n_;
    below_room_ = width_ > kBelowIndent ? width_ - kBelowIndent : 1;
    const std::size_t beside = split_ + 1 < n_ ? span(split_, n_ - 1) + kGap : 0;
    side_by_side_ = below && beside > 0 && beside <= below_room_ / 2;
    last_room_ = !below ? widths_[n_ - 1] : side_by_side_ ? below_room_ - beside : below_room_;
    last_start_ = !below ? span(0, n_ - 1) + kGap : kBelowIndent + (side_by_side_ ? beside : 0);
  }

  // The last cell's lines: wrapped or cut to its room, or as it is.
  [[nodiscard]] std::vector<std::string> last_lines(const std::string& cell) const {
    if (width_ == 0 || !flexible_last_) return {cell};
    if (last_fit_ == Fit::cut_end) return {cut_end(cell, last_room_)};
    return wrap_words(cell, last_room_);
  }

  // Cells [first, last) of `row` as one line (the last column's continuation lines after it).
  [[nodiscard]] std::string line_of(const Cells& row, std::size_t first, std::size_t last, std::string line) const {
    for (std::size_t i = first; i < last; ++i) {
      std::string cell = i < row.size() ? row[i] : std::string();
      if (fits_[i] == Fit::cut_middle) cell = cut_middle(cell, widths_[i]);
      const std::vector<std::string> pieces = i + 1 == n_ ? last_lines(cell) : std::vector<std::string>{cell};
      line += pieces.front();
      if (i + 1 < last) line.append(widths_[i] - std::min(widths_[i], display_width(pieces.front())) + kGap, ' ');
      for (std::size_t k = 1; k < pieces.size(); ++k) line += '\n' + std::string(last_start_, ' ') + pieces[k];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + '\n';
  }

  const std::vector<Fit>& fits_;
  std::size_t width_, n_;
  std::vector<std::size_t> widths_;
  std::size_t split_ = n_;
  Fit last_fit_ = Fit::keep;
  bool flexible_last_ = false, side_by_side_ = false;
  std::size_t below_room_ = 1, last_room_ = 0, last_start_ = 0;
};

}  // namespace

std::string Table::str(std::size_t width) const {
  if (header_.empty()) return {};
  const TableLayout layout(header_, fits_, rows_, width);
  std::string out = layout.lines(header_);
  for (const auto& row : rows_) out += layout.lines(row);
  return out;
}

std::string value_text(const smi::Reading& reading) {
  if (!reading.ok()) return "N/A";
  if (const auto* i = std::get_if<std::int64_t>(&reading.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&reading.value)) {
    std::string text = fmt::format("{:.3f}", *d);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
  }
  if (const auto* s = std::get_if<std::string>(&reading.value)) return *s;
  return "N/A";
}

std::string raw_value_text(const smi::Reading& reading) {
  if (const auto* d = std::get_if<double>(&reading.value); d != nullptr && reading.ok()) return fmt::format("{}", *d);
  return value_text(reading);
}

std::string value_with_unit(const smi::Reading& reading) {
  const smi::MetricInfo* info = smi::find_metric(reading.id);
  const std::optional<double> number = reading.number();
  // Unitless numbers stay exact (counters beyond 2^53 must not round); quantities read as people read them.
  if (!reading.ok() || info == nullptr || !number || smi::unit_symbol(info->unit).empty()) return value_text(reading);
  return human_quantity(*number, info->unit);
}

namespace {

Json single_json(const smi::Reading& r, bool with_unit) {
  Json j;
  j["status"] = std::string(smi::status_name(r.status));
  if (r.ok()) {
    std::visit(
        [&j](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (!std::is_same_v<T, std::monostate>) j["value"] = v;
        },
        r.value);
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (with_unit && info != nullptr && info->unit != smi::Unit::none) j["unit"] = std::string(smi::unit_symbol(info->unit));
  } else if (r.status != smi::Status::not_supported) {
    if (r.error_code != 0) j["error"] = std::string(std::strerror(r.error_code));
    j["detail"] = r.detail;
  }
  return j;
}

}  // namespace

Json reading_json(const smi::Reading& reading) { return single_json(reading, true); }

Json readings_json(const std::vector<smi::Reading>& readings) {
  Json metrics = Json::object();
  for (const smi::Reading& r : readings) {
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (info == nullptr) continue;
    const std::string name(info->name);
    if (info->instance_label.empty()) {
      metrics[name] = single_json(r, true);
      continue;
    }
    // Instanced metric: one entry per instance; none at all is reported like a single value.
    if (r.instance.empty()) {
      if (!metrics.contains(name)) metrics[name] = single_json(r, false);
      continue;
    }
    Json& entry = metrics[name];
    if (!entry.contains("instances")) {
      entry = Json::object();
      if (info->unit != smi::Unit::none) entry["unit"] = std::string(smi::unit_symbol(info->unit));
      entry["instances"] = Json::object();
    }
    entry["instances"][r.instance] = single_json(r, false);
  }
  return metrics;
}

Json device_json(const smi::DeviceSummary& device) {
  Json j;
  j["index"] = device.index;
  j["vendor"] = device.vendor;
  j["backend"] = device.backend;
  j["bdf"] = device.bdf;
  j["uuid"] = device.uuid;
  j["name"] = device.name;
  j["partitions"] = device.partition_count;
  j["fault"] = device.fault.empty() ? Json(nullptr) : Json(device.fault);
  return j;
}

std::string device_heading(const smi::DeviceSummary& device, std::string_view extra, std::string_view lead) {
  const std::size_t width = output_width();
  std::string out = fmt::format("{}GPU {}  {}  {}", printable(lead), device.index, device.bdf.empty() ? "N/A" : printable(device.bdf),
                                device.name.empty() ? "(name unreadable)" : printable(device.name));
  // What does not fit beside the name goes on lines of its own, indented under it.
  if (!extra.empty()) {
    const std::string shown = printable(extra);
    out += display_width(out) + 2 + display_width(shown) <= width ? "  " : "\n  ";
    out += shown;
  }
  if (!device.fault.empty()) {
    const std::string fault = "CANNOT BE READ: " + printable(device.fault);
    const std::size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
    if (display_width(std::string_view(out).substr(line_start)) + 2 + display_width(fault) <= width) return out + "  " + fault + "\n";
    return out + "\n" + hanging_lines("  ", fault, 4, width);
  }
  return out + "\n";
}

std::string fault_lines(const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected) {
  std::string out;
  for (const std::uint32_t index : selected) {
    if (!devices.at(index).fault.empty()) out += fmt::format("GPU {} cannot be read: {}\n", devices[index].index, devices[index].fault);
  }
  return out;
}

bool any_fault(const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected) {
  return std::any_of(selected.begin(), selected.end(), [&](std::uint32_t i) { return !devices.at(i).fault.empty(); });
}

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

void print_json(const Json& doc) { print(doc.dump(2) + "\n"); }

Json document(std::string_view command) {
  Json j;
  j["schema"] = "hipstack-smi/v1";
  j["command"] = std::string(command);
  return j;
}

std::string csv_field(std::string_view text) {
  if (smi::holds_raw_bytes(text)) return csv_field(smi::printable_text(text));
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
  return out;
}

std::string csv_reading_row(std::vector<std::string> keys, const smi::Reading& reading, CsvInstance instance) {
  const smi::MetricInfo* info = smi::find_metric(reading.id);
  keys.emplace_back(info != nullptr ? info->name : "");
  if (instance == CsvInstance::with) keys.push_back(reading.instance);
  keys.emplace_back(smi::status_name(reading.status));
  keys.push_back(reading.ok() ? raw_value_text(reading) : "");
  keys.emplace_back(info != nullptr ? smi::unit_symbol(info->unit) : "");
  return csv_row(keys);
}

std::string local_clock(std::chrono::system_clock::time_point when, bool milliseconds) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  std::string text = fmt::format("{:%H:%M:%S}", local);
  if (milliseconds) {
    text += fmt::format(".{:03}", std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000);
  }
  return text;
}

std::string utc_iso(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", utc, ms);
}

}  // namespace hipstack::cli
