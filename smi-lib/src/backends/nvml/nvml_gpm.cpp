// The WINDOW-kind metrics of an NVIDIA GPU, from GPU Performance Monitoring (GPM, Hopper and later):
// each look takes one GPM sample, and nvmlGpmMetricsGet turns the previous look's sample and this one
// into averages over the time between them. Utilisations come as percent, link rates as MiB/s
// (converted to bytes per second here).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <thread>

#include "../../readings.hpp"
#include "nvml_backend.hpp"

namespace hipstack::smi::detail::nvml {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kMiB = 1024.0 * 1024.0;

// The GPM metrics behind the device-wide WINDOW metrics, with NVML's units per catalogue unit.
struct GpmSource {
  MetricId id;
  unsigned gpm_id;
  double per_unit;  // catalogue value = GPM value * per_unit
  const char* name;
};
constexpr GpmSource kDeviceSources[] = {
    {MetricId::graphics_active, kGpmGraphicsUtil, 1.0, "GRAPHICS_UTIL"},
    {MetricId::sm_active, kGpmSmUtil, 1.0, "SM_UTIL"},
    {MetricId::sm_occupancy, kGpmSmOccupancy, 1.0, "SM_OCCUPANCY"},
    {MetricId::tensor_active, kGpmAnyTensorUtil, 1.0, "ANY_TENSOR_UTIL"},
    {MetricId::fp64_active, kGpmFp64Util, 1.0, "FP64_UTIL"},
    {MetricId::fp32_active, kGpmFp32Util, 1.0, "FP32_UTIL"},
    {MetricId::fp16_active, kGpmFp16Util, 1.0, "FP16_UTIL"},
    {MetricId::dram_active, kGpmDramBwUtil, 1.0, "DRAM_BW_UTIL"},
    {MetricId::pcie_rx_rate, kGpmPcieRxPerSec, kMiB, "PCIE_RX_PER_SEC"},
    {MetricId::pcie_tx_rate, kGpmPcieTxPerSec, kMiB, "PCIE_TX_PER_SEC"},
};

// Whether a sample asked for id (an empty list asks for everything).
// Every WINDOW metric this backend provides fails the same way (with one reason).
void fail_all(ReadingList& list, const SampleOptions& options, int error_code, const std::string& why) {
  for (const GpmSource& s : kDeviceSources) {
    if (asked_for(options, s.id)) list.failed(s.id, error_code, why);
  }
  if (asked_for(options, MetricId::nvlink_rx_rate)) list.failed(MetricId::nvlink_rx_rate, error_code, why);
  if (asked_for(options, MetricId::nvlink_tx_rate)) list.failed(MetricId::nvlink_tx_rate, error_code, why);
}

// NVLinks the GPU has (active or not): links are numbered from 0 until NVML says there are no more.
unsigned count_nvlinks(const Api& api, Device device) {
  if (api.nvlink_state == nullptr) return 0;
  unsigned links = 0;
  for (; links < kNvlinkMaxLinks; ++links) {
    EnableState active = 0;
    const Return code = api.nvlink_state(device, links, &active);
    if (code == kErrorInvalidArgument || code == kErrorNotSupported) break;
  }
  return links;
}

}  // namespace

GpmWindow::~GpmWindow() {
  if (library_ == nullptr || library_->api().gpm_sample_free == nullptr) return;
  for (GpmSample sample : {last_, next_}) {
    if (sample != nullptr) library_->api().gpm_sample_free(sample);
  }
}

// What the GPU offers, asked once: GPM support, the samples, its NVLinks. "" when usable, else why not.
std::string GpmWindow::prepare(const Library& lib, const NvidiaGpu& gpu) {
  if (prepared_) return unusable_;
  prepared_ = true;
  library_ = &lib;
  const Api& api = lib.api();
  if (api.gpm_query_support == nullptr || api.gpm_sample_alloc == nullptr || api.gpm_sample_free == nullptr ||
      api.gpm_sample_get == nullptr || api.gpm_metrics_get == nullptr) {
    unusable_ = fmt::format("GPM: not in {} (a driver older than R520)", lib.path());
    unusable_errno_ = ENOENT;
    return unusable_;
  }
  GpmSupport support{};
  support.version = kGpmSupportVersion;
  const Return code = api.gpm_query_support(gpu.handle, &support);
  if (code != kSuccess) {
    unusable_ = "nvmlGpmQueryDeviceSupport: " + lib.describe(code);
    unusable_errno_ = errno_for(code);
    if (code == kErrorNotSupported) unusable_errno_ = ENOENT;
    prepared_ = code == kErrorNotSupported;  // a passing failure (timeout, busy) is asked again next time
    return unusable_;
  }
  if (support.isSupportedDevice == 0) {
    unusable_ = "nvmlGpmQueryDeviceSupport: this GPU has no GPM (Hopper and later have it)";
    unusable_errno_ = ENOENT;
    return unusable_;
  }
  for (GpmSample* sample : {&last_, &next_}) {
    if (*sample != nullptr) continue;  // kept from an earlier try whose other allocation failed
    if (const Return alloc = api.gpm_sample_alloc(sample); alloc != kSuccess) {
      *sample = nullptr;
      unusable_ = "nvmlGpmSampleAlloc: " + lib.describe(alloc);
      unusable_errno_ = errno_for(alloc);
      prepared_ = false;
      return unusable_;
    }
  }
  links_ = count_nvlinks(api, gpu.handle);
  return {};
}

