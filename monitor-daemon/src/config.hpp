// hipstack-smid configuration: a "key = value" file (docs/daemon.md), reloaded on SIGHUP.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace hipstack::smid {

struct Config {
  std::string listen = "127.0.0.1:9400";        // host:port of the HTTP endpoint (/metrics, /healthz, /readyz)
  std::chrono::milliseconds fast_interval{1000};  // live metrics (power, clocks, use, temperatures)
  std::chrono::milliseconds slow_interval{30000}; // identity, static facts and health
  std::chrono::milliseconds read_deadline{2000};  // a device sample slower than this is stale
  std::vector<std::string> metrics;               // exported metrics (catalogue names); empty = all
  std::string sysfs_root;                         // "" = live /sys
  std::string procfs_root;
  std::string host;                               // "host" label; "" = gethostname()
  std::string health_policy;                      // HealthPolicy file; "" = defaults
};

// Reads a config file; throws std::runtime_error naming file:line for a bad line.
Config load_config(const std::string& path);

}  // namespace hipstack::smid
