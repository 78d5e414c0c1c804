// The one interface every vendor backend implements (amdgpu, nvml). A backend discovers its devices
// when it is created and answers with readings; it never prints and never throws out of sample().
#pragma once

#include <hipstack/cper.hpp>
#include <hipstack/smi.hpp>

#include <memory>
#include <string>
#include <vector>

namespace hipstack::smi::detail {

class FsView;
struct ControlRequest;
struct ControlPlan;

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual std::size_t device_count() const noexcept = 0;
  // Index is left 0: the System numbers devices across backends.
  [[nodiscard]] virtual DeviceSummary summary(std::size_t device) const = 0;
  // Why the device cannot be read now ("" when it can): a cheap probe, made before every sample
  // (`before`: its options) and for the listing (nullptr).
  [[nodiscard]] virtual std::string fault(std::size_t device, const SampleOptions* before) const = 0;
  // Appends DEVICE-scope readings of the requested kinds.
  virtual void sample(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const = 0;
  [[nodiscard]] virtual std::vector<Partition> partitions(std::size_t device) const = 0;
  // Each partition's index, id and BDF, without readings, from what discovery already holds or the
  // driver answers at once (no sysfs reads, which may block): what a -g selector is matched against.
  [[nodiscard]] virtual std::vector<Partition> partition_names(std::size_t device) const = 0;
  [[nodiscard]] virtual std::vector<ProcessInfo> processes(std::size_t device, unsigned interval_ms) const = 0;
  // Links between this backend's devices, in its own device numbers.
  [[nodiscard]] virtual std::vector<Link> links() const = 0;
  // Retired memory pages; throws Error(read_failure) when the list exists but cannot be read.
  [[nodiscard]] virtual std::vector<BadPage> bad_pages(std::size_t device) const = 0;
  // The driver's error records (AMD: CPER). The default has none and says why.
  [[nodiscard]] virtual CperRing cper_ring(std::size_t device) const;

  // Mutations (control.hpp): validate a request and say what to write where. Reads only. The
  // default refuses: a backend without controls is read-only.
  [[nodiscard]] virtual ControlPlan plan_control(std::size_t device, const ControlRequest& request) const;
  // After a plan with wait_settle: true once the driver shows the requested state.
  [[nodiscard]] virtual bool control_settled(std::size_t device, const ControlRequest& request) const;
};

// The most GPUs one backend lists. The largest nodes have 16 GPUs (partitions are within a GPU);
// a tree with thousands of card directories is hostile or broken, and listing them all would give
// the daemon a sampler, a history ring and a /metrics page for each. What is left out is said in
// the probe's reason.
inline constexpr std::size_t kMaxDevicesPerBackend = 64;

// Outcome of probing one backend: the backend, or why there is none.
struct BackendProbe {
  std::unique_ptr<Backend> backend;
  std::string reason;
};

BackendProbe probe_amdgpu(const FsView& fs);
// library_path: what dlopen is given ("libnvidia-ml.so.1" by default).
// shutdown: call nvmlShutdown when the backend goes (OpenOptions::vendor_shutdown).
BackendProbe probe_nvml(const FsView& fs, const std::string& library_path, bool shutdown = true);

}  // namespace hipstack::smi::detail
