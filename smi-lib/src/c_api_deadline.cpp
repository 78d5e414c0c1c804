// The read deadline's kept workers (c_api_deadline.hpp says why they are kept and how a call waits).
#include "c_api_deadline.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <system_error>
#include <thread>

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace hipstack::smi::c_api {
namespace {

using Clock = ReadDeadline::Clock;

// How long a finished worker looks for its next read, and a caller for its answer, before sleeping:
// longer than a poller's gap between two calls and than a read of NVML, short enough that an idle
// loop costs little.
constexpr auto kSpin = std::chrono::microseconds(50);
// How long a caller looks for its answer before sleeping when its read went to a worker that was
// asleep or had to be started: waking a thread takes tens of microseconds (over a hundred in a VM
// whose processor was halted), and a caller that slept meanwhile would pay a wake-up of its own.
constexpr auto kSpinAfterWake = std::chrono::microseconds(500);
// A worker idle this long ends (a program that stopped polling keeps no thread).
constexpr auto kIdleExit = std::chrono::seconds(10);
// The most idle workers kept, the lane's included (calls from many threads at once start more; the
// rest end when done).
constexpr std::size_t kMaxIdle = 8;

// Whether this process may run on one processor only (its affinity: a container pinned to one CPU
// counts as one). Looked up once per process.
bool single_processor() {
  static const bool alone = [] {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::thread::hardware_concurrency() <= 1;
    return CPU_COUNT(&allowed) <= 1;
  }();
  return alone;
}

// A pause between two looks: keeps the look off the kernel and lets a sibling hardware thread run.
void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// How long a look pauses between looks before it yields between them. The thread looked for is
// usually running beside this one and answers within microseconds (a read of NVML, a worker taking
// its next read); a yield is a system call, a microsecond or more in a VM, as long as the handoff
// itself. But when more threads are ready than processors, the one looked for may be waiting for
// this very processor: yielding gives it (pausing only, a one-metric call took ~110 µs on the 2-core
// build machine with a build on both cores, against 6 µs yielding). On one processor it always is.
constexpr auto kPauseFor = std::chrono::microseconds(4);

// Looks at `ready` until it holds or about `spin` passed; whether it held. The clock is read every
// few looks only, the first time after the first few: reading it costs more than a look, and a
// poller's answer often comes before.
template <typename Ready>
bool spin_until(Ready ready, std::chrono::microseconds spin) {
  constexpr int kLooks = 16;
  for (int look = 0; look < kLooks; ++look) {
    if (ready()) return true;
    pause();
  }
  const auto start = Clock::now();
  const auto end = start + spin;
  const auto stop_pausing = single_processor() ? start : start + kPauseFor;
  for (;;) {
    if (const auto now = Clock::now(); now >= end) {
      return ready();
    } else if (now >= stop_pausing) {
      std::this_thread::yield();
    }
    for (int look = 0; look < kLooks; ++look) {
      if (ready()) return true;
      pause();
    }
  }
}

// Forks of this process so far, counted in each child (pthread_atfork): a forked child has none of
// its parent's threads, so a deadline made before the fork forgets the idle workers it inherited.
// A counter, not getpid(), because this is looked at on every call and getpid() is a system call.
std::atomic<unsigned> g_forks{0};

unsigned forks_so_far() {
  static const int registered = ::pthread_atfork(nullptr, nullptr, [] { g_forks.fetch_add(1, std::memory_order_relaxed); });
  static_cast<void>(registered);
  return g_forks.load(std::memory_order_relaxed);
}

// Sleeps while `word` holds `expected`, at most `limit` (none: until woken). A futex, because the
// lane's words are atomics the looks read directly, and a wait on them must not miss a change made
// between the look and the sleep (the kernel compares the word first).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::optional<Clock::duration> limit) {
  timespec relative{};
  if (limit) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(*limit, Clock::duration::zero())).count();
    relative.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    relative.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  }
  // EINTR, EAGAIN (the word changed) and ETIMEDOUT all mean: look again.
  static_cast<void>(::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
                              limit ? &relative : nullptr, nullptr, 0));
}

void futex_wake(std::atomic<std::uint32_t>& word) {
  static_cast<void>(::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0));
}

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) && std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word is a plain 32-bit integer");

}  // namespace

