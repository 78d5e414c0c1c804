// Where the GPUs' errors are kept across restarts: an SQLite database (error_db, default
// /var/lib/hipstack/errors.db in the packaged configuration), one row per XID occurrence or CPER
// record, with a retention and a row bound (docs/errors.md, "Kept and aged"). Not thread-safe: the
// error keeper's writer thread makes every call but the first load.
#pragma once

#include <hipstack/gpu_errors.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "sqlite_db.hpp"

namespace hipstack::smid {

// One error as the daemon keeps it.
struct StoredError {
  std::string uuid;
  std::string bdf;
  smi::ErrorOccurrence occurrence;  // when, source, code (XID or CPER severity), action, summary
  std::chrono::system_clock::time_point seen;  // when the daemon found it
  std::vector<std::uint8_t> raw;    // a CPER record's bytes; empty for an XID
};

class ErrorStore {
 public:
  static constexpr int kSchemaVersion = 1;
  // Opens or creates the database (never through a link). Throws StoreError.
  explicit ErrorStore(const std::string& path);

  [[nodiscard]] const std::string& path() const noexcept { return db_.path(); }
  // Adds the errors in one transaction; a CPER record already stored for that GPU (the same
  // bytes: the driver's ring is read again after a restart) is left out. Returns those added.
  std::vector<bool> add(const std::vector<StoredError>& errors);
  // The newest `per_gpu` errors of each GPU that happened at or after since, oldest first, without
  // their raw bytes; rows that cannot be true (an unknown source, a time before 2000) are left out
  // and named in `problems`.
  [[nodiscard]] std::vector<StoredError> load(std::chrono::system_clock::time_point since, std::size_t per_gpu,
                                              std::vector<std::string>& problems);
  // Every stored CPER record's GPU and bytes, for `visit` (the keeper remembers which records of
  // the driver's ring an earlier run recorded).
  void each_record(const std::function<void(const std::string& uuid, std::span<const std::uint8_t> raw)>& visit);
  // Deletes the errors that happened before `before` and then the oldest beyond `max_rows`; returns
  // how many went.
  std::size_t prune(std::chrono::system_clock::time_point before, std::size_t max_rows);

 private:
  SqliteDb db_;
};

}  // namespace hipstack::smid
