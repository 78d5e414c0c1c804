// Names for the daemon's threads, so `top -H`, /proc/PID/task/*/comm and the benchmarks can tell
// the sampler from the servers (the threads of gRPC and NVML keep their own names).
#pragma once

#include <pthread.h>

namespace hipstack::smid {

// Names the calling thread; Linux keeps at most 15 characters.
inline void name_thread(const char* name) noexcept { ::pthread_setname_np(::pthread_self(), name); }

}  // namespace hipstack::smid
