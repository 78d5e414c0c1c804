// The daemon's own costs (self_metrics.hpp): /proc/self and the sample-duration histogram.
#include "self_metrics.hpp"

#include <dirent.h>
#include <malloc.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace hipstack::smid {
namespace {

// /proc/self/stat's fields after the command (whose name may hold spaces and parentheses: the
// last ')' ends it). Field 3 (state) is the first returned.
std::optional<std::vector<std::string>> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f && fields.size() < 64;) fields.push_back(f);
  return fields;
}

std::optional<double> boot_time_seconds() {
  std::ifstream in("/proc/stat");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> count_open_fds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  std::uint64_t n = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n > 0 ? n - 1 : 0;  // not the descriptor this count opened
}

}  // namespace

MemoryFacts read_memory_facts(std::uint64_t history_bytes, std::uint64_t history_limit_bytes) {
  MemoryFacts m;
  m.history_bytes = history_bytes;
  m.history_limit_bytes = history_limit_bytes;
  const struct mallinfo2 heap = ::mallinfo2();  // every arena: malloc's own count, no estimate
  if (const std::uint64_t in_use = heap.uordblks + heap.hblkhd; in_use > 0) {  // 0: not glibc's malloc answering
    m.heap_in_use_bytes = in_use;
    m.heap_free_bytes = heap.fordblks;
  }
  m.sqlite_bytes = static_cast<std::uint64_t>(std::max<sqlite3_int64>(0, ::sqlite3_memory_used()));
  return m;
}

ProcessFacts read_process_facts() {
  ProcessFacts facts;
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  // Fields (1-based, proc(5)): 14 utime, 15 stime, 20 num_threads, 22 starttime, 23 vsize, 24 rss.
  // In `fields` field N is at N - 3.
  if (const auto fields = stat_fields(); fields && fields->size() >= 22 && ticks > 0 && page > 0) {
    try {
      const auto& f = *fields;
      facts.cpu_seconds = static_cast<double>(std::stoull(f[11]) + std::stoull(f[12])) / static_cast<double>(ticks);
      facts.threads = std::stoull(f[17]);
      if (const auto boot = boot_time_seconds()) facts.start_time_seconds = *boot + static_cast<double>(std::stoull(f[19])) / static_cast<double>(ticks);
      facts.virtual_bytes = std::stoull(f[20]);
      facts.resident_bytes = std::stoull(f[21]) * static_cast<std::uint64_t>(page);
    } catch (const std::exception&) {
      facts = {};  // a kernel whose stat we cannot read: no fact rather than a wrong one
    }
  }
  facts.open_fds = count_open_fds();
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) facts.max_fds = limit.rlim_cur;
  return facts;
}

void DurationHistogram::observe(double seconds) noexcept {
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_nanoseconds_.fetch_add(static_cast<std::uint64_t>(std::max(0.0, seconds) * 1e9), std::memory_order_relaxed);
}

DurationHistogram::Counts DurationHistogram::counts() const noexcept {
  Counts out;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out.cumulative[i] = running;
  }
  out.count = running + buckets_[kBounds.size()].load(std::memory_order_relaxed);
  out.sum = static_cast<double>(sum_nanoseconds_.load(std::memory_order_relaxed)) / 1e9;
  return out;
}

}  // namespace hipstack::smid
