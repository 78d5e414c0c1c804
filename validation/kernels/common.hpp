// common.hpp: what the smoke-test kernels share: argument parsing, error checks, the device line, JSON.
// Exit codes: 0 ok, 1 check failed or a HIP call failed, 2 bad arguments, 77 no GPU (skip).
#pragma once

#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace smoke {

inline void hip_check(hipError_t e, const char* call, int line) {
  if (e == hipSuccess) return;
  std::fprintf(stderr, "error: %s (line %d) returned %s: %s\n", call, line, hipGetErrorName(e), hipGetErrorString(e));
  std::exit(1);
}
#define HIP_CHECK(call) ::smoke::hip_check((call), #call, __LINE__)

struct Options {
  bool json = false;
  bool plant_error = false;
  long long size = 0;  // elements or bytes, per program; 0 = the program's default
  int repeats = 0;     // 0 = the program's default
  int unroll = 0;      // stream only: elements per thread (0 = default)
  int device = 0;
  double fraction = 0;   // memtest: share of the free memory to test (0 = default)
  long long bytes = 0;   // memtest: bytes to test (0 = use the fraction)
  int passes = 0;        // memtest: 0 = default
  std::string patterns;  // memtest: comma-separated pattern names ("" = all)
  double seconds = 0;    // stress: 0 = default
};

// The options only some programs take, passed to parse() as `extras` (or-ed); the others reject them as
// unknown. The kWithout* flags take common options away from programs they make no sense for.
enum Extra : unsigned {
  kMemtestOptions = 1u << 0,  // --fraction F, --bytes N, --passes N, --patterns LIST
  kSeconds = 1u << 1,         // --seconds S
  kWithoutSizeRepeats = 1u << 2,
  kWithoutDevice = 1u << 3,   // p2p: it uses every device
};

// --json, --plant-error (vector_add), --unroll N (stream), --size N, --repeats N, --device N, and the
// `extras` above; exits 2 on anything else.
inline Options parse(int argc, char** argv, const char* usage, bool accepts_plant_error, bool accepts_unroll = false,
                     unsigned extras = 0) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto number = [&](long long min) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\nusage: %s\n", argv[i], usage);
        std::exit(2);
      }
      char* end = nullptr;
      const long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v < min) {
        std::fprintf(stderr, "bad value for %s: %s\nusage: %s\n", argv[i - 1], argv[i], usage);
        std::exit(2);
      }
      return v;
    };
    // A finite real number in (min, max].
    const auto real = [&](double min, double max) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\nusage: %s\n", argv[i], usage);
        std::exit(2);
      }
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || end == argv[i] || !std::isfinite(v) || v <= min || v > max) {
        std::fprintf(stderr, "bad value for %s: %s (must be greater than %g and at most %g)\nusage: %s\n", argv[i - 1],
                     argv[i], min, max, usage);
        std::exit(2);
      }
      return v;
    };
    const bool memtest = extras & kMemtestOptions, sized = !(extras & kWithoutSizeRepeats);
    if (a == "--json") o.json = true;
    else if (a == "--plant-error" && accepts_plant_error) o.plant_error = true;
    else if (a == "--size" && sized) o.size = number(1);
    else if (a == "--repeats" && sized) o.repeats = static_cast<int>(number(1));
    else if (a == "--unroll" && accepts_unroll) o.unroll = static_cast<int>(number(1));
    else if (a == "--device" && !(extras & kWithoutDevice)) o.device = static_cast<int>(number(0));
    else if (a == "--fraction" && memtest) o.fraction = real(0.0, 0.95);
    else if (a == "--bytes" && memtest) o.bytes = number(16);
    else if (a == "--passes" && memtest) o.passes = static_cast<int>(number(1));
    else if (a == "--patterns" && memtest) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "--patterns needs a value\nusage: %s\n", usage);
        std::exit(2);
      }
      o.patterns = argv[++i];
    } else if (a == "--seconds" && (extras & kSeconds)) o.seconds = real(0.0, 86400.0);
    else if (a == "--help" || a == "-h") {
      std::printf("usage: %s\n", usage);
      std::exit(0);
    } else {
      std::fprintf(stderr, "unknown argument %s\nusage: %s\n", argv[i], usage);
      std::exit(2);
    }
  }
  return o;
}

// Selects the device, or exits 77 when there is none.
inline hipDeviceProp_t open_device(const Options& o) {
  int count = 0;
  const hipError_t e = hipGetDeviceCount(&count);
  if (e != hipSuccess || count == 0) {
    std::printf("SKIP: no GPU (hipGetDeviceCount: %s)\n", hipGetErrorName(e));
    std::exit(77);
  }
  if (o.device >= count) {
    std::fprintf(stderr, "no device %d (%d present)\n", o.device, count);
    std::exit(2);
  }
  HIP_CHECK(hipSetDevice(o.device));
  hipDeviceProp_t prop;
  HIP_CHECK(hipGetDeviceProperties(&prop, o.device));
  return prop;
}

// The device's peak memory bandwidth from its properties (memory clock in kHz, double data rate, bus
// width in bits), in GB/s: the figure the measured bandwidth is compared with.
inline double peak_memory_gbps(const hipDeviceProp_t& p) {
  return 2.0 * p.memoryClockRate * 1e3 * (p.memoryBusWidth / 8.0) / 1e9;
}

// The "device" object of every program's JSON output.
inline std::string device_json(const hipDeviceProp_t& p, int device) {
  char buffer[1200];
  std::snprintf(buffer, sizeof buffer,
                "{\"index\": %d, \"name\": \"%s\", \"arch\": \"%s\", \"compute_units\": %d, "
                "\"memory_bytes\": %zu, \"memory_clock_khz\": %d, \"memory_bus_bits\": %d, \"peak_memory_gbps\": %.1f}",
                device, p.name, p.gcnArchName, p.multiProcessorCount, p.totalGlobalMem, p.memoryClockRate,
                p.memoryBusWidth, peak_memory_gbps(p));
  return buffer;
}

}  // namespace smoke
