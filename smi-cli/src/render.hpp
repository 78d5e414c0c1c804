// Turning library results into the CLI's three output forms: aligned tables for people, and
// --json / --csv with the stable schema of docs/cli.md. Everything here is generated from the
// metric catalogue: no metric is named by hand.
#pragma once

#include <hipstack/smi.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace hipstack::cli {

using Json = nlohmann::ordered_json;

enum class Format { table, json, csv };

// A plain text table with aligned columns, two spaces apart.
class Table {
 public:
  // How a column gives way when the table is wider than str's width: keep (never), cut_middle
  // (identifiers: both ends kept, "GPU-100274a1…140f9a5f9e31"), below (may go under its row), and
  // for the last column only wrap (at spaces, continuation lines under the column) or cut_end (one
  // line ending in "…"). When the last column would be narrower than 16 columns it goes under its
  // row, with the `below` columns just before it while the rest is still too wide, indented by 4:
  // side by side where the last keeps half the line, else each cell on lines of its own (the
  // names under the header likewise).
  enum class Fit { keep, cut_middle, below, wrap, cut_end };
  explicit Table(std::vector<std::string> header) : header_(std::move(header)), fits_(header_.size(), Fit::keep) {}
  Table& fit(std::size_t column, Fit how) {
    fits_.at(column) = how;
    return *this;
  }
  // Each cell is made printable (printable() below): a table never carries raw bytes, whatever
  // the source of its text.
  void add(std::vector<std::string> row);
  // The table in at most `width` columns where its columns' Fit allows (0: as wide as its cells).
  [[nodiscard]] std::string str(std::size_t width = 0) const;
  [[nodiscard]] bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<Fit> fits_;
  std::vector<std::vector<std::string>> rows_;
};

// Text as every output edge writes it (table cells, CSV fields, headings, event lines): unchanged
// when it is printable already (text from the library and from hipstack-smid is), else
// smi::printable_text. So text from any source (a peer, a job store) never brings a control
// character, a bidirectional override or invalid UTF-8 to the screen (docs/security.md).
std::string printable(std::string_view text);

// Value as people read it: numbers without trailing zeros, text as is, "N/A" when not ok.
std::string value_text(const smi::Reading& reading);
// The value exactly, for machine outputs (CSV): a real as its shortest text that reads back as the
// same double (as JSON writes it), not value_text's three decimals; "N/A" when not ok.
std::string raw_value_text(const smi::Reading& reading);
// Value as tables print it (units.hpp): "45 °C", "145.5 GiB", "50 GB/s"; unitless values exact.
std::string value_with_unit(const smi::Reading& reading);

// {"status": "ok", "value": 45.0, "unit": "C"} and the instanced form; see docs/cli.md.
Json readings_json(const std::vector<smi::Reading>& readings);
// One reading as {"status": "ok", "value": 45.0, "unit": "C"} (the instance is the caller's to name).
Json reading_json(const smi::Reading& reading);
Json device_json(const smi::DeviceSummary& device);  // "fault": null, or why the GPU cannot be read

// "GPU 0  0000:03:00.0  NAME  EXTRA" for the head of a device's block, `lead` ("host H  ") first; a
// GPU that cannot be read says so in the heading, so every command names it without -v. What does
// not fit output_width() beside the name (the UUID, the fault) goes on lines of its own, indented.
std::string device_heading(const smi::DeviceSummary& device, std::string_view extra = {}, std::string_view lead = {});
// "GPU 1 cannot be read: WHY" lines for the selected GPUs that have a fault ("" when none).
std::string fault_lines(const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected);
// kExitReadFailure's rule: true when a selected GPU cannot be read.
bool any_fault(const std::vector<smi::DeviceSummary>& devices, const std::vector<std::uint32_t>& selected);

// Writes text to stdout as it is (no locale, no formatting).
void print(const std::string& text);
void print_json(const Json& doc);
// {"schema": "hipstack-smi/v1", "command": ...}: the head of every JSON document.
Json document(std::string_view command);

// A time as watching commands print it: "05:37:41" (local; ".251" added with milliseconds), and
// "2026-11-27T05:37:41.681Z" (UTC, ISO 8601) in their CSV.
std::string local_clock(std::chrono::system_clock::time_point when, bool milliseconds);
std::string utc_iso(std::chrono::system_clock::time_point when);

// CSV field quoting (RFC 4180).
std::string csv_field(std::string_view text);
std::string csv_row(const std::vector<std::string>& fields);
// A long-form CSV row of one reading: the row's own `keys` (device, bdf, ...), then the reading's
// metric, instance (unless left out: link and partition rows have none), status, value (raw, in the
// catalogue's unit; empty unless ok) and unit symbol. Every command's per-reading CSV is made here.
enum class CsvInstance { with, without };
std::string csv_reading_row(std::vector<std::string> keys, const smi::Reading& reading, CsvInstance instance = CsvInstance::with);

}  // namespace hipstack::cli
