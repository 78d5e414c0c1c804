// The GPUs' errors as the daemon keeps them (docs/errors.md, "Kept and aged"): each new XID the
// NVML counters show and each new record of an AMD GPU's CPER ring, with its action, kept in memory
// (the newest kKeptPerGpu of each GPU) for health, listings and events, and written by a thread of
// its own to the error store (error_store.hpp) so that they outlive a restart. The sampler's
// workers hand it what they read and ask it for the `errors.recent` finding; they never wait on
// the database.
#pragma once

#include <hipstack/cper.hpp>
#include <hipstack/gpu_errors.hpp>
#include <hipstack/smi.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "error_store.hpp"
#include "snapshot.hpp"

namespace hipstack::smid {

struct ErrorKeeperOptions {
  std::string db_path;                     // the error store; "" = none (kept in memory only)
  std::chrono::hours retention{24 * 90};   // errors older than this leave the store; 0: kept
  std::size_t max_rows = 100000;           // and at most this many rows, the oldest going first
  std::chrono::seconds max_age{86400};     // errors younger than this are judged by health
};

// One kept error: what StoredError holds (without the raw bytes), numbered as found.
struct KeptError {
  std::uint64_t sequence = 0;  // 1, 2, ... in the order this daemon found them; 0: loaded from the store
  std::string uuid;
  std::string bdf;
  smi::ErrorOccurrence occurrence;
  std::chrono::system_clock::time_point seen;
};

class ErrorKeeper {
 public:
  static constexpr std::size_t kKeptPerGpu = 256;    // in memory; the store keeps the rest
  static constexpr std::size_t kMaxGpus = 1024;
  static constexpr std::size_t kMaxXidRowsPerLook = 64;  // per code: a storm of one XID is not 10,000 rows
  static constexpr std::size_t kMaxPending = 8192;   // unwritten errors while the store fails

  // Opens the store and loads its errors of the retention period. A store that cannot be opened is
  // named by unavailable(); the errors are then kept in memory only.
  explicit ErrorKeeper(ErrorKeeperOptions options);
  ~ErrorKeeper();  // stop()
  // Writes what is pending and stops the writer; later errors are kept in memory only.
  void stop();
  ErrorKeeper(const ErrorKeeper&) = delete;
  ErrorKeeper& operator=(const ErrorKeeper&) = delete;

  [[nodiscard]] const std::string& unavailable() const noexcept { return store_error_; }
  [[nodiscard]] const ErrorKeeperOptions& options() const noexcept { return options_; }

  // A fast sample's readings: XIDs counted since `system` opened (a new System counts from 0).
  // Returns true when there was a new one.
  bool observe_xids(const smi::DeviceSummary& device, const void* system, const std::vector<smi::Reading>& live,
                    std::chrono::system_clock::time_point seen);
  // An AMD GPU's CPER ring as read now: its records not seen before (by this run or, with a store,
  // an earlier one) are new errors.
  bool observe_cper(const smi::DeviceSummary& device, const smi::CperRing& ring, std::chrono::system_clock::time_point seen);
  // The `errors.recent` health finding of one GPU (smi::errors_finding on its kept errors): UNKNOWN,
  // never PASS, when neither its XIDs nor its CPER ring could be read.
  [[nodiscard]] smi::HealthFinding finding(const std::string& uuid, std::chrono::system_clock::time_point now) const;
  // The CPER records this daemon recorded for the GPU since it started, by severity and action.
  [[nodiscard]] std::vector<CperCount> cper_counts(const std::string& uuid) const;
  // The kept errors that happened at or after `since` (of the GPUs in `uuids`; all when empty),
  // newest first, at most `limit`; `truncated` when more were kept.
  [[nodiscard]] std::vector<KeptError> list(std::chrono::system_clock::time_point since, const std::set<std::string>& uuids,
                                            std::size_t limit, bool& truncated) const;
  // The CPER records found after `sequence` (events), at most `max`, oldest first.
  [[nodiscard]] std::vector<KeptError> cper_after(std::uint64_t sequence, std::size_t max) const;

 private:
  struct Gpu {
    std::string bdf;
    std::deque<KeptError> kept;  // oldest first
    const void* xid_system = nullptr;
    std::map<std::uint32_t, std::int64_t> xid_counts;  // by code, as the counters said at the last look
    std::optional<std::string> xid_unreadable;  // set while the XID counters cannot be read: why
    bool xid_read = false;
    std::set<std::uint64_t> cper_known;          // digests of the records in the ring at the last read
    std::optional<std::string> cper_unreadable;
    bool cper_read = false;
    std::map<std::pair<std::string, std::string>, std::uint64_t> cper_counts;
  };
  Gpu* gpu(const smi::DeviceSummary& device);  // with mutex_ held; null past kMaxGpus
  void keep(Gpu& gpu, KeptError error, std::vector<std::uint8_t> raw);  // with mutex_ held
  void write_loop();

  const ErrorKeeperOptions options_;
  std::unique_ptr<ErrorStore> store_;  // used by the constructor, then by the writer thread only
  std::string store_error_;
  mutable std::mutex mutex_;
  std::map<std::string, Gpu> gpus_;  // by UUID
  std::uint64_t last_sequence_ = 0;
  std::deque<KeptError> recent_cper_;  // the newest records found, for events
  std::vector<StoredError> pending_;   // found, not yet written
  std::size_t dropped_ = 0;            // pending errors dropped while the store failed
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace hipstack::smid
