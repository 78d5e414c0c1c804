// The C API's read deadline (hipstack_smi_open_options.read_deadline_ms, docs/api.md "Read
// deadline"). A read of sysfs or of a vendor library can block in the kernel for good (a wedged
// driver; a FIFO planted where a file should be), and no timeout can interrupt it. So each call that
// reads runs on a worker thread while the caller waits up to the deadline; a call still running then
// is abandoned: the caller gets HIPSTACK_SMI_ERROR_TIMED_OUT, the worker keeps what it uses alive
// and goes on whenever the read returns. Until it does, later calls about the same GPU answer
// TIMED_OUT at once, so a wedged GPU costs one thread, not one per call.
//
// Workers are kept between calls (a thread's start costs tens of microseconds, more than a read of
// NVML): a call hands its read to an idle worker, or starts one when none is idle. A worker that
// finished looks for its next read for a few microseconds before it sleeps, and the caller looks
// for its answer as long before it sleeps (yielding the processor between looks), so a poller's
// back-to-back calls pay no wake-up; a worker idle for kIdleExit ends. Closing the handle ends the
// idle workers and waits for them.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
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
  // `what` names the call's subject in the error ("GPU 3", "the node's links").
  template <typename Read>
  auto run(std::uint32_t key, std::string_view what, std::chrono::milliseconds extra, Read read) -> decltype(read()) {
    using T = decltype(read());
    if (limit_.count() == 0) return read();
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(read));
    auto result = task->get_future();
    auto call = std::make_shared<Call>();
    call->key = key;
    start(call, [task] { (*task)(); }, what);
    if (!await(*call, limit_ + extra)) {
      throw TimedOut(fmt::format("{}: no answer within {} ms: a read of its files is stuck (a hung driver? see dmesg)", what,
                                 (limit_ + extra).count()));
    }
    return result.get();  // rethrows the read's error
  }

  // The kept workers, shared with them (they outlive the handle when a read is stuck).
  struct Shared;
  // One call handed to a worker.
  struct Call {
    std::uint32_t key = 0;
    std::atomic<bool> done{false};     // the read returned (set under Shared::mutex)
    bool abandoned = false;            // guarded by Shared::mutex
    std::condition_variable finished;  // waits with Shared::mutex
  };

 private:
  // Hands `read` to a worker, or throws TimedOut when `call->key`'s GPU has a read stuck already.
  void start(const std::shared_ptr<Call>& call, std::function<void()> read, std::string_view what);
  // Whether the call finished within `limit`; false: it is abandoned (counted stuck for its key).
  bool await(Call& call, std::chrono::milliseconds limit);

  std::chrono::milliseconds limit_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace hipstack::smi::c_api
