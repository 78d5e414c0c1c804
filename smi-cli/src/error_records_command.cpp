// hipstack-smi ras --xid-catalogue, --cper, --cper-file (error_records_command.hpp): what the
// library's XID catalogue and CPER decoder say, as a table, JSON or CSV. Records come from the
// driver's ring of each selected AMD GPU (read through the root view), or from files saved by
// amd-smi (`ras --cper --folder`), by `--json`'s raw bytes, or copied from the ring's debugfs file.
#include "error_records_command.hpp"

#include <fmt/format.h>

#include <hipstack/cper.hpp>
#include <hipstack/gpu_errors.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "device_source.hpp"
#include "job_command.hpp"
#include "render.hpp"

namespace hipstack::cli {
namespace {

// A saved file larger than the driver's whole ring (4 MiB and its prefix) is not one of its dumps.
constexpr std::size_t kMaxCperFile = 12 + (std::size_t{4} << 20);

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

std::string applies_text(std::uint8_t applies) {
  std::string out;
  const std::pair<std::uint8_t, const char*> gpus[] = {
      {smi::xid_a100, "A100"}, {smi::xid_h100, "H100"}, {smi::xid_b100, "B100"}, {smi::xid_gb200, "GB200"}};
  for (const auto& [bit, name] : gpus) {
    if ((applies & bit) != 0) out += (out.empty() ? "" : " ") + std::string(name);
  }
  return out.empty() ? "-" : out;
}

// One record's facts, and where it came from (gpu: none for a file).
struct Found {
  std::optional<std::uint32_t> gpu;
  std::string bdf;
  std::string source;
  const smi::CperRecord* record = nullptr;
};

std::string raw_hex(const std::vector<std::uint8_t>& raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (const std::uint8_t b : raw) out += fmt::format("{:02x}", b);
  return out;
}

Json section_json(const smi::CperSection& s) {
  Json j{{"type", s.type},
         {"severity", std::string(smi::cper_severity_name(s.severity))},
         {"flags", s.flags},
         {"fru_text", s.fru_text},
         {"error_type", s.error_type.empty() ? Json(nullptr) : Json(s.error_type)},
         {"block", s.block.empty() ? Json(nullptr) : Json(s.block)},
         {"afid", s.afid ? Json(*s.afid) : Json(nullptr)}};
  if (s.bank) j["bank"] = {{"status", hex(s.bank->status)}, {"address", hex(s.bank->address)}, {"ipid", hex(s.bank->ipid)},
                           {"syndrome", hex(s.bank->syndrome)}};
  else j["bank"] = nullptr;
  return j;
}

Json record_json(const Found& f) {
  const smi::CperRecord& r = *f.record;
  Json sections = Json::array();
  for (const smi::CperSection& s : r.sections) sections.push_back(section_json(s));
  return {{"gpu", f.gpu ? Json(*f.gpu) : Json(nullptr)},
          {"bdf", f.bdf.empty() ? Json(nullptr) : Json(f.bdf)},
          {"source", f.source},
          {"time", r.time ? Json(utc_iso(*r.time)) : Json(nullptr)},
          {"time_recorded", r.time_text},
          {"severity", std::string(smi::cper_severity_name(r.severity))},
          {"action", std::string(smi::error_action_name(smi::cper_action(r)))},
          {"notification", r.notification},
          {"creator_id", r.creator_id},
          {"platform_id", r.platform_id},
          {"record_id", r.record_id},
          {"revision", r.revision},
          {"flags", r.flags},
          {"length", r.length},
          {"sections", std::move(sections)},
          {"raw_hex", raw_hex(r.raw)}};
}

void add_csv(std::string& csv, const Found& f) {
  const smi::CperRecord& r = *f.record;
  for (std::size_t i = 0; i < r.sections.size(); ++i) {
    const smi::CperSection& s = r.sections[i];
    csv += csv_row({f.gpu ? std::to_string(*f.gpu) : "", f.bdf, r.time ? utc_iso(*r.time) : "", std::string(smi::cper_severity_name(r.severity)),
                    std::string(smi::error_action_name(smi::cper_action(r))), r.record_id, std::to_string(i), s.type,
                    std::string(smi::cper_severity_name(s.severity)), s.fru_text, s.error_type, s.block,
                    s.afid ? std::to_string(*s.afid) : "", s.bank ? hex(s.bank->status) : "", s.bank ? hex(s.bank->address) : "",
                    s.bank ? hex(s.bank->ipid) : "", s.bank ? hex(s.bank->syndrome) : ""});
  }
}

constexpr std::string_view kCsvHeader =
    "gpu,bdf,time,severity,action,record_id,section,section_type,section_severity,fru,error_type,block,afid,status,address,ipid,syndrome\n";

void add_row(Table& table, const Found& f) {
  const smi::CperRecord& r = *f.record;
  std::string sections;
  for (const smi::CperSection& s : r.sections) sections += (sections.empty() ? "" : "; ") + smi::cper_section_summary(s);
  table.add({f.gpu ? std::to_string(*f.gpu) : "-", r.time ? r.time_text : "(" + r.time_text + ")",
             std::string(smi::cper_severity_name(r.severity)), std::string(smi::error_action_name(smi::cper_action(r))),
             sections.empty() ? "-" : sections});
}

Table records_table() {
  Table table({"GPU", "TIME", "SEVERITY", "ACTION", "SECTIONS"});
  table.fit(4, Table::Fit::wrap);
  return table;
}

// The record filter of --severity and --since: a record whose time is unknown is kept (it cannot be
// placed before the limit) and its TIME column says why.
struct Filter {
  std::set<smi::CperSeverity> severities;
  std::optional<std::chrono::system_clock::time_point> since;
  [[nodiscard]] bool keeps(const smi::CperRecord& r) const {
    if (!severities.empty() && !severities.contains(r.severity)) return false;
    return !since || !r.time || *r.time >= *since;
  }
};

std::optional<Filter> make_filter(const CperOptions& cper) {
  Filter filter;
  for (const std::string& name : cper.severities) {
    const auto s = smi::find_cper_severity(name);
    if (!s) {
      std::fprintf(stderr, "hipstack-smi: --severity %s: one of recoverable, fatal, corrected, informational\n",
                   smi::printable_text(name).c_str());
      return std::nullopt;
    }
    filter.severities.insert(*s);
  }
  if (!cper.since.empty()) {
    std::string error;
    filter.since = parse_since(cper.since, std::chrono::system_clock::now(), error);
    if (!filter.since) {
      std::fprintf(stderr, "hipstack-smi: --since %s: %s\n", smi::printable_text(cper.since).c_str(), error.c_str());
      return std::nullopt;
    }
  }
  return filter;
}

void print_found(const std::vector<Found>& found, const std::vector<std::string>& problems, const Json& unavailable,
                 const CommonOptions& options) {
  if (options.format == Format::json) {
    Json doc = document("ras-cper");
    doc["records"] = Json::array();
    for (const Found& f : found) doc["records"].push_back(record_json(f));
    doc["problems"] = problems;
    doc["unavailable"] = unavailable;
    print_json(doc);
    return;
  }
  if (options.format == Format::csv) {
    std::string csv(kCsvHeader);
    for (const Found& f : found) add_csv(csv, f);
    print(csv);
  } else {
    Table table = records_table();
    for (const Found& f : found) add_row(table, f);
    print(found.empty() ? "No CPER records.\n" : table.str());
  }
  for (const std::string& p : problems) std::fprintf(stderr, "hipstack-smi: %s\n", smi::printable_text(p).c_str());
  for (const Json& u : unavailable) {
    std::fprintf(stderr, "hipstack-smi: GPU %u: no CPER records read: %s\n", u["gpu"].get<unsigned>(),
                 smi::printable_text(u["why"].get<std::string>()).c_str());
  }
}

}  // namespace

int run_xid_catalogue(const CommonOptions& options) {
  Json doc = document("xid-catalogue");
  doc["source"] = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";
  doc["xids"] = Json::array();
  std::string csv = "code,mnemonic,description,action,if_repeated,verdict,fault,nvidia_immediate,nvidia_investigatory,applies_to,note\n";
  Table table({"XID", "MNEMONIC", "ACTION", "IF REPEATED", "FAULT", "DESCRIPTION"});
  table.fit(1, Table::Fit::cut_middle).fit(5, Table::Fit::wrap);
  for (const smi::XidInfo& x : smi::xid_catalogue()) {
    const smi::XidAdvice once = smi::xid_advice(x.code);
    const smi::XidAdvice again = smi::xid_advice(x.code, 2);
    const std::string action(smi::error_action_name(once.action)), repeated(smi::error_action_name(again.action));
    const std::string verdict(smi::verdict_name(once.verdict)), fault(smi::error_fault_name(x.fault));
    doc["xids"].push_back({{"code", x.code},
                           {"mnemonic", std::string(x.mnemonic)},
                           {"description", std::string(x.description)},
                           {"action", action},
                           {"if_repeated", repeated},
                           {"verdict", verdict},
                           {"fault", fault},
                           {"nvidia_immediate", std::string(x.immediate)},
                           {"nvidia_investigatory", std::string(x.investigatory)},
                           {"applies_to", applies_text(x.applies)},
                           {"note", std::string(x.note)}});
    csv += csv_row({std::to_string(x.code), std::string(x.mnemonic), std::string(x.description), action, repeated, verdict, fault,
                    std::string(x.immediate), std::string(x.investigatory), applies_text(x.applies), std::string(x.note)});
    table.add({std::to_string(x.code), std::string(x.mnemonic), action, repeated, fault, std::string(x.description)});
  }
  if (options.format == Format::json) print_json(doc);
  else if (options.format == Format::csv) print(csv);
  else print(table.str());
  return 0;
}

int run_cper_files(const CperOptions& cper, const CommonOptions& options) {
  const auto filter = make_filter(cper);
  if (!filter) return 2;
  std::vector<smi::CperScan> scans;  // kept alive: Found points into them
  std::vector<std::string> problems;
  scans.reserve(cper.files.size());
  for (const std::string& path : cper.files) {
    // A FIFO or a device would leave the command waiting on whoever writes it: files only.
    std::error_code error;
    if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
      std::fprintf(stderr, "hipstack-smi: --cper-file %s: not a regular file\n", smi::printable_text(path).c_str());
      return 2;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "hipstack-smi: --cper-file %s: %s\n", smi::printable_text(path).c_str(), std::strerror(errno));
      return 2;
    }
    std::vector<std::uint8_t> bytes(kMaxCperFile + 1);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > kMaxCperFile) {
      std::fprintf(stderr, "hipstack-smi: --cper-file %s: larger than the driver's whole ring (%zu bytes): not a CPER dump\n",
                   smi::printable_text(path).c_str(), kMaxCperFile);
      return 2;
    }
    scans.push_back(smi::scan_cper(bytes));
    for (const std::string& p : scans.back().problems) problems.push_back(fmt::format("{}: {}", path, p));
    if (scans.back().records.empty() && scans.back().problems.empty()) problems.push_back(fmt::format("{}: no CPER record", path));
  }
  std::vector<Found> found;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    for (const smi::CperRecord& r : scans[i].records) {
      if (filter->keeps(r)) found.push_back({std::nullopt, "", cper.files[i], &r});
    }
  }
  print_found(found, problems, Json::array(), options);
  return problems.empty() ? 0 : 1;
}

