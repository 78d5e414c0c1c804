// transfer: host<->device copy bandwidth, from pinned (hipHostMalloc) and pageable (malloc) host
// memory, both directions. Each copy is timed on the host clock from the call until the device is
// idle again (a pageable host-to-device copy may return before its DMA ends); the best and the mean
// of the repeats are reported. The copied bytes are checked after each direction.
// Usage: transfer [--size BYTES] [--repeats N] [--device N] [--json]
#include "common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

struct Result {
  const char* memory;
  const char* direction;
  double best_gbps = 0, mean_gbps = 0;
  bool verified = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Times `repeats` copies after one warm-up; fills best and mean.
template <class Copy>
void measure(Result& r, size_t bytes, int repeats, Copy copy) {
  copy();
  HIP_CHECK(hipDeviceSynchronize());
  double total = 0, best = 1e30;
  for (int k = 0; k < repeats; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    copy();
    HIP_CHECK(hipDeviceSynchronize());
    const double s = seconds_since(t0);
    total += s;
    best = std::min(best, s);
  }
  r.best_gbps = static_cast<double>(bytes) / best / 1e9;
  r.mean_gbps = static_cast<double>(bytes) * repeats / total / 1e9;
}

bool same_pattern(const unsigned char* p, size_t bytes, unsigned char seed) {
  for (size_t i = 0; i < bytes; i += 4093)
    if (p[i] != static_cast<unsigned char>(i * 13 + seed)) return false;
  return p[bytes - 1] == static_cast<unsigned char>((bytes - 1) * 13 + seed);
}
void fill_pattern(unsigned char* p, size_t bytes, unsigned char seed) {
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(i * 13 + seed);
}

}  // namespace

int main(int argc, char** argv) {
  const smoke::Options o = smoke::parse(argc, argv, "transfer [--size BYTES] [--repeats N] [--device N] [--json]", false);
  const hipDeviceProp_t prop = smoke::open_device(o);
  const size_t bytes = o.size ? static_cast<size_t>(o.size) : size_t{256} << 20;
  const int repeats = o.repeats ? o.repeats : 10;
  void* device = nullptr;
  HIP_CHECK(hipMalloc(&device, bytes));
  unsigned char* pinned = nullptr;
  HIP_CHECK(hipHostMalloc(&pinned, bytes, hipHostMallocDefault));
  std::vector<unsigned char> pageable(bytes);  // written below, so its pages exist before timing

  Result results[] = {{"pinned", "h2d"}, {"pinned", "d2h"}, {"pageable", "h2d"}, {"pageable", "d2h"}};
  for (Result& r : results) {
    unsigned char* host = std::string_view(r.memory) == "pinned" ? pinned : pageable.data();
    const bool h2d = std::string_view(r.direction) == "h2d";
    const unsigned char seed = static_cast<unsigned char>(&r - results + 1);
    if (h2d) {
      fill_pattern(host, bytes, seed);
      measure(r, bytes, repeats, [&] { HIP_CHECK(hipMemcpyAsync(device, host, bytes, hipMemcpyHostToDevice, nullptr)); });
      // Check what arrived: back through the other buffer.
      unsigned char* other = host == pinned ? pageable.data() : pinned;
      std::fill_n(other, bytes, 0);
      HIP_CHECK(hipMemcpy(other, device, bytes, hipMemcpyDeviceToHost));
      r.verified = same_pattern(other, bytes, seed);
    } else {
      std::vector<unsigned char> pattern(bytes);
      fill_pattern(pattern.data(), bytes, seed);
      HIP_CHECK(hipMemcpy(device, pattern.data(), bytes, hipMemcpyHostToDevice));
      std::fill_n(host, bytes, 0);
      measure(r, bytes, repeats, [&] { HIP_CHECK(hipMemcpyAsync(host, device, bytes, hipMemcpyDeviceToHost, nullptr)); });
      r.verified = same_pattern(host, bytes, seed);
    }
  }
  bool ok = true;
  for (const Result& r : results) ok = ok && r.verified;
  if (o.json) {
    std::printf("{\"test\": \"transfer\", \"device\": %s, \"bytes\": %zu, \"repeats\": %d, \"copies\": [",
                smoke::device_json(prop, o.device).c_str(), bytes, repeats);
    for (const Result& r : results)
      std::printf("%s{\"memory\": \"%s\", \"direction\": \"%s\", \"best_gbps\": %.2f, \"mean_gbps\": %.2f, "
                  "\"verified\": %s}", &r == results ? "" : ", ", r.memory, r.direction, r.best_gbps, r.mean_gbps,
                  r.verified ? "true" : "false");
    std::printf("], \"result\": \"%s\"}\n", ok ? "pass" : "fail");
  } else {
    std::printf("transfer on %s (%s): %.1f MiB per copy, best of %d\n%-9s %-9s %10s %10s %s\n", prop.name,
                prop.gcnArchName, bytes / 1048576.0, repeats, "memory", "direction", "best GB/s", "mean GB/s", "check");
    for (const Result& r : results)
      std::printf("%-9s %-9s %10.2f %10.2f %s\n", r.memory, r.direction, r.best_gbps, r.mean_gbps,
                  r.verified ? "PASS" : "FAIL");
  }
  HIP_CHECK(hipHostFree(pinned));
  HIP_CHECK(hipFree(device));
  return ok ? 0 : 1;
}
