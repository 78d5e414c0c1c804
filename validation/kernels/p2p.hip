// p2p: peer-to-peer copy bandwidth between every ordered pair of devices. First each device is given
// access to every peer that hipDeviceCanAccessPeer allows (where it does not, hipMemcpyPeer still works,
// staged through the host). Then for each pair src -> dst:
//   unidirectional  hipMemcpyPeerAsync src -> dst on a stream of src, timed by events on src
//   bidirectional   src -> dst and dst -> src at once, each on a stream of its source device, timed
//                   from an event both streams wait on to the end of the later copy; bytes of both count
// Best of the repeats after a warm-up. Each device's source buffer holds a hash of the word's index and
// the device, so a receive buffer is checked on its device against the sender's pattern after each.
// Usage: p2p [--size BYTES] [--repeats N] [--json]; needs two or more GPUs (exit 77 otherwise).
#include "common.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr unsigned kBlock = 256;

__host__ __device__ inline uint32_t pattern_word(unsigned long long index, unsigned long long device) {
  unsigned long long z = index * 0x9e3779b97f4a7c15ULL + (device + 1) * 0xd1b54a32d192ed03ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

__global__ void fill_pattern(uint32_t* p, size_t n, int device) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = pattern_word(i, static_cast<unsigned long long>(device));
}

__global__ void count_mismatches(const uint32_t* p, size_t n, int device, unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    if (p[i] != pattern_word(i, static_cast<unsigned long long>(device))) ++mine;
  if (mine) atomicAdd(wrong, mine);
}

// What each device holds: a source buffer with its pattern, a receive buffer, a stream, events.
struct Device {
  hipDeviceProp_t prop;
  uint32_t* source = nullptr;
  uint32_t* received = nullptr;
  unsigned long long* wrong = nullptr;
  hipStream_t stream = nullptr;
  hipEvent_t start = nullptr, stop = nullptr;
  unsigned grid = 0;
};

struct Pair {
  int src, dst;
  bool peer_access = false;
  double unidirectional_gbps = 0, bidirectional_gbps = 0;
  bool verified = false;
};

// True when device `d`'s receive buffer holds device `sender`'s pattern; then clears the buffer.
bool received_from(Device& d, int index, int sender, size_t words, size_t bytes) {
  HIP_CHECK(hipSetDevice(index));
  HIP_CHECK(hipMemsetAsync(d.wrong, 0, sizeof(unsigned long long), d.stream));
  hipLaunchKernelGGL(count_mismatches, dim3(d.grid), dim3(kBlock), 0, d.stream, d.received, words, sender, d.wrong);
  HIP_CHECK(hipGetLastError());
  unsigned long long wrong = 0;
  HIP_CHECK(hipMemcpyAsync(&wrong, d.wrong, sizeof wrong, hipMemcpyDeviceToHost, d.stream));
  HIP_CHECK(hipMemsetAsync(d.received, 0, bytes, d.stream));
  HIP_CHECK(hipStreamSynchronize(d.stream));
  return wrong == 0;
}

float elapsed_ms(Device& d) {
  HIP_CHECK(hipEventSynchronize(d.stop));
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, d.start, d.stop));
  return ms;
}

// Every device with its buffers, stream and events, its source filled with its own pattern.
std::vector<Device> open_devices(int count, size_t bytes, size_t words) {
  std::vector<Device> devices(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    Device& d = devices[static_cast<size_t>(i)];
    HIP_CHECK(hipSetDevice(i));
    HIP_CHECK(hipGetDeviceProperties(&d.prop, i));
    HIP_CHECK(hipMalloc(&d.source, bytes));
    HIP_CHECK(hipMalloc(&d.received, bytes));
    HIP_CHECK(hipMalloc(&d.wrong, sizeof(unsigned long long)));
    HIP_CHECK(hipStreamCreateWithFlags(&d.stream, hipStreamNonBlocking));
    HIP_CHECK(hipMemsetAsync(d.received, 0, bytes, d.stream));
    HIP_CHECK(hipEventCreate(&d.start));
    HIP_CHECK(hipEventCreate(&d.stop));
    d.grid = static_cast<unsigned>(d.prop.multiProcessorCount) * 8;
    hipLaunchKernelGGL(fill_pattern, dim3(d.grid), dim3(kBlock), 0, d.stream, d.source, words, i);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipStreamSynchronize(d.stream));
  }
  return devices;
}

