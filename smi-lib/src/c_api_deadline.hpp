// The C API's read deadline (hipstack_smi_open_options.read_deadline_ms, docs/api.md "Read
// deadline"). A read of sysfs or of a vendor library can block in the kernel for good (a wedged
// driver; a FIFO planted where a file should be), and no timeout can interrupt it. So each call that
// reads runs on a worker thread while the caller waits up to the deadline; a call still running then
// is abandoned: the caller gets HIPSTACK_SMI_ERROR_TIMED_OUT, the worker keeps what it uses alive
// and goes on whenever the read returns. Until it does, later calls about the same GPU answer
// TIMED_OUT at once, so a wedged GPU costs one thread, not one per call.
//
// Workers are kept between calls (a thread's start costs tens of microseconds, more than a read of
// NVML). Each handle has a lane: one worker that takes one call at a time through a cache line both
// threads look at, the call built in the lane's own memory: no lock, no allocation (a poller's
// calls, one after another, pay a few hundred nanoseconds for the handoff). A call that finds the lane taken (calls from
// several threads at once) hands its read to an idle worker of a pool, or starts one. A worker that
// finished looks for its next read for 50 µs before it sleeps, and the caller looks for its answer
// as long (longer when it had to wake its worker) before it sleeps, pausing and then yielding the
// processor between looks (c_api_deadline.cpp says why), so a poller's back-to-back calls pay no
// wake-up; a worker idle for kIdleExit ends. Closing the handle ends the idle workers and waits for
// them.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace hipstack::smi::c_api {

// A call that ran past the deadline, or found its GPU stuck already (guarded() maps it to
// HIPSTACK_SMI_ERROR_TIMED_OUT).
class TimedOut : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReadDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint32_t kNode = UINT32_MAX;  // the key of calls about the whole node

  // limit 0: none (each call runs on the caller's thread).
  explicit ReadDeadline(std::chrono::milliseconds limit);
  ReadDeadline(ReadDeadline&&) noexcept = default;
  ReadDeadline& operator=(ReadDeadline&&) = delete;
  ~ReadDeadline();  // ends the idle workers; a worker in a stuck read ends when the read returns

  std::chrono::milliseconds limit() const { return limit_; }

  // read() within the deadline plus `extra` (a wait the call itself asks for: a window, an interval).
  // what() names the call's subject in the error ("GPU 3", "the node's links"); it is called only
  // when the call fails.
  template <typename What, typename Read>
  auto run(std::uint32_t key, What what, std::chrono::milliseconds extra, Read read) -> decltype(read()) {
    using T = decltype(read());
    using Handed = Job<T, Read>;
    if (limit_.count() == 0) return read();
    const auto limit = limit_ + extra;
    // The lane's call is built in the lane's own memory: no allocation, and the handoff moves only
    // the lines both threads look at anyway.
    if constexpr (sizeof(Handed) <= kLaneSlotBytes && alignof(Handed) <= kLaneSlotAlign && std::is_nothrow_move_constructible_v<Read>) {
      if (void* const slot = claim_lane()) {
        Handed* const call = new (slot) Handed(std::move(read));
        call->key = key;
        try {
          post_lane(*call);
        } catch (const std::system_error&) {  // no thread to be had: nothing was handed over
          call->~Handed();
          release_lane();
          throw;
        }
        // Abandoned: the lane and the call are its worker's until the read returns.
        if (!await_lane(*call, limit)) throw timed_out(what(), limit);
        const LaneRelease release{*this, call};
        return call->take();  // rethrows the read's error
      }
    }
    // One allocation a call, shared with the worker (it outlives an abandoned call). Held as a Call
    // so that handing it on converts nothing (a conversion would count a reference more).
    const std::shared_ptr<Call> call = std::make_shared<Handed>(std::move(read));
    call->key = key;
    if (const auto stuck_for = start(call)) {
      throw TimedOut(fmt::format("{}: a read that began {:.1f} s ago has not returned yet (a hung driver? see dmesg)", what(),
                                 std::chrono::duration<double>(*stuck_for).count()));
    }
    if (!await(*call, limit)) throw timed_out(what(), limit);
    return static_cast<Handed&>(*call).take();  // rethrows the read's error
  }

  // The kept workers, shared with them (they outlive the handle when a read is stuck).
  struct Shared;
  // One call handed to a worker. Its state goes from running to done (the worker) or to abandoned
  // (the caller, at the deadline, under Shared::mutex); whichever comes second sees the first, so
  // a stuck read is counted off exactly when it was counted (c_api_deadline.cpp).
  struct Call {
    // The caller that sleeps on a running call marks it `awaited` first (the worker then wakes it).
    enum State : std::uint32_t { running, awaited, done, abandoned };
    virtual ~Call() = default;
    virtual void run() noexcept = 0;  // on the worker: the read, its value or error kept for the caller
    std::uint32_t key = 0;
    std::uint32_t ticket = 0;  // on the lane: its number there (the lane's `posted` after it)
    bool slow_start = false;   // the caller's: its worker was asleep or new (it looks longer before sleeping)
    std::atomic<std::uint32_t> state{running};  // a futex word (the pool's caller sleeps on it)
  };

  // The room a call built in the lane has (a one-metric read's fits with room to spare).
  static constexpr std::size_t kLaneSlotBytes = 448;
  static constexpr std::size_t kLaneSlotAlign = 64;

 private:
  template <typename T, typename Read>
  struct Job final : Call {
    explicit Job(Read r) : read(std::move(r)) {}
    void run() noexcept override {
      // Any error crosses to the caller's thread as it is (what a std::packaged_task does).
      try {
        value.emplace(read());
      } catch (...) {
        error = std::current_exception();
      }
    }
    T take() {
      if (error) std::rethrow_exception(error);
      return std::move(*value);
    }
    Read read;
    std::optional<T> value;
    std::exception_ptr error;
  };

  // The lane's call, when done with: destroyed in the lane, the lane given back.
  struct LaneRelease {
    ReadDeadline& deadline;
    Call* call;
    LaneRelease(ReadDeadline& d, Call* c) : deadline(d), call(c) {}
    LaneRelease(const LaneRelease&) = delete;
    LaneRelease& operator=(const LaneRelease&) = delete;
    ~LaneRelease() {
      call->~Call();
      deadline.release_lane();
    }
  };

  static TimedOut timed_out(const std::string& what, std::chrono::milliseconds limit) {
    return TimedOut(fmt::format("{}: no answer within {} ms: a read of its files is stuck (a hung driver? see dmesg)", what, limit.count()));
  }

  // Hands `call` to a worker; when its key's GPU has a read stuck already, hands nothing and
  // answers how long that read has been stuck.
  std::optional<Clock::duration> start(const std::shared_ptr<Call>& call);
  // The lane's room for a call when the lane is free and nothing is stuck (the lane is then the
  // caller's until release_lane), else nullptr.
  void* claim_lane();
  // Posts the call built in the lane's room and wakes or starts the lane's worker.
  void post_lane(Call& call);
  void release_lane();
  // Whether the call finished within `limit`; false: it is abandoned (counted stuck for its key).
  bool await(Call& call, std::chrono::milliseconds limit);
  // The same for the call on the lane (abandoned, it stays the worker's, the lane busy, until it returns).
  bool await_lane(Call& call, std::chrono::milliseconds limit);
  // Marks `call` abandoned and counts it stuck for its key, unless it finished just now: whether it
  // was abandoned.
  bool abandon(Call& call, std::chrono::milliseconds limit);

  std::chrono::milliseconds limit_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace hipstack::smi::c_api
