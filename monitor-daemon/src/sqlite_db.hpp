// The daemon's SQLite files (the job store, the error store): opened never through a link and only
// where nobody else may write, in WAL mode, their schema numbered in PRAGMA user_version and brought
// up to date step by step when opened. Not thread-safe: each store serialises its calls.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace hipstack::smid {

// An error of a database, naming the file and what was being done.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SqliteDb {
 public:
  static constexpr int kCacheKiB = 256;  // each connection's page cache (PRAGMA cache_size)

  // Opens or creates `path` and applies the steps from its version on: step N takes the schema from
  // version N to N+1, in one transaction each. A database of a later version than steps.size() is
  // refused, not changed. Throws StoreError.
  SqliteDb(const std::string& path, std::span<const char* const> steps);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] sqlite3* handle() const noexcept { return db_; }
  // Runs statements that return no rows; throws StoreError naming `what`.
  void exec(const char* sql, const std::string& what) const;
  // Rows changed by the last statement.
  [[nodiscard]] std::size_t changes() const noexcept;

 private:
  void migrate(std::span<const char* const> steps);
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A prepared statement, finalised when it goes.
class Statement {
 public:
  Statement(const SqliteDb& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& text);
  Statement& bind(int i, std::int64_t n);
  Statement& bind_blob(int i, std::span<const std::uint8_t> bytes);
  // True while there is a row; throws StoreError naming `what` on an error.
  bool step(const char* what);
  [[nodiscard]] std::string text(int column) const;
  [[nodiscard]] std::int64_t integer(int column) const;
  // Valid until the next step or reset.
  [[nodiscard]] std::span<const std::uint8_t> blob(int column) const;
  void reset();

 private:
  const SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE .. COMMIT, rolled back when left by an exception.
class Transaction {
 public:
  explicit Transaction(const SqliteDb& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  const SqliteDb& db_;
  bool done_ = false;
};

}  // namespace hipstack::smid
