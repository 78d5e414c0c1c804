// The Node Feature Discovery labels `hipstack-smi static --nfd` writes (docs/health.md, "Acting on
// health"), each under hipstack.feature.node.kubernetes.io/ and with the catalogue metric it is
// read from. A label's value is the reading as text, a byte count as whole GiB; gpu.count, the
// number of GPUs, is the command's own.
#include "tables.hpp"

namespace hipstack::smi::foreign {
namespace nfd_names {

using M = MetricId;

constexpr std::string_view kGib = "bytes -> whole GiB, rounded down";

constexpr ForeignName kTable[] = {
    {"gpu.vendor", {M::vendor}, "", ""},
    {"gpu.model", {M::marketing_name}, "", ""},
    {"gpu.device-type", {M::device_type}, "", ""},
    {"gpu.gfx-target", {M::gfx_target}, "", ""},
    {"gpu.architecture", {M::architecture}, "", ""},
    {"gpu.compute-capability", {M::compute_capability}, "", ""},
    {"gpu.compute-units", {M::compute_units}, "", ""},
    {"gpu.vram-gib", {M::vram_total}, "", kGib},
    {"gpu.driver", {M::driver_name}, "", ""},
    {"gpu.driver-version", {M::driver_version}, "", ""},
    {"gpu.compute-partition", {M::compute_partition}, "", ""},
    {"gpu.memory-partition", {M::memory_partition}, "", ""},
};

}  // namespace nfd_names

std::span<const ForeignName> nfd_table() noexcept { return nfd_names::kTable; }

}  // namespace hipstack::smi::foreign
