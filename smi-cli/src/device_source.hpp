// Where hipstack-smi's device data comes from: the library on this machine, or a hipstack-smid
// reached with --host (remote_source.cpp, built into hipstack-smi-remote only, so the local tool
// does not load gRPC). The commands that work both ways take a DeviceSource.
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::cli {

class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  [[nodiscard]] virtual std::vector<smi::DeviceSummary> devices() const = 0;
  // Index, BDF or UUID; throws smi::Error(no_such_device).
  [[nodiscard]] virtual std::uint32_t resolve(std::string_view selector) const = 0;
  [[nodiscard]] virtual std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const = 0;
  [[nodiscard]] virtual std::vector<smi::Partition> partitions(std::uint32_t device) const = 0;
  // policy_file: health thresholds ("" = defaults); a remote source uses the daemon's.
  [[nodiscard]] virtual smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const = 0;
};

class LocalSource final : public DeviceSource {
 public:
  explicit LocalSource(const smi::System& system) : system_(system) {}
  [[nodiscard]] std::vector<smi::DeviceSummary> devices() const override { return system_.devices(); }
  [[nodiscard]] std::uint32_t resolve(std::string_view selector) const override { return system_.resolve(selector); }
  [[nodiscard]] std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const override {
    return system_.sample(device, what);
  }
  [[nodiscard]] std::vector<smi::Partition> partitions(std::uint32_t device) const override { return system_.partitions(device); }
  [[nodiscard]] smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const override {
    return system_.health(device, policy_file.empty() ? smi::HealthPolicy{} : smi::HealthPolicy::from_file(policy_file));
  }
  [[nodiscard]] const smi::System& system() const noexcept { return system_; }

 private:
  const smi::System& system_;
};

}  // namespace hipstack::cli
