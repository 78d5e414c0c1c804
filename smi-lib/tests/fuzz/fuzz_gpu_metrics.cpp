// libFuzzer target for the gpu_metrics decoder.
//   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I smi-lib/src
//     smi-lib/src/backends/amdgpu/gpu_metrics*.cpp smi-lib/tests/fuzz/fuzz_gpu_metrics.cpp -o fuzz_gpu_metrics
//   ./fuzz_gpu_metrics -max_total_time=120 CORPUS_DIR   (seed it with smi-lib/tests/data/gpu_metrics/*.bin)
//
// Each input is decoded as read, then once more with structure_size rewritten to the input's length,
// so mutations get past the size checks into the per-version decoders and the v1.9 walker. Besides
// the sanitizers, the decoder's promises are checked: an error message exactly when !ok, nothing
// decoded beyond structure_size, every converted number finite.
#include "backends/amdgpu/gpu_metrics.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace {

using hipstack::smi::detail::GpuMetrics;
using hipstack::smi::detail::GpuMetricsDecode;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void check_finite(const std::optional<double>& v) { require(!v || std::isfinite(*v)); }
void check_finite(const std::vector<double>& v) {
  for (double x : v) require(std::isfinite(x));
}

void check(const GpuMetricsDecode& r, std::size_t size) {
  require(r.ok == r.error.empty());
  const GpuMetrics& m = r.metrics;
  if (!r.ok) {
    require(m.attributes.empty() && m.xcp_stats.empty() && !m.temperature_edge && !m.throttle_status);
    return;
  }
  require(size >= 4 && m.structure_size <= size && !m.layout.empty());
  for (const auto* v : {&m.temperature_edge, &m.temperature_hotspot, &m.temperature_mem, &m.temperature_gfx,
                        &m.average_socket_power, &m.current_socket_power, &m.energy_accumulator,
                        &m.average_gfx_activity, &m.current_gfxclk, &m.pcie_link_speed, &m.pcie_bandwidth_inst,
                        &m.pcie_bandwidth_acc, &m.mem_max_bandwidth, &m.system_clock_counter,
                        &m.firmware_timestamp, &m.xgmi_link_speed}) {
    check_finite(*v);
  }
  for (const auto* v : {&m.temperature_hbm, &m.current_gfxclk_per_xcc, &m.xgmi_read_data, &m.temperature_core,
                        &m.vcn_activity, &m.jpeg_activity}) {
    check_finite(*v);
  }
  require(m.xcp_stats.size() <= 8);
  for (const auto& a : m.attributes) {
    require(a.type < 8 && a.raw.size() == a.values.size());
    const std::size_t width = std::size_t{1} << (a.type / 2);
    require(a.value_offset + a.raw.size() * width <= m.structure_size);
    for (const auto& v : a.values) check_finite(v);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  check(hipstack::smi::detail::decode_gpu_metrics(input), size);

  if (size >= 4 && size <= 0xFFFF) {
    std::vector<std::uint8_t> fixed(data, data + size);
    fixed[0] = static_cast<std::uint8_t>(size);
    fixed[1] = static_cast<std::uint8_t>(size >> 8);
    check(hipstack::smi::detail::decode_gpu_metrics(fixed), size);
  }
  return 0;
}
