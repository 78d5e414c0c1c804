// thresholds.hpp: the per-device-class expectations of hipstack-validate (thresholds.json,
// docs/validate.md): the published peaks of known GPUs and the least share of each a healthy one
// reaches.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hipstack::validate {

struct DeviceClass {
  std::string name;                      // "NVIDIA H100 SXM"
  std::string vendor;                    // match: "amd", "nvidia" or "" (any)
  std::vector<std::string> name_contains;  // match: any of these in the device's name ("" list: any)
  int compute_units = 0;                 // the full device's count, 0 when not given
  std::map<std::string, double> peak;    // "memory_gbps", "fp32_tflops", ...
  std::map<std::string, double> expect;  // "memory_bandwidth", "gemm_bf16", ...

  [[nodiscard]] bool matches(const std::string& device_vendor, const std::string& device_name) const;
  // The peak scaled to a partition's share of the compute units (1 when either count is unknown).
  [[nodiscard]] std::optional<double> peak_for(const std::string& key, int device_compute_units) const;
  [[nodiscard]] std::optional<double> expected(const std::string& key) const;
};

struct Thresholds {
  std::string source;  // the file they came from
  std::vector<DeviceClass> classes;

  // Reads and checks a thresholds file; throws std::runtime_error naming the file and the field.
  static Thresholds load(const std::string& path);
  // The first class that matches; the catch-all class when nothing else does, nullptr when the file
  // has none.
  [[nodiscard]] const DeviceClass* classify(const std::string& vendor, const std::string& name) const;
};

// Where the thresholds come from when --config is not given: /etc/hipstack/validate-thresholds.json,
// then the installed share/hipstack/validation/thresholds.json next to the program, then the source
// tree's copy (a build-tree run).
std::string default_thresholds_path();

}  // namespace hipstack::validate
