// The daemon's kept errors: what is new in the XID counters and the CPER rings, the errors.recent
// finding, and the writer thread that keeps them in the error store (error_keeper.hpp).
#include "error_keeper.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

using WallClock = std::chrono::system_clock;

constexpr std::size_t kRecentCper = 1024;  // records kept for event followers

// FNV-1a: a record's identity in the ring between reads (the store compares the bytes themselves).
std::uint64_t digest(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

std::string xid_summary(std::uint32_t code) {
  const smi::XidInfo* info = smi::find_xid(code);
  return info != nullptr ? fmt::format("XID {} ({}): {}", code, info->mnemonic, info->description)
                         : fmt::format("XID {}: not in NVIDIA's XID catalogue", code);
}

std::optional<std::uint32_t> xid_code(const std::string& instance) {
  std::uint32_t code = 0;
  const auto [end, ec] = std::from_chars(instance.data(), instance.data() + instance.size(), code);
  if (ec != std::errc() || end != instance.data() + instance.size() || instance.empty()) return std::nullopt;
  return code;
}

}  // namespace

ErrorKeeper::ErrorKeeper(ErrorKeeperOptions options) : options_(std::move(options)) {
  if (!options_.db_path.empty()) {
    try {
      store_ = std::make_unique<ErrorStore>(options_.db_path);
      const auto since = options_.retention.count() > 0 ? WallClock::now() - options_.retention : WallClock::time_point{};
      std::vector<std::string> problems;
      for (StoredError& e : store_->load(since, kKeptPerGpu, problems)) {
        if (gpus_.size() >= kMaxGpus && !gpus_.contains(e.uuid)) continue;
        Gpu& g = gpus_[e.uuid];
        g.bdf = e.bdf;
        g.kept.push_back({0, std::move(e.uuid), std::move(e.bdf), std::move(e.occurrence), e.seen});
      }
      for (const std::string& p : problems) std::fprintf(stderr, "hipstack-smid: %s\n", p.c_str());
      // The ring records an earlier run recorded are not new when this run reads the ring.
      store_->each_record([this](const std::string& uuid, std::span<const std::uint8_t> raw) {
        if (const auto it = gpus_.find(uuid); it != gpus_.end()) it->second.cper_known.insert(digest(raw));
      });
    } catch (const StoreError& e) {
      store_.reset();
      store_error_ = e.what();
      std::fprintf(stderr, "hipstack-smid: errors kept in memory only: %s\n", store_error_.c_str());
    }
  }
  if (store_) writer_ = std::thread([this] { write_loop(); });
}

ErrorKeeper::~ErrorKeeper() { stop(); }

void ErrorKeeper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
}

ErrorKeeper::Gpu* ErrorKeeper::gpu(const smi::DeviceSummary& device) {
  auto it = gpus_.find(device.uuid);
  if (it == gpus_.end()) {
    if (gpus_.size() >= kMaxGpus) return nullptr;
    it = gpus_.emplace(device.uuid, Gpu{}).first;
  }
  it->second.bdf = device.bdf;
  return &it->second;
}

void ErrorKeeper::keep(Gpu& g, KeptError error, std::vector<std::uint8_t> raw) {
  error.sequence = ++last_sequence_;
  if (store_ && !stopping_) {
    if (pending_.size() >= kMaxPending) {
      pending_.erase(pending_.begin());
      ++dropped_;
    }
    pending_.push_back({error.uuid, error.bdf, error.occurrence, error.seen, std::move(raw)});
  }
  if (error.occurrence.source == smi::ErrorSource::cper) {
    recent_cper_.push_back(error);
    if (recent_cper_.size() > kRecentCper) recent_cper_.pop_front();
  }
  // Oldest first by when it happened: a CPER record may be older than errors found before it.
  const auto at = std::upper_bound(g.kept.begin(), g.kept.end(), error.occurrence.at,
                                   [](WallClock::time_point t, const KeptError& k) { return t < k.occurrence.at; });
  g.kept.insert(at, std::move(error));
  if (g.kept.size() > kKeptPerGpu) g.kept.pop_front();
}

