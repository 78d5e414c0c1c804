// The floor under hipstack's NVIDIA sampling: the bare NVML calls, made straight through dlsym with
// nothing around them. Two modes:
//   nvml_floor calls [ROUNDS [GAP_MS]]      each call's median time (µs): once per GPU every GAP_MS
//                                           (default 10 rounds, 1000 ms), and 50 calls back to back
//   nvml_floor loop SECONDS INTERVAL_MS COSTLY_EVERY_MS
//                                           every INTERVAL_MS the calls of hipstack's cheap metrics
//                                           for every GPU, every COSTLY_EVERY_MS the costly ones too;
//                                           prints the process's CPU share of one core
//   nvml_floor idle SECONDS                 NVML initialised and no call made, then the same with
//                                           XID events registered: what NVML's own threads cost
// `calls` prints wall time and the calling thread's CPU time per call; CPU the process spends
// beyond its calls (NVML's threads) shows in `idle` and in `loop`.
// bench/nvidia_daemon.sh runs the loop beside hipstack-smid, same machine, same run. Which calls are
// cheap and which costly follows the catalogue's cost classes (docs/performance.md).
#include <dlfcn.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "backends/nvml/nvml_api.hpp"

namespace nv = hipstack::smi::detail::nvml;

namespace {

using namespace hipstack::smi::detail::nvml;  // the signatures of HIPSTACK_NVML_SYMBOLS name NVML's types bare

struct Api {
#define HIPSTACK_FLOOR_MEMBER(member, signature, ...) std::add_pointer_t<signature> member = nullptr;
  HIPSTACK_NVML_SYMBOLS(HIPSTACK_FLOOR_MEMBER)
#undef HIPSTACK_FLOOR_MEMBER
};

// The first exported name of each member that resolves (the newest version).
bool load(Api& api) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "nvml_floor: %s\n", dlerror());
    return false;
  }
#define HIPSTACK_FLOOR_RESOLVE(member, signature, ...)                                 \
  for (const char* name : {__VA_ARGS__}) {                                           \
    if (void* fn = dlsym(lib, name)) {                                               \
      api.member = reinterpret_cast<std::add_pointer_t<signature>>(fn);              \
      break;                                                                         \
    }                                                                                \
  }
  HIPSTACK_NVML_SYMBOLS(HIPSTACK_FLOOR_RESOLVE)
#undef HIPSTACK_FLOOR_RESOLVE
  return api.init != nullptr && api.device_count != nullptr && api.device_by_index != nullptr;
}

struct Call {
  const char* name;
  std::function<void(nv::Device)> run;
};

void field_values(const Api& api, nv::Device d, std::initializer_list<unsigned> ids) {
  std::vector<nv::FieldValue> fields;
  for (unsigned id : ids) {
    nv::FieldValue f{};
    f.fieldId = id;
    fields.push_back(f);
  }
  api.field_values(d, static_cast<int>(fields.size()), fields.data());
}

// The calls hipstack-smid makes every fast interval for one GPU (cost class cheap).
std::vector<Call> cheap_calls(const Api& api) {
  return {
      {"nvmlDeviceGetTemperature", [&api](nv::Device d) { unsigned v; api.temperature(d, nv::kTemperatureGpu, &v); }},
      {"nvmlDeviceGetFieldValues(MEMORY_TEMP,POWER_INSTANT)",
       [&api](nv::Device d) { field_values(api, d, {nv::kFieldMemoryTemperature, nv::kFieldPowerInstant}); }},
      {"nvmlDeviceGetPowerUsage", [&api](nv::Device d) { unsigned v; api.power_usage(d, &v); }},
      {"nvmlDeviceGetClockInfo x4",
       [&api](nv::Device d) {
         unsigned v;
         for (int c : {nv::kClockGraphics, nv::kClockSm, nv::kClockMem, nv::kClockVideo}) api.clock(d, c, &v);
       }},
      {"nvmlDeviceGetUtilizationRates", [&api](nv::Device d) { nv::Utilization u; api.utilization(d, &u); }},
      {"nvmlDeviceGetEncoderUtilization", [&api](nv::Device d) { unsigned v, p; api.encoder_utilization(d, &v, &p); }},
      {"nvmlDeviceGetDecoderUtilization", [&api](nv::Device d) { unsigned v, p; api.decoder_utilization(d, &v, &p); }},
      {"nvmlDeviceGetMemoryInfo_v2",
       [&api](nv::Device d) {
         nv::MemoryV2 m{};
         m.version = nv::kMemoryV2Version;
         api.memory_v2(d, &m);
       }},
      {"nvmlDeviceGetPerformanceState", [&api](nv::Device d) { int v; api.performance_state(d, &v); }},
      {"nvmlDeviceGetCurrentClocksEventReasons", [&api](nv::Device d) { unsigned long long v; api.clock_event_reasons(d, &v); }},
      {"nvmlDeviceGetCurrPcieLinkGeneration", [&api](nv::Device d) { unsigned v; api.pcie_generation(d, &v); }},
      {"nvmlDeviceGetCurrPcieLinkWidth", [&api](nv::Device d) { unsigned v; api.pcie_width(d, &v); }},
      {"nvmlDeviceGetFieldValues(ECC x4)",
       [&api](nv::Device d) {
         field_values(api, d, {nv::kFieldEccSbeVolatile, nv::kFieldEccDbeVolatile, nv::kFieldEccSbeAggregate,
                               nv::kFieldEccDbeAggregate});
       }},
      {"nvmlDeviceGetRetiredPages x2",
       [&api](nv::Device d) {
         for (int cause : {nv::kRetiredMultipleSbe, nv::kRetiredDbe}) {
           unsigned count = 0;
           api.retired_pages(d, cause, &count, nullptr);
         }
       }},
      {"nvmlDeviceGetRemappedRows", [&api](nv::Device d) { unsigned a, b, c, e; api.remapped_rows(d, &a, &b, &c, &e); }},
  };
}

