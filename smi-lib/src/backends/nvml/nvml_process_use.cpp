// Per-process utilisation on NVIDIA GPUs: NVML's samples (nvmlDeviceGetProcessUtilization) of each
// process's SM, memory controller, encoder and decoder use, averaged over the samples taken since
// the previous look at the same GPU (or over interval_ms on a first look), as process_engine_busy
// with the engines "sm", "memory", "enc" and "dec".
#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "../../readings.hpp"
#include "nvml_backend.hpp"

namespace hipstack::smi::detail::nvml {
namespace {

unsigned long long wall_us() {
  return static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// Every sample after `since`; the return code of the last call.
Return query_samples(const Api& api, Device device, unsigned long long since, std::vector<ProcessUtilizationSample>& samples) {
  unsigned count = 0;
  Return code = api.process_utilization(device, nullptr, &count, since);
  for (int attempt = 0; (code == kSuccess || code == kErrorInsufficientSize) && attempt < 4; ++attempt) {
    if (count == 0) return code;
    samples.resize(count + 16);  // room for samples taken between the calls
    count = static_cast<unsigned>(samples.size());
    code = api.process_utilization(device, samples.data(), &count, since);
    if (code == kSuccess) {
      samples.resize(std::min<std::size_t>(count, samples.size()));
      return code;
    }
  }
  samples.clear();
  return code;
}

struct Engine {
  const char* name;
  unsigned int ProcessUtilizationSample::*field;
};
constexpr Engine kEngines[] = {{"sm", &ProcessUtilizationSample::smUtil},
                               {"memory", &ProcessUtilizationSample::memUtil},
                               {"enc", &ProcessUtilizationSample::encUtil},
                               {"dec", &ProcessUtilizationSample::decUtil}};

}  // namespace

void NvmlBackend::add_process_use(const NvidiaGpu& gpu, std::size_t device, unsigned interval_ms,
                                  std::map<unsigned, smi::ProcessInfo*>& by_pid) const {
  const Api& api = library_->api();
  auto fail_all = [&by_pid](int error, const std::string& why) {
    for (auto& [pid, info] : by_pid) ReadingList(info->readings).failed(MetricId::process_engine_busy, error, why);
  };
  if (api.process_utilization == nullptr) return fail_all(ENOSYS, "this NVML has no nvmlDeviceGetProcessUtilization");
  unsigned long long since = 0;
  if (interval_ms > 0) {
    since = wall_us();
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  } else {
    const std::lock_guard lock(process_use_mutex_);
    const auto last = process_use_last_.find(device);
    if (last != process_use_last_.end()) since = last->second;
  }
  const unsigned long long now = wall_us();
  {
    const std::lock_guard lock(process_use_mutex_);
    process_use_last_[device] = now;
  }
  if (since == 0) return fail_all(ENODATA, "needs two looks: pass an interval");
  std::vector<ProcessUtilizationSample> samples;
  const Return code = query_samples(api, gpu.handle, since, samples);
  // NOT_FOUND: no sample since `since`, which NVML takes only of a process that ran: idle.
  if (code != kSuccess && code != kErrorNotFound) {
    return fail_all(errno_for(code), "nvmlDeviceGetProcessUtilization: " + library_->describe(code));
  }
  const double seconds = static_cast<double>(now - since) / 1e6;
  for (auto& [pid, info] : by_pid) {
    ReadingList list(info->readings);
    unsigned taken = 0;
    double sums[std::size(kEngines)] = {};
    for (const ProcessUtilizationSample& s : samples) {
      if (s.pid != pid || s.timeStamp <= since) continue;
      ++taken;
      for (std::size_t e = 0; e < std::size(kEngines); ++e) sums[e] += s.*kEngines[e].field;
    }
    const std::string source = taken == 0 ? fmt::format("nvmlDeviceGetProcessUtilization: no sample in the last {:.1f} s (idle)", seconds)
                                          : fmt::format("nvmlDeviceGetProcessUtilization: mean of {} sample(s) over {:.1f} s", taken, seconds);
    for (std::size_t e = 0; e < std::size(kEngines); ++e) {
      list.real(MetricId::process_engine_busy, taken == 0 ? 0.0 : std::min(100.0, sums[e] / taken), source, kEngines[e].name);
    }
  }
}

}  // namespace hipstack::smi::detail::nvml
