// gpu_metrics fields whose unit the format version alone does not decide (docs/gpu-metrics.md,
// "Units the version does not decide"): blobs from gpu_metrics_builder.hpp, values chosen by hand.
#include "backends/amdgpu/gpu_metrics.hpp"
#include "gpu_metrics_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace hipstack::smi::detail {
namespace {

using test::GpuMetricsBlob;
using Bytes = std::vector<std::uint8_t>;

// ---- v1.x pcie_link_speed: 0.1 GT/s, or a PCIe generation from older RDNA3 kernels ----

TEST(PcieLinkSpeed, TenthsOfGtsAndGenerationNumbersBothDecodeToGts) {
  struct Case {
    std::uint64_t stored;
    std::optional<double> gts;
  };
  // smu_v13_0_0/_7 before pcie_gen_to_speed: PcieRate 1..5 (a generation); everyone else: 0.1 GT/s.
  const Case cases[] = {{25, 2.5}, {80, 8.0}, {160, 16.0}, {320, 32.0}, {1, 2.5}, {3, 8.0},
                        {4, 16.0}, {5, 32.0}, {0, std::nullopt}, {7, std::nullopt}};
  for (const Case& c : cases) {
    GpuMetricsBlob b(1, 3);
    b.set("pcie_link_speed", c.stored).set("pcie_link_width", 16);
    const Bytes bytes = b.bytes();
    const auto r = decode_gpu_metrics(bytes);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.metrics.pcie_link_speed, c.gts) << "stored " << c.stored;
  }
}

}  // namespace
}  // namespace hipstack::smi::detail
