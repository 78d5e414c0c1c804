// The one interface every vendor backend implements (amdgpu, nvml). A backend discovers its devices
// when it is created and answers with readings; it never prints and never throws out of sample().
#pragma once

#include <hipstack/smi.hpp>

#include <memory>
#include <string>
#include <vector>

namespace hipstack::smi::detail {

class FsView;

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual std::size_t device_count() const noexcept = 0;
  // Index is left 0: the System numbers devices across backends.
  [[nodiscard]] virtual DeviceSummary summary(std::size_t device) const = 0;
  // Appends DEVICE-scope readings of the requested kinds.
  virtual void sample(std::size_t device, const SampleOptions& options, std::vector<Reading>& out) const = 0;
  [[nodiscard]] virtual std::vector<Partition> partitions(std::size_t device) const = 0;
  [[nodiscard]] virtual std::vector<ProcessInfo> processes(std::size_t device, unsigned interval_ms) const = 0;
  // Links between this backend's devices, in its own device numbers.
  [[nodiscard]] virtual std::vector<Link> links() const = 0;
  // Retired memory pages; throws Error(read_failure) when the list exists but cannot be read.
  [[nodiscard]] virtual std::vector<BadPage> bad_pages(std::size_t device) const = 0;
};

// Outcome of probing one backend: the backend, or why there is none.
struct BackendProbe {
  std::unique_ptr<Backend> backend;
  std::string reason;
};

BackendProbe probe_amdgpu(const FsView& fs);
// library_path: what dlopen is given ("libnvidia-ml.so.1" by default).
BackendProbe probe_nvml(const FsView& fs, const std::string& library_path);

}  // namespace hipstack::smi::detail