// The handle's lane: one worker taking one call at a time. A caller takes the lane (`busy`), builds
// its call in `slot` and counts it in `posted`; the worker runs it and counts it in `taken`; the
// caller that sees its number in `taken` has its answer, destroys the call and gives the lane back.
// The words both threads look at share one cache line and the call sits in the lines after it, so a
// handoff moves those and nothing else. An abandoned call keeps the lane busy until its read returns
// (the worker then destroys the call and gives the lane back).
struct Lane {
  enum WorkerState : std::uint32_t { gone, looking, asleep };
  alignas(64) std::atomic<std::uint32_t> posted{0};  // calls handed to the lane so far
  std::atomic<std::uint32_t> taken{0};                // calls the lane's worker finished so far
  std::atomic<bool> busy{false};                      // a caller holds the lane
  std::atomic<bool> caller_asleep{false};             // the caller sleeps on `taken` (the worker then wakes it)
  std::atomic<std::uint32_t> worker{gone};            // the worker thread's state (gone and back: under Shared::mutex)
  std::atomic<std::uint32_t> wake_word{0};            // the sleeping worker's futex: bumped to wake it
  std::atomic<bool> stop{false};                      // the handle closed
  ReadDeadline::Call* call = nullptr;                 // the posted call (in `slot`)
  alignas(ReadDeadline::kLaneSlotAlign) std::byte slot[ReadDeadline::kLaneSlotBytes];
};

// A kept worker thread: runs the calls handed to it, one at a time. A caller that takes it off the
// idle list (under Shared::mutex) owns `call` until it sets has_read; the worker then owns it, so
// taking a call needs no lock.
struct Worker {
  std::shared_ptr<ReadDeadline::Call> call;  // the next call
  std::atomic<bool> has_read{false};
  bool stop = false;             // the handle closed (guarded by Shared::mutex)
  bool asleep = false;           // waits on `wake` (guarded by Shared::mutex)
  std::condition_variable wake;  // waits with Shared::mutex
};

struct ReadDeadline::Shared {
  std::mutex mutex;
  struct Stuck {
    Clock::time_point since;  // when the oldest abandoned read began
    unsigned calls = 0;       // abandoned reads still running
  };
  std::map<std::uint32_t, Stuck> stuck;
  std::vector<std::shared_ptr<Worker>> idle;
  std::atomic<std::size_t> stuck_keys{0};  // stuck.size(), for a look without the lock
  std::condition_variable idle_left;  // an idle worker ended (the handle's close waits for them all)
  bool closing = false;
  std::atomic<unsigned> forks{forks_so_far()};  // the process the workers run in
  Lane lane;

  // Under `mutex`.
  void forget_workers_of_parent() {
    if (const unsigned now = forks_so_far(); now != forks.load(std::memory_order_relaxed)) {
      idle.clear();
      stuck.clear();  // the stuck reads were the parent's too
      stuck_keys.store(0);
      // The lane's worker was the parent's: the lane starts again empty.
      // A call in the lane's room is left as it is, not destroyed: its thread was the parent's and
      // may have been in the middle of it (what it holds is the parent's).
      lane.call = nullptr;
      lane.taken.store(lane.posted.load());
      lane.busy.store(false);
      lane.caller_asleep.store(false);
      lane.worker.store(Lane::gone);
      forks.store(now);
    }
  }

  // Under `mutex`: counts off one stuck read of `key` that returned.
  void unstick(std::uint32_t key) {
    const auto it = stuck.find(key);
    if (it != stuck.end() && --it->second.calls == 0) {
      stuck.erase(it);
      stuck_keys.store(stuck.size());
    }
  }

  // The worker's read returned: tells the caller, or counts off the stuck read it abandoned.
  void finish(ReadDeadline::Call& call) {
    const std::uint32_t before = call.state.exchange(Call::done);
    if (before == Call::abandoned) {
      // The caller marked it abandoned and counted it stuck under the lock: this waits for that.
      std::lock_guard lock(mutex);
      unstick(call.key);
    } else if (before == Call::awaited) {
      // The caller sleeps on the state (the worker still owns a share of the call: it is there).
      futex_wake(call.state);
    }
  }

  // A worker's life: runs `call`, then each call handed to it, until it idles past kIdleExit or the
  // handle closes.
  static void work(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Worker>& self, std::shared_ptr<Call> call) {
    for (;;) {
      call->run();
      bool kept = false;
      {
        // Idle again before the caller hears of it: its next call finds this worker. (The lane's
        // worker counts as one of the kMaxIdle.)
        std::lock_guard lock(shared->mutex);
        kept = !shared->closing && shared->idle.size() + 1 < kMaxIdle;
        if (kept) shared->idle.push_back(self);
      }
      shared->finish(*call);
      call.reset();
      if (!kept) return;
      if (!spin_until([&self] { return self->has_read.load(std::memory_order_acquire); }, kSpin)) {
        std::unique_lock lock(shared->mutex);
        self->asleep = true;
        const bool woken = self->wake.wait_for(lock, kIdleExit, [&self] { return self->has_read.load() || self->stop; });
        self->asleep = false;
        if (!woken || !self->has_read.load()) {
          std::erase(shared->idle, self);
          shared->idle_left.notify_all();
          return;
        }
      }
      self->has_read.store(false, std::memory_order_relaxed);
      call = std::move(self->call);
    }
  }

