// WatchMetrics and WatchHealth on gRPC's callback API. A stream holds no thread while it waits for
// its next interval or for its client to read, so neither idle streams nor calls opened and reset
// as fast as a client can (HTTP/2 rapid reset, CVE-2023-44487) take a pool of threads or queue up
// behind one. One ticker thread wakes each stream when its next message is due; the stream builds
// it from the latest snapshots and starts its write. One write is in flight at most: a client that
// reads slowly gets the newest sample next, not a queue, and the stream quota's reaper cancels a
// write that waits too long (stream_quota.hpp).
#pragma once

#include <grpcpp/support/server_callback.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <vector>

#include "stream_quota.hpp"

namespace hipstack::smid {

class StreamTicker;

// What the ticker wakes: tick() runs on the ticker's thread and schedules the next tick itself.
class Tickable {
 public:
  virtual ~Tickable() = default;
  virtual void tick(StreamTicker& ticker) = 0;
};

class StreamTicker {
 public:
  using Clock = std::chrono::steady_clock;
  StreamTicker();
  ~StreamTicker();  // drops what is still scheduled (the streams ended first: the server waits for them)
  StreamTicker(const StreamTicker&) = delete;
  StreamTicker& operator=(const StreamTicker&) = delete;

  void schedule(Clock::time_point at, std::shared_ptr<Tickable> what);

 private:
  struct Entry {
    Clock::time_point at;
    std::uint64_t order;  // first scheduled, first woken among equal times
    std::shared_ptr<Tickable> what;
    bool operator>(const Entry& other) const { return at != other.at ? at > other.at : order > other.order; }
  };
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> due_;
  std::uint64_t scheduled_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

// A call refused before its stream began: finishes with the status at once.
template <typename Message>
class RefusedStream final : public grpc::ServerWriteReactor<Message> {
 public:
  explicit RefusedStream(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

// One server stream of snapshots. Owned by itself from start() to OnDone (gRPC holds a plain
// pointer until then) and by the ticker while a tick is scheduled: whichever lets go last frees it.
template <typename Message>
class SnapshotStream final : public grpc::ServerWriteReactor<Message>,
                             public Tickable,
                             public std::enable_shared_from_this<SnapshotStream<Message>> {
 public:
  using Clock = StreamTicker::Clock;
  // Fills the next message; false when there is nothing to send this time (WatchHealth sends
  // changes only). Called on the ticker's thread only.
  using Build = std::function<bool(Message&)>;

  // max_messages: the stream ends (OK) after that many; 0 for no limit.
  static grpc::ServerWriteReactor<Message>* start(StreamTicker& ticker, StreamQuota::Ticket slot, Clock::duration interval,
                                                  std::uint64_t max_messages, Build build) {
    std::shared_ptr<SnapshotStream> stream(new SnapshotStream(std::move(slot), interval, max_messages, std::move(build)));
    stream->self_ = stream;
    ticker.schedule(Clock::now(), stream);
    return stream.get();
  }

  void tick(StreamTicker& ticker) override {
    std::unique_lock lock(mutex_);
    if (ending_) return;  // finished or finishing: out of the schedule
    const auto due = next_;
    next_ = due + interval_;
    if (next_ < Clock::now()) next_ = Clock::now();  // fell behind: the next message carries the newest sample
    if (!writing_) {
      Message message;
      if (build_(message)) {
        message_ = std::move(message);
        writing_ = true;
        last_ = max_messages_ != 0 && ++sent_ >= max_messages_;
        slot_.write_begins();
        lock.unlock();
        this->StartWrite(&message_);
        lock.lock();
      }
    }
    if (!ending_ && !last_) ticker.schedule(next_, this->shared_from_this());
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock lock(mutex_);
    writing_ = false;
    slot_.write_ends();
    if (!ok) {
      end(lock, cancelled());
    } else if (pending_) {
      end(lock, *pending_);
    } else if (last_) {
      end(lock, grpc::Status::OK);
    }
  }

  void OnCancel() override {
    std::unique_lock lock(mutex_);
    end(lock, cancelled());
  }

  void OnDone() override {
    std::shared_ptr<SnapshotStream> keep;
    {
      std::lock_guard lock(mutex_);
      ending_ = true;
      slot_ = StreamQuota::Ticket();  // the slot goes back while the call's context still exists
      keep = std::move(self_);
    }
  }  // `keep` may free the stream here, after the lock is released

 private:
  SnapshotStream(StreamQuota::Ticket slot, Clock::duration interval, std::uint64_t max_messages, Build build)
      : slot_(std::move(slot)), interval_(interval), max_messages_(max_messages), build_(std::move(build)), next_(Clock::now()) {}

  static grpc::Status cancelled() {
    return {grpc::StatusCode::CANCELLED,
            "stream ended: cancelled by the client, or dropped (a stalled consumer, or its slot given to another client)"};
  }

  // Finishes once; a write in flight completes first (its OnWriteDone finishes then).
  void end(std::unique_lock<std::mutex>& lock, const grpc::Status& status) {
    if (ending_) return;
    if (writing_) {
      if (!pending_) pending_ = status;
      return;
    }
    ending_ = true;
    lock.unlock();
    this->Finish(status);
    lock.lock();
  }

  std::mutex mutex_;
  StreamQuota::Ticket slot_;
  const Clock::duration interval_;
  const std::uint64_t max_messages_;
  Build build_;
  Clock::time_point next_;
  Message message_;  // the one in flight: untouched until its OnWriteDone
  bool writing_ = false;
  bool last_ = false;    // the message in flight is the last one asked for
  bool ending_ = false;  // Finish called (or the call is done): no more writes
  std::uint64_t sent_ = 0;
  std::optional<grpc::Status> pending_;  // the status to finish with once the write in flight is done
  std::shared_ptr<SnapshotStream> self_;
};

}  // namespace hipstack::smid
