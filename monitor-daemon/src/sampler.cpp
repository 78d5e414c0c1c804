// The sampler's pool: workers that sample every device on its own schedule and publish snapshots
// (sampler.hpp).
#include "sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <variant>
#include <thread>

#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// The sampler's pool: a few workers share the devices, each taking the device whose sample is due
// soonest. A read that blocks holds one worker (and its device, which no other worker reads
// meanwhile); a supervisor adds a worker for each one stuck past the read deadline, up to
// kMaxStuckWorkers, so the other devices go on being sampled. A worker whose read returns into a
// pool that has enough free workers again ends. Shared by the workers, which may outlive the
// Sampler in a stuck read: they own it.
struct SamplerPool {
  struct Work {
    std::uint32_t index = 0;
    std::shared_ptr<DeviceState> state;
    std::shared_ptr<DeviceState> predecessor;  // the previous sampler's, while its read is stuck
    std::shared_ptr<DurationHistogram> durations;  // its backend's
    std::size_t history_share = 0;
    Clock::time_point next_fast{};
    Clock::time_point next_slow{};
    Clock::time_point next_window{};
    Clock::time_point next_costly{};
    // After a costly read that failed: how long until the next try (doubles from fast_interval up
    // to costly_interval while the failures go on; zero once a costly read succeeds).
    Clock::duration costly_retry{};
    bool taken = false;
    // A waiting worker sleeps until this device's due time: the others wait for another device, so a
    // due time wakes one worker, not every waiting one.
    bool awaited = false;
    [[nodiscard]] Clock::time_point due() const { return std::min(next_fast, next_slow); }
  };

  std::shared_ptr<const smi::System> system;
  Config config;
  std::shared_ptr<ErrorKeeper> errors;  // may be null
  std::vector<smi::MetricId> wanted;
  // The live and counter metrics read with every fast sample: `wanted` (or the whole catalogue)
  // without the costly class, which is read every costly_interval.
  std::vector<smi::MetricId> cheap_live;
  // The WINDOW-kind metrics it exports (any_window: at least one; an empty list asks for all).
  std::vector<smi::MetricId> window_wanted;
  bool any_window = false;
  std::shared_ptr<std::atomic<std::uint64_t>> progress;
  std::size_t target = 1;  // workers wanted free (not stuck)
  std::mutex mutex;
  std::condition_variable cv;
  std::condition_variable supervisor_cv;  // the supervisor's own: a finished sample does not wake it
  bool stopped = false;
  std::vector<Work> work;
  std::size_t workers = 0;  // threads alive, stuck ones included
  // Workers waiting with no device to wait for (every one taken or awaited): woken by any device
  // that comes back. The others sleep until their awaited device's due time.
  std::size_t waiting_for_any = 0;
  // Whether a device coming back, due at `due`, must wake the waiting workers: one would otherwise
  // sleep past it. The worker that brings it back looks first; waking every waiting worker after
  // every sample cost a wake-up each per sample.
  [[nodiscard]] bool wake_for(Clock::time_point due) const {
    return waiting_for_any > 0 || std::any_of(work.begin(), work.end(), [due](const Work& w) { return w.awaited && w.due() > due; });
  }

  void stop() {
    {
      std::lock_guard lock(mutex);
      stopped = true;
    }
    cv.notify_all();
    supervisor_cv.notify_all();
  }
  // The first moment after `now` when a sample could be past the read deadline: a running sample's
  // start, or the next one's due time, plus the deadline (a sample already past it is counted by
  // stuck_now and not waited for). Called with `mutex` held.
  Clock::time_point next_possible_stuck(Clock::time_point now) const {
    Clock::time_point first = now + std::chrono::hours(1);
    for (const Work& w : work) {
      Clock::time_point start = std::max(now, w.due());
      if (w.taken) {
        std::lock_guard lock(w.state->mutex);
        start = w.state->busy_since != Clock::time_point{} ? w.state->busy_since : now;
      }
      if (now - start > config.read_deadline) continue;
      first = std::min(first, start + config.read_deadline + std::chrono::milliseconds(1));
    }
    return first;
  }
  // Workers in a read past the deadline (their device's busy_since is that old).
  std::size_t stuck_now(Clock::time_point now) const {
    std::size_t stuck = 0;
    for (const Work& w : work) {
      if (!w.taken) continue;
      std::lock_guard lock(w.state->mutex);
      if (w.state->busy_since != Clock::time_point{} && now - w.state->busy_since > config.read_deadline) ++stuck;
    }
    return stuck;
  }
};

