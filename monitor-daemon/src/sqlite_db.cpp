// The daemon's SQLite files: safe opening, WAL, numbered schema steps (sqlite_db.hpp).
#include "sqlite_db.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hipstack::smid {
namespace {

// Whether `path` (the store, or its folder) may hold the daemon's records: not a link, owned by the
// daemon's user or root, writable by nobody else (sshd's StrictModes, for one file and its folder).
// A store another user made, or one in a folder others write to (a 1777 /tmp), could be theirs to
// forge or swap. Throws StoreError naming what is wrong; a path that does not exist passes.
void check_owner_and_mode(const std::string& path, const std::string& store, bool folder) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  if (S_ISLNK(info.st_mode)) {
    throw StoreError(fmt::format("{}: {} is a symbolic link: the store is never opened through a link", store, path));
  }
  if (folder != S_ISDIR(info.st_mode) || (!folder && !S_ISREG(info.st_mode))) {
    throw StoreError(fmt::format("{}: {} is not a {}", store, path, folder ? "folder" : "regular file"));
  }
  const uid_t me = ::geteuid();
  if (info.st_uid != me && info.st_uid != 0) {
    throw StoreError(fmt::format("{}: {} is owned by uid {}, not by the daemon's user (uid {}) or root", store, path, info.st_uid, me));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw StoreError(fmt::format("{}: {} is writable by {} (mode {:04o}): only the daemon's user may write it", store, path,
                                 (info.st_mode & S_IWOTH) != 0 ? "every user" : "its group", info.st_mode & 07777));
  }
}

}  // namespace

SqliteDb::SqliteDb(const std::string& path, std::span<const char* const> steps) : path_(path) {
  const auto slash = path.rfind('/');
  check_owner_and_mode(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash), path, true);
  check_owner_and_mode(path, path, false);
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw StoreError(fmt::format("{}: cannot open: {}", path, why));
  }
  try {
    // Another process holding a lock (sqlite3 run by an operator) is waited for, not failed.
    sqlite3_busy_timeout(db_, 2000);
    exec("PRAGMA foreign_keys = ON", "turning foreign keys on");
    // WAL: readers do not block the writer. synchronous NORMAL: a commit survives the daemon
    // being killed; only a power loss may take the last commits back (docs/jobs.md).
    {
      Statement wal(*this, "PRAGMA journal_mode = WAL");
      if (!wal.step("turning WAL on") || wal.text(0) != "wal") {
        throw StoreError(fmt::format("{}: the database did not take WAL mode (a read-only folder?)", path_));
      }
    }
    exec("PRAGMA synchronous = NORMAL", "setting synchronous");
    // A store is written a row at a time and read rarely: a small page cache does it, and bounds the
    // daemon's memory. SQLite's default (2 MB a connection) filled slowly as the files grew, which a
    // long run saw as RSS creeping for an hour (docs/performance.md, "Soak").
    exec(fmt::format("PRAGMA cache_size = -{}", kCacheKiB).c_str(), "sizing the page cache");
    migrate(steps);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

void SqliteDb::exec(const char* sql, const std::string& what) const {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error != nullptr ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw StoreError(fmt::format("{}: {}: {}", path_, what, why));
  }
}

std::size_t SqliteDb::changes() const noexcept { return static_cast<std::size_t>(sqlite3_changes(db_)); }

void SqliteDb::migrate(std::span<const char* const> steps) {
  const int latest = static_cast<int>(steps.size());
  for (;;) {
    Transaction transaction(*this);
    int version = 0;
    {
      Statement statement(*this, "PRAGMA user_version");
      if (statement.step("reading the schema version")) version = static_cast<int>(statement.integer(0));
    }
    if (version == latest) return transaction.commit();
    if (version < 0 || version > latest) {
      throw StoreError(fmt::format("{}: schema version {} is not one this hipstack-smid knows (it writes {}): a newer "
                                   "release made it; not changed",
                                   path_, version, latest));
    }
    exec(steps[static_cast<std::size_t>(version)], fmt::format("migrating the schema from version {}", version));
    exec(fmt::format("PRAGMA user_version = {}", version + 1).c_str(), "writing the schema version");
    transaction.commit();
  }
}

Statement::Statement(const SqliteDb& db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql, -1, &stmt_, nullptr) != SQLITE_OK) {
    throw StoreError(fmt::format("{}: preparing a query: {}", db.path(), sqlite3_errmsg(db.handle())));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int i, const std::string& text) {
  sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int i, std::int64_t n) {
  sqlite3_bind_int64(stmt_, i, n);
  return *this;
}

Statement& Statement::bind_blob(int i, std::span<const std::uint8_t> bytes) {
  sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

bool Statement::step(const char* what) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw StoreError(fmt::format("{}: {}: {}", db_.path(), what, sqlite3_errmsg(db_.handle())));
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

std::span<const std::uint8_t> Statement::blob(int column) const {
  const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_, column));
  return p == nullptr ? std::span<const std::uint8_t>() : std::span(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

void Statement::reset() { sqlite3_reset(stmt_); }

Transaction::Transaction(const SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE", "BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT", "COMMIT");
  done_ = true;
}

}  // namespace hipstack::smid
