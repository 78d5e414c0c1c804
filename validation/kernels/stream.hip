// stream: device memory bandwidth in the BabelStream style: copy, mul, add, triad and dot over three
// arrays of doubles, each kernel timed by events; the best of the repeats (after one warm-up) is the
// figure, as BabelStream reports it, beside the mean and the peak from the device's memory clock and
// bus width. The arrays are checked against the host's replay of the same arithmetic at the end.
// Usage: stream [--size ELEMENTS] [--repeats N] [--unroll 1|2|4|8] [--device N] [--json]
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

constexpr unsigned kBlock = 1024;  // threads per block for the element-wise kernels
constexpr unsigned kDotBlock = 1024;
constexpr double kScalar = 0.4;
constexpr double kInitA = 0.1, kInitB = 0.2, kInitC = 0.0;

__global__ void init(double* a, double* b, double* c, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    a[i] = kInitA;
    b[i] = kInitB;
    c[i] = kInitC;
  }
}
// Element-wise kernels: each thread handles Unroll elements one block-width apart (coalesced), loading
// all of them before storing any, so more loads are in flight per thread. Unroll 1 is BabelStream's
// one-element-per-thread form; with it copy and mul stay near 82% of an H100's peak, with 2 they reach
// the ~91% that add, triad and dot reach (docs/validation.md).
#define STREAM_KERNEL(name, params, loads, store)                                         \
  template <int Unroll>                                                                   \
  __global__ void name params {                                                           \
    const size_t base = blockIdx.x * static_cast<size_t>(blockDim.x) * Unroll + threadIdx.x; \
    double v[Unroll];                                                                     \
    _Pragma("unroll") for (int u = 0; u < Unroll; ++u) {                                  \
      const size_t i = base + static_cast<size_t>(u) * blockDim.x;                        \
      if (i < n) v[u] = loads;                                                            \
    }                                                                                     \
    _Pragma("unroll") for (int u = 0; u < Unroll; ++u) {                                  \
      const size_t i = base + static_cast<size_t>(u) * blockDim.x;                        \
      if (i < n) store = v[u];                                                            \
    }                                                                                     \
  }
STREAM_KERNEL(copy, (const double* __restrict__ a, double* __restrict__ c, size_t n), a[i], c[i])
STREAM_KERNEL(mul, (double* __restrict__ b, const double* __restrict__ c, size_t n), kScalar * c[i], b[i])
STREAM_KERNEL(add, (const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, size_t n),
              a[i] + b[i], c[i])
STREAM_KERNEL(triad, (double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c, size_t n),
              b[i] + kScalar * c[i], a[i])
#undef STREAM_KERNEL