namespace {

constexpr std::size_t kPoolWorkers = 4;       // enough for 64 GPUs at 100 ms: a sample takes a few ms
constexpr std::size_t kMaxStuckWorkers = 16;  // extra workers standing in for ones stuck in a read

void pool_worker(std::shared_ptr<SamplerPool> pool);

void add_worker(SamplerPool& pool, const std::shared_ptr<SamplerPool>& owner) {
  ++pool.workers;
  std::thread(pool_worker, owner).detach();  // a worker stuck in a blocking read must not hold up shutdown
}

// A device whose previous sampler (before a reload) is still stuck in a read is not read again,
// which would leave one more thread stuck on it per reload: its state shows that stuck read (so it
// stays stale, down) until the read returns. True once the predecessor is free.
bool predecessor_free(SamplerPool::Work& w) {
  if (!w.predecessor) return true;
  Clock::time_point busy;
  {
    std::lock_guard lock(w.predecessor->mutex);
    busy = w.predecessor->busy_since;
  }
  std::lock_guard lock(w.state->mutex);
  w.state->busy_since = busy;
  if (busy != Clock::time_point{}) return false;
  w.predecessor.reset();
  return true;
}

// One sample of one device (live; facts, partitions and health too when slow_due), published as
// its new snapshot and kept in its history.
// The WINDOW-kind metrics the configuration exports (all when it names none; none when it names
// only others).
std::vector<smi::MetricId> window_metrics(const std::vector<smi::MetricId>& wanted, bool& any) {
  std::vector<smi::MetricId> out;
  for (const smi::MetricId id : wanted) {
    if (smi::find_metric(id)->kind == smi::Kind::window) out.push_back(id);
  }
  any = wanted.empty() || !out.empty();
  return out;
}

bool is_window_reading(const smi::Reading& r) {
  const smi::MetricInfo* info = smi::find_metric(r.id);
  return info != nullptr && info->kind == smi::Kind::window;
}

std::size_t catalogue_position(smi::MetricId id) {
  const smi::MetricInfo* info = smi::find_metric(id);
  return info == nullptr ? SIZE_MAX : static_cast<std::size_t>(info - smi::catalogue().data());
}

bool is_costly_reading(const smi::Reading& r) {
  const smi::MetricInfo* info = smi::find_metric(r.id);
  return info != nullptr && info->cost == smi::Cost::costly;
}

std::vector<smi::MetricId> cheap_live_metrics(const std::vector<smi::MetricId>& wanted) {
  std::vector<smi::MetricId> out;
  for (const smi::MetricInfo& m : smi::catalogue()) {
    const bool sampled = m.kind == smi::Kind::live || m.kind == smi::Kind::counter;
    const bool asked = wanted.empty() || std::find(wanted.begin(), wanted.end(), m.id) != wanted.end();
    if (sampled && asked && m.cost != smi::Cost::costly) out.push_back(m.id);
  }
  return out;
}

smi::Reading* device_reading(std::vector<smi::Reading>& readings, smi::MetricId id) {
  for (smi::Reading& r : readings) {
    if (r.id == id && r.instance.empty()) return &r;
  }
  return nullptr;
}

// energy_consumed between its exact reads: the estimate follows power_average at every sample; a
// costly sample's exact read resets it; in between the carried reading gets the estimate.
void follow_energy(DeviceState& state, std::vector<smi::Reading>& live, bool costly_due, const Config& config,
                   Clock::time_point now) {
  std::lock_guard lock(state.mutex);
  if (!state.energy) state.energy.emplace(3 * std::max(config.fast_interval, std::chrono::milliseconds(100)));
  // The firmware's average power where there is one (NVML: over the last second), else the
  // instantaneous power (MI300's socket power): samples of it are what is integrated.
  std::optional<double> watts;
  for (const smi::MetricId id : {smi::MetricId::power_average, smi::MetricId::power_current}) {
    if (const smi::Reading* power = device_reading(live, id); power != nullptr && !watts) watts = power->number();
  }
  state.energy->power(watts, now);
  smi::Reading* energy = device_reading(live, smi::MetricId::energy_consumed);
  if (energy == nullptr || !energy->ok()) return;
  if (costly_due) {
    const double read = energy->number().value_or(0);
    const double exported = state.energy->exact(read);
    if (exported != read) {
      energy->value = exported;
      energy->detail += fmt::format("; held at {:.3f} J until the counter passes the earlier estimate", exported);
    }
    return;
  }
  const auto estimate = state.energy->now();
  if (!estimate || !estimate->estimated) return;  // the last exported value stands as carried
  energy->value = estimate->joules;
  energy->detail = fmt::format("estimate: exact read every {} ms, power integrated since",
                               config.costly_interval.count());
}

// What one sample found, for the schedule.
struct SampleOutcome {
  // Whether the GPU answered: one that did not has its costly metrics read again with the first
  // sample it answers (they are not carried over while it does not).
  bool answered = false;
  // Whether a costly metric read in this sample failed (an error, not "not supported"): carrying
  // the error for a whole costly interval would hide a GPU that is already well again.
  bool costly_failed = false;
  // Whether the XID counters showed a new error (health then looks again at once).
  bool new_errors = false;
};

// The facts (identity, static), partitions and health verdict of a slow sample; `live` is what was
// just read live, so that the checks need no second read when every metric is exported.
// The errors.recent finding from the daemon's kept errors (an AMD GPU's CPER ring read first), in
// place of one look's; the CPER records counted so far go with it to /metrics.
smi::HealthFinding judge_errors(const SamplerPool& pool, std::uint32_t index, const smi::DeviceSummary& device, SlowSample& slow) {
  ErrorKeeper& errors = *pool.errors;
  const auto now = std::chrono::system_clock::now();
  if (device.vendor == "amd") errors.observe_cper(device, pool.system->cper_ring(index), now);
  slow.cper_records = errors.cper_counts(device.uuid);
  return errors.finding(device.uuid, now);
}

std::shared_ptr<SlowSample> take_slow_sample(const SamplerPool& pool, std::uint32_t index, const smi::DeviceSummary& device,
                                             const std::vector<smi::Reading>& live) {
  const smi::System& system = *pool.system;
  const std::vector<smi::MetricId>& wanted = pool.wanted;
  smi::SampleOptions facts;
  facts.identity = facts.static_info = true;
  facts.live = false;
  facts.metrics = wanted;
  auto slow = std::make_shared<SlowSample>();
  slow->facts = system.sample(index, facts);
  slow->partitions = system.partitions(index);
  if (!wanted.empty()) {
    for (smi::Partition& p : slow->partitions) {
      std::erase_if(p.readings, [&wanted](const smi::Reading& r) {
        return std::find(wanted.begin(), wanted.end(), r.id) == wanted.end();
      });
    }
  }
  std::vector<smi::Reading> all;
  if (wanted.empty()) {
    // Every metric was just read (facts and live): the checks run on that, not on a second read.
    all = slow->facts;
    all.insert(all.end(), live.begin(), live.end());
  } else {
    smi::SampleOptions every;  // the checks need more than the exported metrics
    every.identity = every.static_info = every.live = true;
    all = system.sample(index, every);
  }
  slow->health = pool.errors ? system.health(index, all, pool.config.policy, judge_errors(pool, index, device, *slow))
                             : system.health(index, all, pool.config.policy);
  slow->at = Clock::now();
  return slow;
}

// A sample joins the device's history, which is bounded by length and by its share of memory.
// Called with state.mutex held.
void keep_history(DeviceState& state, std::shared_ptr<const HistoryEntry> kept, const Config& config, std::size_t history_share) {
  state.history_bytes += kept->bytes();
  state.history.push_back(std::move(kept));
  while (state.history.size() > 1 && (state.history.size() > config.history_length || state.history_bytes > history_share)) {
    state.history_bytes -= state.history.front()->bytes();
    state.history.pop_front();
  }
}

// The previous snapshot's live readings that `which` picks, appended to `live` (values carried over
// between the reads that refresh them).
void carry_over(DeviceState& state, bool (*which)(const smi::Reading&), std::vector<smi::Reading>& live) {
  std::lock_guard lock(state.mutex);
  if (state.snapshot) std::copy_if(state.snapshot->live.begin(), state.snapshot->live.end(), std::back_inserter(live), which);
}

// `live` holds three runs, each in catalogue order: what was read now [0, read_now), what was carried
// over [read_now, carried_end), the window's; merged into catalogue order, which every output keeps (a
// remote hipstack-smi prints what a local one does).
void merge_in_catalogue_order(std::vector<smi::Reading>& live, std::size_t read_now, std::size_t carried_end) {
  const auto by_position = [](const smi::Reading& a, const smi::Reading& b) {
    return catalogue_position(a.id) < catalogue_position(b.id);
  };
  const auto at = [&live](std::size_t i) { return live.begin() + static_cast<std::ptrdiff_t>(i); };
  std::inplace_merge(at(0), at(read_now), at(carried_end), by_position);
  std::inplace_merge(at(0), at(carried_end), live.end(), by_position);
}

SampleOutcome sample_device(SamplerPool& pool, std::uint32_t index, DeviceState& state, std::size_t history_share, bool slow_due,
                   bool window_due, bool costly_due) {
  const Config& config = pool.config;
  const smi::System& system = *pool.system;
  const std::vector<smi::MetricId>& wanted = pool.wanted;
  {
    std::lock_guard lock(state.mutex);
    state.busy_since = Clock::now();
  }
  auto snapshot = std::make_shared<DeviceSnapshot>();
  {
    // Between slow samples the facts and the health verdict carry over; live is replaced below.
    std::lock_guard lock(state.mutex);
    if (state.snapshot) {
      snapshot->device = state.snapshot->device;
      if (!slow_due) snapshot->slow = state.snapshot->slow;
    }
  }
  try {
    snapshot->device.fault = system.fault(index);
    smi::SampleOptions live;
    live.metrics = costly_due ? wanted : pool.cheap_live;
    if (costly_due || !pool.cheap_live.empty()) snapshot->live = system.sample(index, live);
    const std::size_t read_now = snapshot->live.size();  // in catalogue order, as the library returns them
    // Values carry over between reads only for a GPU that answers now: one that vanished or whose
    // reads fail must not go on exporting what it said before.
    const bool answered =
        snapshot->device.fault.empty() && (pool.cheap_live.empty() || smi::device_answered(snapshot->live));
    // Between costly reads their last values carry over (energy: with the estimate, below).
    if (!costly_due && answered) carry_over(state, is_costly_reading, snapshot->live);
    const std::size_t carried_end = snapshot->live.size();
    const bool costly_failed = costly_due && std::any_of(snapshot->live.begin(), snapshot->live.end(), [](const smi::Reading& r) {
      return r.status == smi::Status::error && is_costly_reading(r);
    });
    follow_energy(state, snapshot->live, costly_due, config, Clock::now());
    // The window metrics ride with the live ones; between window looks the last window's carry over.
    const bool any_window = pool.any_window;
    smi::SampleOptions window;
    window.live = false;
    window.window = true;
    window.metrics = pool.window_wanted;
    if (window_due && any_window) {
      auto averages = system.sample(index, window);
      snapshot->live.insert(snapshot->live.end(), std::make_move_iterator(averages.begin()),
                            std::make_move_iterator(averages.end()));
    } else if (any_window && config.window_interval.count() > 0 && answered) {
      carry_over(state, is_window_reading, snapshot->live);
    }
    merge_in_catalogue_order(snapshot->live, read_now, carried_end);
    snapshot->live_at = Clock::now();
    snapshot->live_wall = std::chrono::system_clock::now();
    snapshot->have_live = true;
    // New errors make the next sample a slow one: health acts on them within a fast interval.
    const bool new_errors = pool.errors && pool.errors->observe_xids(snapshot->device, &system, snapshot->live, snapshot->live_wall);
    if (slow_due) snapshot->slow = take_slow_sample(pool, index, snapshot->device, snapshot->live);
    std::shared_ptr<const HistoryEntry> previous;
    {
      std::lock_guard lock(state.mutex);
      if (!state.history.empty()) previous = state.history.back();
    }
    auto kept = std::make_shared<const HistoryEntry>(HistoryEntry::from(snapshot->live_wall, snapshot->live, previous.get()));
    std::lock_guard lock(state.mutex);
    keep_history(state, std::move(kept), config, history_share);
    state.snapshot = std::move(snapshot);
    state.busy_since = {};
    return {answered, costly_failed, new_errors};
  } catch (const std::exception&) {
    // A device that cannot be sampled keeps its previous snapshot (its age keeps growing).
  }
  std::lock_guard lock(state.mutex);
  state.busy_since = {};
  return {};
}

void pool_worker(std::shared_ptr<SamplerPool> pool) {
  name_thread("smid-sampler");
  std::unique_lock lock(pool->mutex);
  while (!pool->stopped) {
    // Back from a stuck read into a pool that stood in for it: one worker too many.
    if (pool->workers - pool->stuck_now(Clock::now()) > pool->target) break;
    SamplerPool::Work* next = nullptr;
    for (SamplerPool::Work& w : pool->work) {
      if (!w.taken && !w.awaited && (next == nullptr || w.due() < next->due())) next = &w;
    }
    const auto now = Clock::now();
    if (next == nullptr) {
      ++pool->waiting_for_any;
      pool->cv.wait(lock);
      --pool->waiting_for_any;
      continue;
    }
    if (next->due() > now) {
      // `work` never changes size after the start: `next` stays valid across the wait. No other
      // worker takes an awaited device, so its due time holds until this one wakes.
      next->awaited = true;
      pool->cv.wait_until(lock, next->due());
      next->awaited = false;
      continue;
    }
    next->taken = true;
    const bool free = predecessor_free(*next);
    const bool slow_due = now >= next->next_slow;
    const bool window_due = pool->config.window_interval.count() > 0 && now >= next->next_window;
    const bool costly_due = now >= next->next_costly;
    const std::uint32_t index = next->index;
    const std::shared_ptr<DeviceState> state = next->state;
    const std::size_t history_share = next->history_share;
    const std::shared_ptr<DurationHistogram> durations = next->durations;
    lock.unlock();
    const auto began = Clock::now();
    const SampleOutcome outcome =
        free ? sample_device(*pool, index, *state, history_share, slow_due, window_due, costly_due) : SampleOutcome{};
    if (free) durations->observe(std::chrono::duration<double>(Clock::now() - began).count());
    lock.lock();
    // `work` never changes size after the start: the entry is still there.
    SamplerPool::Work& w = *std::find_if(pool->work.begin(), pool->work.end(), [index](const auto& x) { return x.index == index; });
    w.taken = false;
    if (!free) {
      w.next_fast = Clock::now() + std::chrono::milliseconds(100);  // look again soon
      continue;
    }
    if (slow_due) w.next_slow = Clock::now() + pool->config.slow_interval;
    if (outcome.new_errors) w.next_slow = Clock::now();
    if (window_due) w.next_window = Clock::now() + pool->config.window_interval;
    // At most fast_interval: costly metrics are read with every sample.
    if (costly_due) w.next_costly = Clock::now() + pool->config.costly_interval - pool->config.fast_interval / 2;
    if (costly_due && outcome.costly_failed) {
      // A failed costly read is tried again soon, backing off while it keeps failing: a GPU caught
      // between failing and answering (the first sample after its errors end) is not left with an
      // error for a whole costly interval, and one metric that always fails is not read every sample.
      const Clock::duration costly = pool->config.costly_interval;
      w.costly_retry = w.costly_retry == Clock::duration{} ? Clock::duration(pool->config.fast_interval)
                                                           : std::min(costly, w.costly_retry * 2);
      w.next_costly = std::min(w.next_costly, Clock::now() + w.costly_retry - pool->config.fast_interval / 2);
    } else if (costly_due) {
      w.costly_retry = {};
    }
    if (!outcome.answered) {
      // Nothing was carried over for it: its costly metrics and its window come back with the first
      // sample it answers, not an interval later.
      w.next_costly = {};
      w.next_window = {};
    }
    // On schedule, or at least half an interval from now when behind: a late device catches up
    // without a burst of samples (two in one millisecond would share a history timestamp).
    w.next_fast = std::max(w.next_fast + pool->config.fast_interval, Clock::now() + pool->config.fast_interval / 2);
    pool->progress->fetch_add(1);
    if (pool->wake_for(w.due())) pool->cv.notify_all();
  }
  --pool->workers;
}

// Adds a worker for each one stuck past the read deadline (up to kMaxStuckWorkers), so the other
// devices keep their schedule.
void supervise(std::shared_ptr<SamplerPool> pool) {
  name_thread("smid-supervise");
  std::unique_lock lock(pool->mutex);
  while (!pool->stopped) {
    const auto now = Clock::now();
    const std::size_t stuck = pool->stuck_now(now);
    while (pool->workers - stuck < pool->target && pool->workers < pool->target + kMaxStuckWorkers) add_worker(*pool, pool);
    // Asleep until a sample could first be stuck, not woken by every sample: idle, it costs nothing.
    const auto wake = std::max(pool->next_possible_stuck(now), now + std::chrono::milliseconds(10));
    pool->supervisor_cv.wait_until(lock, wake, [&pool] { return pool->stopped; });
  }
}

}  // namespace


