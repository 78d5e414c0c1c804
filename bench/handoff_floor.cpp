// The floor under a read with a deadline (docs/python.md, "Per-call cost"): what handing one call to
// another thread and back costs on this machine, against the bare hardware handoff, in one process.
// Prints the median microseconds of
//   - two threads passing one number each way through one cache line (the hardware's floor),
//   - the same through two cache lines (what the read deadline's lane uses: `posted`, `taken`),
//   - ReadDeadline::run with an empty read (an int) and with a read returning a small vector,
// and each one's ratio to the one-line handoff.
//
// Usage: handoff_floor [CALLS]   (default 200000)
#include "c_api_deadline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A round trip through `to` and `back` (the same atomic for one line); the echo thread answers each
// number n written to `to` with n + 1 on `back`.
double ping_pong(std::atomic<unsigned>& to, std::atomic<unsigned>& back, unsigned calls) {
  std::thread echo([&] {
    for (unsigned n = 1; n < 2 * calls; n += 2) {
      while (to.load(std::memory_order_acquire) != n) pause();
      back.store(n + 1, std::memory_order_release);
    }
  });
  std::vector<double> us;
  us.reserve(calls);
  for (unsigned n = 1; n < 2 * calls; n += 2) {
    const auto start = Clock::now();
    to.store(n, std::memory_order_release);
    while (back.load(std::memory_order_acquire) != n + 1) pause();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  echo.join();
  return median(us);
}

template <typename Read>
double through_deadline(hipstack::smi::c_api::ReadDeadline& deadline, unsigned calls, Read read) {
  std::vector<double> us;
  us.reserve(calls);
  for (unsigned i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    const auto value = deadline.run(0, [] { return "the benchmark"; }, {}, read);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    static_cast<void>(value);
  }
  return median(us);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned calls = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 200000;
  if (calls == 0) {
    std::fprintf(stderr, "usage: handoff_floor [CALLS > 0]\n");
    return 2;
  }
  alignas(64) std::atomic<unsigned> one{0};
  const double one_line = ping_pong(one, one, calls);
  struct alignas(64) Line {
    std::atomic<unsigned> word{0};
  };
  Line posted, taken;
  const double two_lines = ping_pong(posted.word, taken.word, calls);
  hipstack::smi::c_api::ReadDeadline deadline(std::chrono::milliseconds(10000));
  const double empty = through_deadline(deadline, calls, [] { return 7; });
  const double vector = through_deadline(deadline, calls, [] { return std::vector<double>(2, 1.0); });
  const auto row = [one_line](const char* what, double us) {
    std::printf("  %-40s %6.3f us   ratio %5.1f\n", what, us, us / one_line);
  };
  row("one cache line each way", one_line);
  row("two cache lines (posted, taken)", two_lines);
  row("ReadDeadline::run, empty read", empty);
  row("ReadDeadline::run, 2-double vector", vector);
  return 0;
}
