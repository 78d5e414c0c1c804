// WatchMetrics and WatchHealth on gRPC's callback API: bounded streams fed from the snapshots
// (snapshot_stream.hpp).
#include "snapshot_stream.hpp"

#include "thread_name.hpp"

namespace hipstack::smid {

StreamTicker::StreamTicker() : thread_([this] { run(); }) {}

StreamTicker::~StreamTicker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StreamTicker::schedule(Clock::time_point at, std::shared_ptr<Tickable> what) {
  {
    std::lock_guard lock(mutex_);
    due_.push({at, scheduled_++, std::move(what)});
  }
  wake_.notify_one();
}

void StreamTicker::run() {
  name_thread("smid-ticker");
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (due_.empty()) {
      wake_.wait(lock);
      continue;
    }
    if (const Clock::time_point at = due_.top().at; at > Clock::now()) {
      wake_.wait_until(lock, at);  // a copy: a schedule() meanwhile may move the queue's storage
      continue;
    }
    std::shared_ptr<Tickable> what = due_.top().what;
    due_.pop();
    lock.unlock();
    what->tick(*this);  // may schedule again (takes the lock)
    what.reset();       // may free a stream that has ended: not under the lock
    lock.lock();
  }
}

}  // namespace hipstack::smid