bool ErrorKeeper::observe_xids(const smi::DeviceSummary& device, const void* system, const std::vector<smi::Reading>& live,
                               WallClock::time_point seen) {
  bool any_reading = false;
  for (const smi::Reading& r : live) any_reading = any_reading || (r.id == smi::MetricId::xid_errors && r.status != smi::Status::not_supported);
  if (!any_reading) return false;
  std::lock_guard lock(mutex_);
  Gpu* g = gpu(device);
  if (g == nullptr) return false;
  if (g->xid_system != system) {  // a new System (a reload) counts from 0 again
    g->xid_system = system;
    g->xid_counts.clear();
  }
  bool found = false;
  g->xid_unreadable.reset();
  for (const smi::Reading& r : live) {
    // A GPU without XIDs (AMD's) has none to read: that is no failure to read them.
    if (r.id != smi::MetricId::xid_errors || r.status == smi::Status::not_supported) continue;
    // "No XID since the subscription began" is a reading of the counters, not a failure.
    if (r.status == smi::Status::unavailable && r.error_code == ENODATA) {
      g->xid_read = true;
      continue;
    }
    const auto code = xid_code(r.instance);
    const auto count = r.ok() ? r.number() : std::nullopt;
    if (!code || !count || *count < 0) {
      g->xid_unreadable = r.detail.empty() ? std::string("the XID counters could not be read") : r.detail;
      continue;
    }
    g->xid_read = true;
    std::int64_t& before = g->xid_counts[*code];
    const auto now = static_cast<std::int64_t>(*count);
    const std::int64_t more = now >= before ? now - before : now;  // lower: the counter started again
    before = now;
    const std::size_t rows = static_cast<std::size_t>(std::min<std::int64_t>(more, static_cast<std::int64_t>(kMaxXidRowsPerLook)));
    for (std::size_t i = 0; i < rows; ++i) {
      KeptError e{0, device.uuid, device.bdf, {seen, smi::ErrorSource::xid, *code, smi::xid_advice(*code).action, xid_summary(*code)}, seen};
      if (i + 1 == rows && static_cast<std::size_t>(more) > rows) {
        e.occurrence.summary += fmt::format(" ({} more in this sample, not kept one by one)", static_cast<std::size_t>(more) - rows);
      }
      keep(*g, std::move(e), {});
      found = true;
    }
  }
  if (found) wake_.notify_all();
  return found;
}

bool ErrorKeeper::observe_cper(const smi::DeviceSummary& device, const smi::CperRing& ring, WallClock::time_point seen) {
  std::lock_guard lock(mutex_);
  Gpu* g = gpu(device);
  if (g == nullptr) return false;
  if (!ring.unavailable.empty()) {
    g->cper_unreadable = ring.unavailable;
    return false;
  }
  g->cper_unreadable.reset();
  g->cper_read = true;
  bool found = false;
  std::set<std::uint64_t> known;  // the ring's records now: a record that left it never comes back
  for (const smi::CperRecord& record : ring.scan.records) {
    const std::uint64_t id = digest(record.raw);
    known.insert(id);
    if (g->cper_known.contains(id)) continue;
    KeptError e{0, device.uuid, device.bdf, smi::cper_occurrence(record, seen), seen};
    ++g->cper_counts[{std::string(smi::cper_severity_name(record.severity)), std::string(smi::error_action_name(e.occurrence.action))}];
    keep(*g, std::move(e), record.raw);
    found = true;
  }
  g->cper_known = std::move(known);
  if (found) wake_.notify_all();
  return found;
}

smi::HealthFinding ErrorKeeper::finding(const std::string& uuid, WallClock::time_point now) const {
  std::lock_guard lock(mutex_);
  std::vector<smi::ErrorOccurrence> errors;
  smi::ErrorSources sources;
  if (const auto it = gpus_.find(uuid); it != gpus_.end()) {
    const Gpu& g = it->second;
    for (const KeptError& k : g.kept) errors.push_back(k.occurrence);
    sources.xids_read = g.xid_read;
    sources.xids_unreadable = g.xid_unreadable.value_or("");
    sources.cper_read = g.cper_read;
    sources.cper_unreadable = g.cper_unreadable.value_or("");
  }
  return smi::errors_finding(errors, now, options_.max_age, sources);
}