// can[i][j]: device i can access device j's memory; where it can, access is enabled.
std::vector<std::vector<bool>> enable_peer_access(int count) {
  std::vector<std::vector<bool>> can(static_cast<size_t>(count), std::vector<bool>(static_cast<size_t>(count)));
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      int possible = 0;
      HIP_CHECK(hipDeviceCanAccessPeer(&possible, i, j));
      can[static_cast<size_t>(i)][static_cast<size_t>(j)] = possible != 0;
      if (!possible) continue;
      HIP_CHECK(hipSetDevice(i));
      const hipError_t enabled = hipDeviceEnablePeerAccess(j, 0);
      if (enabled == hipErrorPeerAccessAlreadyEnabled) (void)hipGetLastError();
      else HIP_CHECK(enabled);
    }
  return can;
}

// One ordered pair: the best of `repeats` copies from s to t alone, then both ways at once, each
// checked on arrival.
Pair measure_pair(std::vector<Device>& devices, int s, int t, bool peer_access, size_t bytes, size_t words, int repeats) {
  Device &src = devices[static_cast<size_t>(s)], &dst = devices[static_cast<size_t>(t)];
  Pair p{s, t};
  p.peer_access = peer_access;
  float best = 1e30f;
  for (int k = 0; k <= repeats; ++k) {  // k == 0 warms up and is not counted
    HIP_CHECK(hipSetDevice(s));
    HIP_CHECK(hipEventRecord(src.start, src.stream));
    HIP_CHECK(hipMemcpyPeerAsync(dst.received, t, src.source, s, bytes, src.stream));
    HIP_CHECK(hipEventRecord(src.stop, src.stream));
    const float ms = elapsed_ms(src);
    if (k > 0) best = std::min(best, ms);
  }
  p.unidirectional_gbps = static_cast<double>(bytes) / (best * 1e-3) / 1e9;
  const bool uni_ok = received_from(dst, t, s, words, bytes);

  best = 1e30f;
  for (int k = 0; k <= repeats; ++k) {
    HIP_CHECK(hipSetDevice(s));
    HIP_CHECK(hipEventRecord(src.start, src.stream));
    HIP_CHECK(hipSetDevice(t));
    HIP_CHECK(hipStreamWaitEvent(dst.stream, src.start, 0));  // both copies start together
    HIP_CHECK(hipMemcpyPeerAsync(src.received, s, dst.source, t, bytes, dst.stream));
    HIP_CHECK(hipEventRecord(dst.stop, dst.stream));
    HIP_CHECK(hipSetDevice(s));
    HIP_CHECK(hipMemcpyPeerAsync(dst.received, t, src.source, s, bytes, src.stream));
    HIP_CHECK(hipStreamWaitEvent(src.stream, dst.stop, 0));  // src's stop comes after both copies
    HIP_CHECK(hipEventRecord(src.stop, src.stream));
    const float ms = elapsed_ms(src);
    if (k > 0) best = std::min(best, ms);
  }
  p.bidirectional_gbps = 2.0 * static_cast<double>(bytes) / (best * 1e-3) / 1e9;
  const bool there = received_from(dst, t, s, words, bytes);
  const bool back = received_from(src, s, t, words, bytes);
  p.verified = uni_ok && there && back;
  return p;
}

