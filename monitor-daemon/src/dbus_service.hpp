// org.hipstack.Monitor1 on D-Bus (sd-bus), for desktop and node agents that do not speak gRPC:
// the device list (property Devices), GetMetrics and GetHealth methods, and a HealthChanged signal
// when a GPU's verdict changes. Like the gRPC API it answers from the sampler's snapshots only.
// The bus connection lives on a thread of its own; sd-bus objects never leave it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "sampler.hpp"

namespace hipstack::smid {

class DbusService {
 public:
  using SamplerSource = std::function<std::shared_ptr<const Sampler>()>;
  static constexpr const char* kName = "org.hipstack.Monitor1";
  static constexpr const char* kPath = "/org/hipstack/Monitor1";

  // bus: "system" or "session". Throws std::runtime_error when the bus cannot be reached or the
  // name is taken.
  DbusService(const std::string& bus, SamplerSource source);
  ~DbusService();
  DbusService(const DbusService&) = delete;
  DbusService& operator=(const DbusService&) = delete;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hipstack::smid
