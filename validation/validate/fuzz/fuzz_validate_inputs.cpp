// fuzz_validate_inputs: what hipstack-validate reads from outside: a module's stdout (JSON from a
// program that may be broken) and a thresholds file. The first byte picks which; either must end in
// a result or a std::runtime_error naming the problem, never a crash.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "../src/plan.hpp"
#include "../src/thresholds.hpp"

using namespace hipstack::validate;

namespace {

DeviceClass known_class() {
  DeviceClass c;
  c.name = "fuzz class";
  c.compute_units = 100;
  c.peak = {{"memory_gbps", 1000}, {"fp32_tflops", 50}, {"fp32_vector_tflops", 25}, {"bf16_tflops", 500}};
  c.expect = {{"memory_bandwidth", 0.8}, {"transfer", 0.7}, {"gemm_fp32", 0.5}, {"gemm_bf16", 0.5},
              {"stress_fp32", 0.5}, {"p2p_gbps", 10}};
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 0x80) {  // a thresholds file
    char path[] = "/tmp/fuzz_thresholds.XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) return 0;
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
    try {
      const Thresholds t = Thresholds::load(path);
      (void)t.classify("amd", "AMD Instinct MI300X");
    } catch (const std::runtime_error&) {
    }
    ::unlink(path);
    return 0;
  }
  nlohmann::json output;
  try {
    output = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  static const DeviceClass device_class = known_class();
  Unit units[2];
  units[0].device_class = &device_class;
  units[0].compute_units = static_cast<int>(data[0] & 0x3f);
  units[0].pcie_link_gbps = 63.0;
  units[1].runtime_index = 1;
  const auto all = modules();
  const Module& module = all[data[0] % all.size()];
  for (const Unit& unit : units) {
    TestResult result;
    try {
      module.evaluate(output, EvalContext{&unit, units}, result);
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
