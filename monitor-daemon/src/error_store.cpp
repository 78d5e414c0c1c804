// The error store's schema, writes, loads and retention (error_store.hpp).
#include "error_store.hpp"

#include <fmt/format.h>

#include <array>
#include <map>

namespace hipstack::smid {
namespace {

using WallClock = std::chrono::system_clock;

// Each step takes the schema from version N (its index) to N+1; steps are never edited once
// released: a change is a new step.
constexpr std::array<const char*, ErrorStore::kSchemaVersion> kErrorStoreSteps{
    // 0 -> 1: one row per error. A CPER record is unique per GPU by its bytes (the ring is read
    // again after every start); XIDs have no identity beyond their time and are never merged.
    "CREATE TABLE gpu_errors ("
    "  id INTEGER PRIMARY KEY,"
    "  at_ns INTEGER NOT NULL,"
    "  seen_ns INTEGER NOT NULL,"
    "  uuid TEXT NOT NULL,"
    "  bdf TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  code INTEGER NOT NULL,"
    "  action TEXT NOT NULL,"
    "  summary TEXT NOT NULL,"
    "  raw BLOB);"
    "CREATE INDEX gpu_errors_by_time ON gpu_errors (at_ns);"
    "CREATE INDEX gpu_errors_by_gpu ON gpu_errors (uuid, at_ns);"
    "CREATE UNIQUE INDEX gpu_errors_cper ON gpu_errors (uuid, raw) WHERE raw IS NOT NULL;",
};

std::int64_t ns_since_epoch(WallClock::time_point t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }
WallClock::time_point time_of_ns(std::int64_t ns) {
  return WallClock::time_point(std::chrono::duration_cast<WallClock::duration>(std::chrono::nanoseconds(ns)));
}

// 2000-01-01: no GPU error this daemon reads happened before it.
constexpr std::int64_t kEarliestNs = 946684800LL * 1000000000LL;

}  // namespace

ErrorStore::ErrorStore(const std::string& path) : db_(path, kErrorStoreSteps) {}

std::vector<bool> ErrorStore::add(const std::vector<StoredError>& errors) {
  std::vector<bool> added;
  Transaction transaction(db_);
  Statement insert(db_,
                   "INSERT OR IGNORE INTO gpu_errors (at_ns, seen_ns, uuid, bdf, source, code, action, summary, raw) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  for (const StoredError& e : errors) {
    insert.reset();
    insert.bind(1, ns_since_epoch(e.occurrence.at)).bind(2, ns_since_epoch(e.seen)).bind(3, e.uuid).bind(4, e.bdf);
    insert.bind(5, std::string(smi::error_source_name(e.occurrence.source))).bind(6, std::int64_t{e.occurrence.code});
    insert.bind(7, std::string(smi::error_action_name(e.occurrence.action))).bind(8, e.occurrence.summary);
    if (e.occurrence.source == smi::ErrorSource::cper) insert.bind_blob(9, e.raw);
    insert.step("adding an error");
    added.push_back(db_.changes() > 0);
  }
  transaction.commit();
  return added;
}

std::vector<StoredError> ErrorStore::load(WallClock::time_point since, std::size_t per_gpu, std::vector<std::string>& problems) {
  // Newest first per GPU (the window function numbers them), then put oldest first.
  Statement rows(db_,
                 "SELECT at_ns, seen_ns, uuid, bdf, source, code, action, summary FROM ("
                 "  SELECT *, row_number() OVER (PARTITION BY uuid ORDER BY at_ns DESC, id DESC) AS n"
                 "  FROM gpu_errors WHERE at_ns >= ?1) WHERE n <= ?2 ORDER BY at_ns, id");
  rows.bind(1, ns_since_epoch(since)).bind(2, static_cast<std::int64_t>(per_gpu));
  std::vector<StoredError> out;
  while (rows.step("reading errors")) {
    StoredError e;
    const std::int64_t at = rows.integer(0), seen = rows.integer(1);
    e.uuid = rows.text(2);
    e.bdf = rows.text(3);
    const std::string source = rows.text(4);
    const std::int64_t code = rows.integer(5);
    const auto action = smi::find_error_action(rows.text(6));
    std::string bad;
    if (source != "xid" && source != "cper") bad = "an unknown source";
    else if (at < kEarliestNs || seen < kEarliestNs) bad = "a time before 2000";
    else if (code < 0 || code > UINT32_MAX || (source == "cper" && code > 3)) bad = fmt::format("code {}", code);
    else if (!action) bad = "an unknown action";
    else if (smi::holds_raw_bytes(e.uuid) || smi::holds_raw_bytes(e.bdf)) bad = "a GPU name with raw bytes";
    if (!bad.empty()) {
      if (problems.size() < 16) problems.push_back(fmt::format("{}: an error row with {}: left out", path(), bad));
      continue;
    }
    e.occurrence.at = time_of_ns(at);
    e.seen = time_of_ns(seen);
    e.occurrence.source = source == "xid" ? smi::ErrorSource::xid : smi::ErrorSource::cper;
    e.occurrence.code = static_cast<std::uint32_t>(code);
    e.occurrence.action = *action;
    e.occurrence.summary = smi::printable_text(rows.text(7));
    out.push_back(std::move(e));
  }
  return out;
}

void ErrorStore::each_record(const std::function<void(const std::string& uuid, std::span<const std::uint8_t> raw)>& visit) {
  Statement records(db_, "SELECT uuid, raw FROM gpu_errors WHERE raw IS NOT NULL");
  while (records.step("reading CPER records")) visit(records.text(0), records.blob(1));
}

std::size_t ErrorStore::prune(WallClock::time_point before, std::size_t max_rows) {
  Transaction transaction(db_);
  Statement old(db_, "DELETE FROM gpu_errors WHERE at_ns < ?1");
  old.bind(1, ns_since_epoch(before)).step("deleting old errors");
  std::size_t gone = db_.changes();
  Statement beyond(db_, "DELETE FROM gpu_errors WHERE id IN (SELECT id FROM gpu_errors ORDER BY at_ns DESC, id DESC LIMIT -1 OFFSET ?1)");
  beyond.bind(1, static_cast<std::int64_t>(max_rows)).step("deleting errors beyond the row bound");
  gone += db_.changes();
  transaction.commit();
  return gone;
}

}  // namespace hipstack::smid