std::vector<CperCount> ErrorKeeper::cper_counts(const std::string& uuid) const {
  std::lock_guard lock(mutex_);
  std::vector<CperCount> out;
  if (const auto it = gpus_.find(uuid); it != gpus_.end()) {
    for (const auto& [key, n] : it->second.cper_counts) out.push_back({key.first, key.second, n});
  }
  return out;
}

std::vector<KeptError> ErrorKeeper::list(WallClock::time_point since, const std::set<std::string>& uuids, std::size_t limit,
                                         bool& truncated) const {
  std::vector<KeptError> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [uuid, g] : gpus_) {
      if (!uuids.empty() && !uuids.contains(uuid)) continue;
      for (const KeptError& k : g.kept) {
        if (k.occurrence.at >= since) out.push_back(k);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const KeptError& a, const KeptError& b) {
    return a.occurrence.at != b.occurrence.at ? a.occurrence.at > b.occurrence.at : a.uuid < b.uuid;
  });
  truncated = out.size() > limit;
  if (truncated) out.resize(limit);
  return out;
}

std::vector<KeptError> ErrorKeeper::cper_after(std::uint64_t sequence, std::size_t max) const {
  std::lock_guard lock(mutex_);
  std::vector<KeptError> out;
  for (const KeptError& k : recent_cper_) {
    if (k.sequence > sequence && out.size() < max) out.push_back(k);
  }
  return out;
}

void ErrorKeeper::write_loop() {
  name_thread("smid-errors");
  std::unique_lock lock(mutex_);
  auto next_prune = std::chrono::steady_clock::now();
  bool failing = false;
  for (;;) {
    wake_.wait_until(lock, next_prune, [this] { return stopping_ || (!pending_.empty()); });
    std::vector<StoredError> batch = std::move(pending_);
    pending_.clear();
    const std::size_t dropped = std::exchange(dropped_, 0);
    const bool stop = stopping_;
    lock.unlock();
    if (dropped > 0) std::fprintf(stderr, "hipstack-smid: %zu error(s) not kept: the error store failed while they came\n", dropped);
    try {
      if (!batch.empty()) store_->add(batch);
      batch.clear();
      if (failing) std::fprintf(stderr, "hipstack-smid: the error store works again\n");
      failing = false;
    } catch (const StoreError& e) {
      if (!failing) std::fprintf(stderr, "hipstack-smid: %s (kept in memory; retried)\n", e.what());
      failing = true;
    }
    if (std::chrono::steady_clock::now() >= next_prune) {
      next_prune = std::chrono::steady_clock::now() + std::chrono::hours(1);
      try {
        const auto before = options_.retention.count() > 0 ? WallClock::now() - options_.retention : WallClock::time_point{};
        if (const std::size_t gone = store_->prune(before, options_.max_rows); gone > 0) {
          std::fprintf(stderr, "hipstack-smid: %zu error(s) older than the retention or past the row bound deleted from %s\n", gone,
                       store_->path().c_str());
        }
      } catch (const StoreError& e) {
        std::fprintf(stderr, "hipstack-smid: %s (tried again in an hour)\n", e.what());
      }
    }
    if (stop && !batch.empty()) std::fprintf(stderr, "hipstack-smid: %zu error(s) not written at the stop\n", batch.size());
    lock.lock();
    if (!batch.empty()) {  // not written: again with the next batch, within the bound
      pending_.insert(pending_.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
      while (pending_.size() > kMaxPending) {
        pending_.erase(pending_.begin());
        ++dropped_;
      }
      if (!stop) wake_.wait_for(lock, std::chrono::seconds(5), [this] { return stopping_; });
    }
    if (stop) return;
  }
}

}  // namespace hipstack::smid
