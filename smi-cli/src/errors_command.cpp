// `hipstack-smi errors` (errors_command.hpp): the daemon's kept errors as a table by GPU, JSON or CSV.
#include "errors_command.hpp"

#include <fmt/format.h>

#include <map>

#include "commands.hpp"
#include "proto_convert.hpp"

namespace hipstack::cli {
namespace {

namespace pb = ::hipstack::monitor::v1;
using WallClock = std::chrono::system_clock;

std::string error_time(std::int64_t unix_ms) { return utc_iso(WallClock::time_point(std::chrono::milliseconds(unix_ms))); }

// A daemon's answer as every view prints it: each string made printable where it is received.
pb::GpuError printable_error(pb::GpuError e) {
  for (std::string* text : {e.mutable_bdf(), e.mutable_uuid(), e.mutable_source(), e.mutable_severity(), e.mutable_action(),
                            e.mutable_verdict(), e.mutable_summary()}) {
    *text = proto::peer_text(*text);
  }
  return e;
}

// "XID 79" or "CPER fatal".
std::string error_label(const pb::GpuError& e) {
  return e.source() == "xid" ? fmt::format("XID {}", e.code()) : fmt::format("CPER {}", e.severity().empty() ? "?" : e.severity());
}

std::string error_age_text(std::int64_t seconds) {
  if (seconds % 86400 == 0) return fmt::format("{} d", seconds / 86400);
  if (seconds % 3600 == 0) return fmt::format("{} h", seconds / 3600);
  return fmt::format("{} s", seconds);
}

}  // namespace

int print_errors(const pb::ListErrorsResponse& answered, Format format) {
  std::vector<pb::GpuError> errors;
  for (const pb::GpuError& e : answered.errors()) errors.push_back(printable_error(e));
  const std::string store = proto::peer_text(answered.store()), problem = proto::peer_text(answered.store_problem());
  if (format == Format::json) {
    Json doc = document("errors");
    doc["max_age_seconds"] = answered.max_age_seconds();
    doc["store"] = store.empty() ? Json() : Json(store);
    if (!problem.empty()) doc["store_problem"] = problem;
    doc["errors"] = Json::array();
    for (const pb::GpuError& e : errors) {
      Json one{{"device", e.device_index()}, {"bdf", e.bdf()}, {"uuid", e.uuid()}, {"gone", e.gone()}, {"source", e.source()},
               {"code", e.code()}, {"action", e.action()}, {"verdict", e.verdict()}, {"summary", e.summary()},
               {"time", error_time(e.time_unix_ms())}, {"seen", error_time(e.seen_unix_ms())}, {"recent", e.recent()}};
      one["severity"] = e.severity().empty() ? Json() : Json(e.severity());
      doc["errors"].push_back(std::move(one));
    }
    doc["truncated"] = answered.truncated();
    print_json(doc);
    return kExitOk;
  }
  if (format == Format::csv) {
    std::string out = csv_row({"device", "bdf", "uuid", "time", "source", "code", "severity", "action", "verdict", "recent", "summary"});
    for (const pb::GpuError& e : errors) {
      out += csv_row({e.gone() ? "" : std::to_string(e.device_index()), e.bdf(), e.uuid(), error_time(e.time_unix_ms()), e.source(),
                      std::to_string(e.code()), e.severity(), e.action(), e.verdict(), e.recent() ? "yes" : "no", e.summary()});
    }
    print(out);
    return kExitOk;
  }
  // A block per GPU (in the order of their newest error), its errors newest first.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const pb::GpuError*>> by_gpu;
  for (const pb::GpuError& e : errors) {
    auto& list = by_gpu[e.uuid()];
    if (list.empty()) order.push_back(e.uuid());
    list.push_back(&e);
  }
  std::string out;
  for (const std::string& uuid : order) {
    const pb::GpuError& first = *by_gpu[uuid].front();
    out += first.gone() ? fmt::format("GPU (not sampled now)  {}  {}\n", first.bdf(), uuid)
                        : fmt::format("GPU {}  {}  {}\n", first.device_index(), first.bdf(), uuid);
    Table table({"  TIME", "ERROR", "ACTION", "VERDICT", "RECENT", "WHAT"});
    for (const pb::GpuError* e : by_gpu[uuid]) {
      table.add({"  " + error_time(e->time_unix_ms()), error_label(*e), e->action(), e->verdict(), e->recent() ? "yes" : "no", e->summary()});
    }
    out += table.str() + "\n";
  }
  if (errors.empty()) out += "no XID or CPER error kept for these GPUs in that time\n";
  if (answered.truncated()) out += "(more errors kept: raise --limit or narrow --since)\n";
  out += fmt::format("errors younger than {} are judged by health (errors.recent); kept {}\n", error_age_text(answered.max_age_seconds()),
                     !store.empty() ? "in " + store : "in memory only" + (problem.empty() ? std::string() : ": " + problem));
  print(out);
  return kExitOk;
}

}  // namespace hipstack::cli
