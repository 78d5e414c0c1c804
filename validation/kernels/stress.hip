// stress: a sustained fp32 load on every compute unit (like DCGM's targeted stress), checked for silent
// data corruption. Launches of an FMA kernel run back to back until --seconds are up, each ~75 ms.
// Each thread iterates 8 independent chains x <- fmaf(x, x, c): the map x^2 + c, chaotic for the c
// chosen here (-1.9921875 to -1.9375, clear of the periodic windows near -1.87 and -1.81, where a
// change dies away), so the values stay within [-2, 2] and a change that survives the next rounding grows. 8
// chains keep the FMA pipes fed rather than waiting on one chain's latency. In floating point two
// orbits of such a map can later merge, which would hide an early error, so every 64 steps each chain
// folds its value's bits into a 32-bit hash, and the hash is the result. fmaf rounds once, exactly as
// IEEE says, on both platforms and on the host, so every result is compared bit for bit with the
// host's replay. A thread's starting values come from one of 16 seeds: the host replays 16 x 8 chains.
// --plant-error flips a bit of one result of the first launch before its check: it must be counted.
// Usage: stress [--seconds S] [--device N] [--json] [--plant-error]
#include "common.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr int kChains = 8;
constexpr int kSeeds = 16;
constexpr unsigned kBlock = 256;
constexpr int kFoldEvery = 64;  // steps between folds into the hash; the iteration count is a multiple of it
constexpr double kLaunchSeconds = 0.075;

// Thread t starts chain k at start_value(t % kSeeds, k) with constant chain_constant(k). Every term is
// a small multiple of a power of two, so both are exact however a compiler contracts them.
__host__ __device__ inline float start_value(int seed, int chain) {
  return -1.5f + 0.0625f * static_cast<float>(seed) + 0.00390625f * static_cast<float>(chain);
}
__host__ __device__ inline float chain_constant(int chain) {
  return -1.9921875f + 0.0078125f * static_cast<float>(chain);
}
__host__ __device__ inline uint32_t fold(uint32_t hash, uint32_t bits) { return hash * 0x9e3779b1u + bits; }

__global__ void fma_chains(uint32_t* out, size_t threads, long long iterations) {
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (t >= threads) return;
  const int seed = static_cast<int>(t % kSeeds);
  float x[kChains], c[kChains];
  uint32_t hash[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) {
    x[k] = start_value(seed, k);
    c[k] = chain_constant(k);
    hash[k] = 0;
  }
  for (long long i = 0; i < iterations; i += kFoldEvery) {
#pragma unroll
    for (int j = 0; j < kFoldEvery; ++j) {
#pragma unroll
      for (int k = 0; k < kChains; ++k) x[k] = fmaf(x[k], x[k], c[k]);
    }
#pragma unroll
    for (int k = 0; k < kChains; ++k) hash[k] = fold(hash[k], __float_as_uint(x[k]));
  }
#pragma unroll
  for (int k = 0; k < kChains; ++k) out[static_cast<size_t>(k) * threads + t] = hash[k];
}

// Counts the results whose bits differ from the host's replay (expected[seed * kChains + chain]).
__global__ void count_mismatches(const uint32_t* out, size_t threads, const uint32_t* expected,
                                 unsigned long long* errors) {
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (t >= threads) return;
  const int seed = static_cast<int>(t % kSeeds);
  unsigned wrong = 0;
  for (int k = 0; k < kChains; ++k)
    if (out[static_cast<size_t>(k) * threads + t] != expected[seed * kChains + k]) ++wrong;
  if (wrong) atomicAdd(errors, static_cast<unsigned long long>(wrong));
}

__global__ void flip_bit(uint32_t* value) { *value ^= 1u; }

