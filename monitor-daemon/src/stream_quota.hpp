// One quota for every long-lived gRPC call: WatchMetrics and WatchHealth, grpc.health.v1's Watch and
// server reflection. Each holds buffers for as long as it lasts (and reflection, gRPC's sync code, a
// thread), so they share `max_streams` slots:
// - a share (max_streams / 8, at least 1) is kept for callers with the admin role, so readers
//   cannot lock the admin out;
// - no reader peer (a uid on the unix socket, an IP address on TCP) holds more than a quarter of
//   the rest; a reader finding the readers' share full takes the slot of the oldest stream of the
//   peer holding the most when that peer holds at least two more than its own; an admin finding
//   the table full takes one from the heaviest reader peer;
// - a stream whose write has waited longer than slow_consumer_limit is cancelled (a client that does
//   not read), and so is a stream that expects client messages (reflection) and got none for
//   stream_idle_limit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace hipstack::smid {

class StreamQuota {
 public:
  using Clock = std::chrono::steady_clock;

  StreamQuota(std::size_t max_streams, std::chrono::milliseconds slow_consumer_limit, std::chrono::milliseconds idle_limit);
  ~StreamQuota();
  StreamQuota(const StreamQuota&) = delete;
  StreamQuota& operator=(const StreamQuota&) = delete;

  struct Stream;  // one admitted stream (internal)

  // A slot, held for the stream's life; refused() says why none was given ("" when admitted).
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    ~Ticket();
    [[nodiscard]] bool admitted() const noexcept { return stream_ != nullptr; }
    [[nodiscard]] const std::string& refused() const noexcept { return refused_; }
    // A message arrived from the client: the stream is not idle.
    void activity();
    // Brackets one write, for the stalled-consumer check.
    void write_begins();
    void write_ends();

   private:
    friend class StreamQuota;
    StreamQuota* quota_ = nullptr;
    std::list<Stream>::iterator stream_it_;
    Stream* stream_ = nullptr;
    std::string refused_;
  };

  struct Request {
    std::string peer;               // who holds the stream (Caller::peer)
    bool admin = false;             // may use the admin share
    bool expects_messages = false;  // the client is meant to keep sending (reflection): silence is idleness
    std::function<void()> cancel;   // ends the call (ServerContext::TryCancel); called with the quota locked
    std::string label;              // for the log: the client's address
  };
  [[nodiscard]] Ticket admit(Request request);

  [[nodiscard]] std::size_t max_streams() const noexcept { return max_streams_; }
  [[nodiscard]] std::size_t admin_reserve() const noexcept { return admin_reserve_; }
  [[nodiscard]] std::size_t max_per_peer() const noexcept { return max_per_peer_; }

 private:
  void release(std::list<Stream>::iterator it);
  void reap();

  const std::size_t max_streams_;
  const std::size_t admin_reserve_;
  const std::size_t max_per_peer_;
  const std::chrono::milliseconds slow_consumer_limit_;
  const std::chrono::milliseconds idle_limit_;
  std::mutex mutex_;
  std::list<Stream> streams_;
  std::condition_variable stop_reaper_;
  bool stopping_ = false;
  bool reaper_parked_ = false;  // waiting for the first stream (with mutex_)
  std::thread reaper_;
};

}  // namespace hipstack::smid
