// Library sampling cost: hipstack's System::sample against AMD's rocm_smi_lib (librocm_smi64) reading
// the metrics it supports, in the same process, on the same /sys. Run it inside bench/run.sh's
// mount namespace, where a capture laid out as a live tree is bind-mounted over /sys.
//
// Prints, per GPU, the median microseconds of one live sample for both and the ratio.
#include <hipstack/smi.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#ifdef HIPSTACK_BENCH_ROCM_SMI
#include <rocm_smi/rocm_smi.h>
#endif

namespace {

double median_us(int iterations, const std::function<void()>& fn) {
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(iterations));
  fn();  // warm the page cache and lazily loaded state
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

#ifdef HIPSTACK_BENCH_ROCM_SMI
// The live metrics rocm_smi_lib offers that hipstack's `metric` also reports.
void rocm_smi_sample(uint32_t dv) {
  int64_t value = 0;
  uint64_t u64 = 0;
  uint32_t u32 = 0;
  rsmi_frequencies_t freq{};
  rsmi_dev_perf_level_t level{};
  for (uint32_t sensor : {RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_TYPE_MEMORY}) {
    (void)rsmi_dev_temp_metric_get(dv, sensor, RSMI_TEMP_CURRENT, &value);
  }
  (void)rsmi_dev_power_ave_get(dv, 0, &u64);
  for (rsmi_clk_type_t clk : {RSMI_CLK_TYPE_SYS, RSMI_CLK_TYPE_MEM, RSMI_CLK_TYPE_DF, RSMI_CLK_TYPE_SOC}) {
    (void)rsmi_dev_gpu_clk_freq_get(dv, clk, &freq);
  }
  (void)rsmi_dev_busy_percent_get(dv, &u32);
  (void)rsmi_dev_memory_busy_percent_get(dv, &u32);
  (void)rsmi_dev_memory_usage_get(dv, RSMI_MEM_TYPE_VRAM, &u64);
  (void)rsmi_dev_memory_usage_get(dv, RSMI_MEM_TYPE_VIS_VRAM, &u64);
  (void)rsmi_dev_memory_usage_get(dv, RSMI_MEM_TYPE_GTT, &u64);
  (void)rsmi_dev_fan_rpms_get(dv, 0, &value);
  (void)rsmi_dev_fan_speed_get(dv, 0, &value);
  (void)rsmi_dev_volt_metric_get(dv, RSMI_VOLT_TYPE_VDDGFX, RSMI_VOLT_CURRENT, &value);
  (void)rsmi_dev_perf_level_get(dv, &level);
  (void)rsmi_dev_pci_replay_counter_get(dv, &u64);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(10, std::atoi(argv[1])) : 2000;
  using namespace hipstack::smi;
  const System system = System::open();
  const auto devices = system.devices();
  if (devices.empty()) {
    std::fprintf(stderr, "bench_sample: no GPUs under /sys (run it through bench/run.sh)\n");
    return 1;
  }
  SampleOptions live;
  SampleOptions all;
  all.identity = all.static_info = all.live = true;
#ifdef HIPSTACK_BENCH_ROCM_SMI
  const bool have_rsmi = rsmi_init(0) == RSMI_STATUS_SUCCESS;
  uint32_t rsmi_devices = 0;
  if (have_rsmi) (void)rsmi_num_monitor_devices(&rsmi_devices);
#else
  const bool have_rsmi = false;
  const uint32_t rsmi_devices = 0;
#endif
  std::printf("%-4s %-14s %16s %16s %18s %8s\n", "gpu", "bdf", "hipstack live us", "hipstack all us",
              "rocm_smi_lib us", "ratio");
  for (const auto& d : devices) {
    const double ours = median_us(iterations, [&] { (void)system.sample(d.index, live); });
    const double ours_all = median_us(iterations / 4, [&] { (void)system.sample(d.index, all); });
    double peer = 0;
#ifdef HIPSTACK_BENCH_ROCM_SMI
    if (have_rsmi && d.index < rsmi_devices) peer = median_us(iterations, [&] { rocm_smi_sample(d.index); });
#endif
    if (peer > 0) {
      std::printf("%-4u %-14s %16.1f %16.1f %18.1f %7.1fx\n", d.index, d.bdf.c_str(), ours, ours_all, peer, peer / ours);
    } else {
      std::printf("%-4u %-14s %16.1f %16.1f %18s %8s\n", d.index, d.bdf.c_str(), ours, ours_all, "n/a", "-");
    }
  }
  if (!have_rsmi) std::printf("rocm_smi_lib: not available in this build or rsmi_init failed\n");
  return 0;
}