// The calls of the costly class: read every costly interval.
std::vector<Call> costly_calls(const Api& api) {
  return {
      {"nvmlDeviceGetTotalEnergyConsumption", [&api](nv::Device d) { unsigned long long v; api.total_energy(d, &v); }},
      {"nvmlDeviceGetBAR1MemoryInfo", [&api](nv::Device d) { nv::Bar1Memory b; api.bar1_memory(d, &b); }},
      {"nvmlDeviceGetFieldValues(PCIE_REPLAY)", [&api](nv::Device d) { field_values(api, d, {nv::kFieldPcieReplays}); }},
      {"nvmlDeviceGetFanSpeed", [&api](nv::Device d) { unsigned v; api.fan_speed(d, &v); }},
      {"nvmlDeviceGetNvLinkState (until the last link)",
       [&api](nv::Device d) {
         for (unsigned link = 0; link < nv::kNvlinkMaxLinks; ++link) {
           nv::EnableState s;
           const nv::Return code = api.nvlink_state(d, link, &s);
           if (code == nv::kErrorInvalidArgument || code == nv::kErrorNotSupported) break;
         }
       }},
  };
}

// Single calls timed on their own, for the cost table (not part of either loop). `events` is a set
// with every GPU registered for XID events (null when NVML refused it).
std::vector<Call> other_calls(const Api& api, nv::EventSet events) {
  return {
      {"nvmlEventSetWait_v2 (timeout 0, XIDs of all GPUs)",
       [&api, events](nv::Device) {
         nv::EventData data{};
         if (events != nullptr) api.event_set_wait(events, &data, 0);
       }},
      {"nvmlDeviceGetUUID (hipstack's lost-GPU check)",
       [&api](nv::Device d) {
         char uuid[nv::kUuidSize];
         api.uuid(d, uuid, nv::kUuidSize);
       }},
      {"nvmlDeviceGetFieldValues(TOTAL_ENERGY)", [&api](nv::Device d) { field_values(api, d, {nv::kFieldTotalEnergy}); }},
      {"nvmlDeviceGetPcieReplayCounter", [&api](nv::Device d) { unsigned v; api.pcie_replay_counter(d, &v); }},
      {"nvmlDeviceGetTotalEccErrors (volatile corrected)",
       [&api](nv::Device d) { unsigned long long v; api.total_ecc_errors(d, nv::kErrorCorrected, nv::kVolatileEcc, &v); }},
      {"nvmlDeviceGetComputeRunningProcesses_v3",
       [&api](nv::Device d) {
         unsigned count = 0;
         api.compute_processes(d, &count, nullptr);
       }},
  };
}

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Each call's cost as a sampler pays it: once per GPU every gap_ms (NVML answers a repeated query
// from a cache for a while, so back-to-back calls cost far less than calls a second apart), median
// over rounds; beside it the median of 50 back-to-back calls on the first GPU.
int time_calls(const Api& api, const std::vector<nv::Device>& devices, nv::EventSet events, int rounds, int gap_ms) {
  const auto elapsed_us = [](auto start) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  };
  const auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::vector<Call> all;
  for (const auto& set : {cheap_calls(api), costly_calls(api), other_calls(api, events)}) all.insert(all.end(), set.begin(), set.end());
  std::vector<std::vector<double>> cold(all.size());
  std::vector<std::vector<double>> cold_cpu(all.size());
  for (int round = 0; round < rounds; ++round) {
    const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(gap_ms);
    for (std::size_t c = 0; c < all.size(); ++c) {
      for (nv::Device d : devices) {
        const double cpu = thread_cpu_us();
        const auto start = std::chrono::steady_clock::now();
        all[c].run(d);
        cold[c].push_back(elapsed_us(start));
        cold_cpu[c].push_back(thread_cpu_us() - cpu);
      }
    }
    std::this_thread::sleep_until(next);
  }
  std::printf("%-52s %14s %14s %14s\n", "call (median us)", "spaced", "spaced cpu", "back-to-back");
  for (std::size_t c = 0; c < all.size(); ++c) {
    std::vector<double> warm;
    for (int i = 0; i < 50 && !devices.empty(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      all[c].run(devices.front());
      warm.push_back(elapsed_us(start));
    }
    std::printf("%-52s %14.1f %14.1f %14.1f\n", all[c].name, median(cold[c]), median(cold_cpu[c]),
                warm.empty() ? 0.0 : median(warm));
  }
  std::printf("(spaced: each call once per GPU every %d ms, %d rounds, all GPUs pooled)\n", gap_ms, rounds);
  return 0;
}

