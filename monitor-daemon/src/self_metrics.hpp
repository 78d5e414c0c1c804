// The daemon's own costs, as a Prometheus user expects to find them (docs/daemon.md, "Self-metrics"):
// the process_* facts of the standard process collector, read from /proc/self at each scrape, and
// the time each GPU sample takes, as a histogram per backend.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace hipstack::smid {

// What /proc/self says of this process now; nullopt for a fact that could not be read.
struct ProcessFacts {
  std::optional<double> cpu_seconds;          // user + system, process_cpu_seconds_total
  std::optional<std::uint64_t> resident_bytes;
  std::optional<std::uint64_t> virtual_bytes;
  std::optional<double> start_time_seconds;   // since the epoch
  std::optional<std::uint64_t> threads;
  std::optional<std::uint64_t> open_fds;
  std::optional<std::uint64_t> max_fds;       // the soft limit
};
ProcessFacts read_process_facts();

// What the daemon's memory holds that it sizes itself, and malloc's account of its heap, so that
// RSS can be read against its parts (docs/performance.md, "What hipstack-smid's memory is made of").
struct MemoryFacts {
  std::uint64_t history_bytes = 0;        // every GPU's history ring now (GetHistory's samples)
  std::uint64_t history_limit_bytes = 0;  // their bound: history_memory_mb
  // malloc's blocks in use (mallinfo2: small and mmapped) and the free space it holds inside its heaps;
  // nullopt when malloc is not glibc's (a sanitizer's allocator answers mallinfo2 with zeros).
  std::optional<std::uint64_t> heap_in_use_bytes;
  std::optional<std::uint64_t> heap_free_bytes;
  std::uint64_t sqlite_bytes = 0;         // SQLite's own: the stores' page caches and statements
};
MemoryFacts read_memory_facts(std::uint64_t history_bytes, std::uint64_t history_limit_bytes);

// A histogram of durations with fixed buckets, filled by any thread without a lock.
class DurationHistogram {
 public:
  // Upper bounds in seconds: a sample takes about a millisecond (sysfs) to a few (NVML's energy
  // counter); a stuck read runs to the read deadline and beyond.
  static constexpr std::array<double, 12> kBounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  struct Counts {
    std::array<std::uint64_t, kBounds.size()> cumulative{};  // observations <= each bound
    std::uint64_t count = 0;
    double sum = 0;
  };
  void observe(double seconds) noexcept;
  [[nodiscard]] Counts counts() const noexcept;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // the last: above every bound
  std::atomic<std::uint64_t> sum_nanoseconds_{0};
};

}  // namespace hipstack::smid
