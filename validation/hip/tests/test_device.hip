// test_device.hip: conformance of kernel launch (<<<>>>, hipLaunchKernelGGL, hipLaunchKernel,
// cooperative), function attributes and occupancy, and the device side: indexing, shared memory,
// atomics, warp shuffles and ballot with HIP's width argument, math; and peer access.
#include "conformance.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

using conformance::context;

namespace {

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count, int fill = 0) : n(count) {
    CHECK_HIP(hipMalloc(&ptr, n * sizeof(T)));
    CHECK_HIP(hipMemset(ptr, fill, n * sizeof(T)));
  }
  ~DeviceBuffer() { (void)hipFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<T> read() const {
    std::vector<T> out(n);
    CHECK_HIP(hipMemcpy(out.data(), ptr, n * sizeof(T), hipMemcpyDeviceToHost));
    return out;
  }
};

// Each thread of a 3D grid writes its flat id at its flat position, spelled with HIP's index macros.
__global__ void flat_ids(unsigned* out) {
  const unsigned block = hipBlockIdx_x + hipGridDim_x * (hipBlockIdx_y + hipGridDim_y * hipBlockIdx_z);
  const unsigned threads = hipBlockDim_x * hipBlockDim_y * hipBlockDim_z;
  const unsigned thread = hipThreadIdx_x + hipBlockDim_x * (hipThreadIdx_y + hipBlockDim_y * hipThreadIdx_z);
  out[block * threads + thread] = block * threads + thread + 1;
}

template <class T, int Scale>
__global__ void scale(const T* in, T* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * Scale;
}

__device__ int launched_without_arguments;
__global__ void set_flag() { launched_without_arguments = 1; }

