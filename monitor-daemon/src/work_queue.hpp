// A few threads of our own for the callback methods whose work waits or takes long (a GetHistory
// page, a mutation that writes to the device and waits for it): gRPC's callback threads must not
// block. The queue is bounded; a job that cannot be queued is refused at once by its caller, and
// one that waited past its deadline is told so (the caller answers RESOURCE_EXHAUSTED, "retry").
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hipstack::smid {

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;
  // The job's argument: true when it may run, false when it waited past its deadline or the queue
  // is stopping (the job then only answers its call).
  using Job = std::function<void(bool run)>;

  WorkQueue(std::size_t threads, std::size_t max_waiting, std::chrono::milliseconds max_wait);
  ~WorkQueue();  // runs or refuses what is queued, then joins the threads
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // False when max_waiting jobs are already queued (the job is not kept).
  [[nodiscard]] bool post(Job job);

 private:
  struct Waiting {
    Clock::time_point deadline;
    Job job;
  };
  void work();

  const std::size_t max_waiting_;
  const std::chrono::milliseconds max_wait_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Waiting> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// How many calls each peer may have waiting or running at once in a shared queue, so that one
// client's flood leaves room for the others. take() hands out a slot, or nothing when the peer
// holds `max` already; the slot is given back when its last copy goes.
class PeerSlots {
 public:
  using Slot = std::shared_ptr<void>;
  explicit PeerSlots(std::size_t max) : max_(max) {}
  PeerSlots(const PeerSlots&) = delete;
  PeerSlots& operator=(const PeerSlots&) = delete;

  [[nodiscard]] Slot take(const std::string& peer);

 private:
  const std::size_t max_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> held_;
};

}  // namespace hipstack::smid
