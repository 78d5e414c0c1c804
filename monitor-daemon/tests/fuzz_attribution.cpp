// Fuzzes what attribution reads from other programs: cgroup paths (/proc/PID/cgroup, any process on
// the node), the kubelet's log folder names, and device IDs the kubelet passes on from device
// plugins and DRA drivers. Nothing may crash, and what is accepted must be well formed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "attribution.hpp"
#include "container_identity.hpp"

namespace {

using namespace hipstack::smid;

void require(bool condition) {
  if (!condition) std::abort();
}

const std::vector<GpuKeys>& gpus() {
  static const std::vector<GpuKeys> keys = [] {
    GpuKeys gpu{0, "GPU-100274a1-0000-0000-e3aa-140f9a5f9e31", "0000:05:00.0", 0, 128, 0, {}};
    for (std::uint32_t p = 0; p < 8; ++p) gpu.partitions.push_back({p, gpu.uuid + "/" + std::to_string(p), 128 + p, "amdgpu_xcp_" + std::to_string(p)});
    return std::vector<GpuKeys>{gpu};
  }();
  return keys;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto ref = parse_container_cgroup(text)) {
    require(ref->container_id.size() == 64 && ref->pod_uid.size() == 36);
    require(ref->pod_uid.find('_') == std::string::npos);
  }
  for (const auto& parsed : {parse_container_log_name(text), parse_pod_log_name(text)}) {
    if (!parsed) continue;
    require(!parsed->second.pod.empty() && !parsed->second.namespace_name.empty());
    for (const char c : parsed->second.pod + parsed->second.namespace_name + parsed->second.container) require(c != '_' && c != '"' && c != '\n');
  }
  const Match plugin = match_held_device({"amd.com/gpu", std::string(text), "", "", {}}, gpus());
  require(plugin.target.has_value() != !plugin.why_not.empty());
  const Match dra = match_held_device({"gpu.amd.com", std::string(text), "ns/claim", "pool", {std::string(text)}}, gpus());
  require(dra.target.has_value() != !dra.why_not.empty());
  const Match nvidia = match_held_device({"gpu.nvidia.com", std::string(text), "ns/claim", "pool", {}}, gpus());
  require(nvidia.target.has_value() != !nvidia.why_not.empty());
  if (plugin.target) require(plugin.target->gpu == 0 && (!plugin.target->partition || *plugin.target->partition < 8));
  return 0;
}
