// The amdgpu driver's part, played on a writable copy of a capture (tests/emulator/README.md).
// DriverModel knows the copy's GPUs and reacts to writes the way amdgpu does (NOTES.md section 5):
// a compute partition write tears the GPU's KFD nodes down and re-creates one per partition after a
// short delay; an NPS write is only recorded until a simulated driver reload; values the driver
// would refuse get EINVAL, a GPU that KFD processes hold gets EBUSY, a GPU in reset gets EPERM.
// Thread-safe: every public method takes the model's lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hipstack::emulator {

using Props = std::vector<std::pair<std::string, std::string>>;

class DriverModel {
 public:
  // backing: the writable copy (holds sys/ and proc/); pristine: a folder the model may fill with a
  // copy of the original KFD nodes; settle: how long re-creating partitions takes.
  DriverModel(std::filesystem::path backing, std::filesystem::path pristine, std::chrono::milliseconds settle);
  ~DriverModel();
  DriverModel(const DriverModel&) = delete;
  DriverModel& operator=(const DriverModel&) = delete;

  // Path inside the mount ("/sys/class/drm/card0/device/power1_cap") -> 0 or -errno.
  int check_read(const std::string& path);
  // May this file be opened for writing at all? (sysfs: only attributes with a store method.)
  bool writable(const std::string& path);
  // The driver's store: returns 0 when accepted, else -errno.
  int store(const std::string& path, std::string_view value);
  // The emulator's own control file: "reload", "reset-begin cardN", "reset-end cardN",
  // "read-errors cardN", "read-errors-end cardN".
  int control(std::string_view command);
  [[nodiscard]] std::size_t gpu_count() const { return gpus_.size(); }

 private:
  struct PristineNode {
    int id = 0;
    Props props;
    std::vector<Props> io_links;
  };
  struct Gpu {
    std::string card;                 // "card0"
    std::filesystem::path device_dir; // in the backing copy
    unsigned domain = 0, bus = 0, dev = 0;
    std::vector<int> pristine_nodes;  // its nodes in the original topology, by location_id
    std::string pristine_mode;
    std::string mode;
    std::uint64_t total_xcc = 0, total_simd = 0, total_arrays = 0, total_mem = 0;
    int base_minor = 0;
    int cpu_node = 0;
    std::vector<std::uint64_t> gpu_ids;  // current KFD gpu_ids, one per partition
    std::vector<int> node_ids;           // current KFD node numbers
    bool switching = false;              // torn down, re-created at ready_at
    std::chrono::steady_clock::time_point ready_at;
    std::string requested_nps;
    bool in_reset = false;
    bool read_errors = false;  // every read of its files fails with EIO (a failing device)
  };
  struct Attr {
    Gpu* gpu = nullptr;
    std::string name;   // file name
    bool hwmon = false;
  };

  void load();
  Attr classify(const std::string& path);
  bool busy(const Gpu& gpu) const;
  int partitions_for(const Gpu& gpu, std::string_view mode) const;
  void rebuild_topology();
  void worker();
  int store_compute(Gpu& gpu, std::string_view value);
  int store_memory(Gpu& gpu, std::string_view value);
  int store_power_cap(const Attr& attr, std::string_view value);
  int store_profile(const Attr& attr, std::string_view value);
  int store_overdrive(const Attr& attr, std::string_view value);
  int store_pwm(const Attr& attr, std::string_view value);

  std::filesystem::path backing_;
  std::filesystem::path pristine_;
  std::chrono::milliseconds settle_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<PristineNode> pristine_nodes_;
  std::vector<Gpu> gpus_;
  std::vector<std::string> od_staged_;  // pp_od_clk_voltage edits waiting for "c"
  std::uint64_t generation_ = 0;
  std::thread worker_;
};

// Key/value text helpers shared with main.cpp.
Props parse_props(std::string_view text);
std::string props_text(const Props& props);
std::string get_prop(const Props& props, std::string_view key);
void set_prop(Props& props, std::string_view key, std::string value);

}  // namespace hipstack::emulator
