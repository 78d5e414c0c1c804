// GPU Performance Monitoring: sample buffers, samples of a device, and metrics between two samples.
// A metric's value is the script's `N.gpm.metric.<id>` whatever the two samples (they need only be
// two filled samples of one device, the first taken before the second), so every path of a reader
// can be scripted: a value, a per-metric error, a failing call, no GPM at all.
#include <memory>

#include "fake_state.hpp"

namespace fake_nvml {

using namespace detail;

namespace {

// NVML_GPM_METRIC_MAX of CUDA 13's nvml.h: it bounds the ids and is the length of the metrics array
// in nvmlGpmMetricsGet_t as a driver built on that header declares it.
constexpr unsigned kLargestMetricId = 333;
constexpr unsigned kDeclaredMetrics = 333;

nvmlGpmSample_st* live_sample(GpmSample sample) {
  auto it = state().gpm_samples.find(sample);
  return it == state().gpm_samples.end() ? nullptr : it->second.get();
}

}  // namespace

extern "C" Return fake_nvml_impl_gpm_query_support(Device device, GpmSupport* support) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!support) return kErrorInvalidArgument;
  if (support->version != kGpmSupportVersion) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  FAKE_NVML_SCRIPTED("gpm_query_support");
  const std::string* v = find(d, "gpm.supported");
  if (!v) return kErrorNotSupported;
  support->isSupportedDevice = *parse_bool(*v) ? 1 : 0;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_gpm_sample_alloc(GpmSample* sample) {
  FAKE_NVML_ENTER_GLOBAL();
  if (!sample) return kErrorInvalidArgument;
  if (Return e = decode_return(find("gpm_sample_alloc.error"))) return e;
  auto owned = std::make_unique<nvmlGpmSample_st>();
  *sample = owned.get();
  state().gpm_samples.emplace(owned.get(), std::move(owned));
  return kSuccess;
}

extern "C" Return fake_nvml_impl_gpm_sample_free(GpmSample sample) {
  FAKE_NVML_ENTER_GLOBAL();
  auto it = state().gpm_samples.find(sample);
  if (it == state().gpm_samples.end()) return kErrorInvalidArgument;
  state().gpm_samples.erase(it);
  return kSuccess;
}

extern "C" Return fake_nvml_impl_gpm_sample_get(Device device, GpmSample sample) {
  FAKE_NVML_ENTER_DEVICE(device);
  nvmlGpmSample_st* s = live_sample(sample);
  if (!s) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("gpm_sample_get");
  const std::string* v = find(d, "gpm.supported");
  if (!v || !*parse_bool(*v)) return kErrorNotSupported;
  s->device = d;
  s->sequence = ++state().gpm_sequence;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_gpm_metrics_get(GpmMetricsGet* request) {
  FAKE_NVML_ENTER_GLOBAL();
  if (!request) return kErrorInvalidArgument;
  if (request->version != kGpmMetricsGetVersion) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  if (request->numMetrics == 0 || request->numMetrics > kDeclaredMetrics) return kErrorInvalidArgument;
  const nvmlGpmSample_st* first = live_sample(request->sample1);
  const nvmlGpmSample_st* second = live_sample(request->sample2);
  if (!first || !second || !first->device || first->device != second->device || first->sequence >= second->sequence) {
    return kErrorInvalidArgument;
  }
  if (!is_live(const_cast<Device>(first->device))) return kErrorInvalidArgument;  // a device of an earlier init
  const DeviceState* d = first->device;
  FAKE_NVML_SCRIPTED("gpm_metrics_get");
  for (unsigned i = 0; i < request->numMetrics; ++i) {
    GpmMetric& m = request->metrics[i];
    m.value = 0;
    m.metricInfo = {};
    if (m.metricId == 0 || m.metricId > kLargestMetricId) {
      m.nvmlReturn = kErrorInvalidArgument;
      continue;
    }
    const std::string key = "gpm.metric." + std::to_string(m.metricId);
    if (Return e = decode_return(find(d, key + ".error"))) {
      m.nvmlReturn = e;
      continue;
    }
    const std::string* v = find(d, key);
    if (!v) {
      m.nvmlReturn = kErrorNotSupported;
      continue;
    }
    m.value = *parse_real(*v);
    m.nvmlReturn = kSuccess;
  }
  // The version stayed 1 while NVML's array grew from 98 to 333 entries, so a driver may treat any
  // caller's request as its own full-size struct: this one clears the names of the entries past
  // numMetrics, which overruns (and fails under ASan) a caller that passes a shorter array.
  for (unsigned i = request->numMetrics; i < kDeclaredMetrics; ++i) request->metrics[i].metricInfo = {};
  return kSuccess;
}

#define FAKE_NVML_DEFINED_HERE_gpm_query_support FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_gpm_sample_alloc FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_gpm_sample_free FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_gpm_sample_get FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_gpm_metrics_get FAKE_NVML_PROBE()
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE)

}  // namespace fake_nvml