// Each block strides over the arrays and reduces in shared memory; the host adds the block sums.
__global__ void dot(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ sums, size_t n) {
  __shared__ double partial[kDotBlock];
  double sum = 0.0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    sum += a[i] * b[i];
  partial[threadIdx.x] = sum;
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    __syncthreads();
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

template <int Unroll>
void launch(int which, unsigned grid, double* a, double* b, double* c, size_t n) {
  switch (which) {
    case 0: hipLaunchKernelGGL(HIP_KERNEL_NAME(copy<Unroll>), dim3(grid), dim3(kBlock), 0, nullptr, a, c, n); break;
    case 1: hipLaunchKernelGGL(HIP_KERNEL_NAME(mul<Unroll>), dim3(grid), dim3(kBlock), 0, nullptr, b, c, n); break;
    case 2: hipLaunchKernelGGL(HIP_KERNEL_NAME(add<Unroll>), dim3(grid), dim3(kBlock), 0, nullptr, a, b, c, n); break;
    default: hipLaunchKernelGGL(HIP_KERNEL_NAME(triad<Unroll>), dim3(grid), dim3(kBlock), 0, nullptr, a, b, c, n); break;
  }
}

struct Result {
  const char* name;
  int arrays_moved;  // arrays read plus written per element
  std::vector<float> ms;
};

// The arrays on the device, and the grids that cover them.
struct StreamArrays {
  StreamArrays(const hipDeviceProp_t& prop, size_t elements, int unroll) : n(elements), bytes(elements * sizeof(double)) {
    HIP_CHECK(hipMalloc(&a, bytes));
    HIP_CHECK(hipMalloc(&b, bytes));
    HIP_CHECK(hipMalloc(&c, bytes));
    grid = static_cast<unsigned>((n + size_t{kBlock} * unroll - 1) / (size_t{kBlock} * unroll));
    dot_grid = static_cast<unsigned>(prop.multiProcessorCount) * 4;
    HIP_CHECK(hipMalloc(&sums, dot_grid * sizeof(double)));
    const unsigned init_grid = static_cast<unsigned>((n + kBlock - 1) / kBlock);
    hipLaunchKernelGGL(init, dim3(init_grid), dim3(kBlock), 0, nullptr, a, b, c, n);
    HIP_CHECK(hipGetLastError());
  }
  ~StreamArrays() {
    HIP_CHECK(hipFree(a));
    HIP_CHECK(hipFree(b));
    HIP_CHECK(hipFree(c));
    HIP_CHECK(hipFree(sums));
  }
  StreamArrays(const StreamArrays&) = delete;
  StreamArrays& operator=(const StreamArrays&) = delete;

  size_t n, bytes;
  unsigned grid = 0, dot_grid = 0;
  double *a = nullptr, *b = nullptr, *c = nullptr, *sums = nullptr;
};

// Times each kernel `repeats` times (after a warm-up round that is not counted) into `results`;
// the dot product of the last round, summed on the host.
double time_kernels(const StreamArrays& s, int unroll, int repeats, Result (&results)[5]) {
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  std::vector<double> block_sums(s.dot_grid);
  double dot_sum = 0.0;
  for (int k = 0; k <= repeats; ++k) {  // k == 0 warms up and is not counted
    for (int which = 0; which < 5; ++which) {
      HIP_CHECK(hipEventRecord(start, nullptr));
      if (which == 4) hipLaunchKernelGGL(dot, dim3(s.dot_grid), dim3(kDotBlock), 0, nullptr, s.a, s.b, s.sums, s.n);
      else if (unroll == 1) launch<1>(which, s.grid, s.a, s.b, s.c, s.n);
      else if (unroll == 2) launch<2>(which, s.grid, s.a, s.b, s.c, s.n);
      else if (unroll == 4) launch<4>(which, s.grid, s.a, s.b, s.c, s.n);
      else launch<8>(which, s.grid, s.a, s.b, s.c, s.n);
      HIP_CHECK(hipGetLastError());
      HIP_CHECK(hipEventRecord(stop, nullptr));
      HIP_CHECK(hipEventSynchronize(stop));
      float ms = 0;
      HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
      if (k > 0) results[which].ms.push_back(ms);
    }
    HIP_CHECK(hipMemcpy(block_sums.data(), s.sums, s.dot_grid * sizeof(double), hipMemcpyDeviceToHost));
    dot_sum = 0.0;
    for (double v : block_sums) dot_sum += v;
  }
  return dot_sum;
}

struct StreamCheck {
  double worst = 0.0;      // the largest relative error of an element
  double dot_error = 0.0;  // the dot product's relative error
  [[nodiscard]] bool ok() const { return worst < 1e-12 && dot_error < 1e-8; }
};

// Replays the arithmetic on scalars (every element is the same) and checks every element.
StreamCheck check_arrays(const StreamArrays& s, int repeats, double dot_sum) {
  double ga = kInitA, gb = kInitB, gc = kInitC;
  for (int k = 0; k <= repeats; ++k) {
    gc = ga;
    gb = kScalar * gc;
    gc = ga + gb;
    ga = gb + kScalar * gc;
  }
  StreamCheck check;
  std::vector<double> host(s.n);
  const double golds[3] = {ga, gb, gc};
  const double* arrays[3] = {s.a, s.b, s.c};
  for (int k = 0; k < 3; ++k) {
    HIP_CHECK(hipMemcpy(host.data(), arrays[k], s.bytes, hipMemcpyDeviceToHost));
    for (double v : host) check.worst = std::max(check.worst, std::fabs(v - golds[k]) / std::fabs(golds[k]));
  }
  const double gold_dot = ga * gb * static_cast<double>(s.n);
  check.dot_error = std::fabs(dot_sum - gold_dot) / std::fabs(gold_dot);
  return check;
}

}  // namespace