Sampler::Sampler(std::shared_ptr<const smi::System> system, Config config, const Sampler* previous,
                 std::shared_ptr<ErrorKeeper> errors)
    : system_(std::move(system)), config_(std::move(config)), errors_(std::move(errors)), pool_(std::make_shared<SamplerPool>()) {
  const auto devices = system_->devices();
  const auto before = previous != nullptr ? previous->views() : std::vector<View>{};
  pool_->system = system_;
  pool_->config = config_;
  pool_->errors = errors_;
  for (const std::string& name : config_.metrics) pool_->wanted.push_back(smi::find_metric(name)->id);
  pool_->cheap_live = cheap_live_metrics(pool_->wanted);
  pool_->window_wanted = window_metrics(pool_->wanted, pool_->any_window);
  pool_->progress = std::make_shared<std::atomic<std::uint64_t>>(0);
  pool_->target = std::min(kPoolWorkers, std::max<std::size_t>(1, devices.size()));
  // The history's memory is shared evenly by the GPUs: each ring also stops at its share.
  const std::size_t history_share = config_.history_memory / std::max<std::size_t>(1, devices.size());
  for (const auto& d : devices) {
    auto state = std::make_shared<DeviceState>();
    auto first = std::make_shared<DeviceSnapshot>();
    std::shared_ptr<DeviceState> predecessor;
    for (std::size_t i = 0; i < before.size(); ++i) {
      if (before[i].snapshot && before[i].snapshot->device.uuid == d.uuid) {
        predecessor = previous->states_.at(i);
        *first = *before[i].snapshot;
        {
          std::lock_guard lock(predecessor->mutex);  // the exported energy never goes back across a reload
          state->energy = predecessor->energy;
        }
        const auto kept = previous->history(i);
        state->history.assign(kept.begin(), kept.end());
        for (const auto& entry : kept) state->history_bytes += entry->bytes();
      }
    }
    first->device = d;
    // Carried-over readings obey the new configuration's metric list at once.
    if (!config_.metrics.empty()) {
      auto unwanted = [this](const smi::Reading& r) {
        const smi::MetricInfo* info = smi::find_metric(r.id);
        return info == nullptr ||
               std::find(config_.metrics.begin(), config_.metrics.end(), info->name) == config_.metrics.end();
      };
      std::erase_if(first->live, unwanted);
      auto slow = std::make_shared<SlowSample>(*first->slow);
      std::erase_if(slow->facts, unwanted);
      first->slow = std::move(slow);
    }
    state->snapshot = std::move(first);
    if (predecessor) {
      // Stuck already (the previous sampler's read of it has not returned): stale from the start.
      std::lock_guard lock(predecessor->mutex);
      state->busy_since = predecessor->busy_since;
    }
    states_.push_back(state);
    SamplerPool::Work w;
    w.durations = durations_of(d.backend, previous);
    w.index = d.index;
    w.state = state;
    w.predecessor = std::move(predecessor);
    w.history_share = history_share;
    w.next_fast = w.next_slow = Clock::now();
    pool_->work.push_back(std::move(w));
  }
  std::lock_guard lock(pool_->mutex);
  for (std::size_t i = 0; i < pool_->target; ++i) add_worker(*pool_, pool_);
  std::thread(supervise, pool_).detach();
  if (config_.attribution != Config::Attribution::off) attribution_ = std::make_unique<AttributionWatcher>(system_, states_, config_);
}