int run_cper_rings(const LocalSource& system, const CperOptions& cper, const CommonOptions& options) {
  const auto filter = make_filter(cper);
  if (!filter) return 2;
  const auto selected = selected_devices(system, options);
  // --follow: what each GPU's ring held at its last read, printed then; a record is printed when it
  // first appears. Bounded by the rings (a record the driver dropped is forgotten with it).
  std::map<std::uint32_t, std::set<std::vector<std::uint8_t>>> printed;
  std::map<std::uint32_t, std::set<std::string>> said;
  for (long look = 0;; ++look) {
    std::vector<smi::CperRing> rings;
    rings.reserve(selected.size());
    Json unavailable = Json::array();
    std::vector<std::string> problems;
    std::vector<Found> found;
    for (const std::uint32_t index : selected) {
      const auto ring = system.cper_ring(index);
      const std::string bdf = system.devices().at(index).bdf;
      rings.push_back(ring.value_or(smi::CperRing{}));
      if (!ring) rings.back().unavailable = system.stuck_fault(index);
      const smi::CperRing& r = rings.back();
      if (!r.unavailable.empty()) {
        if (look == 0) unavailable.push_back({{"gpu", index}, {"bdf", bdf}, {"why", r.unavailable}});
        continue;
      }
      std::set<std::string> problems_now;
      for (const std::string& p : r.scan.problems) {
        const std::string problem = fmt::format("GPU {} ({}): {}", index, r.source, p);
        if (!said[index].contains(problem)) problems.push_back(problem);
        if (cper.follow) problems_now.insert(problem);
      }
      std::set<std::vector<std::uint8_t>> held;
      for (const smi::CperRecord& rec : r.scan.records) {
        if (!filter->keeps(rec)) continue;
        if (!printed[index].contains(rec.raw)) found.push_back({index, bdf, r.source, &rec});
        if (cper.follow) held.insert(rec.raw);
      }
      printed[index] = std::move(held);
      said[index] = std::move(problems_now);
    }
    if (!cper.follow) {
      print_found(found, problems, unavailable, options);
      return unavailable.empty() && problems.empty() ? 0 : 1;
    }
    // --follow: one JSON object (or CSV row, or table row) per record as it is first seen.
    if (look == 0 && options.format == Format::csv) print(std::string(kCsvHeader));
    for (const Found& f : found) {
      if (options.format == Format::json) {
        print(record_json(f).dump() + "\n");
      } else if (options.format == Format::csv) {
        std::string csv;
        add_csv(csv, f);
        print(csv);
      } else {
        print(fmt::format("GPU {}  {}  {}  {}\n", *f.gpu, f.record->time ? f.record->time_text : "(" + f.record->time_text + ")",
                          smi::cper_severity_name(f.record->severity), smi::error_action_name(smi::cper_action(*f.record))));
        for (const smi::CperSection& s : f.record->sections) print("    " + smi::cper_section_summary(s) + "\n");
      }
    }
    for (const std::string& p : problems) std::fprintf(stderr, "hipstack-smi: %s\n", smi::printable_text(p).c_str());
    for (const Json& u : unavailable) {
      std::fprintf(stderr, "hipstack-smi: GPU %u: no CPER records read: %s\n", u["gpu"].get<unsigned>(),
                   smi::printable_text(u["why"].get<std::string>()).c_str());
    }
    std::fflush(stdout);
    if (cper.looks > 0 && look + 1 >= cper.looks) return 0;
    std::this_thread::sleep_for(std::chrono::duration<double>(cper.interval_s));
  }
}

}  // namespace hipstack::cli
