// A few threads of our own for the callback methods whose work waits or takes long
// (work_queue.hpp).
#include "work_queue.hpp"

#include "thread_name.hpp"

namespace hipstack::smid {

WorkQueue::WorkQueue(std::size_t threads, std::size_t max_waiting, std::chrono::milliseconds max_wait)
    : max_waiting_(max_waiting), max_wait_(max_wait) {
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] {
    name_thread("smid-work");
    work();
  });
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkQueue::post(Job job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= max_waiting_) return false;
    queue_.push_back({Clock::now() + max_wait_, std::move(job)});
  }
  ready_.notify_one();
  return true;
}

void WorkQueue::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing is left to answer
    Waiting next = std::move(queue_.front());
    queue_.pop_front();
    const bool run = !stopping_ && Clock::now() <= next.deadline;
    lock.unlock();
    next.job(run);  // every queued job answers its call, run or not
    next.job = nullptr;
    lock.lock();
  }
}

PeerSlots::Slot PeerSlots::take(const std::string& peer) {
  std::lock_guard lock(mutex_);
  std::size_t& held = held_[peer];
  if (held >= max_) return nullptr;
  ++held;
  // The slot's pointer is only a token; its deleter gives the slot back.
  return Slot(static_cast<void*>(this), [this, peer](void*) {
    std::lock_guard given_back(mutex_);
    if (const auto found = held_.find(peer); found != held_.end() && --found->second == 0) held_.erase(found);
  });
}

}  // namespace hipstack::smid