// The host's replay: the same fmaf chains and hashes for each seed and chain.
std::vector<uint32_t> replay(long long iterations) {
  std::vector<uint32_t> expected(kSeeds * kChains);
  for (int s = 0; s < kSeeds; ++s)
    for (int k = 0; k < kChains; ++k) {
      float x = start_value(s, k);
      const float c = chain_constant(k);
      uint32_t hash = 0;
      for (long long i = 0; i < iterations; i += kFoldEvery) {
        for (int j = 0; j < kFoldEvery; ++j) x = std::fma(x, x, c);  // the float overload: one rounding
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        hash = fold(hash, bits);
      }
      expected[static_cast<size_t>(s * kChains + k)] = hash;
    }
  return expected;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "stress [--seconds S] [--device N] [--json] [--plant-error]";
  const smoke::Options o =
      smoke::parse(argc, argv, usage, true, false, smoke::kSeconds | smoke::kWithoutSizeRepeats);
  const double run_seconds = o.seconds > 0 ? o.seconds : 10.0;
  const hipDeviceProp_t prop = smoke::open_device(o);

  // Every compute unit full (as many blocks as fit), four times over, so a launch ends in few waves.
  int per_unit = 0;
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_unit, reinterpret_cast<const void*>(&fma_chains),
                                                          static_cast<int>(kBlock), 0));
  const unsigned grid = static_cast<unsigned>(std::max(per_unit, 1) * prop.multiProcessorCount * 4);
  const size_t threads = size_t{grid} * kBlock;
  uint32_t *out = nullptr, *expected = nullptr;
  unsigned long long* errors = nullptr;
  HIP_CHECK(hipMalloc(&out, threads * kChains * sizeof(uint32_t)));
  HIP_CHECK(hipMalloc(&expected, kSeeds * kChains * sizeof(uint32_t)));
  HIP_CHECK(hipMalloc(&errors, sizeof(unsigned long long)));
  HIP_CHECK(hipMemset(errors, 0, sizeof(unsigned long long)));
  hipEvent_t start[2], stop[2];
  for (int k = 0; k < 2; ++k) {
    HIP_CHECK(hipEventCreate(&start[k]));
    HIP_CHECK(hipEventCreate(&stop[k]));
  }
  const auto launch = [&](long long iterations, int slot) {
    HIP_CHECK(hipEventRecord(start[slot], nullptr));
    hipLaunchKernelGGL(fma_chains, dim3(grid), dim3(kBlock), 0, nullptr, out, threads, iterations);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipEventRecord(stop[slot], nullptr));
  };
  const auto elapsed = [&](int slot) {
    HIP_CHECK(hipEventSynchronize(stop[slot]));
    float ms = 0;
    HIP_CHECK(hipEventElapsedTime(&ms, start[slot], stop[slot]));
    return ms * 1e-3;
  };

  // Calibrate: double the iterations until a launch takes 10 ms, then scale to ~75 ms a launch.
  long long iterations = 1024;
  double calibration = 0;
  for (;;) {
    launch(iterations, 0);
    calibration = elapsed(0);
    if (calibration >= 0.010 || iterations >= (1LL << 30)) break;
    iterations *= 2;
  }
  iterations = static_cast<long long>(static_cast<double>(iterations) * kLaunchSeconds / calibration);
  iterations = std::max<long long>(kFoldEvery, iterations / kFoldEvery * kFoldEvery);
  const std::vector<uint32_t> gold = replay(iterations);
  HIP_CHECK(hipMemcpy(expected, gold.data(), gold.size() * sizeof(uint32_t), hipMemcpyHostToDevice));

  // Back to back: launch n is queued before launch n-1 is waited for, so the device never idles.
  const unsigned check_grid = static_cast<unsigned>((threads + kBlock - 1) / kBlock);
  long long launches = 0;
  double kernel_seconds = 0, slowest = 0, fastest = 1e30;
  const auto t0 = std::chrono::steady_clock::now();
  while (launches == 0 || seconds_since(t0) < run_seconds) {
    const int slot = static_cast<int>(launches % 2);
    launch(iterations, slot);
    if (o.plant_error && launches == 0) {
      hipLaunchKernelGGL(flip_bit, dim3(1), dim3(1), 0, nullptr, out + threads / 2);
      HIP_CHECK(hipGetLastError());
    }
    hipLaunchKernelGGL(count_mismatches, dim3(check_grid), dim3(kBlock), 0, nullptr, out, threads, expected, errors);
    HIP_CHECK(hipGetLastError());
    if (launches > 0) {
      const double s = elapsed(1 - slot);
      kernel_seconds += s;
      slowest = std::max(slowest, s);
      fastest = std::min(fastest, s);
    }
    ++launches;
  }
  const double last = elapsed(static_cast<int>((launches - 1) % 2));
  kernel_seconds += last;
  slowest = std::max(slowest, last);
  fastest = std::min(fastest, last);
  HIP_CHECK(hipDeviceSynchronize());
  const double wall = seconds_since(t0);
  unsigned long long wrong = 0;
  HIP_CHECK(hipMemcpy(&wrong, errors, sizeof wrong, hipMemcpyDeviceToHost));

  // One fmaf is two floating-point operations (the hashing's integer operations are not counted).
  const double flops_per_launch = 2.0 * static_cast<double>(threads) * kChains * static_cast<double>(iterations);
  const double tflops = flops_per_launch * static_cast<double>(launches) / kernel_seconds / 1e12;
  const bool ok = wrong == 0;
  if (o.json)
    std::printf("{\"test\": \"stress\", \"device\": %s, \"seconds\": %.2f, \"launches\": %lld, \"tflops\": %.2f, "
                "\"errors\": %llu, \"result\": \"%s\"}\n",
                smoke::device_json(prop, o.device).c_str(), wall, launches, tflops, wrong, ok ? "pass" : "fail");
  else
    std::printf("stress on %s (%s): %zu threads x %d fmaf chains x %lld iterations a launch\n"
                "%lld launches in %.2f s, %.1f ms each (%.1f-%.1f): %.2f TFLOPS fp32 (kernel time %.1f%% of the run)\n"
                "%llu result%s from the host's replay: %s\n",
                prop.name, prop.gcnArchName, threads, kChains, iterations, launches, wall,
                1e3 * kernel_seconds / static_cast<double>(launches), 1e3 * fastest, 1e3 * slowest, tflops,
                100.0 * kernel_seconds / wall, wrong, wrong == 1 ? " differs" : "s differ", ok ? "PASS" : "FAIL");
  HIP_CHECK(hipFree(out));
  HIP_CHECK(hipFree(expected));
  HIP_CHECK(hipFree(errors));
  return ok ? 0 : 1;
}
