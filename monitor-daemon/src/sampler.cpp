#include "sampler.hpp"

#include <algorithm>
#include <condition_variable>
#include <variant>
#include <thread>

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

HistoryEntry HistoryEntry::from(std::chrono::system_clock::time_point at, const std::vector<smi::Reading>& live,
                                const HistoryEntry* previous) {
  HistoryEntry entry;
  entry.at = at;
  std::vector<std::string> labels;
  entry.values.reserve(live.size());
  for (const smi::Reading& r : live) {
    HistoryValue v;
    v.id = r.id;
    v.status = r.status;
    v.error_code = r.error_code;
    if (const auto* i = std::get_if<std::int64_t>(&r.value)) {
      v.integer = true;
      v.raw = static_cast<std::uint64_t>(*i);
    } else if (const auto* d = std::get_if<double>(&r.value)) {
      v.raw = std::bit_cast<std::uint64_t>(*d);
    } else if (r.status == smi::Status::ok) {
      continue;  // a text value: not kept (see HistoryValue)
    }
    auto found = std::find(labels.begin(), labels.end(), r.instance);
    if (found == labels.end()) found = labels.insert(labels.end(), r.instance);
    v.instance = static_cast<std::uint16_t>(found - labels.begin());
    entry.values.push_back(v);
  }
  entry.values.shrink_to_fit();
  if (previous != nullptr && previous->instances && *previous->instances == labels) {
    entry.instances = previous->instances;
  } else {
    entry.instances = std::make_shared<const std::vector<std::string>>(std::move(labels));
  }
  return entry;
}

// Wakes the workers at once when the sampler goes (a reload): they sleep on this rather than in
// short polling steps, so an idle daemon wakes only when a sample is due.
struct StopSignal {
  std::mutex mutex;
  std::condition_variable cv;
  bool stopped = false;

  bool stop_requested() {
    std::lock_guard lock(mutex);
    return stopped;
  }
  // Sleeps until `until`; false when stopped.
  bool sleep_until(Clock::time_point until) {
    std::unique_lock lock(mutex);
    return !cv.wait_until(lock, until, [this] { return stopped; });
  }
  void stop() {
    {
      std::lock_guard lock(mutex);
      stopped = true;
    }
    cv.notify_all();
  }
};

