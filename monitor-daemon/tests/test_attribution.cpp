// The rules of attribution (attribution.hpp, container_identity.hpp): cgroup paths to containers,
// the kubelet's log folder names, device IDs to GPUs and partitions, and a container's summed use.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attribution.hpp"
#include "container_identity.hpp"

namespace hipstack::smid {
namespace {

const std::string kId(64, 'a');
const std::string kUid = "6f1c2b7e-3d4a-4b5c-9e8f-0a1b2c3d4e5f";
const std::string kUidSystemd = "6f1c2b7e_3d4a_4b5c_9e8f_0a1b2c3d4e5f";

TEST(ContainerCgroup, TheKubeletsLayoutsOfEveryRuntime) {
  const std::string slice = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice/";
  EXPECT_EQ(parse_container_cgroup(slice + "cri-containerd-" + kId + ".scope"), (ContainerRef{kUid, kId, "containerd"}));
  EXPECT_EQ(parse_container_cgroup(slice + "crio-" + kId + ".scope"), (ContainerRef{kUid, kId, "cri-o"}));
  EXPECT_EQ(parse_container_cgroup(slice + "docker-" + kId + ".scope"), (ContainerRef{kUid, kId, "docker"}));
  // crun keeps the processes in a child of the container's cgroup.
  EXPECT_EQ(parse_container_cgroup(slice + "crio-" + kId + ".scope/container"), (ContainerRef{kUid, kId, "cri-o"}));
  // Guaranteed pods have no QoS level.
  EXPECT_EQ(parse_container_cgroup("/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope"),
            (ContainerRef{kUid, kId, "containerd"}));
  // The cgroupfs driver: containerd's bare id, CRI-O's crio-<id>; a QoS level or none.
  EXPECT_EQ(parse_container_cgroup("/kubepods/besteffort/pod" + kUid + "/" + kId), (ContainerRef{kUid, kId, ""}));
  EXPECT_EQ(parse_container_cgroup("/kubepods/pod" + kUid + "/crio-" + kId), (ContainerRef{kUid, kId, "cri-o"}));
  // A node inside a container (kind): the kubelet's tree below a prefix.
  EXPECT_EQ(parse_container_cgroup("/system.slice/docker-" + std::string(64, 'b') + ".scope/kubepods/pod" + kUid + "/" + kId),
            (ContainerRef{kUid, kId, ""}));
}

TEST(ContainerCgroup, WhatIsNotAContainer) {
  const std::string pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice";
  EXPECT_FALSE(parse_container_cgroup(""));
  EXPECT_FALSE(parse_container_cgroup("/"));
  EXPECT_FALSE(parse_container_cgroup("/system.slice/vllm.service"));
  EXPECT_FALSE(parse_container_cgroup("/user.slice/user-1000.slice/session-3.scope"));
  EXPECT_FALSE(parse_container_cgroup(pod));                                          // the pod itself
  EXPECT_FALSE(parse_container_cgroup(pod + "/crio-conmon-" + kId + ".scope"));        // CRI-O's monitor
  EXPECT_FALSE(parse_container_cgroup(pod + "/cri-containerd-" + kId.substr(1) + ".scope"));  // 63 digits
  EXPECT_FALSE(parse_container_cgroup(pod + "/cri-containerd-" + std::string(64, 'G') + ".scope"));
  EXPECT_FALSE(parse_container_cgroup("/kubepods/podnot-a-uid/" + kId));
  EXPECT_FALSE(parse_container_cgroup("/kubepods/pod" + kUid.substr(0, 35) + "/" + kId));
}

TEST(PodLogNames, ContainersAndPods) {
  const auto container = parse_container_log_name("trainer-0_ml_worker-" + kId + ".log");
  ASSERT_TRUE(container);
  EXPECT_EQ(container->first, kId);
  EXPECT_EQ(container->second.pod, "trainer-0");
  EXPECT_EQ(container->second.namespace_name, "ml");
  EXPECT_EQ(container->second.container, "worker");
  // Container names may hold dashes: the id is after the last one.
  EXPECT_EQ(parse_container_log_name("p_ns_side-car-" + kId + ".log")->second.container, "side-car");
  const auto pod = parse_pod_log_name("kube-system_coredns-5d78c9869d-abcde_" + kUid);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->first, kUid);
  EXPECT_EQ(pod->second.pod, "coredns-5d78c9869d-abcde");
  EXPECT_EQ(pod->second.namespace_name, "kube-system");
  EXPECT_EQ(pod->second.container, "");
}

TEST(PodLogNames, OtherNamesAreSkipped) {
  EXPECT_FALSE(parse_container_log_name("trainer-0_ml_worker-" + kId));            // no .log
  EXPECT_FALSE(parse_container_log_name("trainer-0_worker-" + kId + ".log"));      // no namespace
  EXPECT_FALSE(parse_container_log_name("trainer-0_ml_worker-abc.log"));           // not an id
  EXPECT_FALSE(parse_container_log_name("Trainer_ml_worker-" + kId + ".log"));     // not a Kubernetes name
  EXPECT_FALSE(parse_container_log_name("t\"x_ml_worker-" + kId + ".log"));
  EXPECT_FALSE(parse_container_log_name("_ml_worker-" + kId + ".log"));
  EXPECT_FALSE(parse_pod_log_name(kUid));                                           // the old /var/log/pods/<uid> form
  EXPECT_FALSE(parse_pod_log_name("ml_trainer-0_not-a-uid"));
  EXPECT_FALSE(parse_pod_log_name("ml__" + kUid));
}

TEST(PodDirectory, ReadsBothFoldersAndSaysWhatItCouldNot) {
  const auto dir = std::filesystem::temp_directory_path() / ("attribution-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "pods" / ("ml_trainer-0_" + kUid));
  std::filesystem::create_directories(dir / "pods" / "junk");
  std::filesystem::create_directories(dir / "containers");
  std::ofstream(dir / "containers" / ("trainer-0_ml_worker-" + kId + ".log")) << "";
  const PodDirectory found = read_pod_directory(dir.string());
  EXPECT_EQ(found.error, "");
  EXPECT_EQ(found.pods.size(), 1u);
  EXPECT_EQ(found.containers.size(), 1u);
  EXPECT_EQ(found.find({kUid, kId, ""})->container, "worker");
  EXPECT_EQ(found.find({kUid, std::string(64, 'f'), ""})->container, "");  // its pod only
  EXPECT_EQ(found.find({kUid, std::string(64, 'f'), ""})->pod, "trainer-0");
  EXPECT_FALSE(found.find({"00000000-0000-0000-0000-000000000000", std::string(64, 'f'), ""}));
  std::filesystem::remove_all(dir / "containers");
  EXPECT_NE(read_pod_directory(dir.string()).error.find("containers"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// An 8-way partitioned AMD GPU (0), a whole AMD GPU (1), an NVIDIA GPU with two MIG devices (2).
std::vector<GpuKeys> node() {
  GpuKeys cpx{0, "GPU-100274a1-0000-0000-e3aa-140f9a5f9e31", "0000:05:00.0", 0, 128, std::nullopt, {}};
  for (std::uint32_t p = 0; p < 8; ++p) {
    cpx.partitions.push_back({p, cpx.uuid + "/" + std::to_string(p), 128 + p, p == 0 ? "" : "amdgpu_xcp_" + std::to_string(p - 1)});
  }
  GpuKeys whole{1, "GPU-100274a1-0000-0000-2250-f807caf2231a", "0000:27:00.0", 8, 136, std::nullopt, {{0, "x/0", 136, ""}}};
  GpuKeys nvidia{2, "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763", "0000:c1:00.0", std::nullopt, std::nullopt, 3,
                 {{0, "MIG-4f1b6f4c-1a2b-5c3d-8e9f-0a1b2c3d4e5f", std::nullopt, ""},
                  {1, "MIG-5a2c7e5d-2b3c-5d4e-9fa0-1b2c3d4e5f60", std::nullopt, ""}}};
  return {cpx, whole, nvidia};
}

Target target(std::uint32_t gpu, std::optional<std::uint32_t> partition = std::nullopt) { return {gpu, partition}; }

std::optional<Target> plugin(const std::string& resource, const std::string& id) {
  return match_held_device({resource, id, "", "", {}}, node()).target;
}

TEST(HeldDevices, DevicePluginIds) {
  // AMD: a BDF is the whole GPU, or partition 0 of a partitioned one; amdgpu_xcp_N the others.
  EXPECT_EQ(plugin("amd.com/gpu", "0000:27:00.0"), target(1));
  EXPECT_EQ(plugin("amd.com/gpu", "0000:05:00.0"), target(0, 0));
  EXPECT_EQ(plugin("amd.com/cpx_nps1", "amdgpu_xcp_2"), target(0, 3));
  EXPECT_EQ(plugin("amd.com/gpu", "0000:27:00.0-slice-3"), target(1));  // a time slice
  // NVIDIA: the GPU's UUID, a MIG device's, and shared replicas.
  EXPECT_EQ(plugin("nvidia.com/gpu", "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763"), target(2));
  EXPECT_EQ(plugin("nvidia.com/gpu", "GPU-B1028956-CFA2-0990-BF4A-5DA9ABB51763::4"), target(2));
  EXPECT_EQ(plugin("nvidia.com/mig-1g.10gb", "MIG-5a2c7e5d-2b3c-5d4e-9fa0-1b2c3d4e5f60"), target(2, 1));
  // Nothing here.
  EXPECT_FALSE(plugin("amd.com/gpu", "0000:ff:00.0"));
  EXPECT_FALSE(plugin("amd.com/gpu", "amdgpu_xcp_99"));
  EXPECT_FALSE(plugin("nvidia.com/gpu", "GPU-b1028956::x"));
  EXPECT_FALSE(plugin("amd.com/gpu", ""));
  EXPECT_FALSE(plugin("amd.com/gpu", "::1"));
  const Match miss = match_held_device({"amd.com/gpu", "0000:ff:00.0", "", "", {}}, node());
  EXPECT_NE(miss.why_not.find("0000:ff:00.0"), std::string::npos);
}

TEST(HeldDevices, DraDevices) {
  auto dra = [](const std::string& driver, const std::string& name, std::vector<std::string> cdi = {}) {
    return match_held_device({driver, name, "ml/claim", "node-a", std::move(cdi)}, node());
  };
  EXPECT_EQ(dra("gpu.amd.com", "gpu-8-136").target, target(1));
  EXPECT_EQ(dra("gpu.amd.com", "gpu-1-131").target, target(0, 3));  // a pre-made partition's render node
  EXPECT_EQ(dra("gpu.nvidia.com", "gpu-3").target, target(2));  // the minor of /dev/nvidia3
  EXPECT_EQ(dra("example.com", "gpu-0", {"k8s.gpu.example.com/device=GPU-b1028956-cfa2-0990-bf4a-5da9abb51763"}).target,
            target(2));
  const Match unknown = dra("gpu.nvidia.com", "gpu-0", {"k8s.gpu.nvidia.com/device=gpu-0"});
  EXPECT_FALSE(unknown.target);
  EXPECT_NE(unknown.why_not.find("gpu.nvidia.com"), std::string::npos);
  const Match mig = dra("gpu.nvidia.com", "gpu-3-mig-9-4-4");
  EXPECT_FALSE(mig.target);
  EXPECT_NE(mig.why_not.find("MIG device"), std::string::npos);
  // Each driver's form only: AMD's card-render is not NVIDIA's minor, nor the other way round.
  EXPECT_FALSE(dra("gpu.nvidia.com", "gpu-8-136").target);
  EXPECT_FALSE(dra("gpu.amd.com", "gpu-3").target);
  EXPECT_FALSE(dra("gpu.amd.com", "gpu-8-999").target);
  EXPECT_FALSE(dra("gpu.amd.com", "gpu-x-136").target);
}

TEST(HeldDevices, HoldersAndUnmatchedGpuDevicesOnly) {
  const std::vector<ContainerDevices> held = {
      {"a", "ml", "c", {{"amd.com/gpu", "0000:27:00.0-slice-0", "", "", {}}, {"amd.com/gpu", "0000:27:00.0-slice-1", "", "", {}}}},
      {"b", "ml", "c", {{"rdma/hca", "mlx5_0", "", "", {}}, {"nvidia.com/gpu", "GPU-0000", "", "", {}}}}};
  Attribution out;
  match_holders(held, node(), out);
  ASSERT_EQ(out.holders.size(), 1u);  // two replicas of one GPU in one container: one holding
  EXPECT_EQ(out.holders[0].target, target(1));
  ASSERT_EQ(out.unmatched.size(), 1u);  // the NIC is not a GPU device: not reported
  EXPECT_EQ(out.unmatched[0].device.id, "GPU-0000");
}

smi::Reading number(smi::MetricId id, smi::Value value, std::string instance = "") {
  smi::Reading r;
  r.id = id;
  r.instance = std::move(instance);
  r.status = smi::Status::ok;
  r.value = std::move(value);
  return r;
}

TEST(ContainerUse, ProcessesGroupedByContainerWithGaugesSummed) {
  const std::string cgroup = "/kubepods/pod" + kUid + "/" + kId;
  smi::ProcessInfo a;
  a.pid = 10;
  a.cgroup = cgroup;
  a.readings = {number(smi::MetricId::process_vram, std::int64_t{1} << 30), number(smi::MetricId::process_engine_busy, 20.5, "gfx"),
                number(smi::MetricId::process_gpu_instance_id, std::int64_t{3}), number(smi::MetricId::process_sdma_usage, std::int64_t{7}),
                number(smi::MetricId::process_type, std::string("compute"))};
  smi::ProcessInfo b = a;
  b.pid = 11;
  b.readings = {number(smi::MetricId::process_vram, std::int64_t{2} << 30), number(smi::MetricId::process_engine_busy, 10.0, "gfx")};
  b.readings.push_back(number(smi::MetricId::process_gtt, std::int64_t{5}));
  b.readings.back().status = smi::Status::error;  // a failed read adds nothing
  smi::ProcessInfo host;
  host.pid = 12;
  host.cgroup = "/system.slice/x.service";
  host.readings = {number(smi::MetricId::process_vram, std::int64_t{99})};
  PodDirectory directory;
  directory.containers[kId] = {"trainer-0", "ml", "worker"};
  const auto use = container_use(3, {a, b, host}, directory);
  ASSERT_EQ(use.size(), 1u);
  EXPECT_EQ(use[0].gpu, 3u);
  EXPECT_EQ(use[0].pids, (std::vector<std::int32_t>{10, 11}));
  EXPECT_EQ(use[0].name->container, "worker");
  std::map<std::pair<smi::MetricId, std::string>, smi::Value> sums;
  for (const smi::Reading& r : use[0].readings) sums[{r.id, r.instance}] = r.value;
  EXPECT_EQ(sums.size(), 2u);  // no instance ids, counters, text or failed reads
  const smi::Value vram = sums[std::pair{smi::MetricId::process_vram, std::string()}];
  const smi::Value busy = sums[std::pair{smi::MetricId::process_engine_busy, std::string("gfx")}];
  EXPECT_EQ(vram, smi::Value(std::int64_t{3} << 30));
  EXPECT_EQ(busy, smi::Value(30.5));
}

}  // namespace
}  // namespace hipstack::smid