  // The lane's worker: runs each call posted on the lane until it idles past kIdleExit or the handle
  // closes. `done`: the lane's calls finished before it started.
  static void work_lane(const std::shared_ptr<Shared>& shared, std::uint32_t done) {
    Lane& lane = shared->lane;
    for (;;) {
      if (!spin_until([&lane, done] { return lane.posted.load(std::memory_order_acquire) != done; }, kSpin) &&
          !sleep_lane(*shared, done)) {
        return;
      }
      Call* const call = lane.call;
      call->run();
      ++done;
      if (call->state.exchange(Call::done) != Call::abandoned) {
        // taken is stored before caller_asleep is looked at, and the caller sets caller_asleep before
        // it looks at taken (both sequentially consistent): one of the two sees the other. The call
        // is the caller's again from the store on.
        lane.taken.store(done);
        if (lane.caller_asleep.load()) futex_wake(lane.taken);
        continue;
      }
      // Nobody waits for this answer: the call is destroyed (outside the lock: the System it holds
      // may go with it), the read counted off, the lane free again.
      const std::uint32_t key = call->key;
      call->~Call();
      std::lock_guard lock(shared->mutex);
      shared->unstick(key);
      lane.call = nullptr;
      lane.taken.store(done);
      lane.busy.store(false);
      if (lane.stop.load()) {
        lane.worker.store(Lane::gone);
        shared->idle_left.notify_all();
        return;
      }
    }
  }

  // The lane's worker found no call in its look: sleeps until one is posted, the handle closes or
  // kIdleExit passes. Whether a call is posted (false: the worker has ended).
  static bool sleep_lane(Shared& shared, std::uint32_t done) {
    Lane& lane = shared.lane;
    const auto until = Clock::now() + kIdleExit;
    // Asleep is stored before posted is looked at; a caller posts before it looks at this: one of the
    // two sees the other (the caller then wakes this worker, or starts one if it has ended).
    lane.worker.store(Lane::asleep);
    for (;;) {
      const std::uint32_t wake = lane.wake_word.load();
      if (lane.posted.load() != done) break;
      if (lane.stop.load() || Clock::now() >= until) {
        std::lock_guard lock(shared.mutex);
        if (lane.posted.load() != done) break;  // a caller posted meanwhile and waits for the lock
        lane.worker.store(Lane::gone);
        shared.idle_left.notify_all();
        return false;
      }
      futex_wait(lane.wake_word, wake, until - Clock::now());
    }
    lane.worker.store(Lane::looking);
    return true;
  }
};

ReadDeadline::ReadDeadline(std::chrono::milliseconds limit) : limit_(limit), shared_(std::make_shared<Shared>()) {}

ReadDeadline::~ReadDeadline() {
  if (!shared_) return;  // moved from
  std::unique_lock lock(shared_->mutex);
  shared_->closing = true;
  shared_->forget_workers_of_parent();
  for (const auto& worker : shared_->idle) {
    worker->stop = true;
    worker->wake.notify_one();
  }
  Lane& lane = shared_->lane;
  lane.stop.store(true);
  lane.wake_word.fetch_add(1);
  futex_wake(lane.wake_word);
  // Each idle worker leaves the list as it ends; it needs the lock for that, which the wait gives up.
  // A lane still busy at close holds an abandoned call (a caller may not use the handle while closing
  // it): its worker ends when that read returns.
  shared_->idle_left.wait(lock, [this, &lane] {
    return shared_->idle.empty() && (lane.worker.load() == Lane::gone || lane.busy.load());
  });
}

void* ReadDeadline::claim_lane() {
  Shared& shared = *shared_;
  Lane& lane = shared.lane;
  // Anything stuck, or a fork since the last call: the pool's way, under the lock, sorts it out.
  if (shared.stuck_keys.load(std::memory_order_relaxed) != 0 || shared.forks.load(std::memory_order_relaxed) != forks_so_far()) {
    return nullptr;
  }
  if (lane.busy.exchange(true, std::memory_order_acquire)) return nullptr;
  return lane.slot;
}

void ReadDeadline::release_lane() { shared_->lane.busy.store(false, std::memory_order_release); }

