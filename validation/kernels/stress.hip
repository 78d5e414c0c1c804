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

// The device side of a run: the chains' results, the expected hashes, the mismatch count, and two
// event pairs so that launch n is queued before launch n-1 is waited for.
class StressDevice {
 public:
  explicit StressDevice(const hipDeviceProp_t& prop) {
    // Every compute unit full (as many blocks as fit), four times over, so a launch ends in few waves.
    int per_unit = 0;
    HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_unit, reinterpret_cast<const void*>(&fma_chains),
                                                            static_cast<int>(kBlock), 0));
    grid = static_cast<unsigned>(std::max(per_unit, 1) * prop.multiProcessorCount * 4);
    threads = size_t{grid} * kBlock;
    HIP_CHECK(hipMalloc(&out, threads * kChains * sizeof(uint32_t)));
    HIP_CHECK(hipMalloc(&expected, kSeeds * kChains * sizeof(uint32_t)));
    HIP_CHECK(hipMalloc(&errors, sizeof(unsigned long long)));
    HIP_CHECK(hipMemset(errors, 0, sizeof(unsigned long long)));
    for (int k = 0; k < 2; ++k) {
      HIP_CHECK(hipEventCreate(&start_[k]));
      HIP_CHECK(hipEventCreate(&stop_[k]));
    }
  }
  ~StressDevice() {
    HIP_CHECK(hipFree(out));
    HIP_CHECK(hipFree(expected));
    HIP_CHECK(hipFree(errors));
  }
  StressDevice(const StressDevice&) = delete;
  StressDevice& operator=(const StressDevice&) = delete;

  void launch(long long iterations, int slot) {
    HIP_CHECK(hipEventRecord(start_[slot], nullptr));
    hipLaunchKernelGGL(fma_chains, dim3(grid), dim3(kBlock), 0, nullptr, out, threads, iterations);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipEventRecord(stop_[slot], nullptr));
  }
  double elapsed(int slot) {
    HIP_CHECK(hipEventSynchronize(stop_[slot]));
    float ms = 0;
    HIP_CHECK(hipEventElapsedTime(&ms, start_[slot], stop_[slot]));
    return ms * 1e-3;
  }
  // Queues the check of the latest launch's results against `expected`.
  void check() {
    const unsigned check_grid = static_cast<unsigned>((threads + kBlock - 1) / kBlock);
    hipLaunchKernelGGL(count_mismatches, dim3(check_grid), dim3(kBlock), 0, nullptr, out, threads, expected, errors);
    HIP_CHECK(hipGetLastError());
  }
  unsigned long long mismatches() const {
    unsigned long long wrong = 0;
    HIP_CHECK(hipMemcpy(&wrong, errors, sizeof wrong, hipMemcpyDeviceToHost));
    return wrong;
  }

  unsigned grid = 0;
  size_t threads = 0;
  uint32_t* out = nullptr;
  uint32_t* expected = nullptr;
  unsigned long long* errors = nullptr;

 private:
  hipEvent_t start_[2], stop_[2];
};

// Iterations a launch makes: doubled until a launch takes 10 ms, then scaled to ~75 ms a launch; the
// host's replay of them is copied to the device.
long long calibrate(StressDevice& device) {
  long long iterations = 1024;
  double calibration = 0;
  for (;;) {
    device.launch(iterations, 0);
    calibration = device.elapsed(0);
    if (calibration >= 0.010 || iterations >= (1LL << 30)) break;
    iterations *= 2;
  }
  iterations = static_cast<long long>(static_cast<double>(iterations) * kLaunchSeconds / calibration);
  iterations = std::max<long long>(kFoldEvery, iterations / kFoldEvery * kFoldEvery);
  const std::vector<uint32_t> gold = replay(iterations);
  HIP_CHECK(hipMemcpy(device.expected, gold.data(), gold.size() * sizeof(uint32_t), hipMemcpyHostToDevice));
  return iterations;
}

struct StressRun {
  long long launches = 0;
  double kernel_seconds = 0, slowest = 0, fastest = 1e30, wall = 0;

  void count(double seconds) {
    kernel_seconds += seconds;
    slowest = std::max(slowest, seconds);
    fastest = std::min(fastest, seconds);
  }
};

// Launches back to back for `run_seconds`, each checked against the replay (the first with a bit
// flipped when planting an error), so the device never idles.
StressRun run_back_to_back(StressDevice& device, long long iterations, double run_seconds, bool plant_error) {
  StressRun run;
  const auto t0 = std::chrono::steady_clock::now();
  while (run.launches == 0 || seconds_since(t0) < run_seconds) {
    const int slot = static_cast<int>(run.launches % 2);
    device.launch(iterations, slot);
    if (plant_error && run.launches == 0) {
      hipLaunchKernelGGL(flip_bit, dim3(1), dim3(1), 0, nullptr, device.out + device.threads / 2);
      HIP_CHECK(hipGetLastError());
    }
    device.check();
    if (run.launches > 0) run.count(device.elapsed(1 - slot));
    ++run.launches;
  }
  run.count(device.elapsed(static_cast<int>((run.launches - 1) % 2)));
  HIP_CHECK(hipDeviceSynchronize());
  run.wall = seconds_since(t0);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "stress [--seconds S] [--device N] [--json] [--plant-error]";
  const smoke::Options o =
      smoke::parse(argc, argv, usage, true, false, smoke::kSeconds | smoke::kWithoutSizeRepeats);
  const double run_seconds = o.seconds > 0 ? o.seconds : 10.0;
  const hipDeviceProp_t prop = smoke::open_device(o);
  StressDevice device(prop);
  const long long iterations = calibrate(device);
  const StressRun run = run_back_to_back(device, iterations, run_seconds, o.plant_error);
  const unsigned long long wrong = device.mismatches();

  // One fmaf is two floating-point operations (the hashing's integer operations are not counted).
  const double flops_per_launch = 2.0 * static_cast<double>(device.threads) * kChains * static_cast<double>(iterations);
  const double tflops = flops_per_launch * static_cast<double>(run.launches) / run.kernel_seconds / 1e12;
  const bool ok = wrong == 0;
  if (o.json)
    std::printf("{\"test\": \"stress\", \"device\": %s, \"seconds\": %.2f, \"launches\": %lld, \"tflops\": %.2f, "
                "\"errors\": %llu, \"result\": \"%s\"}\n",
                smoke::device_json(prop, o.device).c_str(), run.wall, run.launches, tflops, wrong, ok ? "pass" : "fail");
  else
    std::printf("stress on %s (%s): %zu threads x %d fmaf chains x %lld iterations a launch\n"
                "%lld launches in %.2f s, %.1f ms each (%.1f-%.1f): %.2f TFLOPS fp32 (kernel time %.1f%% of the run)\n"
                "%llu result%s from the host's replay: %s\n",
                prop.name, prop.gcnArchName, device.threads, kChains, iterations, run.launches, run.wall,
                1e3 * run.kernel_seconds / static_cast<double>(run.launches), 1e3 * run.fastest, 1e3 * run.slowest, tflops,
                100.0 * run.kernel_seconds / run.wall, wrong, wrong == 1 ? " differs" : "s differ", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
