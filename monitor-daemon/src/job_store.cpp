// Where job summaries are kept: the SQLite store, its schema and retention (job_store.hpp).
#include "job_store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <utility>
#include <variant>

#include "job_input.hpp"

namespace hipstack::smid {
namespace {

// Each step takes the schema from version N (its index) to N+1; a database is brought up step by
// step in one transaction each. Steps are never edited once released: a change is a new step.
constexpr std::array<const char*, JobStore::kSchemaVersion> kMigrations{
    // 0 -> 1: jobs, and per job each GPU's usage as JSON (job_usage.cpp writes it).
    "CREATE TABLE jobs ("
    "  id TEXT PRIMARY KEY NOT NULL,"
    "  user TEXT NOT NULL,"
    "  started_by TEXT NOT NULL,"
    "  stopped_by TEXT NOT NULL DEFAULT '',"
    "  started_ns INTEGER NOT NULL,"
    "  stopped_ns INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX jobs_by_start ON jobs (started_ns);"
    "CREATE TABLE job_gpus ("
    "  job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
    "  position INTEGER NOT NULL,"
    "  uuid TEXT NOT NULL,"
    "  bdf TEXT NOT NULL,"
    "  usage TEXT NOT NULL,"
    "  PRIMARY KEY (job_id, position));",
};

// A prepared statement, finalised when it goes.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& path) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw JobStoreError(fmt::format("{}: preparing a query: {}", path, sqlite3_errmsg(db)));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t n) {
    sqlite3_bind_int64(stmt_, i, n);
    return *this;
  }
  // True while there is a row; throws on an error.
  bool step(const std::string& path, const char* what) {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw JobStoreError(fmt::format("{}: {}: {}", path, what, sqlite3_errmsg(db_)));
  }
  [[nodiscard]] std::string text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  [[nodiscard]] std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  void reset() { sqlite3_reset(stmt_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE .. COMMIT, rolled back when left by an exception.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) { run("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    run("COMMIT");
    done_ = true;
  }

 private:
  void run(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      throw JobStoreError(fmt::format("{}: {}: {}", path_, sql, sqlite3_errmsg(db_)));
    }
  }
  sqlite3* db_;
  const std::string& path_;
  bool done_ = false;
};

constexpr const char* kJobColumns = "SELECT id, user, started_by, stopped_by, started_ns, stopped_ns FROM jobs ";

// Whether `path` (the store, or its folder) may hold the daemon's records: not a link, owned by the
// daemon's user or root, writable by nobody else (sshd's StrictModes, for one file and its folder).
// A store another user made, or one in a folder others write to (a 1777 /tmp), could be theirs to
// forge or swap. Throws JobStoreError naming what is wrong; a path that does not exist passes.
void check_owner_and_mode(const std::string& path, const std::string& store, bool folder) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  if (S_ISLNK(info.st_mode)) {
    throw JobStoreError(fmt::format("{}: {} is a symbolic link: the store is never opened through a link", store, path));
  }
  if (folder != S_ISDIR(info.st_mode) || (!folder && !S_ISREG(info.st_mode))) {
    throw JobStoreError(fmt::format("{}: {} is not a {}", store, path, folder ? "folder" : "regular file"));
  }
  const uid_t me = ::geteuid();
  if (info.st_uid != me && info.st_uid != 0) {
    throw JobStoreError(fmt::format("{}: {} is owned by uid {}, not by the daemon's user (uid {}) or root", store, path, info.st_uid, me));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw JobStoreError(fmt::format("{}: {} is writable by {} (mode {:04o}): only the daemon's user may write it", store, path,
                                    (info.st_mode & S_IWOTH) != 0 ? "every user" : "its group", info.st_mode & 07777));
  }
}

}  // namespace

JobStore::JobStore(const std::string& path) : path_(path) {
  const auto slash = path.rfind('/');
  check_owner_and_mode(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash), path, true);
  check_owner_and_mode(path, path, false);
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw JobStoreError(fmt::format("{}: cannot open: {}", path, why));
  }
  try {
    // Another process holding a lock (sqlite3 run by an operator) is waited for, not failed.
    sqlite3_busy_timeout(db_, 2000);
    exec("PRAGMA foreign_keys = ON", "turning foreign keys on");
    // WAL: readers do not block the writer. synchronous NORMAL: a commit survives the daemon
    // being killed; only a power loss may take the last commits back (docs/jobs.md).
    {
      Statement wal(db_, "PRAGMA journal_mode = WAL", path_);
      if (!wal.step(path_, "turning WAL on") || wal.text(0) != "wal") {
        throw JobStoreError(fmt::format("{}: the database did not take WAL mode (a read-only folder?)", path_));
      }
    }
    exec("PRAGMA synchronous = NORMAL", "setting synchronous");
    migrate();
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

JobStore::~JobStore() { sqlite3_close(db_); }

void JobStore::exec(const char* sql, const char* what) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error != nullptr ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw JobStoreError(fmt::format("{}: {}: {}", path_, what, why));
  }
}

void JobStore::migrate() {
  for (;;) {
    Transaction transaction(db_, path_);
    int version = 0;
    {
      Statement statement(db_, "PRAGMA user_version", path_);
      if (statement.step(path_, "reading the schema version")) version = static_cast<int>(statement.integer(0));
    }
    if (version == kSchemaVersion) return transaction.commit();
    if (version < 0 || version > kSchemaVersion) {
      throw JobStoreError(fmt::format("{}: schema version {} is not one this hipstack-smid knows (it writes {}): a newer "
                                      "release made it; not changed",
                                      path_, version, kSchemaVersion));
    }
    exec(kMigrations[static_cast<std::size_t>(version)], fmt::format("migrating the schema from version {}", version).c_str());
    exec(fmt::format("PRAGMA user_version = {}", version + 1).c_str(), "writing the schema version");
    transaction.commit();
  }
}

