// The read deadline's kept workers (c_api_deadline.hpp says why they are kept and how a call waits).
#include "c_api_deadline.hpp"

#include <algorithm>
#include <thread>

#include <unistd.h>

namespace hipstack::smi::c_api {
namespace {

using Clock = ReadDeadline::Clock;

// How long a finished worker looks for its next read, and a caller for its answer, before sleeping:
// longer than a poller's gap between two calls and than a read of NVML, short enough that an idle
// loop costs little.
constexpr auto kSpin = std::chrono::microseconds(50);
// A worker idle this long ends (a program that stopped polling keeps no thread).
constexpr auto kIdleExit = std::chrono::seconds(10);
// The most idle workers kept (calls from many threads at once start more; the rest end when done).
constexpr std::size_t kMaxIdle = 8;

// Between two looks: gives the processor to another thread that is ready to run (the worker or the
// caller being looked for, on a machine with more threads ready than processors), else returns.
void relax() { std::this_thread::yield(); }

// Looks at `ready` until it holds or `spin` passed; whether it held.
template <typename Ready>
bool spin_until(Ready ready, std::chrono::microseconds spin) {
  const auto end = Clock::now() + spin;
  while (!ready()) {
    if (Clock::now() >= end) return false;
    relax();
  }
  return true;
}

}  // namespace

// A kept worker thread: runs the reads handed to it, one at a time.
struct Worker {
  std::function<void()> read;        // the next read (guarded by Shared::mutex)
  std::shared_ptr<ReadDeadline::Call> call;
  std::atomic<bool> has_read{false};  // set with `read`, for the worker's look before sleeping
  bool stop = false;                  // the handle closed (guarded by Shared::mutex)
  std::condition_variable wake;       // waits with Shared::mutex
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
  // The process the workers run in: a forked child has none of its parent's threads, so it forgets
  // the idle ones it inherited.
  pid_t process = ::getpid();

  void forget_workers_of_parent() {
    if (const pid_t now = ::getpid(); now != process) {
      idle.clear();
      stuck.clear();  // the stuck reads were the parent's too
      process = now;
    }
  }

  // A worker's life: runs `call`'s read, then each read handed to it, until it idles past kIdleExit
  // or the handle closes.
  static void work(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Worker>& self,
                   std::function<void()> read, std::shared_ptr<Call> call) {
    for (;;) {
      read();
      {
        std::lock_guard lock(shared->mutex);
        call->done.store(true, std::memory_order_release);
        if (call->abandoned) {
          const auto it = shared->stuck.find(call->key);
          if (it != shared->stuck.end() && --it->second.calls == 0) shared->stuck.erase(it);
        }
        call->finished.notify_one();
        read = nullptr;
        call.reset();
        if (shared->closing || shared->idle.size() >= kMaxIdle) return;
        shared->idle.push_back(self);
      }
      spin_until([&self] { return self->has_read.load(std::memory_order_acquire); }, kSpin);
      std::unique_lock lock(shared->mutex);
      const bool handed = self->wake.wait_for(lock, kIdleExit, [&self] { return self->has_read.load() || self->stop; });
      if (!handed || !self->has_read.load()) {
        std::erase(shared->idle, self);
        shared->idle_left.notify_all();
        return;
      }
      self->has_read.store(false);
      read = std::move(self->read);
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

void ReadDeadline::start(const std::shared_ptr<Call>& call, std::function<void()> read, std::string_view what) {
  std::unique_lock lock(shared_->mutex);
  shared_->forget_workers_of_parent();
  if (const auto it = shared_->stuck.find(call->key); it != shared_->stuck.end()) {
    throw TimedOut(fmt::format("{}: a read that began {:.1f} s ago has not returned yet (a hung driver? see dmesg)", what,
                               std::chrono::duration<double>(Clock::now() - it->second.since).count()));
  }
  if (!shared_->idle.empty()) {
    std::shared_ptr<Worker> worker = std::move(shared_->idle.back());
    shared_->idle.pop_back();
    worker->read = std::move(read);
    worker->call = call;
    worker->has_read.store(true, std::memory_order_release);
    lock.unlock();
    worker->wake.notify_one();
    return;
  }
  lock.unlock();
  // A thread of its own: the handle may close (and this ReadDeadline go) while it is stuck.
  std::thread(Shared::work, shared_, std::make_shared<Worker>(), std::move(read), call).detach();
}

bool ReadDeadline::await(Call& call, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  if (spin_until([&call] { return call.done.load(std::memory_order_acquire); }, kSpin)) return true;
  std::unique_lock lock(shared_->mutex);
  if (call.finished.wait_until(lock, deadline, [&call] { return call.done.load(); })) return true;
  // Abandoned: the worker counts the stuck read off when it returns (it looks under this same lock).
  call.abandoned = true;
  auto [it, added] = shared_->stuck.try_emplace(call.key, Shared::Stuck{Clock::now() - limit, 0});
  ++it->second.calls;
  return false;
}

}  // namespace hipstack::smi::c_api