void GpmWindow::read(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out) {
  const bool any = asked_for(options, MetricId::nvlink_rx_rate) || asked_for(options, MetricId::nvlink_tx_rate) ||
                   std::any_of(std::begin(kDeviceSources), std::end(kDeviceSources),
                               [&options](const GpmSource& s) { return asked_for(options, s.id); });
  if (!any) return;  // no GPM metric asked for: no sample taken
  const std::lock_guard lock(mutex_);
  ReadingList list(out);
  if (const std::string why = prepare(lib, gpu); !why.empty()) return fail_all(list, options, unusable_errno_, why);
  const Api& api = lib.api();
  if (!have_last_) {
    if (const Return code = api.gpm_sample_get(gpu.handle, last_); code != kSuccess) {
      return fail_all(list, options, errno_for(code), "nvmlGpmSampleGet: " + lib.describe(code));
    }
    have_last_ = true;
    last_at_ = Clock::now();
    if (options.window_ms == 0) {
      return fail_all(list, options, ENODATA,
                      "needs two looks: this was the first GPM sample of the window (the next look reports it)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(options.window_ms));
  }
  if (const Return code = api.gpm_sample_get(gpu.handle, next_); code != kSuccess) {
    return fail_all(list, options, errno_for(code), "nvmlGpmSampleGet: " + lib.describe(code));
  }
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - last_at_).count();

  if (!request_) request_ = std::make_unique<GpmMetricsGet>();
  GpmMetricsGet& request = *request_;
  request = GpmMetricsGet{};
  request.version = kGpmMetricsGetVersion;
  request.sample1 = last_;
  request.sample2 = next_;
  struct Slot {
    MetricId id;
    double per_unit;
    std::string name;
    std::string instance;
  };
  std::vector<Slot> slots;
  auto ask = [&](MetricId id, unsigned gpm_id, double per_unit, std::string name, std::string instance = {}) {
    request.metrics[request.numMetrics++].metricId = gpm_id;
    slots.push_back({id, per_unit, std::move(name), std::move(instance)});
  };
  for (const GpmSource& s : kDeviceSources) {
    if (asked_for(options, s.id)) ask(s.id, s.gpm_id, s.per_unit, s.name);
  }
  const bool rx = asked_for(options, MetricId::nvlink_rx_rate);
  const bool tx = asked_for(options, MetricId::nvlink_tx_rate);
  for (unsigned link = 0; link < links_; ++link) {
    const unsigned base = kGpmNvlinkL0RxPerSec + 2 * link;
    if (rx) ask(MetricId::nvlink_rx_rate, base, kMiB, fmt::format("NVLINK_L{}_RX_PER_SEC", link), std::to_string(link));
    if (tx) ask(MetricId::nvlink_tx_rate, base + 1, kMiB, fmt::format("NVLINK_L{}_TX_PER_SEC", link), std::to_string(link));
  }
  if (links_ == 0) {
    if (rx) list.failed(MetricId::nvlink_rx_rate, ENOENT, "the GPU has no NVLink");
    if (tx) list.failed(MetricId::nvlink_tx_rate, ENOENT, "the GPU has no NVLink");
  }
  const Return code = request.numMetrics == 0 ? kSuccess : api.gpm_metrics_get(&request);
  // This look's sample starts the next window, whatever the computation said.
  std::swap(last_, next_);
  last_at_ = now;
  if (code != kSuccess) return fail_all(list, options, errno_for(code), "nvmlGpmMetricsGet: " + lib.describe(code));
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const GpmMetric& m = request.metrics[i];
    const Slot& slot = slots[i];
    if (m.nvmlReturn == kSuccess && (!std::isfinite(m.value) || m.value < 0)) {
      list.malformed(slot.id, fmt::format("nvmlGpmMetricsGet({}): {} is not a share or a rate", slot.name, m.value),
                     slot.instance);
      continue;
    }
    if (m.nvmlReturn != kSuccess) {
      list.failed(slot.id, m.nvmlReturn == kErrorNotSupported ? ENOENT : errno_for(m.nvmlReturn),
                  fmt::format("nvmlGpmMetricsGet({}): {}", slot.name, lib.describe(m.nvmlReturn)), slot.instance);
      continue;
    }
    list.real(slot.id, m.value * slot.per_unit, fmt::format("GPM {} over {:.3f} s", slot.name, seconds), slot.instance);
  }
}

}  // namespace hipstack::smi::detail::nvml