// Block sums: one in dynamic shared memory, one in a static __shared__ array; both tree reductions.
__global__ void block_sum_dynamic(const int* in, int* out) {
  HIP_DYNAMIC_SHARED(int, partial)
  partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

__global__ void block_sum_static(const int* in, int* out) {
  __shared__ int partial[256];
  partial[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  for (unsigned stride = 128; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

#ifdef HIPSTACK_HIP_NVIDIA
__global__ void big_shared(int* out) {
  HIP_DYNAMIC_SHARED(int, buffer)
  buffer[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}
#endif

struct AtomicResults {
  int i_sum;
  unsigned long long u64_sum;
  float f_sum;
  double d_sum;
  int i_max;
  int i_min;
  unsigned inc_wrap;
  int cas_count;
  unsigned and_bits;
  unsigned or_bits;
  unsigned xor_bits;
  int exch;
  int sub;
  float unsafe_sum;
};

__global__ void atomics(AtomicResults* r, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&r->i_sum, i);
  atomicAdd(&r->u64_sum, static_cast<unsigned long long>(i) << 20);
  atomicAdd(&r->f_sum, 1.0f);
  atomicAdd(&r->d_sum, 0.5);
  atomicMax(&r->i_max, i);
  atomicMin(&r->i_min, -i);
  atomicInc(&r->inc_wrap, 999u);  // counts 0..999 then wraps to 0
  int old = r->cas_count, seen;
  while ((seen = atomicCAS(&r->cas_count, old, old + 1)) != old) old = seen;
  atomicAnd(&r->and_bits, ~(1u << (i % 32)) | (i % 64 < 32 ? 0u : ~0u));
  atomicOr(&r->or_bits, 1u << (i % 32));
  atomicXor(&r->xor_bits, 1u << (i % 32));
  atomicExch(&r->exch, 77);
  atomicSub(&r->sub, 2);
  unsafeAtomicAdd(&r->unsafe_sum, 2.0f);
}

// out[lane] for every lane of every warp in one block: HIP's shuffles with the given width.
template <class T>
__global__ void shuffles(T* shfl, T* up, T* down, T* xr, int width, int src, int delta) {
  const T value = static_cast<T>(1000 + threadIdx.x);
  shfl[threadIdx.x] = __shfl(value, src, width);
  up[threadIdx.x] = __shfl_up(value, static_cast<unsigned>(delta), width);
  down[threadIdx.x] = __shfl_down(value, static_cast<unsigned>(delta), width);
  xr[threadIdx.x] = __shfl_xor(value, delta, width);
}

__global__ void votes(unsigned long long* ballots, int* any_all, unsigned* lanes) {
  const int lane = static_cast<int>(threadIdx.x) % warpSize;
  const unsigned long long b = __ballot(lane % 3 == 0);
  const int a1 = __any(lane == 5), a0 = __any(0), l1 = __all(lane < warpSize), l0 = __all(lane != 0);
  lanes[threadIdx.x] = __lane_id();
  if (lane == 0) {
    const int warp = static_cast<int>(threadIdx.x) / warpSize;
    ballots[warp] = b;
    any_all[warp * 5 + 0] = a1;
    any_all[warp * 5 + 1] = a0;
    any_all[warp * 5 + 2] = l1;
    any_all[warp * 5 + 3] = l0;
    any_all[warp * 5 + 4] = __popcll(b);
  }
}

__global__ void math(const float* x, float* f, const double* y, double* d) {
  const int i = threadIdx.x;
  f[i * 8 + 0] = sinf(x[i]);
  f[i * 8 + 1] = cosf(x[i]);
  f[i * 8 + 2] = expf(x[i]);
  f[i * 8 + 3] = logf(x[i]);
  f[i * 8 + 4] = sqrtf(x[i]);
  f[i * 8 + 5] = fmaf(x[i], 3.0f, 0.25f);
  f[i * 8 + 6] = rsqrtf(x[i]);
  f[i * 8 + 7] = __expf(x[i]);
  d[i * 4 + 0] = sin(y[i]);
  d[i * 4 + 1] = exp(y[i]);
  d[i * 4 + 2] = sqrt(y[i]);
  d[i * 4 + 3] = pow(y[i], 1.5);
}

__global__ void cooperative_fill(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<int>(blockIdx.x);
}

}  // namespace

CONFORMANCE_CASE(launch_forms) {
  // 3D grid and block: every thread writes once, where its flat id says.
  const dim3 grid(3, 2, 4), block(8, 4, 2);
  const size_t total = size_t{3} * 2 * 4 * 8 * 4 * 2;
  DeviceBuffer<unsigned> ids(total);
  flat_ids<<<grid, block>>>(ids.ptr);
  CHECK_HIP(hipGetLastError());
  std::vector<unsigned> got = ids.read();
  for (size_t i = 0; i < total; ++i) CHECK_EQ(got[i], static_cast<unsigned>(i + 1));
  // hipLaunchKernelGGL with a template kernel (HIP_KERNEL_NAME), and with no kernel arguments.
  const int n = 1000;
  DeviceBuffer<int> in(n), out(n);
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i - 500;
  CHECK_HIP(hipMemcpy(in.ptr, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<int, 3>), dim3((n + 127) / 128), dim3(128), 0, nullptr, in.ptr, out.ptr, n);
  CHECK_HIP(hipGetLastError());
  std::vector<int> scaled = out.read();
  for (int i = 0; i < n; ++i) CHECK_EQ(scaled[i], 3 * (i - 500));
  hipLaunchKernelGGL(set_flag, dim3(1), dim3(1), 0, nullptr);
  CHECK_HIP(hipGetLastError());
  int flag = 0;
  CHECK_HIP(hipMemcpyFromSymbol(&flag, HIP_SYMBOL(launched_without_arguments), sizeof flag, 0, hipMemcpyDeviceToHost));
  CHECK_EQ(flag, 1);
  // hipLaunchKernel: the kernel by address, arguments as an array of pointers.
  const int* in_ptr = in.ptr;
  int* out_ptr = out.ptr;
  int count = n;
  void* args[] = {&in_ptr, &out_ptr, &count};
  CHECK_HIP(hipLaunchKernel(reinterpret_cast<const void*>(&scale<int, -2>), dim3((n + 255) / 256), dim3(256), args, 0,
                            nullptr));
  scaled = out.read();
  for (int i = 0; i < n; ++i) CHECK_EQ(scaled[i], -2 * (i - 500));
  // A block larger than the device allows is refused at launch (CUDA 13 says invalid value).
  flat_ids<<<dim3(1), dim3(static_cast<unsigned>(context().prop.maxThreadsPerBlock) * 2)>>>(ids.ptr);
  const hipError_t refused = hipGetLastError();
  CHECK(refused == hipErrorInvalidConfiguration || refused == hipErrorInvalidValue);
  CHECK_EQ(hipGetLastError(), hipSuccess);
}

CONFORMANCE_CASE(shared_memory_reduction) {
  const int blocks = 64, threads = 256;
  std::vector<int> host(blocks * threads);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int>((i * 37) % 1001) - 500;
  DeviceBuffer<int> in(host.size()), dynamic_sums(blocks), static_sums(blocks);
  CHECK_HIP(hipMemcpy(in.ptr, host.data(), host.size() * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(block_sum_dynamic, dim3(blocks), dim3(threads), threads * sizeof(int), nullptr, in.ptr,
                     dynamic_sums.ptr);
  hipLaunchKernelGGL(block_sum_static, dim3(blocks), dim3(threads), 0, nullptr, in.ptr, static_sums.ptr);
  CHECK_HIP(hipGetLastError());
  const std::vector<int> a = dynamic_sums.read(), b = static_sums.read();
  for (int blk = 0; blk < blocks; ++blk) {
    int expected = 0;
    for (int t = 0; t < threads; ++t) expected += host[blk * threads + t];
    CHECK_EQ(a[blk], expected);
    CHECK_EQ(b[blk], expected);
  }
}

CONFORMANCE_CASE(function_attributes_and_occupancy) {
  hipFuncAttributes attributes{};
  CHECK_HIP(hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&block_sum_static)));
  CHECK(attributes.maxThreadsPerBlock >= 256);
  CHECK(attributes.sharedSizeBytes >= 256 * sizeof(int));  // the static __shared__ array
  const int per_sm_threads = context().prop.maxThreadsPerMultiProcessor;
  int blocks = 0;
  CHECK_HIP(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(&block_sum_dynamic),
                                                         256, 0));
  CHECK(blocks >= 1 && blocks <= per_sm_threads / 256);
  // Dynamic shared memory limits residency: 3/4 of a multiprocessor's worth leaves room for one block.
  const size_t big = context().prop.maxSharedMemoryPerMultiProcessor * 3 / 4;
  int blocks_big = 0;
  CHECK_HIP(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      &blocks_big, reinterpret_cast<const void*>(&block_sum_dynamic), 256,
      big < context().prop.sharedMemPerBlock ? big : context().prop.sharedMemPerBlock, hipOccupancyDefault));
  CHECK(blocks_big >= 1 && blocks_big < blocks);
  int grid = 0, block = 0;
  CHECK_HIP(hipOccupancyMaxPotentialBlockSize(&grid, &block, block_sum_dynamic, 0, 0));
  CHECK(block >= context().prop.warpSize && block <= context().prop.maxThreadsPerBlock);
  CHECK_EQ(block % context().prop.warpSize, 0);
  CHECK(grid >= context().prop.multiProcessorCount);
  CHECK_HIP(hipFuncSetCacheConfig(reinterpret_cast<const void*>(&block_sum_static), hipFuncCachePreferShared));
#ifdef HIPSTACK_HIP_NVIDIA
  // On NVIDIA more than 48 KiB of dynamic shared memory needs the opt-in attribute first.
  const int optin = static_cast<int>(context().prop.sharedMemPerBlockOptin);
  if (optin > 48 * 1024) {
    DeviceBuffer<int> out(256);
    hipLaunchKernelGGL(big_shared, dim3(1), dim3(256), static_cast<size_t>(optin), nullptr, out.ptr);
    CHECK(hipGetLastError() != hipSuccess);
    CHECK_HIP(hipFuncSetAttribute(reinterpret_cast<const void*>(&big_shared),
                                  hipFuncAttributeMaxDynamicSharedMemorySize, optin));
    hipLaunchKernelGGL(big_shared, dim3(1), dim3(256), static_cast<size_t>(optin), nullptr, out.ptr);
    CHECK_HIP(hipGetLastError());
    const std::vector<int> got = out.read();
    for (int i = 0; i < 256; ++i) CHECK_EQ(got[i], 255 - i);
  }
#endif
}

CONFORMANCE_CASE(cooperative_launch) {
  if (!context().prop.cooperativeLaunch) return;
  int per_sm = 0;
  CHECK_HIP(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(&cooperative_fill),
                                                         128, 0));
  const unsigned blocks = static_cast<unsigned>(per_sm * context().prop.multiProcessorCount);
  DeviceBuffer<int> out(blocks * 128, 0xff);
  int* ptr = out.ptr;
  void* args[] = {&ptr};
  CHECK_HIP(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(&cooperative_fill), dim3(blocks), dim3(128), args,
                                       0, nullptr));
  const std::vector<int> got = out.read();
  for (unsigned i = 0; i < blocks * 128; i += 127) CHECK_EQ(got[i], static_cast<int>(i / 128));
  // All blocks must be resident at once: one more wave than fits is refused.
  CHECK_HIP_ERROR(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(&cooperative_fill), dim3(blocks * 2),
                                             dim3(128), args, 0, nullptr),
                  hipErrorCooperativeLaunchTooLarge);
  (void)hipGetLastError();
}

