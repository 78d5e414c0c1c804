// The C API's read deadline (hipstack_smi_open_options.read_deadline_ms, docs/api.md "Read
// deadline"). A read of sysfs or of a vendor library can block in the kernel for good (a wedged
// driver; a FIFO planted where a file should be), and no timeout can interrupt it. So each call that
// reads runs on a thread of its own while the caller waits up to the deadline; a call still running
// then is abandoned: the caller gets HIPSTACK_SMI_ERROR_TIMED_OUT, the thread keeps what it uses alive
// and ends whenever the read returns. Until it does, later calls about the same GPU answer TIMED_OUT
// at once, so a wedged GPU costs one thread, not one per call.
#pragma once

#include <hipstack/smi.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

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
  explicit ReadDeadline(std::chrono::milliseconds limit) : limit_(limit) {}

  std::chrono::milliseconds limit() const { return limit_; }

  // read() within the deadline plus `extra` (a wait the call itself asks for: a window, an interval).
  // `what` names the call's subject in the error ("GPU 3", "the node's links").
  template <typename Read>
  auto run(std::uint32_t key, std::string_view what, std::chrono::milliseconds extra, Read read) -> decltype(read()) {
    using T = decltype(read());
    if (limit_.count() == 0) return read();
    {
      std::lock_guard lock(shared_->mutex);
      if (const auto it = shared_->stuck.find(key); it != shared_->stuck.end()) {
        throw TimedOut(fmt::format("{}: a read that began {:.1f} s ago has not returned yet (a hung driver? see dmesg)", what,
                                   std::chrono::duration<double>(Clock::now() - it->second.since).count()));
      }
    }
    auto task = std::make_shared<std::packaged_task<T()>>(std::move(read));
    auto result = task->get_future();
    auto call = std::make_shared<Call>();
    std::thread([task, call, shared = shared_, key] {
      (*task)();
      std::lock_guard lock(shared->mutex);
      if (!call->abandoned) return;
      const auto it = shared->stuck.find(key);
      if (it != shared->stuck.end() && --it->second.calls == 0) shared->stuck.erase(it);
    }).detach();
    if (result.wait_for(limit_ + extra) != std::future_status::ready) {
      std::lock_guard lock(shared_->mutex);
      // The worker may have finished since: its result counts (the worker checks `abandoned` under
      // this same lock, so the count stays right either way).
      if (result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        call->abandoned = true;
        auto [it, added] = shared_->stuck.try_emplace(key, Stuck{Clock::now() - limit_ - extra, 0});
        ++it->second.calls;
        throw TimedOut(fmt::format("{}: no answer within {} ms: a read of its files is stuck (a hung driver? see dmesg)", what,
                                   (limit_ + extra).count()));
      }
    }
    return result.get();  // rethrows the read's error
  }

 private:
  struct Call {
    bool abandoned = false;  // guarded by Shared::mutex
  };
  struct Stuck {
    Clock::time_point since;  // when the oldest abandoned read began
    unsigned calls = 0;       // abandoned reads still running
  };
  // Shared with the workers, which outlive the handle when abandoned.
  struct Shared {
    std::mutex mutex;
    std::map<std::uint32_t, Stuck> stuck;
  };

  std::chrono::milliseconds limit_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

}  // namespace hipstack::smi::c_api
