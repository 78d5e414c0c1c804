// conformance_main.hip: runs every conformance case on device 0 (or $HIPSTACK_CONFORMANCE_DEVICE).
// Usage: conformance [--list] [SUBSTRING...]   exit 0 all passed, 1 a case failed, 77 no GPU (skip).
#include "conformance.hpp"

#include <cstdlib>
#include <cstring>

namespace conformance {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

[[noreturn]] void fail(const char* file, int line, const std::string& what) {
  const char* base = std::strrchr(file, '/');
  throw Failure{std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " + what};
}

static Context the_context;
const Context& context() { return the_context; }

}  // namespace conformance

// Runs last, apart from the registry: hipDeviceReset destroys every allocation of the process.
static void device_reset() {
  void* p = nullptr;
  CHECK_HIP(hipMalloc(&p, 1 << 20));
  CHECK_HIP(hipDeviceReset());
  CHECK_HIP(hipSetDevice(conformance::context().device));
  void* q = nullptr;
  CHECK_HIP(hipMalloc(&q, 1 << 20));
  CHECK_HIP(hipMemset(q, 0x5a, 1 << 20));
  unsigned char byte = 0;
  CHECK_HIP(hipMemcpy(&byte, static_cast<unsigned char*>(q) + 12345, 1, hipMemcpyDeviceToHost));
  CHECK_EQ(static_cast<int>(byte), 0x5a);
  CHECK_HIP(hipFree(q));
}

int main(int argc, char** argv) {
  using namespace conformance;
  std::vector<Case> cases = registry();
  cases.push_back({"device_reset", device_reset});
  std::vector<std::string> filters;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list") == 0) {
      for (const Case& c : cases) std::printf("%s\n", c.name);
      return 0;
    }
    filters.emplace_back(argv[i]);
  }

  Context& ctx = the_context;
  const hipError_t e = hipGetDeviceCount(&ctx.device_count);
  if (e != hipSuccess || ctx.device_count == 0) {
    std::printf("SKIP: no GPU (hipGetDeviceCount: %s, %d devices)\n", hipGetErrorName(e), ctx.device_count);
    return 77;
  }
  if (const char* d = std::getenv("HIPSTACK_CONFORMANCE_DEVICE")) ctx.device = std::atoi(d);
  if (hipSetDevice(ctx.device) != hipSuccess || hipGetDeviceProperties(&ctx.prop, ctx.device) != hipSuccess) {
    std::printf("FAIL: cannot open device %d\n", ctx.device);
    return 1;
  }
  std::printf("device %d of %d: %s (%s), %d compute units, warp %d\n", ctx.device, ctx.device_count,
              ctx.prop.name, ctx.prop.gcnArchName, ctx.prop.multiProcessorCount, ctx.prop.warpSize);

  int passed = 0, failed = 0;
  for (const Case& c : cases) {
    bool selected = filters.empty();
    for (const std::string& f : filters) selected = selected || std::strstr(c.name, f.c_str()) != nullptr;
    if (!selected) continue;
    try {
      c.run();
      std::printf("PASS %s\n", c.name);
      ++passed;
    } catch (const Failure& failure) {
      std::printf("FAIL %s: %s\n", c.name, failure.what.c_str());
      ++failed;
      (void)hipGetLastError();  // the next case starts without this one's error
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
