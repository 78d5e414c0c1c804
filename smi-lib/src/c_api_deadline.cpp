// The read deadline's kept workers (c_api_deadline.hpp says why they are kept and how a call waits).
#include "c_api_deadline.hpp"

#include <algorithm>
#include <thread>

#include <pthread.h>
#include <sched.h>

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
// The most idle workers kept (calls from many threads at once start more; the rest end when done).
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

// Looks at `ready` until it holds or `spin` passed; whether it held. The clock is read every few
// looks only: reading it costs more than a look.
template <typename Ready>
bool spin_until(Ready ready, std::chrono::microseconds spin) {
  const auto start = Clock::now();
  const auto end = start + spin;
  const auto stop_pausing = single_processor() ? start : start + kPauseFor;
  for (;;) {
    for (int look = 0; look < 16; ++look) {
      if (ready()) return true;
      pause();
    }
    const auto now = Clock::now();
    if (now >= end) return ready();
    if (now >= stop_pausing) std::this_thread::yield();
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

}  // namespace

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
  std::condition_variable idle_left;  // an idle worker ended (the handle's close waits for them all)
  bool closing = false;
  unsigned forks = forks_so_far();  // the process the workers run in

  // Under `mutex`.
  void forget_workers_of_parent() {
    if (const unsigned now = forks_so_far(); now != forks) {
      idle.clear();
      stuck.clear();  // the stuck reads were the parent's too
      forks = now;
    }
  }

  // The worker's read returned: tells the caller, or counts off the stuck read it abandoned.
  void finish(ReadDeadline::Call& call) {
    if (call.state.exchange(Call::done) == Call::abandoned) {
      // The caller marked it abandoned and counted it stuck under the lock: this waits for that.
      std::lock_guard lock(mutex);
      const auto it = stuck.find(call.key);
      if (it != stuck.end() && --it->second.calls == 0) stuck.erase(it);
      return;
    }
    // Seen false: the caller's look at the state (after it set `waiting`) sees done, so it does not
    // sleep. (The worker still owns a share of the call: reading it here is safe.)
    if (call.waiting.load()) {
      std::lock_guard lock(mutex);
      call.finished.notify_one();
    }
  }

  // A worker's life: runs `call`, then each call handed to it, until it idles past kIdleExit or the
  // handle closes.
  static void work(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Worker>& self, std::shared_ptr<Call> call) {
    for (;;) {
      call->run();
      bool kept = false;
      {
        // Idle again before the caller hears of it: its next call finds this worker.
        std::lock_guard lock(shared->mutex);
        kept = !shared->closing && shared->idle.size() < kMaxIdle;
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
  // Each idle worker leaves the list as it ends; it needs the lock for that, which the wait gives up.
  shared_->idle_left.wait(lock, [this] { return shared_->idle.empty(); });
}

std::optional<Clock::duration> ReadDeadline::start(std::shared_ptr<Call> call) {
  std::unique_lock lock(shared_->mutex);
  shared_->forget_workers_of_parent();
  if (!shared_->stuck.empty()) {
    if (const auto it = shared_->stuck.find(call->key); it != shared_->stuck.end()) return Clock::now() - it->second.since;
  }
  if (!shared_->idle.empty()) {
    std::shared_ptr<Worker> worker = std::move(shared_->idle.back());
    shared_->idle.pop_back();
    call->slow_start = worker->asleep;
    worker->call = std::move(call);
    worker->has_read.store(true, std::memory_order_release);
    if (worker->asleep) worker->wake.notify_one();  // one that looks for its read finds it
    return std::nullopt;
  }
  lock.unlock();
  call->slow_start = true;
  // A thread of its own: the handle may close (and this ReadDeadline go) while it is stuck.
  std::thread(Shared::work, shared_, std::make_shared<Worker>(), std::move(call)).detach();
  return std::nullopt;
}

bool ReadDeadline::await(Call& call, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  const auto finished = [&call] { return call.state.load() != Call::running; };
  if (spin_until([&call] { return call.state.load(std::memory_order_acquire) != Call::running; },
                 call.slow_start ? kSpinAfterWake : kSpin)) {
    return true;
  }
  std::unique_lock lock(shared_->mutex);
  call.waiting.store(true);
  if (call.finished.wait_until(lock, deadline, finished)) return true;
  // Abandoned, unless the read returned just now; the worker counts the stuck read off when it
  // returns, after this lock is given up.
  int running = Call::running;
  if (!call.state.compare_exchange_strong(running, Call::abandoned)) return true;
  auto [it, added] = shared_->stuck.try_emplace(call.key, Shared::Stuck{Clock::now() - limit, 0});
  ++it->second.calls;
  return false;
}

}  // namespace hipstack::smi::c_api