void print_json(const std::vector<Device>& devices, const std::vector<Pair>& pairs, size_t bytes, int repeats, bool ok) {
  const int count = static_cast<int>(devices.size());
  std::printf("{\"test\": \"p2p\", \"devices\": [");
  for (int i = 0; i < count; ++i)
    std::printf("%s%s", i ? ", " : "", smoke::device_json(devices[static_cast<size_t>(i)].prop, i).c_str());
  std::printf("], \"bytes\": %zu, \"repeats\": %d, \"pairs\": [", bytes, repeats);
  for (const Pair& p : pairs)
    std::printf("%s{\"src\": %d, \"dst\": %d, \"peer_access\": %s, \"unidirectional_gbps\": %.2f, "
                "\"bidirectional_gbps\": %.2f, \"verified\": %s}",
                &p == pairs.data() ? "" : ", ", p.src, p.dst, p.peer_access ? "true" : "false",
                p.unidirectional_gbps, p.bidirectional_gbps, p.verified ? "true" : "false");
  std::printf("], \"result\": \"%s\"}\n", ok ? "pass" : "fail");
}

void print_text(const std::vector<Device>& devices, const std::vector<Pair>& pairs, size_t bytes, int repeats) {
  const int count = static_cast<int>(devices.size());
  std::printf("p2p over %d devices, %.1f MiB per copy, best of %d\n", count, bytes / 1048576.0, repeats);
  for (int i = 0; i < count; ++i)
    std::printf("  device %d: %s (%s)\n", i, devices[static_cast<size_t>(i)].prop.name,
                devices[static_cast<size_t>(i)].prop.gcnArchName);
  std::printf("%-4s %-4s %-6s %12s %12s %s\n", "src", "dst", "peer", "uni GB/s", "bidi GB/s", "check");
  for (const Pair& p : pairs)
    std::printf("%-4d %-4d %-6s %12.2f %12.2f %s\n", p.src, p.dst, p.peer_access ? "yes" : "no",
                p.unidirectional_gbps, p.bidirectional_gbps, p.verified ? "PASS" : "FAIL");
}

void release(std::vector<Device>& devices) {
  const int count = static_cast<int>(devices.size());
  for (int i = 0; i < count; ++i) {
    Device& d = devices[static_cast<size_t>(i)];
    HIP_CHECK(hipSetDevice(i));
    HIP_CHECK(hipFree(d.source));
    HIP_CHECK(hipFree(d.received));
    HIP_CHECK(hipFree(d.wrong));
    HIP_CHECK(hipStreamDestroy(d.stream));
    HIP_CHECK(hipEventDestroy(d.start));
    HIP_CHECK(hipEventDestroy(d.stop));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "p2p [--size BYTES] [--repeats N] [--json]";
  const smoke::Options o = smoke::parse(argc, argv, usage, false, false, smoke::kWithoutDevice);
  const size_t bytes = o.size ? static_cast<size_t>(o.size) : size_t{256} << 20;
  if (bytes % sizeof(uint32_t) != 0) {
    std::fprintf(stderr, "--size must be a multiple of 4 bytes, not %zu\nusage: %s\n", bytes, usage);
    return 2;
  }
  const size_t words = bytes / sizeof(uint32_t);
  const int repeats = o.repeats ? o.repeats : 10;
  int count = 0;
  const hipError_t e = hipGetDeviceCount(&count);
  if (e != hipSuccess || count < 2) {
    std::printf("SKIP: p2p needs two or more GPUs (%d found; hipGetDeviceCount: %s)\n", e == hipSuccess ? count : 0,
                hipGetErrorName(e));
    return 77;
  }

  std::vector<Device> devices = open_devices(count, bytes, words);
  const std::vector<std::vector<bool>> can = enable_peer_access(count);
  std::vector<Pair> pairs;
  for (int s = 0; s < count; ++s)
    for (int t = 0; t < count; ++t) {
      if (s == t) continue;
      const bool peer_access = can[static_cast<size_t>(s)][static_cast<size_t>(t)] && can[static_cast<size_t>(t)][static_cast<size_t>(s)];
      pairs.push_back(measure_pair(devices, s, t, peer_access, bytes, words, repeats));
    }
  bool ok = true;
  for (const Pair& p : pairs) ok = ok && p.verified;
  if (o.json) print_json(devices, pairs, bytes, repeats, ok);
  else print_text(devices, pairs, bytes, repeats);
  release(devices);
  return ok ? 0 : 1;
}
