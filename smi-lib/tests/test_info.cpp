// hipstack/info.hpp: KFD agents from the bundled topologies (values as the fixture files hold them),
// malformed topologies (named problems, no crash), and the install checks on fake /sys and /dev trees.
#include <grp.h>
#include <gtest/gtest.h>
#include <hipstack/info.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "info/info_internal.hpp"

namespace hipstack::smi {
namespace {

namespace fs = std::filesystem;
using detail::info::Identity;
using detail::info::Roots;

std::vector<Agent> agents_of(const std::string& capture) {
  OpenOptions options;
  options.sysfs_root = std::string(HIPSTACK_CAPTURES_DIR) + "/" + capture + "/sys";
  return read_agents(options);
}

std::size_t count_kind(const std::vector<Agent>& agents, Agent::Kind kind) {
  return static_cast<std::size_t>(std::count_if(agents.begin(), agents.end(), [kind](const Agent& a) { return a.kind == kind; }));
}

const Agent& node(const std::vector<Agent>& agents, int id) {
  for (const Agent& a : agents) {
    if (a.node == id) return a;
  }
  throw std::runtime_error("no node " + std::to_string(id));
}

TEST(KfdAgents, Mi300xCpx) {
  const auto agents = agents_of("real/k8s-device-plugin/topo-mi300-cpx");
  ASSERT_EQ(agents.size(), 65u);
  EXPECT_EQ(count_kind(agents, Agent::Kind::cpu), 2u);
  EXPECT_EQ(count_kind(agents, Agent::Kind::gpu), 63u);  // the fixture holds 63 of the 64 partitions
  const Agent& cpu = node(agents, 1);
  EXPECT_EQ(cpu.kind, Agent::Kind::cpu);
  EXPECT_EQ(cpu.cpu_cores, 96);
  EXPECT_EQ(cpu.cpu_core_id_base, 128);
  EXPECT_EQ(cpu.max_clock_mhz, 2750);
  ASSERT_EQ(cpu.links.size(), 32u);
  EXPECT_EQ(cpu.links[0].type, "hypertransport");
  EXPECT_EQ(cpu.links[0].to_node, 0);
  EXPECT_EQ(cpu.links[0].weight, 32);

  const Agent& gpu = node(agents, 2);
  EXPECT_EQ(gpu.kind, Agent::Kind::gpu);
  EXPECT_EQ(gpu.vendor, "AMD");
  EXPECT_EQ(gpu.name, "gfx942");
  EXPECT_EQ(gpu.isa, "gfx942");
  EXPECT_EQ(gpu.marketing_name, "AMD Instinct MI300X");
  EXPECT_EQ(gpu.device_id, 0x74a1u);
  EXPECT_EQ(gpu.compute_units, 38);  // simd_count 152 / simd_per_cu 4
  EXPECT_EQ(gpu.simds_per_cu, 4);
  EXPECT_EQ(gpu.wavefront_size, 64);
  EXPECT_EQ(gpu.max_waves_per_simd, 8);
  EXPECT_EQ(gpu.max_clock_mhz, 2100);
  EXPECT_EQ(gpu.bdf, "0000:05:00.0");  // location_id 1280
  EXPECT_EQ(gpu.location_id, 1280u);
  EXPECT_EQ(gpu.drm_render_minor, 128);
  EXPECT_EQ(gpu.lds_bytes, 64u * 1024);
  EXPECT_EQ(gpu.fw_version, 177);
  EXPECT_EQ(gpu.xcc_count, 1);
  EXPECT_EQ(gpu.unique_id, "e3aa140f9a5f9e31");  // 16404946649897475633
  EXPECT_EQ(gpu.uuid, "GPU-e3aa140f9a5f9e31");
  EXPECT_EQ(gpu.partition_index, 0);
  EXPECT_EQ(gpu.partition_count, 8);
  ASSERT_EQ(gpu.links.size(), 63u);
  EXPECT_EQ(gpu.links[0].type, "pcie");
  EXPECT_EQ(gpu.links[0].to_node, 0);
  EXPECT_EQ(gpu.links[0].weight, 20);
  EXPECT_EQ(gpu.links[0].max_bandwidth_mbps, 64000u);
  EXPECT_TRUE(gpu.problems.empty());

  const Agent& third = node(agents, 5);  // location_id 1283: partition 3 of 0000:05:00
  EXPECT_EQ(third.bdf, "0000:05:00.3");
  EXPECT_EQ(third.partition_index, 3);
  // The slot at bus 0xe5 holds the 7 partitions the fixture kept.
  const auto e5 = std::count_if(agents.begin(), agents.end(), [](const Agent& a) { return a.bdf.rfind("0000:e5:00.", 0) == 0; });
  EXPECT_EQ(e5, 7);
  EXPECT_EQ(node(agents, 64).partition_count, 7);
}

TEST(KfdAgents, Mi210Xgmi) {
  const auto agents = agents_of("real/k8s-device-plugin/topo-mi210-xgmi-pcie");
  ASSERT_EQ(agents.size(), 10u);
  EXPECT_EQ(count_kind(agents, Agent::Kind::cpu), 2u);
  EXPECT_EQ(count_kind(agents, Agent::Kind::gpu), 8u);
  EXPECT_EQ(node(agents, 0).cpu_cores, 64);
  EXPECT_EQ(node(agents, 0).max_clock_mhz, 2450);
  const Agent& gpu = node(agents, 2);
  EXPECT_EQ(gpu.isa, "gfx90a");
  EXPECT_EQ(gpu.marketing_name, "AMD Instinct MI210");
  EXPECT_EQ(gpu.compute_units, 104);  // 416 / 4
  EXPECT_EQ(gpu.wavefront_size, 64);
  EXPECT_EQ(gpu.max_clock_mhz, 1700);
  EXPECT_EQ(gpu.bdf, "0000:63:00.0");  // location_id 25344
  EXPECT_EQ(gpu.unique_id, "1901ead3a2ecd4a6");
  EXPECT_EQ(gpu.partition_index, -1);
  EXPECT_EQ(gpu.partition_count, 1);
  ASSERT_EQ(gpu.links.size(), 4u);
  EXPECT_EQ(gpu.links[0].type, "pcie");
  EXPECT_EQ(gpu.links[0].to_node, 0);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(gpu.links[i].type, "xgmi");
    EXPECT_EQ(gpu.links[i].to_node, 2 + i);
    EXPECT_EQ(gpu.links[i].weight, 15);
  }
  std::set<std::string> bdfs;
  for (const Agent& a : agents) {
    if (a.kind == Agent::Kind::gpu) bdfs.insert(a.bdf);
  }
  EXPECT_EQ(bdfs.size(), 8u);  // eight distinct GPUs
}

TEST(KfdAgents, TopologyParsingHasPoolsAndCaches) {
  const auto agents = agents_of("real/k8s-device-plugin/topology-parsing");
  ASSERT_EQ(agents.size(), 3u);
  EXPECT_EQ(count_kind(agents, Agent::Kind::gpu), 2u);
  const Agent& cpu = node(agents, 0);
  EXPECT_EQ(cpu.cpu_cores, 20);
  ASSERT_EQ(cpu.pools.size(), 1u);
  EXPECT_EQ(cpu.pools[0].kind, "system");
  EXPECT_EQ(cpu.pools[0].bytes, 67155521536u);
  EXPECT_EQ(cpu.pools[0].width_bits, 64);
  EXPECT_EQ(cpu.pools[0].max_clock_mhz, 2666);
  const Agent& gpu = node(agents, 1);
  EXPECT_EQ(gpu.gpu_id, 13261u);
  EXPECT_EQ(gpu.isa, "gfx900");  // no gfx_target_version here: from the device id 0x6860
  EXPECT_EQ(gpu.compute_units, 64);
  EXPECT_EQ(gpu.max_waves_per_simd, 10);
  EXPECT_EQ(gpu.local_memory_bytes, 17163091968u);
  ASSERT_EQ(gpu.pools.size(), 1u);
  EXPECT_EQ(gpu.pools[0].kind, "vram_public");
  EXPECT_EQ(gpu.pools[0].bytes, 17163091968u);
  EXPECT_EQ(gpu.pools[0].width_bits, 2048);
  EXPECT_EQ(gpu.memory_clock_mhz, 945);
  int instances = 0;
  for (const Agent::Cache& c : gpu.caches) {
    EXPECT_EQ(c.level, 1);
    instances += c.instances;
  }
  EXPECT_EQ(instances, 96);  // caches_count 96
  EXPECT_TRUE(gpu.problems.empty()) << gpu.problems.front();
}

TEST(KfdAgents, ConstructedAndPhoenix) {
  const auto spx = agents_of("constructed/mi300x-8gpu-spx-nps1");
  EXPECT_EQ(count_kind(spx, Agent::Kind::gpu), 8u);
  const Agent& gpu = node(spx, 2);
  EXPECT_EQ(gpu.compute_units, 304);  // 1216 / 4
  EXPECT_EQ(gpu.xcc_count, 8);
  ASSERT_EQ(gpu.pools.size(), 1u);
  EXPECT_EQ(gpu.pools[0].bytes, 206141652992u);
  EXPECT_EQ(gpu.pools[0].width_bits, 8192);
  ASSERT_EQ(gpu.caches.size(), 5u);
  EXPECT_EQ(gpu.caches.back().level, 3);
  EXPECT_EQ(gpu.caches.back().bytes, 262144u * 1024);
  EXPECT_EQ(count_kind(agents_of("constructed/mi300x-8gpu-cpx-nps1"), Agent::Kind::gpu), 64u);

  const auto phoenix = agents_of("real/lact/phoenix");
  const Agent& apu = node(phoenix, 1);
  EXPECT_EQ(apu.isa, "gfx1103");
  EXPECT_EQ(apu.wavefront_size, 32);
  EXPECT_EQ(apu.compute_units, 12);  // 24 / 2
  const auto l2 = std::find_if(apu.caches.begin(), apu.caches.end(), [](const Agent::Cache& c) { return c.level == 2; });
  ASSERT_NE(l2, apu.caches.end());
  EXPECT_EQ(l2->bytes, 2048u * 1024);
  EXPECT_EQ(l2->line_bytes, 128);
}

TEST(KfdAgents, RootThatIsNotAFolder) {
  OpenOptions options;
  options.sysfs_root = "/nonexistent/hipstack/sys";
  EXPECT_THROW(read_agents(options), Error);
}

// A temporary tree standing for /sys and /dev.
class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("hipstack-info-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "sys");
    fs::create_directories(root_ / "dev");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, std::string_view text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  void mkdir(const std::string& relative) { fs::create_directories(root_ / relative); }
  std::string kfd_node(int n) { return "sys/class/kfd/kfd/topology/nodes/" + std::to_string(n); }
  static constexpr const char* kGpu =
      "cpu_cores_count 0\nsimd_count 8\nsimd_per_cu 2\nwave_front_size 32\nlocation_id 256\ndevice_id 29857\n"
      "vendor_id 4098\ndrm_render_minor 128\ngfx_target_version 110000\n";
  OpenOptions options() const {
    OpenOptions o;
    o.sysfs_root = (root_ / "sys").string();
    o.devfs_root = (root_ / "dev").string();
    return o;
  }
  Roots roots() const {
    return {(root_ / "sys").string(), (root_ / "proc").string(), (root_ / "dev").string(), true, true};
  }
  std::vector<InstallCheck> checks(const std::vector<Agent>& agents, const std::vector<RuntimeProbe>& runtimes,
                                   const Identity& who) const {
    const Roots r = roots();
    const detail::RootedFs view(r.sys, r.proc, r.dev);
    return detail::info::run_install_checks(view, r, agents, runtimes, who);
  }
  fs::path root_;
};

const InstallCheck& check_named(const std::vector<InstallCheck>& checks, std::string_view name) {
  for (const InstallCheck& c : checks) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no check " + std::string(name));
}

TEST_F(FakeTree, MalformedTopologyIsNamedNotFatal) {
  write(kfd_node(0) + "/properties", "cpu_cores_count 8\nsimd_count 0\n");
  write(kfd_node(1) + "/properties", std::string(kGpu) + "max_waves_per_simd ten\nfw_version\n");
  write(kfd_node(2) + "/properties", "cpu_cores_count 0\nsimd_count 4\nsimd_per");                // truncated
  write(kfd_node(3) + "/properties", "cpu_cores_count 0\nsimd_count x\n");                        // garbage kind
  mkdir(kfd_node(4));                                                                               // no properties
  write(kfd_node(5) + "/properties", "");                                                           // empty
  write(kfd_node(6) + "/properties", std::string(kGpu) + "max_engine_clk_fcompute 99999999999999999999999\n");
  mkdir(kfd_node(6) + "/io_links/0");                                                               // link without properties
  write(kfd_node(7) + "/properties", "cpu_cores_count 0\nsimd_count 4\nsimd_per_cu 0\nwave_front_size 64\n"
                                     "location_id 512\ndevice_id 1\n");

  const auto agents = read_agents(options());
  std::vector<int> nodes;
  for (const Agent& a : agents) nodes.push_back(a.node);
  EXPECT_EQ(nodes, (std::vector<int>{0, 1, 2, 6, 7}));

  const Agent& one = node(agents, 1);
  EXPECT_EQ(one.compute_units, 4);
  ASSERT_EQ(one.problems.size(), 2u);
  EXPECT_NE(one.problems[0].find("nodes/1/properties: line 10: max_waves_per_simd has value 'ten', not a number"),
            std::string::npos) << one.problems[0];
  EXPECT_NE(one.problems[1].find("line 11: 'fw_version' has no value"), std::string::npos) << one.problems[1];

  const Agent& two = node(agents, 2);
  EXPECT_EQ(two.kind, Agent::Kind::gpu);
  EXPECT_EQ(two.compute_units, 0);
  const auto mentions = [&two](std::string_view text) {
    return std::any_of(two.problems.begin(), two.problems.end(), [text](const std::string& p) { return p.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(mentions("'simd_per' has no value"));
  EXPECT_TRUE(mentions("no simd_per_cu"));
  EXPECT_TRUE(mentions("no location_id"));

  const Agent& six = node(agents, 6);
  EXPECT_EQ(six.max_clock_mhz, 0);
  EXPECT_EQ(six.problems.size(), 2u);  // the overflowing clock and the unreadable io link
  EXPECT_NE(six.problems.back().find("io_links/0/properties: cannot read"), std::string::npos) << six.problems.back();

  const Agent& seven = node(agents, 7);
  ASSERT_EQ(seven.problems.size(), 1u);
  EXPECT_NE(seven.problems[0].find("simd_per_cu is 0"), std::string::npos);

  // topology.kfd names the nodes that became no agent, and the problems.
  const Identity root_user{};
  const auto results = checks(agents, {}, root_user);
  const InstallCheck& topology = check_named(results, "topology.kfd");
  EXPECT_EQ(topology.status, InstallCheck::Status::warn);
  EXPECT_NE(topology.detail.find("5 of 8 node(s) read"), std::string::npos) << topology.detail;
  EXPECT_NE(topology.detail.find("and "), std::string::npos) << topology.detail;
}

// A named group other than root for the fake device nodes (or skip).
std::optional<gid_t> some_group() {
  if (::geteuid() != 0) return ::getegid() != 0 ? std::optional<gid_t>(::getegid()) : std::nullopt;
  for (const char* name : {"render", "video", "users", "daemon", "nogroup"}) {
    if (const group* g = ::getgrnam(name); g != nullptr && g->gr_gid != 0) return g->gr_gid;
  }
  return std::nullopt;
}

class DeviceNodes : public FakeTree {
 protected:
  void SetUp() override {
    FakeTree::SetUp();
    const auto gid = some_group();
    if (!gid) GTEST_SKIP() << "no group other than root to own the fake nodes";
    gid_ = *gid;
    mkdir("sys/module/amdgpu");
    write(kfd_node(0) + "/properties", "cpu_cores_count 8\nsimd_count 0\n");
    write(kfd_node(1) + "/properties", kGpu);
    for (const char* dev : {"dev/kfd", "dev/dri/renderD128"}) make_node(dev, 0660);
  }
  void make_node(const std::string& relative, mode_t mode) {
    write(relative, "");
    const std::string path = (root_ / relative).string();
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    ASSERT_EQ(::chown(path.c_str(), static_cast<uid_t>(-1), gid_), 0);
  }
  Identity stranger(std::vector<gid_t> groups = {}) const {
    Identity who;
    who.real = false;
    who.uid = 54321;
    who.gid = 54321;
    who.groups = std::move(groups);
    who.user = "nobody-in-particular";
    return who;
  }
  RuntimeProbe hip_with(std::vector<std::string> bdfs) const {
    RuntimeProbe hip;
    hip.runtime = "hip";
    hip.found = true;
    hip.library_path = "/opt/rocm/lib/libamdhip64.so.6";
    hip.version = "6.2.41134";
    for (std::size_t i = 0; i < bdfs.size(); ++i) hip.devices.push_back({static_cast<int>(i), "gfx1100", bdfs[i], "", 0, 0, 32});
    return hip;
  }
  gid_t gid_ = 0;
};

TEST_F(DeviceNodes, GroupMembersPassOthersGetTheGroupAdvice) {
  const auto agents = read_agents(options());
  ASSERT_EQ(agents.size(), 2u);
  const std::vector<RuntimeProbe> runtimes = {hip_with({"0000:01:00.0"})};
  const std::string group = ::getgrgid(gid_)->gr_name;

  const auto member = checks(agents, runtimes, stranger({gid_}));
  for (const char* name : {"driver.amdgpu_loaded", "topology.kfd", "agents.gpu", "device.kfd", "device.render_nodes",
                           "runtime.hip", "devices.agree"}) {
    EXPECT_EQ(check_named(member, name).status, InstallCheck::Status::pass) << name << ": " << check_named(member, name).detail;
  }
  EXPECT_EQ(check_named(member, "driver.nvidia_loaded").status, InstallCheck::Status::skip);
  EXPECT_TRUE(install_usable(member));

  const auto outsider = checks(agents, runtimes, stranger());
  const InstallCheck& kfd = check_named(outsider, "device.kfd");
  EXPECT_EQ(kfd.status, InstallCheck::Status::fail);
  EXPECT_NE(kfd.detail.find("/dev/kfd (mode 0660, group '" + group + "')"), std::string::npos) << kfd.detail;
  EXPECT_EQ(kfd.advice, "add yourself to group '" + group + "': sudo usermod -aG " + group + " $USER, then log in again");
  EXPECT_EQ(check_named(outsider, "device.render_nodes").status, InstallCheck::Status::fail);
  EXPECT_FALSE(install_usable(outsider));
}

TEST_F(DeviceNodes, OwnerOnlyNodeAndMissingNode) {
  make_node("dev/kfd", 0600);
  fs::remove(root_ / "dev/dri/renderD128");
  const auto results = checks(read_agents(options()), {hip_with({"0000:01:00.0"})}, stranger({gid_}));
  const InstallCheck& kfd = check_named(results, "device.kfd");
  EXPECT_EQ(kfd.status, InstallCheck::Status::fail);
  EXPECT_NE(kfd.advice.find("udev rule"), std::string::npos) << kfd.advice;
  const InstallCheck& render = check_named(results, "device.render_nodes");
  EXPECT_EQ(render.status, InstallCheck::Status::fail);
  EXPECT_NE(render.detail.find("/dev/dri/renderD128 is missing"), std::string::npos) << render.detail;
}

TEST_F(DeviceNodes, RuntimeMissingOrSeeingFewerDevices) {
  const auto agents = read_agents(options());
  RuntimeProbe missing;
  missing.runtime = "hip";
  missing.error = "cannot load the HIP runtime: libamdhip64.so.6: cannot open shared object file";
  auto results = checks(agents, {missing}, stranger({gid_}));
  const InstallCheck& hip = check_named(results, "runtime.hip");
  EXPECT_EQ(hip.status, InstallCheck::Status::fail);
  EXPECT_NE(hip.advice.find("install the HIP runtime"), std::string::npos);
  EXPECT_EQ(check_named(results, "devices.agree").status, InstallCheck::Status::skip);

  results = checks(agents, {hip_with({})}, stranger({gid_}));
  EXPECT_EQ(check_named(results, "runtime.hip").status, InstallCheck::Status::fail);

  results = checks(agents, {hip_with({"0000:02:00.0"})}, stranger({gid_}));
  const InstallCheck& agree = check_named(results, "devices.agree");
  EXPECT_EQ(agree.status, InstallCheck::Status::fail);
  EXPECT_NE(agree.detail.find("not seen: 0000:01:00"), std::string::npos) << agree.detail;
}

TEST_F(FakeTree, NoGpuAtAllGivesTheNoDriverAdvice) {
  mkdir("sys/module/ext4");  // modules are recorded, neither GPU driver among them
  const auto agents = read_agents(options());
  EXPECT_TRUE(agents.empty());
  const auto results = checks(agents, probe_runtimes(options()), Identity{});
  EXPECT_EQ(check_named(results, "driver.amdgpu_loaded").status, InstallCheck::Status::fail);
  EXPECT_EQ(check_named(results, "driver.nvidia_loaded").status, InstallCheck::Status::fail);
  const InstallCheck& gpus = check_named(results, "agents.gpu");
  EXPECT_EQ(gpus.status, InstallCheck::Status::fail);
  EXPECT_EQ(gpus.advice.rfind("no amdgpu or nvidia kernel module is loaded: no GPU driver is installed or no GPU is present", 0), 0u);
  EXPECT_EQ(check_named(results, "runtime.hip").detail, "capture");
  EXPECT_FALSE(install_usable(results));
}

TEST_F(FakeTree, NvidiaNodes) {
  const auto gid = some_group();
  if (!gid) GTEST_SKIP() << "no group other than root";
  mkdir("sys/module/nvidia");
  write("sys/module/nvidia/version", "580.65.06\n");
  for (const char* dev : {"dev/nvidiactl", "dev/nvidia0", "dev/nvidia-uvm"}) write(dev, "");
  Agent gpu;
  gpu.kind = Agent::Kind::gpu;
  gpu.vendor = "NVIDIA";
  gpu.source = "cuda+nvml";
  gpu.bdf = "0000:18:00.0";
  auto results = checks({gpu}, {}, Identity{});
  EXPECT_EQ(check_named(results, "driver.nvidia_loaded").detail, "nvidia kernel module loaded (version 580.65.06)");
  EXPECT_EQ(check_named(results, "device.nvidia_nodes").status, InstallCheck::Status::pass);
  EXPECT_EQ(check_named(results, "driver.amdgpu_loaded").status, InstallCheck::Status::skip);
  fs::remove(root_ / "dev/nvidia-uvm");
  results = checks({gpu}, {}, Identity{});
  const InstallCheck& nodes = check_named(results, "device.nvidia_nodes");
  EXPECT_EQ(nodes.status, InstallCheck::Status::fail);
  EXPECT_NE(nodes.detail.find("/dev/nvidia-uvm is missing"), std::string::npos);
  EXPECT_NE(nodes.advice.find("modprobe nvidia-uvm"), std::string::npos);
}

TEST(InstallChecks, CaptureSkipsDevicesAndRuntimes) {
  OpenOptions options;
  options.sysfs_root = std::string(HIPSTACK_CAPTURES_DIR) + "/constructed/mi300x-8gpu-spx-nps1/sys";
  const auto agents = read_agents(options);
  const auto runtimes = probe_runtimes(options);
  ASSERT_EQ(runtimes.size(), 2u);
  for (const RuntimeProbe& r : runtimes) EXPECT_EQ(r.skipped, "capture");
  const auto results = install_checks(options, agents, runtimes);
  EXPECT_EQ(check_named(results, "driver.amdgpu_loaded").status, InstallCheck::Status::pass);
  EXPECT_EQ(check_named(results, "agents.gpu").detail, "8 GPU agent(s): 8 AMD (KFD), 0 NVIDIA");
  for (const char* name : {"device.kfd", "device.render_nodes", "runtime.hip", "runtime.cuda", "devices.agree"}) {
    EXPECT_EQ(check_named(results, name).status, InstallCheck::Status::skip) << name;
  }
  EXPECT_TRUE(install_usable(results));
}

}  // namespace
}  // namespace hipstack::smi