CONFORMANCE_CASE(atomics_sums) {
  const int n = 1 << 20;
  AtomicResults init{};
  init.i_max = -1;
  init.i_min = 1;
  init.and_bits = ~0u;
  DeviceBuffer<AtomicResults> r(1);
  CHECK_HIP(hipMemcpy(r.ptr, &init, sizeof init, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(atomics, dim3(n / 256), dim3(256), 0, nullptr, r.ptr, n);
  CHECK_HIP(hipGetLastError());
  const AtomicResults got = r.read()[0];
  long long i_sum = 0;
  unsigned long long u64 = 0;
  for (long long i = 0; i < n; ++i) {
    i_sum += i;
    u64 += static_cast<unsigned long long>(i) << 20;
  }
  CHECK_EQ(got.i_sum, static_cast<int>(static_cast<unsigned>(i_sum)));  // wraps as 32-bit does
  CHECK_EQ(got.u64_sum, u64);
  CHECK_EQ(got.f_sum, static_cast<float>(n));  // exact: n <= 2^24
  CHECK_EQ(got.d_sum, n * 0.5);
  CHECK_EQ(got.i_max, n - 1);
  CHECK_EQ(got.i_min, -(n - 1));
  CHECK_EQ(got.inc_wrap, static_cast<unsigned>(n % 1000));
  CHECK_EQ(got.cas_count, n);
  CHECK_EQ(got.and_bits, 0u);  // every bit is cleared by some thread with i % 64 < 32
  CHECK_EQ(got.or_bits, ~0u);
  CHECK_EQ(got.xor_bits, 0u);  // each bit flipped n/32 times, an even number
  CHECK_EQ(got.exch, 77);
  CHECK_EQ(got.sub, -2 * n);
  CHECK_EQ(got.unsafe_sum, 2.0f * n);
}

template <class T>
static void check_shuffles(int width, int src, int delta) {
  const int threads = 2 * context().prop.warpSize;  // two warps (one wavefront of 64 on AMD wave64)
  DeviceBuffer<T> a(threads), b(threads), c(threads), d(threads);
  hipLaunchKernelGGL(shuffles<T>, dim3(1), dim3(threads), 0, nullptr, a.ptr, b.ptr, c.ptr, d.ptr, width, src, delta);
  CHECK_HIP(hipGetLastError());
  const std::vector<T> shfl = a.read(), up = b.read(), down = c.read(), xr = d.read();
  for (int t = 0; t < threads; ++t) {
    const int segment = (t / width) * width, in_segment = t - segment;
    const auto value = [](int thread) { return static_cast<T>(1000 + thread); };
    CHECK_EQ(shfl[t], value(segment + src % width));
    CHECK_EQ(up[t], in_segment >= delta ? value(t - delta) : value(t));
    CHECK_EQ(down[t], in_segment + delta < width ? value(t + delta) : value(t));
    CHECK_EQ(xr[t], value(segment + (in_segment ^ delta)));
  }
}

CONFORMANCE_CASE(warp_shuffles_with_width) {
  for (int width = 8; width <= context().prop.warpSize; width *= 2) {
    check_shuffles<int>(width, 3, 1);
    check_shuffles<int>(width, width - 1, width / 2);
    check_shuffles<unsigned>(width, 5, 3);
    check_shuffles<float>(width, 2, 2);
    check_shuffles<double>(width, 7, 4);
    check_shuffles<long long>(width, 1, 5);
  }
}

CONFORMANCE_CASE(warp_ballot_any_all) {
  const int warp = context().prop.warpSize, warps = 2, threads = warp * warps;
  DeviceBuffer<unsigned long long> ballots(warps);
  DeviceBuffer<int> any_all(warps * 5);
  DeviceBuffer<unsigned> lanes(threads);
  hipLaunchKernelGGL(votes, dim3(1), dim3(threads), 0, nullptr, ballots.ptr, any_all.ptr, lanes.ptr);
  CHECK_HIP(hipGetLastError());
  unsigned long long expected = 0;
  int expected_count = 0;
  for (int lane = 0; lane < warp; ++lane)
    if (lane % 3 == 0) {
      expected |= 1ull << lane;
      ++expected_count;
    }
  const std::vector<unsigned long long> b = ballots.read();
  const std::vector<int> v = any_all.read();
  const std::vector<unsigned> l = lanes.read();
  for (int w = 0; w < warps; ++w) {
    CHECK_EQ(b[w], expected);  // 64-bit; lanes past the warp's width (32..63 on NVIDIA) are 0
    if (warp == 32) CHECK_EQ(b[w] >> 32, 0ull);
    CHECK_EQ(v[w * 5 + 0], 1);
    CHECK_EQ(v[w * 5 + 1], 0);
    CHECK_EQ(v[w * 5 + 2], 1);
    CHECK_EQ(v[w * 5 + 3], 0);
    CHECK_EQ(v[w * 5 + 4], expected_count);
  }
  for (int t = 0; t < threads; ++t) CHECK_EQ(l[t], static_cast<unsigned>(t % warp));
}

CONFORMANCE_CASE(device_math) {
  const int n = 64;
  std::vector<float> x(n);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.05f + 0.37f * static_cast<float>(i);
    y[i] = 0.01 + 0.29 * i;
  }
  DeviceBuffer<float> dx(n), df(n * 8);
  DeviceBuffer<double> dy(n), dd(n * 4);
  CHECK_HIP(hipMemcpy(dx.ptr, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(dy.ptr, y.data(), n * sizeof(double), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(math, dim3(1), dim3(n), 0, nullptr, dx.ptr, df.ptr, dy.ptr, dd.ptr);
  CHECK_HIP(hipGetLastError());
  const std::vector<float> f = df.read();
  const std::vector<double> d = dd.read();
  const auto close = [](double got, double want, double rel) {
    return std::fabs(got - want) <= rel * std::fmax(std::fabs(want), 1e-6);
  };
  for (int i = 0; i < n; ++i) {
    const double xi = x[i], yi = y[i];
    CHECK(close(f[i * 8 + 0], std::sin(xi), 1e-5) || std::fabs(f[i * 8 + 0] - std::sin(xi)) < 1e-6);
    CHECK(close(f[i * 8 + 1], std::cos(xi), 1e-5) || std::fabs(f[i * 8 + 1] - std::cos(xi)) < 1e-6);
    CHECK(close(f[i * 8 + 2], std::exp(xi), 1e-6));
    CHECK(close(f[i * 8 + 3], std::log(xi), 1e-6) || std::fabs(f[i * 8 + 3] - std::log(xi)) < 1e-6);
    CHECK(close(f[i * 8 + 4], std::sqrt(xi), 1e-7));
    CHECK_EQ(f[i * 8 + 5], std::fma(x[i], 3.0f, 0.25f));  // fused: one rounding, same on both sides
    CHECK(close(f[i * 8 + 6], 1.0 / std::sqrt(xi), 1e-6));
    CHECK(close(f[i * 8 + 7], std::exp(xi), 1e-4));  // the fast intrinsic is less accurate
    CHECK(close(d[i * 4 + 0], std::sin(yi), 1e-14) || std::fabs(d[i * 4 + 0] - std::sin(yi)) < 1e-15);
    CHECK(close(d[i * 4 + 1], std::exp(yi), 1e-15));
    CHECK_EQ(d[i * 4 + 2], std::sqrt(yi));  // correctly rounded on both sides
    CHECK(close(d[i * 4 + 3], std::pow(yi, 1.5), 1e-15));
  }
}

CONFORMANCE_CASE(peer_access) {
  const int self = context().device;
  int can = -1;
  // A device is not its own peer: either answer 0 or refuse the question.
  const hipError_t e = hipDeviceCanAccessPeer(&can, self, self);
  CHECK(e == hipErrorInvalidDevice || (e == hipSuccess && can == 0));
  (void)hipGetLastError();
  CHECK(hipDeviceEnablePeerAccess(self, 0) != hipSuccess);
  (void)hipGetLastError();
  for (int peer = 0; peer < context().device_count; ++peer) {
    if (peer == self) continue;
    CHECK_HIP(hipDeviceCanAccessPeer(&can, self, peer));
    CHECK(can == 0 || can == 1);
    if (!can) continue;
    CHECK_HIP(hipDeviceEnablePeerAccess(peer, 0));
    CHECK_HIP_ERROR(hipDeviceEnablePeerAccess(peer, 0), hipErrorPeerAccessAlreadyEnabled);
    (void)hipGetLastError();
    // A copy between the two devices, both ways, checked on the host.
    const size_t n = 1 << 20;
    DeviceBuffer<int> here(n);
    std::vector<int> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i ^ 0x5a5a);
    CHECK_HIP(hipMemcpy(here.ptr, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
    CHECK_HIP(hipSetDevice(peer));
    int* there = nullptr;
    CHECK_HIP(hipMalloc(&there, n * sizeof(int)));
    CHECK_HIP(hipSetDevice(self));
    CHECK_HIP(hipMemcpyPeer(there, peer, here.ptr, self, n * sizeof(int)));
    CHECK_HIP(hipMemset(here.ptr, 0, n * sizeof(int)));
    CHECK_HIP(hipMemcpyPeerAsync(here.ptr, self, there, peer, n * sizeof(int), nullptr));
    CHECK_HIP(hipDeviceSynchronize());
    CHECK(here.read() == host);
    CHECK_HIP(hipFree(there));
    CHECK_HIP(hipDeviceDisablePeerAccess(peer));
    CHECK_HIP_ERROR(hipDeviceDisablePeerAccess(peer), hipErrorPeerAccessNotEnabled);
    (void)hipGetLastError();
  }
}