namespace {

// A device whose previous sampler (before a reload) is still stuck in a read is not read again,
// which would leave one more thread stuck on it per reload: its state shows that stuck read (so it
// stays stale, down) until the read returns. False when the sampler stops meanwhile.
bool wait_for_predecessor(DeviceState& state, std::shared_ptr<DeviceState> predecessor, StopSignal& stop) {
  while (predecessor) {
    Clock::time_point busy;
    {
      std::lock_guard lock(predecessor->mutex);
      busy = predecessor->busy_since;
    }
    {
      std::lock_guard lock(state.mutex);
      state.busy_since = busy;
    }
    if (busy == Clock::time_point{}) break;
    if (!stop.sleep_until(Clock::now() + std::chrono::milliseconds(100))) return false;
  }
  return true;
}

void run_worker(std::shared_ptr<const smi::System> system, std::uint32_t index, Config config,
                std::shared_ptr<DeviceState> state, std::shared_ptr<DeviceState> predecessor,
                std::shared_ptr<StopSignal> stop, std::shared_ptr<std::atomic<std::uint64_t>> progress) {
  if (!wait_for_predecessor(*state, std::move(predecessor), *stop)) return;
  const smi::HealthPolicy& policy = config.policy;  // loaded and checked with the configuration
  std::vector<smi::MetricId> wanted;
  for (const std::string& name : config.metrics) wanted.push_back(smi::find_metric(name)->id);
  const smi::DeviceSummary device = system->devices().at(index);
  // The history's memory is shared evenly by the GPUs: each ring also stops at its share.
  const std::size_t history_share = config.history_memory / std::max<std::size_t>(1, system->devices().size());
  Clock::time_point next_fast = Clock::now();
  Clock::time_point next_slow = Clock::now();
  while (!stop->stop_requested()) {
    const bool slow_due = Clock::now() >= next_slow;
    {
      std::lock_guard lock(state->mutex);
      state->busy_since = Clock::now();
    }
    auto snapshot = std::make_shared<DeviceSnapshot>();
    if (!slow_due) {
      // Between slow samples the facts and the health verdict carry over; live is replaced below.
      std::lock_guard lock(state->mutex);
      if (state->snapshot) {
        snapshot->facts = state->snapshot->facts;
        snapshot->partitions = state->snapshot->partitions;
        snapshot->health = state->snapshot->health;
        snapshot->facts_at = state->snapshot->facts_at;
      }
    }
    snapshot->device = device;
    try {
      snapshot->device.fault = system->fault(index);
      smi::SampleOptions live;
      live.metrics = wanted;
      snapshot->live = system->sample(index, live);
      snapshot->live_at = Clock::now();
      snapshot->live_wall = std::chrono::system_clock::now();
      snapshot->have_live = true;
      if (slow_due) {
        smi::SampleOptions facts;
        facts.identity = facts.static_info = true;
        facts.live = false;
        facts.metrics = wanted;
        snapshot->facts = system->sample(index, facts);
        snapshot->partitions = system->partitions(index);
        if (!wanted.empty()) {
          for (smi::Partition& p : snapshot->partitions) {
            std::erase_if(p.readings, [&wanted](const smi::Reading& r) {
              return std::find(wanted.begin(), wanted.end(), r.id) == wanted.end();
            });
          }
        }
        if (wanted.empty()) {
          // Every metric was just read (facts and live): the checks run on that, not on a second read.
          std::vector<smi::Reading> all = snapshot->facts;
          all.insert(all.end(), snapshot->live.begin(), snapshot->live.end());
          snapshot->health = system->health(index, all, policy);
        } else {
          snapshot->health = system->health(index, policy);  // the checks need more than the exported metrics
        }
        snapshot->facts_at = Clock::now();
        next_slow = Clock::now() + config.slow_interval;
      }
      std::shared_ptr<const HistoryEntry> previous;
      {
        std::lock_guard lock(state->mutex);
        if (!state->history.empty()) previous = state->history.back();
      }
      auto kept = std::make_shared<const HistoryEntry>(HistoryEntry::from(snapshot->live_wall, snapshot->live, previous.get()));
      std::lock_guard lock(state->mutex);
      state->history_bytes += kept->bytes();
      state->history.push_back(std::move(kept));
      while (state->history.size() > 1 &&
             (state->history.size() > config.history_length || state->history_bytes > history_share)) {
        state->history_bytes -= state->history.front()->bytes();
        state->history.pop_front();
      }
      state->snapshot = std::move(snapshot);
    } catch (const std::exception&) {
      // A device that cannot be sampled keeps its previous snapshot (its age keeps growing).
    }
    {
      std::lock_guard lock(state->mutex);
      state->busy_since = {};
    }
    progress->fetch_add(1);
    next_fast += config.fast_interval;
    if (next_fast < Clock::now()) next_fast = Clock::now();
    if (!stop->sleep_until(std::min(next_fast, next_slow))) return;
  }
}

}  // namespace

Sampler::Sampler(std::shared_ptr<const smi::System> system, Config config, const Sampler* previous)
    : system_(std::move(system)),
      config_(std::move(config)),
      stop_(std::make_shared<StopSignal>()),
      progress_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  const auto devices = system_->devices();
  const auto before = previous != nullptr ? previous->views() : std::vector<View>{};
  for (const auto& d : devices) {
    auto state = std::make_shared<DeviceState>();
    auto first = std::make_shared<DeviceSnapshot>();
    std::shared_ptr<DeviceState> predecessor;
    for (std::size_t i = 0; i < before.size(); ++i) {
      if (before[i].snapshot && before[i].snapshot->device.uuid == d.uuid) {
        predecessor = previous->states_.at(i);
        *first = *before[i].snapshot;
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
      std::erase_if(first->facts, unwanted);
    }
    state->snapshot = std::move(first);
    states_.push_back(state);
    // Detached: a worker stuck in a blocking read must not hold up shutdown. It owns what it uses.
    if (predecessor) {
      // Stuck already (the previous sampler's read of it has not returned): stale from the start.
      std::lock_guard lock(predecessor->mutex);
      state->busy_since = predecessor->busy_since;
    }
    std::thread(run_worker, system_, d.index, config_, state, std::move(predecessor), stop_, progress_).detach();
  }
}

Sampler::~Sampler() { stop_->stop(); }

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
