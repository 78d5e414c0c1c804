// Names for the daemon's threads, so `top -H`, /proc/PID/task/*/comm and the benchmarks can tell
// the sampler from the servers (the threads of gRPC and NVML keep their own names).
#pragma once

#include <pthread.h>

#include <cstddef>

namespace hipstack::smid {

// Names the calling thread. Linux takes at most 15 bytes and refuses a longer name whole (the
// thread keeps the process's name), so a longer literal does not compile.
template <std::size_t N>
inline void name_thread(const char (&name)[N]) noexcept {
  static_assert(N <= 16, "a thread's name is at most 15 bytes");
  ::pthread_setname_np(::pthread_self(), name);
}

}  // namespace hipstack::smid
