// The NVIDIA backend: NVML (loaded at run time) answers for every NVIDIA GPU, mapped onto the same
// catalogue and units as the amdgpu backend. MIG instances are the GPU's partitions (read-only).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../backend.hpp"
#include "nvml_library.hpp"

namespace hipstack::smi::detail::nvml {

struct NvidiaGpu {
  Device handle = nullptr;
  std::string bdf;   // "0000:00:06.0" (NVML prints an 8-digit domain; shortened to 4)
  std::string uuid;
  std::string name;
  std::string fault;  // why discovery could not use it (handle refused, lost); handle is null when refused
};

// One GPU's GPM window (nvml_gpm.cpp): the sample of the last look and the one the next look fills,
// so each look costs one nvmlGpmSampleGet and one nvmlGpmMetricsGet. Safe to call from several
// threads: every GPU's GPM calls take one lock of the backend (`gpm_calls`), so no two GPM calls
// run at once in the process — hipstack-smid died inside nvmlGpmMetricsGet (driver 580.159.04,
// reading a sample's counters out of bounds) while its sampler threads made GPM calls for several
// GPUs at once (4 of 4 runs), and not in the 2 runs made since with one call at a time: the likely
// trigger, not a proven one (docs/performance.md). The samples are freed with it (before the
// backend shuts NVML down).
class GpmWindow {
 public:
  explicit GpmWindow(std::mutex& gpm_calls) : mutex_(gpm_calls) {}
  GpmWindow(const GpmWindow&) = delete;
  GpmWindow& operator=(const GpmWindow&) = delete;
  ~GpmWindow();
  // Appends the WINDOW-kind readings options asks for.
  void read(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out);

 private:
  std::string prepare(const Library& lib, const NvidiaGpu& gpu);

  std::mutex& mutex_;  // the backend's, shared by every GPU's window
  const Library* library_ = nullptr;
  bool prepared_ = false;
  std::string unusable_;  // why GPM cannot be used on this GPU ("" when it can)
  int unusable_errno_ = 0;
  GpmSample last_ = nullptr;
  GpmSample next_ = nullptr;
  bool have_last_ = false;
  std::chrono::steady_clock::time_point last_at_;
  unsigned links_ = 0;  // NVLinks of the GPU
  std::unique_ptr<GpmMetricsGet> request_;  // NVML's full-size request (10.7 KB): reused, off the stack
};

// XID critical-error events of every GPU (nvml_events.cpp): one NVML event set, registered at
// discovery, drained without waiting whenever XID readings are asked for. Freed before NVML shuts down.
class XidWatch {
 public:
  XidWatch(const Library& lib, const std::vector<NvidiaGpu>& gpus);
  XidWatch(const XidWatch&) = delete;
  XidWatch& operator=(const XidWatch&) = delete;
  ~XidWatch();
  // Appends the XID readings of `device` options asks for, after draining the queue.
  void read(std::size_t device, const SampleOptions& options, std::vector<Reading>& out);

 private:
  struct Xids {
    bool registered = false;
    std::string unavailable;  // why not registered
    int error_code = 0;
    std::chrono::system_clock::time_point since;  // when registered
    std::map<unsigned long long, std::int64_t> counts;  // XID code -> events
    bool any = false;
    unsigned long long last = 0;
    std::chrono::system_clock::time_point last_at;
  };
  void drain();

  const Library& library_;
  std::mutex mutex_;
  EventSet set_ = nullptr;
  std::vector<Device> handles_;
  std::vector<Xids> devices_;
  std::string drain_error_;  // the last drain's failure ("" when it emptied the queue)
  int drain_errno_ = 0;
};

class NvmlBackend final : public Backend {
 public:
  NvmlBackend(const FsView& fs, std::unique_ptr<Library> library, std::vector<NvidiaGpu> gpus);
  [[nodiscard]] std::string_view name() const noexcept override { return "nvml"; }
  [[nodiscard]] std::size_t device_count() const noexcept override { return gpus_.size(); }
  [[nodiscard]] DeviceSummary summary(std::size_t device) const override;
  [[nodiscard]] std::string fault(std::size_t device, const SampleOptions* before) const override;
  void sample(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const override;
  [[nodiscard]] std::vector<Partition> partitions(std::size_t device) const override;
  [[nodiscard]] std::vector<Partition> partition_names(std::size_t device) const override;
  [[nodiscard]] std::vector<smi::ProcessInfo> processes(std::size_t device, unsigned interval_ms) const override;
  [[nodiscard]] std::vector<Link> links() const override;
  [[nodiscard]] std::vector<BadPage> bad_pages(std::size_t device) const override;

 private:
  void read_running_processes(const NvidiaGpu& gpu, std::vector<Reading>& out) const;
  // process_engine_busy of each listed process (nvml_process_use.cpp).
  void add_process_use(const NvidiaGpu& gpu, std::size_t device, unsigned interval_ms,
                       std::map<unsigned, smi::ProcessInfo*>& by_pid) const;

  const FsView& fs_;
  std::unique_ptr<Library> library_;
  std::vector<NvidiaGpu> gpus_;
  std::vector<std::uint32_t> partition_counts_;
  // After library_: destroyed first, while NVML is still initialised.
  std::mutex gpm_calls_;  // one GPM call at a time in the process (GpmWindow)
  std::vector<std::unique_ptr<GpmWindow>> gpm_;
  std::unique_ptr<XidWatch> xids_;
  // When each GPU's processes were last looked at (wall clock, microseconds): the next look's
  // utilisation samples are those taken since.
  mutable std::mutex process_use_mutex_;
  mutable std::map<std::size_t, unsigned long long> process_use_last_;
};

// One NVML device's readings (nvml_metrics.cpp).
// Each reads only what options.metrics asks for (all when empty): some NVML calls cost milliseconds
// (energy ~4 ms on an H200) and one answer is never worth them all.
void read_identity(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out);
void read_static(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out);
void read_live(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out);

// A text answer of NVML (name, UUID, serial ...), or the return code.
Return read_string(Return (*fn)(Device, char*, unsigned), Device device, unsigned size, std::string& out);
// Bus ids ("00000000:00:06.0") become hipstack's "0000:00:06.0" through smi::normalise_bdf.

}  // namespace hipstack::smi::detail::nvml
