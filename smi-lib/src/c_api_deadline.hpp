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
// threads look at, without a lock or an allocation of its own (a poller's calls, one after another,
// pay a few hundred nanoseconds for the handoff). A call that finds the lane taken (calls from
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
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
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
    if (limit_.count() == 0) return read();
    // One allocation a call, shared with the worker (it outlives an abandoned call). Held as a Call
    // so that handing it on converts nothing (a conversion would count a reference more).
    const std::shared_ptr<Call> call = std::make_shared<Job<T, Read>>(std::move(read));
    call->key = key;
    if (const auto stuck_for = start(call)) {
      throw TimedOut(fmt::format("{}: a read that began {:.1f} s ago has not returned yet (a hung driver? see dmesg)", what(),
                                 std::chrono::duration<double>(*stuck_for).count()));
    }
    if (!(call->on_lane ? await_lane(call, limit_ + extra) : await(*call, limit_ + extra))) {
      throw TimedOut(fmt::format("{}: no answer within {} ms: a read of its files is stuck (a hung driver? see dmesg)", what(),
                                 (limit_ + extra).count()));
    }
    return static_cast<Job<T, Read>&>(*call).take();  // rethrows the read's error
  }

  // The kept workers, shared with them (they outlive the handle when a read is stuck).
  struct Shared;
  // One call handed to a worker. Its state goes from running to done (the worker) or to abandoned
  // (the caller, at the deadline, under Shared::mutex); whichever comes second sees the first, so
  // a stuck read is counted off exactly when it was counted (c_api_deadline.cpp).
  struct Call {
    enum State : int { running, done, abandoned };
    virtual ~Call() = default;
    virtual void run() noexcept = 0;  // on the worker: the read, its value or error kept for the caller
    std::uint32_t key = 0;
    bool slow_start = false;  // the caller's: its worker was asleep or new (it looks longer before sleeping)
    bool on_lane = false;     // handed to the handle's lane (else to a worker of the pool)
    std::uint32_t ticket = 0;  // on the lane: its number there (the lane's `posted` after it)
    std::atomic<int> state{running};
    std::atomic<bool> waiting{false};  // the caller sleeps on `finished` (the worker then notifies)
    std::condition_variable finished;  // waits with Shared::mutex
  };

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

  // Hands `call` to a worker; when its key's GPU has a read stuck already, hands nothing and
  // answers how long that read has been stuck.
  std::optional<Clock::duration> start(const std::shared_ptr<Call>& call);
  // Hands `call` to the lane when it is free and nothing is stuck: whether it did.
  bool start_on_lane(const std::shared_ptr<Call>& call);
  // Whether the call finished within `limit`; false: it is abandoned (counted stuck for its key).
  bool await(Call& call, std::chrono::milliseconds limit);
  // The same for a call on the lane (`owned`: the caller's share, handed to the lane if abandoned).
  bool await_lane(const std::shared_ptr<Call>& owned, std::chrono::milliseconds limit);
  // Marks `call` abandoned and counts it stuck for its key, unless it finished just now: whether it
  // was abandoned. on_lane: the call's owner, kept by the lane for its worker.
  bool abandon(Call& call, std::chrono::milliseconds limit, const std::shared_ptr<Call>* on_lane = nullptr);

  std::chrono::milliseconds limit_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace hipstack::smi::c_api