void ReadDeadline::post_lane(Call& call) {
  Shared& shared = *shared_;
  Lane& lane = shared.lane;
  call.ticket = lane.posted.load(std::memory_order_relaxed) + 1;
  lane.call = &call;
  lane.posted.store(call.ticket);  // publishes the call; before the look at the worker (sleep_lane says why)
  if (lane.worker.load() == Lane::looking) return;
  call.slow_start = true;
  std::lock_guard lock(shared.mutex);
  if (lane.worker.load() == Lane::asleep) {
    lane.wake_word.fetch_add(1);
    futex_wake(lane.wake_word);
  } else if (lane.worker.load() == Lane::gone) {
    lane.worker.store(Lane::looking);
    try {
      // A thread of its own: the handle may close (and this ReadDeadline go) while it is stuck.
      std::thread(Shared::work_lane, shared_, call.ticket - 1).detach();
    } catch (const std::system_error&) {  // no thread to be had: the call is not posted after all
      lane.worker.store(Lane::gone);
      lane.call = nullptr;
      lane.taken.store(call.ticket);
      throw;
    }
  }
}

std::optional<Clock::duration> ReadDeadline::start(const std::shared_ptr<Call>& call) {
  std::unique_lock lock(shared_->mutex);
  shared_->forget_workers_of_parent();
  if (!shared_->stuck.empty()) {
    if (const auto it = shared_->stuck.find(call->key); it != shared_->stuck.end()) return Clock::now() - it->second.since;
  }
  if (!shared_->idle.empty()) {
    std::shared_ptr<Worker> worker = std::move(shared_->idle.back());
    shared_->idle.pop_back();
    call->slow_start = worker->asleep;
    worker->call = call;
    worker->has_read.store(true, std::memory_order_release);
    if (worker->asleep) worker->wake.notify_one();  // one that looks for its read finds it
    return std::nullopt;
  }
  lock.unlock();
  call->slow_start = true;
  // A thread of its own: the handle may close (and this ReadDeadline go) while it is stuck.
  std::thread(Shared::work, shared_, std::make_shared<Worker>(), call).detach();
  return std::nullopt;
}

bool ReadDeadline::await(Call& call, std::chrono::milliseconds limit) {
  const auto finished = [&call] { return call.state.load(std::memory_order_acquire) == Call::done; };
  const auto spin = call.slow_start ? kSpinAfterWake : kSpin;
  if (spin_until(finished, spin)) return true;
  const auto deadline = Clock::now() + limit - spin;  // counted from the handoff
  // Awaited before the sleep: the worker's exchange to done then sees it and wakes this caller.
  std::uint32_t running = Call::running;
  if (!call.state.compare_exchange_strong(running, Call::awaited)) return true;  // done just now
  for (;;) {
    const auto left = deadline - Clock::now();
    if (finished()) return true;
    if (left <= Clock::duration::zero()) break;
    futex_wait(call.state, Call::awaited, left);
  }
  return !abandon(call, limit);
}

bool ReadDeadline::await_lane(Call& call, std::chrono::milliseconds limit) {
  Lane& lane = shared_->lane;
  const auto answered = [&lane, &call] { return lane.taken.load(std::memory_order_acquire) == call.ticket; };
  const auto spin = call.slow_start ? kSpinAfterWake : kSpin;
  if (!spin_until(answered, spin)) {
    const auto deadline = Clock::now() + limit - spin;  // counted from the post (read once: a poller's call reads no clock here)
    lane.caller_asleep.store(true);  // before the look at taken (work_lane says why)
    for (;;) {
      const std::uint32_t seen = lane.taken.load();
      const auto left = deadline - Clock::now();
      if (seen == call.ticket || left <= Clock::duration::zero()) break;
      futex_wait(lane.taken, seen, left);
    }
    lane.caller_asleep.store(false);
    if (!answered() && abandon(call, limit)) return false;  // the lane stays busy until the read returns
    while (!answered()) pause();  // finished just now: the worker counts it at once
  }
  return true;
}

bool ReadDeadline::abandon(Call& call, std::chrono::milliseconds limit) {
  // The worker counts the stuck read off when it returns, after this lock is given up.
  std::lock_guard lock(shared_->mutex);
  std::uint32_t seen = call.state.load();
  while (seen == Call::running || seen == Call::awaited) {
    if (call.state.compare_exchange_weak(seen, Call::abandoned)) {
      auto [it, added] = shared_->stuck.try_emplace(call.key, Shared::Stuck{Clock::now() - limit, 0});
      ++it->second.calls;
      shared_->stuck_keys.store(shared_->stuck.size());
      return true;
    }
  }
  return false;  // the read returned just now
}

}  // namespace hipstack::smi::c_api