int loop(const Api& api, const std::vector<nv::Device>& devices, double seconds, int interval_ms, int costly_ms) {
  const auto cheap = cheap_calls(api);
  const auto costly = costly_calls(api);
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  auto next_costly = start;
  while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds)) {
    const bool costly_due = std::chrono::steady_clock::now() >= next_costly;
    for (nv::Device d : devices) {
      for (const Call& c : cheap) c.run(d);
      if (costly_due) {
        for (const Call& c : costly) c.run(d);
      }
    }
    if (costly_due) next_costly += std::chrono::milliseconds(costly_ms);
    next += std::chrono::milliseconds(interval_ms);
    std::this_thread::sleep_until(next);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("nvml_floor: %zu GPUs, %.0f s, cheap every %d ms, costly every %d ms: %.3f%% of a core\n", devices.size(),
              wall, interval_ms, costly_ms, 100.0 * (cpu_seconds() - cpu_start) / wall);
  // The memory floor: NVML initialised and used for these GPUs, plus whatever libraries the run was
  // given (bench/nvidia_daemon.sh preloads hipstack-smid's).
  if (FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr) {
      if (std::strncmp(line, "VmRSS:", 6) == 0) std::printf("nvml_floor: RSS %ld kB\n", std::atol(line + 6));
    }
    std::fclose(status);
  }
  return 0;
}

// A set with every GPU registered for XID critical errors, as hipstack's backend makes it (null
// when NVML refuses it).
nv::EventSet xid_events(const Api& api, const std::vector<nv::Device>& devices) {
  nv::EventSet set = nullptr;
  if (api.event_set_create == nullptr || api.register_events == nullptr || api.event_set_create(&set) != nv::kSuccess) {
    return nullptr;
  }
  for (nv::Device d : devices) api.register_events(d, nv::kEventXidCriticalError, set);
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "calls" && mode != "loop" && mode != "idle") {
    std::fprintf(stderr,
                 "usage: nvml_floor calls [ROUNDS [GAP_MS]] | nvml_floor loop SECONDS INTERVAL_MS COSTLY_EVERY_MS | "
                 "nvml_floor idle SECONDS\n");
    return 2;
  }
  Api api;
  if (!load(api) || api.init() != nv::kSuccess) {
    std::fprintf(stderr, "nvml_floor: NVML did not initialise\n");
    return 1;
  }
  unsigned count = 0;
  api.device_count(&count);
  std::vector<nv::Device> devices(count);
  for (unsigned i = 0; i < count; ++i) api.device_by_index(i, &devices[i]);
  if (mode == "idle") {
    if (argc < 3) {
      std::fprintf(stderr, "usage: nvml_floor idle SECONDS\n");
      return 2;
    }
    // NVML's own cost with nothing asked of it: idle, then with XID events registered.
    const double seconds = std::atof(argv[2]);
    const auto plain = [seconds] {
      const double start = cpu_seconds();
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      return 100.0 * (cpu_seconds() - start) / seconds;
    };
    std::printf("nvml_floor: NVML initialised, no calls, %.0f s: %.4f%% of a core\n", seconds, plain());
    if (xid_events(api, devices) == nullptr) return 0;
    std::printf("nvml_floor: with XID events registered on every GPU, %.0f s: %.4f%% of a core\n", seconds, plain());
    return 0;
  }
  if (mode == "calls") {
    return time_calls(api, devices, xid_events(api, devices), argc > 2 ? std::atoi(argv[2]) : 10,
                      argc > 3 ? std::atoi(argv[3]) : 1000);
  }
  if (argc < 5) {
    std::fprintf(stderr, "usage: nvml_floor loop SECONDS INTERVAL_MS COSTLY_EVERY_MS\n");
    return 2;
  }
  return loop(api, devices, std::atof(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
}