int main(int argc, char** argv) {
  const smoke::Options o = smoke::parse(
      argc, argv, "stream [--size ELEMENTS] [--repeats N] [--unroll 1|2|4|8] [--device N] [--json]", false, true);
  // 2 measured best on an H100 (docs/validation.md: copy 91.6% of peak, against 81.9% for 1 and 90.4% for 4).
  const int unroll = o.unroll ? o.unroll : 2;
  if (unroll != 1 && unroll != 2 && unroll != 4 && unroll != 8) {
    std::fprintf(stderr, "--unroll must be 1, 2, 4 or 8\n");
    return 2;
  }
  const hipDeviceProp_t prop = smoke::open_device(o);
  const size_t n = o.size ? static_cast<size_t>(o.size) : size_t{1} << 27;  // 1 GiB per array
  const int repeats = o.repeats ? o.repeats : 50;
  const StreamArrays arrays(prop, n, unroll);
  const size_t bytes = arrays.bytes;
  Result results[] = {{"copy", 2, {}}, {"mul", 2, {}}, {"add", 3, {}}, {"triad", 3, {}}, {"dot", 2, {}}};
  const double dot_sum = time_kernels(arrays, unroll, repeats, results);
  const StreamCheck check = check_arrays(arrays, repeats, dot_sum);
  const double worst = check.worst, dot_error = check.dot_error;
  const bool ok = check.ok();

  const double peak = smoke::peak_memory_gbps(prop);
  if (o.json) std::printf("{\"test\": \"stream\", \"device\": %s, \"elements\": %zu, \"array_bytes\": %zu, "
                          "\"repeats\": %d, \"unroll\": %d, \"kernels\": [",
                          smoke::device_json(prop, o.device).c_str(), n, bytes, repeats, unroll);
  else std::printf("stream on %s (%s): %zu doubles per array (%.1f MiB), best of %d, unroll %d; peak %.1f GB/s\n"
                   "%-6s %12s %12s %10s %10s %8s\n",
                   prop.name, prop.gcnArchName, n, bytes / 1048576.0, repeats, unroll, peak,
                   "kernel", "best GB/s", "mean GB/s", "min ms", "mean ms", "of peak");
  double triad_best = 0.0;
  for (int i = 0; i < 5; ++i) {
    const Result& r = results[i];
    const float min_ms = *std::min_element(r.ms.begin(), r.ms.end());
    double mean_ms = 0.0;
    for (float m : r.ms) mean_ms += m;
    mean_ms /= static_cast<double>(r.ms.size());
    const double moved = static_cast<double>(r.arrays_moved) * static_cast<double>(bytes);
    const double best = moved / (min_ms * 1e-3) / 1e9, mean = moved / (mean_ms * 1e-3) / 1e9;
    if (i == 3) triad_best = best;
    if (o.json)
      std::printf("%s{\"kernel\": \"%s\", \"bytes_moved\": %.0f, \"best_gbps\": %.1f, \"mean_gbps\": %.1f, "
                  "\"min_ms\": %.4f, \"mean_ms\": %.4f, \"fraction_of_peak\": %.3f}",
                  i ? ", " : "", r.name, moved, best, mean, min_ms, mean_ms, best / peak);
    else
      std::printf("%-6s %12.1f %12.1f %10.4f %10.4f %7.1f%%\n", r.name, best, mean, min_ms, mean_ms, 100.0 * best / peak);
  }
  if (o.json)
    std::printf("], \"triad_fraction_of_peak\": %.3f, \"max_relative_error\": %.3g, \"dot_relative_error\": %.3g, "
                "\"result\": \"%s\"}\n", triad_best / peak, worst, dot_error, ok ? "pass" : "fail");
  else
    std::printf("check: arrays within %.3g, dot within %.3g of the host's replay: %s\n", worst, dot_error,
                ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
