// Where job summaries are kept: an SQLite database (default /var/lib/hipstack/jobs.db) in WAL mode,
// its schema numbered in PRAGMA user_version and brought up to date when opened (docs/jobs.md).
// Every sample counted for a running job is written through, so a daemon that stops mid-job loses
// nothing it sampled. Not thread-safe: JobAccounting serialises the calls.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "job_usage.hpp"
#include "sqlite_db.hpp"

namespace hipstack::smid {

struct JobRecord {
  std::string id;
  std::string user;        // as the starter gave it (Slurm's SLURM_JOB_USER); may be empty
  std::string started_by;  // the caller, as the daemon identified it
  std::string stopped_by;
  std::int64_t started_ns = 0;  // system clock
  std::int64_t stopped_ns = 0;  // 0 while running
  std::vector<JobGpuUsage> gpus;
  std::vector<std::string> problems;  // a stored GPU usage that could not be read back, and why
  [[nodiscard]] bool running() const noexcept { return stopped_ns == 0; }
};

// An error of the database, naming the file and what was being done.
using JobStoreError = StoreError;

class JobStore {
 public:
  // The schema version this build writes; a database of a later version is refused, not changed.
  static constexpr int kSchemaVersion = 1;

  // Opens or creates the database; never through a symbolic link. Throws JobStoreError.
  explicit JobStore(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return db_.path(); }
  // False when a job with this id is already stored (running or not).
  bool insert(const JobRecord& job);
  // The GPUs' usage of a running job, in one transaction.
  void save_usage(const JobRecord& job);
  // The stop: who, when and the final usage, in one transaction.
  void finish(const JobRecord& job);
  [[nodiscard]] std::optional<JobRecord> get(const std::string& id);
  // Jobs started at or after since_ns, newest first, at most `limit`.
  [[nodiscard]] std::vector<JobRecord> list(std::int64_t since_ns, std::size_t limit);
  [[nodiscard]] std::vector<JobRecord> running();
  // Deletes the jobs that stopped before `before_ns`; returns how many.
  std::size_t prune(std::int64_t before_ns);
  // The rows the reads since the last call left out, and why (an id or user a request could not
  // have, impossible times): at most kMaxBadRows, for the caller to log.
  std::vector<std::string> take_bad_rows();
  static constexpr std::size_t kMaxBadRows = 16;

 private:
  // `sql` continues "SELECT <the jobs' columns> FROM jobs " with ?1 bound to `key`.
  std::vector<JobRecord> query_jobs(const char* sql, const std::variant<std::int64_t, std::string>& key, std::size_t limit);
  void load_gpus(JobRecord& job);
  void write_usage(const JobRecord& job);

  SqliteDb db_;
  std::vector<std::string> bad_rows_;
};

}  // namespace hipstack::smid
