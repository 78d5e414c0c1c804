// What one poller's call costs through hipstack's C API, against the bare NVML call it stands for, in
// the same process, calls interleaved (these machines are noisy): the floor under hipstack.pynvml's
// per-call cost (issue 41: at most 2x pynvml's). For GPU 0's power and temperature, prints the median
// microseconds of
//   - the bare NVML call through dlsym (nvmlDeviceGetPowerUsage, nvmlDeviceGetTemperature),
//   - hipstack_smi_read_values with the read deadline (the default) and without it,
//   - hipstack_smi_sample_device of the same metric and hipstack_smi_list_free,
// and each one's ratio to the bare call. NVML is the library hipstack loads ($HIPSTACK_NVML_LIBRARY,
// else libnvidia-ml.so.1): on the build machine, the NVML double.
//
// Usage: c_call_cost [CALLS]   (default 20000)
#include <hipstack/smi.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using NvmlDevice = void*;
using NvmlInit = int (*)();
using NvmlHandleByIndex = int (*)(unsigned, NvmlDevice*);
using NvmlPower = int (*)(NvmlDevice, unsigned*);
using NvmlTemperature = int (*)(NvmlDevice, int, unsigned*);

struct Timer {
  std::function<void()> call;
  std::vector<double> us;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

hipstack_smi_system* open_system(uint32_t deadline_ms) {
  hipstack_smi_open_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  options.flags = HIPSTACK_SMI_OPEN_NO_AMDGPU;
  options.read_deadline_ms = deadline_ms;
  hipstack_smi_system* system = nullptr;
  if (hipstack_smi_open(&options, &system) != HIPSTACK_SMI_OK) {
    std::fprintf(stderr, "c_call_cost: hipstack_smi_open: %s\n", hipstack_smi_last_error());
    std::exit(1);
  }
  return system;
}

uint32_t metric_id(const char* name) {
  hipstack_smi_metric_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_metric_info);
  if (hipstack_smi_metric_by_name(name, &info) != HIPSTACK_SMI_OK) std::exit(1);
  return info.id;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  const char* path = std::getenv("HIPSTACK_NVML_LIBRARY");
  void* nvml = dlopen(path != nullptr && *path != '\0' ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml == nullptr || calls < 1) {
    std::fprintf(stderr, "c_call_cost: %s\n", nvml == nullptr ? dlerror() : "CALLS must be at least 1");
    return 1;
  }
  auto init = reinterpret_cast<NvmlInit>(dlsym(nvml, "nvmlInit_v2"));
  auto by_index = reinterpret_cast<NvmlHandleByIndex>(dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
  auto power = reinterpret_cast<NvmlPower>(dlsym(nvml, "nvmlDeviceGetPowerUsage"));
  auto temperature = reinterpret_cast<NvmlTemperature>(dlsym(nvml, "nvmlDeviceGetTemperature"));
  NvmlDevice device = nullptr;
  if (init == nullptr || by_index == nullptr || power == nullptr || temperature == nullptr || init() != 0 ||
      by_index(0, &device) != 0) {
    std::fprintf(stderr, "c_call_cost: NVML has no GPU 0\n");
    return 1;
  }
  hipstack_smi_system* bounded = open_system(0);
  hipstack_smi_system* unbounded = open_system(HIPSTACK_SMI_NO_READ_DEADLINE);

  for (const char* name : {"power_average", "temperature_junction"}) {
    const uint32_t id = metric_id(name);
    const bool is_power = std::string(name) == "power_average";
    hipstack_smi_value value{};
    hipstack_smi_sample_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_sample_options);
    options.metrics = &id;
    options.metric_count = 1;
    std::vector<Timer> timers{
        {[&] {
           unsigned v = 0;
           if (is_power) power(device, &v);
           else temperature(device, 0, &v);
         }, {}},
        {[&] { hipstack_smi_read_values(bounded, 0, &id, 1, &value); }, {}},
        {[&] { hipstack_smi_read_values(unbounded, 0, &id, 1, &value); }, {}},
        {[&] {
           hipstack_smi_list* list = nullptr;
           hipstack_smi_sample_device(bounded, 0, &options, &list);
           hipstack_smi_list_free(list);
         }, {}},
    };
    for (Timer& t : timers) {
      t.call();  // warm: the first call starts the deadline's worker
      t.us.reserve(static_cast<std::size_t>(calls));
    }
    for (int i = 0; i < calls; ++i) {
      for (Timer& t : timers) {
        const auto start = std::chrono::steady_clock::now();
        t.call();
        t.us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
    }
    if (value.status != HIPSTACK_SMI_STATUS_OK) {
      std::fprintf(stderr, "c_call_cost: %s: no value (status %d): %s\n", name, value.status, hipstack_smi_last_error());
      return 1;
    }
    const double floor = median(timers[0].us);
    const char* labels[] = {is_power ? "nvmlDeviceGetPowerUsage" : "nvmlDeviceGetTemperature", "read_values (deadline)",
                            "read_values (no deadline)", "sample_device + list_free"};
    std::printf("%s\n", name);
    for (std::size_t i = 0; i < timers.size(); ++i) {
      const double m = median(timers[i].us);
      std::printf("  %-28s %8.2f us   ratio %5.1f\n", labels[i], m, m / floor);
    }
  }
  hipstack_smi_close(bounded);
  hipstack_smi_close(unbounded);
  return 0;
}
