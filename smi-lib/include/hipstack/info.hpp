// hipstack/info.hpp: what hipstack-info reports (docs/info.md), as a library so that other tools
// (hipstack-validate) can ask the same questions.
//
// read_agents: every KFD topology node (CPU and GPU agents, AMD) and every NVIDIA GPU (CUDA driver
// API and NVML, both loaded at run time). probe_runtimes: whether the vendor runtime loads in this
// process and what devices it sees. install_checks: driver modules, device nodes and their
// permissions, runtimes, and whether the counts agree, each with advice. C++ only; nothing here
// changes GPU state.
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smi {

struct Agent {  // one KFD node or one NVIDIA GPU
  enum class Kind { cpu, gpu };
  Kind kind = Kind::cpu;
  std::string vendor;                     // "AMD", "NVIDIA", "Intel" ... as known; "" when unknown
  int node = -1;                          // KFD node id, -1 on NVIDIA
  std::string name;                       // GPU: the ISA ("gfx942") as rocminfo names AMD agents, NVML/CUDA name on NVIDIA; CPU: model name
  std::string marketing_name;             // "AMD Instinct MI300X", "NVIDIA H100 80GB HBM3"; CPU: model name
  std::string isa;                        // "gfx942", "sm_90"; CPUs: empty
  std::string bdf, uuid;                  // "0000:c1:00.0" lowercase; empty when unknown
  int compute_units = 0, simds_per_cu = 0, wavefront_size = 0, max_waves_per_simd = 0;
  int max_clock_mhz = 0, memory_clock_mhz = 0, cpu_cores = 0;
  struct Pool {
    std::string kind;                     // "system", "vram_public", "vram_private", "gds", "lds", "scratch", "device"
    std::uint64_t bytes = 0;
    int width_bits = 0;                   // memory bus width, 0 when unknown
    int max_clock_mhz = 0;
  };
  std::vector<Pool> pools;
  struct Cache {
    int level = 0;
    std::uint64_t bytes = 0;              // size of one instance
    std::string type;                     // "data", "instruction", "unified" (both), "other"
    int line_bytes = 0;
    int instances = 1;                    // how many of them the node lists (one per CU or per CU group)
  };
  std::vector<Cache> caches;              // one entry per (level, type, size, line size)
  struct Link {
    int to_node = -1;
    std::string type;                     // "pcie", "xgmi", "hypertransport", "qpi", "type N"
    int weight = 0;
    std::uint64_t min_bandwidth_mbps = 0, max_bandwidth_mbps = 0;  // MB/s as the KFD reports it; 0 unknown
  };
  std::vector<Link> links;                // KFD io_links

  // More of what rocminfo shows, where the source gives it (0 / "" when not).
  std::string source;                     // "kfd", "cuda+nvml", "cuda", "nvml"
  std::uint64_t gpu_id = 0;               // KFD gpu_id (0 for CPUs)
  int domain = 0;                         // PCI domain
  std::uint64_t location_id = 0;          // KFD location_id (bus << 8 | device << 3 | function)
  int drm_render_minor = -1;              // /dev/dri/renderD<minor>; -1 none
  std::uint32_t vendor_id = 0, device_id = 0;  // PCI ids
  int partition_index = -1;               // position among the KFD nodes of one PCI slot (compute partitions); -1 alone
  int partition_count = 0;                // KFD nodes on this node's PCI slot (0 for CPUs)
  int shader_engines = 0;                 // KFD array_count
  int simd_arrays_per_engine = 0, cu_per_simd_array = 0;
  int xcc_count = 0;                      // KFD num_xcc
  std::uint64_t lds_bytes = 0;            // local data share (AMD) / shared memory per SM (NVIDIA)
  std::uint64_t local_memory_bytes = 0;   // KFD local_mem_size, or total device memory on NVIDIA
  int fw_version = 0, sdma_fw_version = 0;
  int cp_queues = 0, sdma_engines = 0, sdma_xgmi_engines = 0;
  std::uint64_t hive_id = 0;              // XGMI hive, 0 none
  std::string unique_id;                  // 16 hex digits (AMD ASIC serial), "" when 0
  int cpu_core_id_base = 0;
  int compute_capability_major = 0, compute_capability_minor = 0;  // NVIDIA
  int max_threads_per_block = 0, max_threads_per_cu = 0, registers_per_cu = 0;  // NVIDIA
  std::vector<std::string> problems;      // malformed or missing values of this node, with the file named
};

struct RuntimeProbe {  // the vendor runtime, loaded with dlopen in this process
  std::string runtime;                    // "hip" or "cuda"
  bool found = false;                     // the library loaded
  std::string library_path, version, error;  // error: why it did not load / init
  std::string skipped;                    // why it was not tried ("capture", "no amdgpu driver loaded"); "" when tried
  std::string driver_version;             // hipDriverGetVersion / cuDriverGetVersion as text
  struct Device {
    int index = 0;
    std::string name, bdf, isa;           // isa: "sm_90" on CUDA; "" on HIP (not an integer attribute)
    std::uint64_t memory_bytes = 0;
    int compute_units = 0;
    int warp_size = 0;
  };
  std::vector<Device> devices;
};

struct InstallCheck {
  std::string name;                       // stable: "driver.amdgpu_loaded", "device.kfd", ... (docs/info.md)
  enum class Status { pass, warn, fail, skip } status = Status::skip;
  std::string detail, advice;             // advice: what to do; "" when nothing
};
HIPSTACK_SMI_CXX_API std::string_view check_status_name(InstallCheck::Status status) noexcept;  // "PASS", ...

// KFD topology (sysfs_root aware; a topology-only capture works) and, on the live system only,
// NVIDIA GPUs (libcuda.so.1 for SM count, warp size, clocks, caches and shared memory; NVML for
// UUID, memory and name). Throws Error(invalid_argument) when a given root is not a folder; a
// malformed node becomes an agent with problems (or is named by the topology.kfd check).
HIPSTACK_SMI_CXX_API std::vector<Agent> read_agents(const OpenOptions& options);

// HIP (libamdhip64.so.6, .so.5) when the amdgpu driver is loaded, CUDA (libcuda.so.1) when the
// nvidia driver is loaded; always one probe per runtime, with `skipped` set when not tried (a
// capture: "capture"). Reads only: no allocation, no context beyond the runtime's own start-up.
HIPSTACK_SMI_CXX_API std::vector<RuntimeProbe> probe_runtimes(const OpenOptions& options);

// The install checks (docs/info.md). Device-node checks look at devfs_root when given, else at the
// live /dev unless sysfs_root names a capture (then they are skipped).
HIPSTACK_SMI_CXX_API std::vector<InstallCheck> install_checks(const OpenOptions& options,
                                                              const std::vector<Agent>& agents,
                                                              const std::vector<RuntimeProbe>& runtimes);

// true when no check failed (warnings and skips allowed): hipstack-info's exit status 0.
HIPSTACK_SMI_CXX_API bool install_usable(const std::vector<InstallCheck>& checks) noexcept;

}  // namespace hipstack::smi