void JobStore::write_usage(const JobRecord& job) {
  Statement remove(db_, "DELETE FROM job_gpus WHERE job_id = ?1", path_);
  remove.bind(1, job.id).step(path_, "replacing a job's GPUs");
  Statement insert(db_, "INSERT INTO job_gpus (job_id, position, uuid, bdf, usage) VALUES (?1, ?2, ?3, ?4, ?5)", path_);
  std::int64_t position = 0;
  for (const JobGpuUsage& gpu : job.gpus) {
    insert.reset();
    insert.bind(1, job.id).bind(2, position++).bind(3, gpu.uuid).bind(4, gpu.bdf).bind(5, to_json(gpu).dump());
    insert.step(path_, "writing a GPU's usage");
  }
}

bool JobStore::insert(const JobRecord& job) {
  Transaction transaction(db_, path_);
  {
    Statement exists(db_, "SELECT 1 FROM jobs WHERE id = ?1", path_);
    if (exists.bind(1, job.id).step(path_, "looking for the job")) return false;
  }
  Statement insert(db_, "INSERT INTO jobs (id, user, started_by, started_ns) VALUES (?1, ?2, ?3, ?4)", path_);
  insert.bind(1, job.id).bind(2, job.user).bind(3, job.started_by).bind(4, job.started_ns).step(path_, "adding the job");
  write_usage(job);
  transaction.commit();
  return true;
}

void JobStore::save_usage(const JobRecord& job) {
  Transaction transaction(db_, path_);
  write_usage(job);
  transaction.commit();
}

void JobStore::finish(const JobRecord& job) {
  Transaction transaction(db_, path_);
  Statement stop(db_, "UPDATE jobs SET stopped_by = ?2, stopped_ns = ?3 WHERE id = ?1", path_);
  stop.bind(1, job.id).bind(2, job.stopped_by).bind(3, job.stopped_ns).step(path_, "stopping the job");
  write_usage(job);
  transaction.commit();
}

void JobStore::load_gpus(JobRecord& job) {
  Statement gpus(db_, "SELECT position, uuid, usage FROM job_gpus WHERE job_id = ?1 ORDER BY position", path_);
  gpus.bind(1, job.id);
  while (gpus.step(path_, "reading a job's GPUs")) {
    try {
      job.gpus.push_back(usage_from_json(nlohmann::json::parse(gpus.text(2))));
    } catch (const std::exception& e) {
      // A row edited by hand or damaged: that GPU is reported, not the whole job lost.
      job.problems.push_back(fmt::format("{}: job {} GPU {} ({}): stored usage unreadable: {}", path_, job.id, gpus.integer(0),
                                         gpus.text(1), e.what()));
    }
  }
}

std::vector<JobRecord> JobStore::query_jobs(const char* sql, const std::variant<std::int64_t, std::string>& key, std::size_t limit) {
  Statement statement(db_, (std::string(kJobColumns) + sql).c_str(), path_);
  std::visit([&statement](const auto& value) { statement.bind(1, value); }, key);
  std::vector<JobRecord> out;
  while (out.size() < limit && statement.step(path_, "reading jobs")) {
    JobRecord job;
    job.id = statement.text(0);
    job.user = statement.text(1);
    job.started_by = statement.text(2);
    job.stopped_by = statement.text(3);
    job.started_ns = statement.integer(4);
    job.stopped_ns = statement.integer(5);
    // A row is checked as a request is (the file may have been edited, or written by another
    // program): a bad one is reported and left out, never passed on to a page or a reply.
    std::string bad;
    try {
      check_job_id(job.id);
      check_job_user(job.user);
    } catch (const JobRequestError& e) {
      bad = e.what();
    }
    if (bad.empty() && (job.started_ns <= 0 || job.stopped_ns < 0 || (job.stopped_ns != 0 && job.stopped_ns < job.started_ns))) {
      bad = fmt::format("started {} ns and stopped {} ns after the epoch are no job's times", job.started_ns, job.stopped_ns);
    }
    if (!bad.empty()) {
      if (bad_rows_.size() < kMaxBadRows) {
        bad_rows_.push_back(fmt::format("{}: the row of job \"{}\" is not valid ({}): left out", path_,
                                        smi::printable_text(job.id.substr(0, 64)), bad));
      }
      continue;
    }
    for (std::string* text : {&job.started_by, &job.stopped_by}) {
      if (smi::holds_raw_bytes(*text)) *text = smi::printable_text(*text);
    }
    out.push_back(std::move(job));
  }
  for (JobRecord& job : out) load_gpus(job);
  return out;
}

std::vector<std::string> JobStore::take_bad_rows() { return std::exchange(bad_rows_, {}); }

std::optional<JobRecord> JobStore::get(const std::string& id) {
  auto found = query_jobs("WHERE id = ?1", id, 1);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<JobRecord> JobStore::list(std::int64_t since_ns, std::size_t limit) {
  return query_jobs("WHERE started_ns >= ?1 ORDER BY started_ns DESC, id", since_ns, limit);
}

std::vector<JobRecord> JobStore::running() {
  return query_jobs("WHERE stopped_ns = ?1 ORDER BY started_ns", std::int64_t{0}, static_cast<std::size_t>(-1));
}

std::size_t JobStore::prune(std::int64_t before_ns) {
  Statement prune(db_, "DELETE FROM jobs WHERE stopped_ns != 0 AND stopped_ns < ?1", path_);
  prune.bind(1, before_ns).step(path_, "deleting old jobs");
  return static_cast<std::size_t>(sqlite3_changes(db_));
}

}  // namespace hipstack::smid