std::shared_ptr<DurationHistogram> Sampler::durations_of(const std::string& backend, const Sampler* previous) {
  for (const auto& [name, histogram] : durations_) {
    if (name == backend) return histogram;
  }
  std::shared_ptr<DurationHistogram> histogram;
  if (previous != nullptr) {
    for (const auto& [name, kept] : previous->durations_) {
      if (name == backend) histogram = kept;
    }
  }
  if (!histogram) histogram = std::make_shared<DurationHistogram>();
  durations_.emplace_back(backend, histogram);
  return histogram;
}

std::vector<std::pair<std::string, DurationHistogram::Counts>> Sampler::sample_durations() const {
  std::vector<std::pair<std::string, DurationHistogram::Counts>> out;
  for (const auto& [backend, histogram] : durations_) out.emplace_back(backend, histogram->counts());
  return out;
}

std::uint64_t Sampler::history_bytes() const {
  std::uint64_t total = 0;
  for (const auto& state : states_) {
    std::lock_guard lock(state->mutex);
    total += state->history_bytes;
  }
  return total;
}

std::shared_ptr<const Attribution> Sampler::attribution() const {
  return attribution_ ? attribution_->latest() : nullptr;
}

Sampler::~Sampler() { pool_->stop(); }

std::uint64_t Sampler::progress() const noexcept { return pool_->progress->load(); }

std::vector<Sampler::View> Sampler::views() const {
  std::vector<View> out;
  const auto now = Clock::now();
  for (const auto& state : states_) {
    std::lock_guard lock(state->mutex);
    const bool busy = state->busy_since != Clock::time_point{};
    out.push_back({state->snapshot, busy && now - state->busy_since > config_.read_deadline});
  }
  return out;
}

std::vector<std::shared_ptr<const HistoryEntry>> Sampler::history(std::size_t device) const {
  const auto& state = states_.at(device);
  std::lock_guard lock(state->mutex);
  return {state->history.begin(), state->history.end()};
}

bool Sampler::ready() const {
  for (const View& view : views()) {
    if (!view.stale && !view.snapshot->have_live) return false;
  }
  return true;
}

bool Sampler::up(const View& view) noexcept {
  const DeviceSnapshot* snap = view.snapshot.get();
  return snap != nullptr && snap->have_live && !view.stale && snap->device.fault.empty() && smi::device_answered(snap->live);
}

}  // namespace hipstack::smid
