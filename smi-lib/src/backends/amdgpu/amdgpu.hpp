// amdgpu backend internals: what discovery learns about each card, shared by the files of this
// folder (discovery, device facts, live metrics, processes, topology).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <map>
#include <string>
#include <vector>

#include "../../fs_view.hpp"
#include "../../readings.hpp"
#include "gpu_metrics.hpp"
#include "kfd_smi_events.hpp"
#include "../../kfd_topology.hpp"
#include "../../parse.hpp"
#include "../backend.hpp"

namespace hipstack::smi::detail::amdgpu {

// The KFD topology's one reader (../../kfd_topology.hpp); the backend keeps each GPU's nodes.
using KfdNode = kfd::Node;
using KfdTopology = kfd::Topology;

struct KfdMemory {
  std::int64_t bytes = 0;        // sum of mem_banks size_in_bytes
  std::int64_t clock_max = 0;    // MHz
};
KfdMemory read_mem_banks(const FsView& fs, int node);

struct PciAddress {
  std::uint32_t domain = 0, bus = 0, device = 0, function = 0;
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::uint32_t kfd_location() const { return bus << 8 | device << 3 | function; }
};
std::optional<PciAddress> parse_bdf(std::string_view text);

// Marketing name and gfx target from the device-id table (and libdrm's amdgpu.ids when installed).
struct DeviceIdFacts {
  std::string name;
  std::string gfx_target;   // empty when unknown
  bool integrated = false;
  bool known = false;
};
// amdgpu_ids: the text of libdrm's amdgpu.ids (read once per discovery), empty when not installed.
DeviceIdFacts lookup_device_id(std::string_view amdgpu_ids, std::uint32_t device_id, std::uint32_t revision);
std::string read_amdgpu_ids();

struct AmdGpu {
  int card = -1;               // -1: known only from the KFD topology
  std::string device_dir;      // "/sys/class/drm/cardN/device", empty when card == -1
  std::string hwmon_dir;       // empty when the card has no amdgpu hwmon
  PciAddress address;
  std::string driver;
  std::uint32_t vendor_id = 0x1002, device_id = 0, subsystem_vendor_id = 0, subsystem_device_id = 0;
  std::vector<KfdNode> kfd;    // its KFD nodes (one per partition), ordered by location_id
  std::string uuid;
  std::string unique_id;       // 16 hex digits or empty
  std::uint32_t revision = 0;
  std::optional<IpVersion> mp1;  // the SMU's IP version (ip_discovery), when the driver publishes it
  DeviceIdFacts model;         // marketing name, gfx target, integrated
  std::map<std::string, int> temp_channel;   // hwmon label ("edge", "junction", "mem") -> N of tempN
  std::map<std::string, int> volt_channel;   // hwmon label ("vddgfx", "vddnb") -> N of inN
};

// The AMD GPUs of this host as identity: each amdgpu DRM card (PCI facts, its KFD nodes, unique id,
// revision, marketing name and gfx target), then KFD GPU nodes without a card, grouped by PCI slot;
// at most kMaxDevicesPerBackend, the rest counted. The backend (probe_amdgpu) and hipstack-info's
// agents both name a GPU from this, so they cannot disagree.
struct Discovery {
  std::vector<AmdGpu> gpus;
  std::size_t cards = 0;     // DRM cards listed (any driver)
  std::size_t left_out = 0;  // cards or KFD nodes past the limit
};
Discovery discover_gpus(const FsView& fs, const KfdTopology& topology);

// The duty-cycle scale of hwmon pwm1, one for reads (fan_pwm) and writes (set_fan): pwm1_min is
// 0 %, pwm1_max 100 %; 0..255 (the hwmon ABI's range) when either file is absent or they make no range.
struct FanScale {
  std::int64_t min = 0;
  std::int64_t max = 255;
  [[nodiscard]] double percent(double pwm) const {
    return (pwm - static_cast<double>(min)) * 100.0 / static_cast<double>(max - min);
  }
  [[nodiscard]] std::int64_t pwm(double percent) const;
};
FanScale read_fan_scale(const FsView& fs, const std::string& hwmon_dir);

// The SMU's IP version from device_dir/ip_discovery (MP1_HWID 1, die 0, instance 0); none when the
// driver publishes no discovery table or a part of it is not a number.
std::optional<IpVersion> read_mp1_version(const FsView& fs, const std::string& device_dir);

class AmdgpuBackend final : public Backend {
 public:
  AmdgpuBackend(const FsView& fs, KfdTopology topology, std::vector<AmdGpu> gpus);
  [[nodiscard]] std::string_view name() const noexcept override { return "amdgpu"; }
  [[nodiscard]] std::size_t device_count() const noexcept override { return gpus_.size(); }
  [[nodiscard]] DeviceSummary summary(std::size_t device) const override;
  [[nodiscard]] std::string fault(std::size_t device, const SampleOptions* before) const override;
  void sample(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const override;
  [[nodiscard]] std::vector<Partition> partitions(std::size_t device) const override;
  [[nodiscard]] std::vector<Partition> partition_names(std::size_t device) const override;
  [[nodiscard]] std::vector<ProcessInfo> processes(std::size_t device, unsigned interval_ms) const override;
  [[nodiscard]] std::vector<Link> links() const override;
  [[nodiscard]] std::vector<BadPage> bad_pages(std::size_t device) const override;
  [[nodiscard]] CperRing cper_ring(std::size_t device) const override;  // cper_ring.cpp
  [[nodiscard]] ControlPlan plan_control(std::size_t device, const ControlRequest& request) const override;
  [[nodiscard]] bool control_settled(std::size_t device, const ControlRequest& request) const override;

 private:
  const FsView& fs_;
  KfdTopology topology_;
  std::vector<AmdGpu> gpus_;
  // fdinfo engine counters from the previous processes() call, for busy percentages.
  mutable std::mutex engine_mutex_;
  mutable std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> engine_last_;  // key -> (ns, wall ns)
  // gpu_metrics of the previous window look at each device (activity_window.cpp).
  mutable std::mutex window_mutex_;
  mutable std::map<std::size_t, GpuMetrics> window_last_;
  // KFD SMI event subscriptions, opened at the first read of kfd_events (kfd_smi_events.hpp).
  std::unique_ptr<KfdEventWatch> kfd_events_;
  void read_window(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const;
  void read_running_processes(std::size_t device, std::vector<Reading>& out) const;  // processes.cpp
  [[nodiscard]] std::int32_t kfd_process_self() const;                              // processes.cpp
};

// RAS (ras.cpp).
struct BadPageTable {
  std::vector<BadPage> pages;
};
std::optional<BadPageTable> parse_bad_pages(std::string_view text, std::string& error);
std::vector<BadPage> read_bad_pages(const FsView& fs, const AmdGpu& gpu, std::string& error);
CperRing read_cper_ring(const FsView& fs, const AmdGpu& gpu);
void read_ras(const FsView& fs, const AmdGpu& gpu, std::vector<Reading>& out);
void read_bad_page_threshold(const FsView& fs, std::vector<Reading>& out);

// One read of device/gpu_metrics, decoded for this GPU's ASIC (live_metrics.cpp).
struct GpuMetricsRead {
  bool ok = false;
  GpuMetrics metrics;    // the header only when !ok
  int error_code = 0;    // errno of the read; EINVAL when the table did not decode
  std::string problem;   // what failed and where ("" when ok)
};
GpuMetricsRead read_gpu_metrics(const FsView& fs, const AmdGpu& gpu);

// The WINDOW-kind readings of the window between two looks that options asks for: activity and
// violation shares divide each accumulator's growth by accumulation_counter's (the firmware adds one
// sample's value per count), link rates divide bytes by the driver's timestamps. A counter that went
// backwards beyond a 32-bit wrap means the GPU or driver restarted: the window is then unavailable.
void window_readings(const GpuMetrics& before, const GpuMetrics& after, const SampleOptions& options, ReadingList& list);

// The parts of sample(); each appends readings for one kind.
void read_identity(const FsView& fs, const AmdGpu& gpu, std::vector<Reading>& out);
void read_static(const FsView& fs, const AmdGpu& gpu, std::vector<Reading>& out);
void read_live(const FsView& fs, const AmdGpu& gpu, const SampleOptions& options, std::vector<Reading>& out);

}  // namespace hipstack::smi::detail::amdgpu
