// Opening a bundled capture and looking readings up by catalogue name, for capture-based tests.
#pragma once

#include <gtest/gtest.h>
#include <hipstack/smi.hpp>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace hipstack::smi::testing {

// A folder of the test's own under gtest's temporary folder, made by mkdtemp (a name nobody could
// have planted first) and removed with what it holds when the object goes: a test leaves nothing.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::string name = ::testing::TempDir() + prefix + "-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
    path_ = name;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string capture_sys(const std::string& relative) {
  return std::string(HIPSTACK_CAPTURES_DIR) + "/" + relative + "/sys";
}

inline System open_capture(const std::string& relative) {
  OpenOptions options;
  options.sysfs_root = capture_sys(relative);
  return System::open(options);
}

inline SampleOptions everything() {
  SampleOptions all;
  all.identity = all.static_info = all.live = true;
  return all;
}

// Every reading of one metric name (several for instanced metrics).
inline std::vector<Reading> readings_of(const std::vector<Reading>& readings, std::string_view name) {
  std::vector<Reading> out;
  const MetricInfo* info = find_metric(name);
  EXPECT_NE(info, nullptr) << "unknown metric " << name;
  for (const Reading& r : readings) {
    if (info != nullptr && r.id == info->id) out.push_back(r);
  }
  return out;
}

inline Reading reading_of(const std::vector<Reading>& readings, std::string_view name, std::string_view instance = {}) {
  for (const Reading& r : readings_of(readings, name)) {
    if (r.instance == instance) return r;
  }
  Reading missing;
  missing.status = Status::error;
  missing.detail = "absent from the sample";
  return missing;
}

inline double number_of(const std::vector<Reading>& readings, std::string_view name, std::string_view instance = {}) {
  const Reading r = reading_of(readings, name, instance);
  EXPECT_TRUE(r.ok()) << name << "[" << instance << "]: " << status_name(r.status) << " " << r.detail;
  return r.number().value_or(-1e300);
}

inline std::string text_of(const std::vector<Reading>& readings, std::string_view name, std::string_view instance = {}) {
  const Reading r = reading_of(readings, name, instance);
  EXPECT_TRUE(r.ok()) << name << ": " << status_name(r.status) << " " << r.detail;
  return std::string(r.text().value_or("<not text>"));
}

inline Status status_of(const std::vector<Reading>& readings, std::string_view name) {
  return reading_of(readings, name).status;
}

}  // namespace hipstack::smi::testing
